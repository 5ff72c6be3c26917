"""One redaction for every form of a secret: each encoding, cut-off starts, any event the runner publishes, and every
message our LLM wrapper sends."""

from __future__ import annotations

import base64
import dataclasses
import html
import json
from typing import Any
from urllib.parse import quote, quote_plus, urlencode

import pytest
from browser_use.llm.messages import (
    AssistantMessage,
    ContentPartImageParam,
    ContentPartTextParam,
    Function,
    ImageURL,
    SystemMessage,
    ToolCall,
    UserMessage,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from preview_qa.agent.adapter.llm import scrubbed
from preview_qa.events import AgentHistory, Observed, StepRecorded, TestFinished
from preview_qa.results import Status, TestResult
from preview_qa.secrets.events import redacted
from preview_qa.secrets.redact import MIN_SECRET_LENGTH, Redactor, describe, forms, secret_length

SECRET = "Zebra qu@rtz &=!\"'/~<é🚀> 42"
PLACEHOLDER = "<secret>code</secret>"
REDACTOR = Redactor({"code": SECRET})

ENCODINGS = {
    "raw": SECRET,
    "quote (safe='')": quote(SECRET, safe=""),
    "quote (safe='/')": quote(SECRET),
    "quote_plus": quote_plus(SECRET),
    "lower-case hex": quote_plus(SECRET).lower().replace("zebra+qu", "Zebra+qu"),
    "a browser's form encoding (~ and ! escaped, * kept)": urlencode({"q": SECRET})[2:].replace("~", "%7E"),
    "JavaScript's encodeURIComponent": quote(SECRET, safe="!~*'()"),
    "percent-encoded twice": quote(quote(SECRET, safe=""), safe=""),
    "JSON (ASCII)": json.dumps(SECRET)[1:-1],
    "JSON (UTF-8)": json.dumps(SECRET, ensure_ascii=False)[1:-1],
    "JSON in JSON": json.dumps(json.dumps(SECRET)[1:-1])[1:-1],
    "JSON with upper-case \\u escapes and \\/": json.dumps(SECRET)[1:-1].replace("\\u00e9", "\\u00E9").replace("/", "\\/"),
    "HTML (quotes escaped)": html.escape(SECRET),
    "HTML (quotes kept)": html.escape(SECRET, quote=False),
    "HTML escaped twice": html.escape(html.escape(SECRET)),
    "HTML numeric entities": "".join(f"&#{ord(c)};" for c in SECRET),
    "HTML hex entities": "".join(f"&#x{ord(c):X};" for c in SECRET),
    "HTML of JSON": html.escape(json.dumps(SECRET)[1:-1]),
    "whitespace folded": SECRET.replace(" ", "  \n "),
}


@pytest.mark.parametrize("form", ENCODINGS.values(), ids=ENCODINGS.keys())
def test_each_encoding_is_redacted(form: str) -> None:
    assert form != "" and REDACTOR.text(f"before {form} after") == f"before {PLACEHOLDER} after"


def test_the_forms_we_tell_others_are_all_redacted() -> None:
    """`forms` is what GitHub's masks and the browser's masking are given: each is one the redactor knows."""
    assert {SECRET, quote(SECRET, safe=""), quote_plus(SECRET), json.dumps(SECRET)[1:-1], html.escape(SECRET)} <= set(
        forms(SECRET)
    )
    for form in forms(SECRET):
        assert REDACTOR.text(form) == PLACEHOLDER, form


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # browser-use shortens a long query string before an LLM call: the start of the secret is all that is left
        ("Tab 1A2B: http://x/?code=Zebra+qu%40rtz+%2...2ba2024 - x", f"Tab 1A2B: http://x/?code={PLACEHOLDER}...2ba2024 - x"),
        ("reason: typed Zebra qu@r…", f"reason: typed {PLACEHOLDER}…"),  # our own clip()
        ("Zebra qu@rtz &am…", f"{PLACEHOLDER}…"),  # cut inside an entity
        ("Zebr...", f"{PLACEHOLDER}..."),
        ("Zeb...", "Zeb..."),  # fewer than CUT_MIN characters say nothing
        ("a Zebra qu@rtz\nnext", "a Zebra qu@rtz\nnext"),  # an unmarked cut cannot be told from ordinary text
        ("Zebra crossing ahead", "Zebra crossing ahead"),  # a start that is not cut off is just text
        ("a zebra. Another", "a zebra. Another"),
    ],
)
def test_a_secret_cut_off_after_its_first_characters_is_redacted(text: str, expected: str) -> None:
    assert REDACTOR.text(text) == expected


