"""report.html as the real reporters write it: worst tests first, every text escaped, errors bounded, written on cancel."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path

from preview_qa.agent.page.quiet import Settling
from preview_qa.agent.page.settle import Settled
from preview_qa.events import Event, Observed, RunFinished, RunStarted, StepRecorded, TestFinished
from preview_qa.reporters import Dispatcher
from preview_qa.reporters.artifacts import ArtifactsReporter
from preview_qa.reporters.html import ERROR_LIMIT, HtmlReporter
from preview_qa.reporters.output.files import safe_name
from preview_qa.reporters.output.files import test_dir as folder_of
from preview_qa.results import Emulation, ExpectationOutcome, QuoteCheck, RunResult, Status, TestResult, Usage, Viewport
from tests.builders import result

SCRIPT = (Path(__file__).parents[2] / "src/preview_qa/reporters/templates/report.js").read_text(encoding="utf-8")
HOSTILE = 'Pricing <script>alert(1)</script> "quoted" <img src=x onerror=alert(2)>'


class Elements(HTMLParser):
    """Every start tag and its attributes, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _render(out: Path, tests: list[TestResult], events: Sequence[Event] = (), notice: str | None = None) -> str:
    """Run the events through the artifacts and HTML reporters, as the CLI does, and return report.html."""
    dispatch = Dispatcher([ArtifactsReporter(out), HtmlReporter(out)])
    dispatch(RunStarted(manifest="qa.yml", base_url="http://x", test_names=[t.name for t in tests]))
    for event in events:
        dispatch(event)
    for test in tests:
        dispatch(TestFinished(result=test))
    dispatch(RunFinished(result=RunResult(manifest="qa.yml", base_url="http://x", started_at="now", tests=tests, notice=notice)))
    assert not dispatch.broken
    return (out / "report.html").read_text(encoding="utf-8")


def test_failed_and_errored_tests_come_first_then_manifest_order(tmp_path: Path) -> None:
    page = _render(
        tmp_path,
        [
            result("p1", Status.PASSED),
            result("f1", Status.FAILED),
            result("s1", Status.SKIPPED),
            result("e1", Status.ERRORED),
            result("f2", Status.FAILED),
        ],
    )
    order = [page.index(f">{name}</a>") for name in ("e1", "f1", "f2", "p1", "s1")]
    assert order == sorted(order)


def test_page_and_llm_text_is_escaped_everywhere(tmp_path: Path) -> None:
    test = result(
        HOSTILE,
        Status.FAILED,
        reason=f"agent: {HOSTILE}",
        causes=[HOSTILE],
        expectations=[ExpectationOutcome(check="text", expected=HOSTILE, found=HOSTILE, ok=False)],
        agent_report={"status": "fail", "reason": HOSTILE},
        final_url=f"javascript:alert(1)//{HOSTILE}",
        quotes=[QuoteCheck(quote=HOSTILE, found=False), QuoteCheck(quote="Pricing", found=True, where=HOSTILE)],
    )
    events = [
        StepRecorded(
            name=HOSTILE,
            number=1,
            goal=HOSTILE,
            actions=[{"input": {"text": HOSTILE}}],
            url=HOSTILE,
            error=HOSTILE,
            screenshot_png=b"not a png",
        ),
        Observed(name=HOSTILE, kind="console_error", error=True, detail={"text": HOSTILE, "url": HOSTILE}),
        Observed(name=HOSTILE, kind="llm_error", error=True, detail={"purpose": "agent", "status": 500, "message": HOSTILE}),
    ]
    page = _render(tmp_path, [test], events, notice=HOSTILE)
    parser = Elements()
    parser.feed(page)
    tags = [tag for tag, _ in parser.tags]
    assert tags.count("script") == 1 and tags.count("img") == 1  # the one script is the filter's (below)
    assert page.split("<script>", 1)[1].split("</script>", 1)[0] == SCRIPT
    assert not any(k.startswith("on") for _, attrs in parser.tags for k in attrs)
    assert not any((attrs.get("href") or "").startswith("javascript") for _, attrs in parser.tags)
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 12


def test_the_agent_s_quotes_are_listed_found_or_not_and_a_pass_on_its_word_is_marked(tmp_path: Path) -> None:
    word = "on the agent's word: it quoted nothing from the page, and the test has no page check"
    quoted = [
        QuoteCheck(quote="Payment declined", found=True, where="at step 1, on /order"),
        QuoteCheck(quote="Thanks", found=False),
    ]
    page = _render(tmp_path, [result("quoted", Status.FAILED, quotes=quoted), result("said so", unverified=word)])
    assert "<td>Payment declined</td><td>at step 1, on /order</td>" in page
    assert "<td>Thanks</td><td>no page of this run showed it</td>" in page
    assert page.count('<span class="mark">on the agent&#39;s word: it quoted nothing') == 2  # the table and its card