def test_ordinary_text_that_ends_like_a_secret_begins_is_left_alone() -> None:
    """The API key `test-key` must not eat `demo@acme.test` or the key `attributes` of a recorded history."""
    redactor = Redactor({"api-key": "test-key"})
    for text in ["demo@acme.test", "attributes", "Rocket skates", "attributes...", "contest...", "tests\n"]:
        assert redactor.text(text) == text
    assert redactor.value({"attributes": {"value": "demo@acme.test"}}) == {"attributes": {"value": "demo@acme.test"}}
    assert redactor.text("key: test-k...") == "key: <secret>api-key</secret>..."


def test_the_longest_secret_wins_and_short_values_are_no_secrets() -> None:
    redactor = Redactor({"outer": "token-123456-extra", "inner": "token-123456", "tiny": "k", "blank": "  a b  "})
    assert redactor.text("token-123456-extra token-123456 k a b") == ("<secret>outer</secret> <secret>inner</secret> k a b")
    assert secret_length("  a b  ") == 2 < MIN_SECRET_LENGTH


def test_a_secret_learnt_mid_run_is_redacted_from_then_on_longest_first() -> None:
    redactor = Redactor({"pw": "password-1"})
    redactor.add({"cookie": "xpassword-1x", "short": "abc"})
    assert redactor.text("xpassword-1x password-1 abc") == "<secret>cookie</secret> <secret>pw</secret> abc"
    assert redactor.values == ["xpassword-1x", "password-1"]


def test_the_run_redactor_knows_the_api_key_header_values_and_github_token() -> None:
    redactor = Redactor.of_tests(
        {"t": {"pw": "password-1"}},
        api_key="sk-live-abcdef",
        headers={"X-Bypass": "bypass token 42", "X-Debug": "1"},
        github_token="ghs_token0123456789",
    )
    assert redactor.text("password-1 sk-live-abcdef bypass+token+42 1 ghs_token0123456789") == (
        "<secret>pw</secret> <secret>api-key</secret> <secret>header:X-Bypass</secret> 1 <secret>github-token</secret>"
    )
    assert describe(redactor.find("ghs_token0123456789") or "") == "the GitHub token"
    # GitHub's masks get every value as gathered, the one too short to redact too (a mask there shreds only the log)
    assert sorted(redactor.given) == sorted(["password-1", "sk-live-abcdef", "bypass token 42", "1", "ghs_token0123456789"])


@pytest.mark.parametrize("before", ["", "a", "ab", "abc", "abcd"])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_secret_in_base64_is_found_and_redacted_at_any_alignment(before: str, encode: Any) -> None:
    secret = "pa?s>s~w0rd-4242"  # its base64 holds + and / (- and _ when URL-safe)
    encoded = encode(f"{before}{secret}!!".encode()).decode()
    redactor = Redactor({"pw": secret})
    for text in (encoded, quote(encoded, safe=""), f"token={encoded}&x=1"):
        assert redactor.find(text) == "pw", text
        redacted = redactor.text(text)
        assert "<secret>pw</secret>" in redacted and not any(f in redacted for f in forms(secret)), redacted
    assert redactor.find(base64.b64encode(b"pa?s>s~w0rX-4242!!").decode()) is None  # a near miss is no secret


def test_a_secret_is_found_and_named_never_by_its_value() -> None:
    redactor = Redactor.of_tests({"t": {"pw": "password-1"}}, api_key="sk-live-abcdef", headers={"X-Bypass": "bypass token 42"})
    assert [
        describe(n)
        for n in (
            redactor.find("?q=password%2D1"),
            redactor.find('{"k": "sk-live-abcdef"}'),
            redactor.find("bypass&#32;token 42"),
            redactor.find("nothing here"),
        )
        if n is not None
    ] == ["secret 'pw'", "the API key", "the header X-Bypass"]
    assert describe("basic-auth-password") == "the basic-auth password"


# --- property: any event the runner publishes -------------------------------------------------------------------