def test_steps_show_goal_actions_and_only_screenshots_that_exist(tmp_path: Path) -> None:
    name = "two steps"
    shot = f"{folder_of(name)}/step-02.png"
    steps = [
        StepRecorded(
            name=name,
            number=n,
            goal=f"goal {n}",
            actions=[{"click": {"index": n}}],
            url="http://x/a",
            error=None,
            screenshot_png=b"png" if n == 2 else None,
        )
        for n in (1, 2)
    ]
    page = _render(tmp_path, [result(name, Status.FAILED, steps=2)], steps)
    assert "goal 1" in page and "goal 2" in page
    assert '<code>Clicked an unnamed element</code> <span class="detail">index 2</span>' in page  # no element recorded
    assert page.count(f'src="{shot}"') == 1 and page.count("no screenshot") == 1


def test_each_action_names_its_element_by_role_and_name_with_the_index_as_a_detail(tmp_path: Path) -> None:
    sign_in = {"index": 7, "role": "button", "name": "Sign in", "tag": "button"}
    email = {"index": 3, "role": "textbox", "name": "Email", "tag": "input"}
    step = StepRecorded(
        name="login",
        number=1,
        goal="log in",
        url="http://x/dashboard",
        error=None,
        screenshot_png=None,
        actions=[{"input": {"index": 3, "text": "demo@acme.test"}}, {"click": {"index": 7}}],
        elements=[email, sign_in],
    )
    page = _render(tmp_path, [result("login", Status.FAILED, steps=1)], [step])
    assert (
        '<code>Typed &#39;demo@acme.test&#39; into textbox &#39;Email&#39;</code> <span class="detail">index 3</span>'
    ) in page
    assert '<code>Clicked button &#39;Sign in&#39;</code> <span class="detail">index 7</span>' in page


def test_dropped_actions_are_listed_under_their_step_and_the_filled_form_comes_before_the_result(tmp_path: Path) -> None:
    name = "greedy"
    step = StepRecorded(
        name=name,
        number=1,
        goal="look around",
        url="http://x/",
        error=None,
        screenshot_png=b"after",
        actions=[{"scroll": {"down": True}}],
        form_screenshot_png=b"form",
    )
    dropped = Observed(
        name=name,
        kind="actions_dropped",
        error=False,
        detail={
            "step": 1,
            "why": "over max_actions_per_step=1",
            "actions": [{"click": {"index": 4}}],
            "elements": [{"index": 4, "role": "link", "name": "Pricing", "tag": "a"}],
        },
    )
    page = _render(tmp_path, [result(name, Status.FAILED, steps=1)], [step, dropped])
    assert "Not run: over max_actions_per_step=1</div>" in page
    assert '<ul class="dropped"><li><code>Clicked link &#39;Pricing&#39;</code> <span class="detail">index 4</span>' in page
    form, after = (page.index(f'src="{folder_of(name)}/{f}"') for f in ("step-01-form.png", "step-01.png"))
    assert form < after


class _Retried(TestResult):
    """A result as #13's retries will write it: with `attempts`."""

    __test__ = False
    attempts: int = 1


def test_the_table_shows_each_tests_path_attempts_and_why_a_replay_fell_back(tmp_path: Path) -> None:
    fell_back = Observed(
        name="replay broke",
        kind="replay_fell_back",
        error=False,
        detail={"reason": "the recorded steps could not be replayed: element 4 is gone"},
    )
    tests = [
        result("replay broke", Status.PASSED, path="replay-fell-back"),
        result("replayed", Status.PASSED, path="replayed"),
        result("never ran", Status.SKIPPED, path="none"),
        _Retried(name="flaky", file="qa.yml", line=1, status=Status.PASSED, reason="ok", attempts=3),
    ]
    page = _render(tmp_path, tests, [fell_back])
    rows = {t.name: page[page.index(f">{t.name}</a>") :].split("</tr>")[0] for t in tests}
    assert "replay → agent" in rows["replay broke"]
    assert (
        "the replay fell back to the agent: the recorded steps could not be replayed: element 4 is gone" in rows["replay broke"]
    )
    assert '<td class="path">replayed</td>' in rows["replayed"] and '<td class="path">not run</td>' in rows["never ran"]
    assert '<td class="num attempts">3</td>' in rows["flaky"] and '<td class="num attempts">1</td>' in rows["replayed"]
    assert '<td class="num attempts"></td>' in rows["never ran"]


def test_error_list_is_bounded_and_says_how_many_were_left_off(tmp_path: Path) -> None:
    events: list[Event] = [
        Observed(name="noisy", kind="console_error", error=True, detail={"text": f"error {i}"}) for i in range(ERROR_LIMIT + 7)
    ]
    events.append(Observed(name="noisy", kind="expectation", error=True, detail={"check": "url"}))  # has its own table
    page = _render(tmp_path, [result("noisy", Status.FAILED)], events)
    assert f"Errors ({ERROR_LIMIT + 7})" in page and "7 more in events.jsonl" in page
    assert f"error {ERROR_LIMIT - 1}<" in page and f"error {ERROR_LIMIT}<" not in page