FORMS = [
    lambda v: v,
    lambda v: quote(v, safe=""),
    quote,
    quote_plus,
    lambda v: quote_plus(v).lower(),
    lambda v: json.dumps(v)[1:-1],
    lambda v: json.dumps(v, ensure_ascii=False)[1:-1],
    html.escape,
    lambda v: html.escape(v, quote=False),
]
secrets_ = st.text(st.characters(exclude_categories=("Cs",)), min_size=MIN_SECRET_LENGTH, max_size=40).filter(
    lambda v: secret_length(v) >= MIN_SECRET_LENGTH
)
context = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)


def _event(kind: int, text: str) -> Any:
    if kind == 0:
        return StepRecorded(
            name="t", number=1, goal=text, actions=[{"input": {"text": text}}], url=text, error=text, screenshot_png=None
        )
    if kind == 1:
        return Observed(name="t", kind="console_error", error=True, detail={"text": text, "nested": [{"x": text}]})
    if kind == 2:
        return AgentHistory(name="t", history={"history": [{"state": {"url": text}, "result": [{"error": text}]}]})
    return TestFinished(
        result=TestResult(name="t", file="qa.yml", status=Status.FAILED, line=3, reason=text, causes=[text], final_url=text)
    )


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [*_strings(k), *_strings(v)]]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, TestResult):
        return _strings(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name))]
    return []


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=secrets_, form=st.sampled_from(FORMS), before=context, after=context, kind=st.integers(0, 3))
def test_any_secret_in_any_form_in_any_event_is_redacted(secret: str, form: Any, before: str, after: str, kind: int) -> None:
    encoded = form(secret)
    assume(secret.lower() not in (before + after).lower())
    assume(not any(secret in text for text in _strings(_event(kind, ""))))  # nor in the event's own keys ("earlier_…")
    assume(secret not in "<secret>s</secret>")  # a secret such as "secret" is part of its own placeholder
    event = redacted(_event(kind, before + encoded + after), Redactor({"s": secret}))
    texts = [t for t in _strings(event) if "<secret>s</secret>" in t]
    assert texts, _strings(event)  # replaced where it was...
    for text in _strings(event):  # ...and no form is left anywhere
        assert encoded not in text and secret not in text


# --- what our LLM wrapper sends ---------------------------------------------------------------------------------


def test_every_outgoing_message_is_scrubbed_but_the_image_is_left_alone() -> None:
    image = ContentPartImageParam(image_url=ImageURL(url="data:image/png;base64,iVBORw0KGgo="))
    messages = [
        SystemMessage(content=f"task with {SECRET}"),
        UserMessage(content=[ContentPartTextParam(text=f"Tab 1: http://x/?code={quote_plus(SECRET)}"), image]),
        AssistantMessage(
            content=None, tool_calls=[ToolCall(id="1", function=Function(name="input", arguments=json.dumps({"text": SECRET})))]
        ),
    ]
    sent = scrubbed(messages, REDACTOR)
    assert sent[0].content == f"task with {PLACEHOLDER}"
    assert sent[1].content[0].text == f"Tab 1: http://x/?code={PLACEHOLDER}" and sent[1].content[1] is image
    assert json.loads(sent[2].tool_calls[0].function.arguments) == {"text": PLACEHOLDER}
    assert messages[0].content == f"task with {SECRET}"  # browser-use's own history keeps its values
    assert scrubbed(messages, Redactor({})) is messages


@pytest.mark.parametrize("secret", ["STATUS", "PASSED", "Reason", "AGENT1"])
def test_a_secret_that_spells_a_field_name_or_a_status_leaves_a_valid_result(secret: str) -> None:
    """Matching ignores case, so a secret "STATUS" matches the key `status` of a dumped result: redacting the dump broke
    the model, and the runner crashed publishing the test's end. The model's own words are kept, its texts redacted."""
    result = TestResult(name="t", file="qa.yml", line=1, status=Status.PASSED, reason=f"saw {secret} on https://x/?q={secret}")
    redacted = Redactor({"s": secret}).model(result)
    assert redacted.status is Status.PASSED and redacted.name == "t"
    assert secret not in redacted.reason and "<secret>s</secret>" in redacted.reason
    assert TestResult.model_validate(redacted.model_dump(mode="json")) == redacted