def test_report_is_written_when_the_run_ends_even_cancelled(tmp_path: Path) -> None:
    page = _render(
        tmp_path, [result("done", Status.PASSED), result("cut short", Status.ERRORED, reason="cancelled")], notice="cancelled"
    )
    assert "<strong>Note:</strong> cancelled" in page and "cut short" in page


def test_events_of_a_folder_elsewhere_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text('{"type": "console_error", "error": true, "text": "from outside"}\n', encoding="utf-8")
    test = result("merged", Status.FAILED, artifacts={"events": "../elsewhere.jsonl"})
    page = HtmlReporter(tmp_path / "out").render(
        RunResult(manifest="qa.yml", base_url="http://x", started_at="now", tests=[test])
    )
    assert "from outside" not in page and "merged" in page


def test_a_test_on_a_device_says_which(tmp_path: Path) -> None:
    phone = Emulation(device="iPhone 15", viewport=Viewport(width=393, height=659), device_scale_factor=3, is_mobile=True)
    page = _render(tmp_path, [result("phone", emulation=phone), result("desktop")])
    assert page.count("Emulated: ") == 1 and "Emulated: iPhone 15, 393x659 at 3x, mobile</p>" in page


def test_every_test_says_what_settling_waited_for_before_its_checks(tmp_path: Path) -> None:
    settled = {
        "saved": Settled(Settling.SETTLED, 3.14, ["POST /api/save"], "http://x/p", "http://x/p"),
        "polls": Settled(Settling.BOUND_REACHED, 5.0, ["GET /api/poll"], "http://x/live", "http://x/live"),
        "quiet": Settled(Settling.SETTLED, 0.0, from_url="http://x/", to_url="http://x/"),
    }
    events = [s.detail().observed(name) for name, s in settled.items()]
    tests = [result("saved", Status.PASSED), result("polls", Status.FAILED), result("quiet", Status.PASSED)]
    page = _render(tmp_path, tests, events)
    details = {t.name: page[page.index(f'id="{safe_name(t.name)}"') :].split("</details>")[0] for t in tests}
    assert "Before the checks, settling: waited 3.1 s for POST /api/save</p>" in details["saved"]
    assert (
        "Before the checks, settling: waited 5.0 s for GET /api/poll and judged the page as it was at the bound</p>"
        in details["polls"]
    )
    assert "Before the checks, settling: the page was quiet</p>" in details["quiet"]


ROWS = [("failed", "b"), ("failed", "c"), ("passed", "a")]


def test_the_filter_has_a_box_per_status_shown_and_only_its_own_script_may_run(tmp_path: Path) -> None:
    page = _render(tmp_path, [result("a", Status.PASSED), result("b", Status.FAILED), result("c", Status.FAILED)])
    parser = Elements()
    parser.feed(page)
    boxes = [(a["value"], "checked" in a) for tag, a in parser.tags if tag == "input" and a.get("type") == "checkbox"]
    assert boxes == [("failed", True), ("passed", True)]  # the worst first, each ticked
    assert [a for tag, a in parser.tags if tag == "input" and a.get("type") == "search"]
    assert '<label><input type="checkbox" value="failed" checked> failed (2)</label>' in page
    csp = next(a["content"] for tag, a in parser.tags if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp and "unsafe-inline'" not in csp.split("script-src", 1)[1]
    rows = [a for tag, a in parser.tags if tag == "tr" and "data-status" in a]
    assert [(r["data-status"], r["data-test"]) for r in rows] == [
        ("failed", safe_name("b")),
        ("failed", safe_name("c")),
        ("passed", safe_name("a")),
    ]


def test_the_status_cell_holds_only_the_badge_and_the_cost_column_shows_only_with_a_price(tmp_path: Path) -> None:
    flaky = _Retried(name="flaky", file="qa.yml", line=1, status=Status.PASSED, reason="ok", attempts=2, flaky=True)
    page = _render(tmp_path, [flaky, result("free", Status.PASSED)])
    row = page[page.index('<td class="status">') :].split("</tr>")[0]
    status, name = row.split("</td>")[:2]
    assert "mark" not in status and '<span class="mark">flaky: passed on attempt 2</span>' in name
    assert "<th>Cost</th>" not in page and "<th>Tokens</th>" in page
    priced = _render(tmp_path / "priced", [result("paid", Status.PASSED, usage=Usage(total_tokens=10, cost_usd=0.0123))])
    assert "<th>Cost</th>" in priced and "$0.0123" in priced


def test_the_run_says_how_many_http_requests_its_calls_took_when_the_provider_s_client_asked_again(tmp_path: Path) -> None:
    retried = _render(tmp_path, [result("a", Status.PASSED, usage=Usage(llm_calls=3, llm_requests=5, total_tokens=10))])
    assert "3 LLM call(s) in 5 HTTP requests (the provider's client asked again), 10 tokens" in retried
    once = _render(tmp_path / "once", [result("a", Status.PASSED, usage=Usage(llm_calls=3, llm_requests=3, total_tokens=10))])
    assert "3 LLM call(s), 10 tokens" in once
