"""End to end: a secret sent through a GET form (spaces and `&=!`, so the URL holds it percent-encoded), a secret typed
into a visible text field, and an extra header's value the page prints, in a simulated GitHub runner with the replay
cache and --verbose: no form of any of them, nor of the API key the provider's variable gives (which the LLM puts
in a reason), in any text sink, and none readable by OCR in any screenshot, GIF frame or
image sent to the LLM, while the same OCR reads a control string typed into the same field."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from PIL import Image, ImageSequence
from pytest_httpserver import HTTPServer

from preview_qa.demo.scripted_llm import ScriptedLLM, task_text
from tests.conftest import clean_env
from tests.e2e.ocr import ocr
from tests.fakes.github import FakeGitHub, StepLog, read_log, runner_env
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

SEARCHED = "Quokka Marmalade &=! 7351"  # submitted through the GET form
TYPED = "Pangolin Tapioca &=! 8264"  # typed into the visible field, then submitted in a later step
TOKEN = "Narwhal Lasagna 5183"  # an extra header's value; the page prints it
API_KEY = "sk-Axolotl-Risotto-9043"  # in OPENAI_API_KEY, not on the command line: the key as the run resolves it
KEYED_REASON = "The search ran; the key was {}."  # the control's reason, so the key reaches every output
CONTROL = "Wombat Pancake 2946"  # no secret: typed into the same field, OCR must read it
SECRET_WORDS = ["quokka", "marmalade", "pangolin", "tapioca", "narwhal", "lasagna", "axolotl", "risotto"]
CONTROL_WORDS = ["wombat", "pancake"]
STDERR_INJECTION = "typing the code\n::error::pwned-via-stderr\n##[error]legacy-via-stderr"

MANIFEST = """\
version: 1
defaults: {max_steps: 5, timeout: 150, start: /search}
tests:
  - name: secret search
    task: "[secret-search] Search for the access code <secret>code</secret>."
    secrets: {code: QA_SEARCH_CODE}
    expect: {url: "/search?code=", text: [You searched for]}
  - name: secret typed, a check fails
    task: "[secret-typed] Type the access code <secret>typed</secret>, then search."
    secrets: {typed: QA_TYPED_CODE}
    expect: {text: [No such customer]}
  - name: control search
    task: "[control] Search for the access code Wombat Pancake 2946."
"""
SCENARIOS = [
    {
        "match": "[secret-search]",
        "turns": [
            {
                "actions": [
                    {"input": {"element": "Access code", "text": "<secret>code</secret>"}},
                    {"click": {"element": "Search"}},
                ]
            },
            {"done": {"status": "pass", "reason": "The search ran."}},
        ],
    },
    {
        "match": "[secret-typed]",
        "turns": [
            {"actions": [{"input": {"element": "Access code", "text": "<secret>typed</secret>"}}]},
            {"actions": [{"wait": {"seconds": 1}}]},
            {"actions": [{"click": {"element": "Search"}}]},
            {"done": {"status": "pass", "reason": "The search ran."}},
        ],
    },
    {
        "match": "[control]",
        "turns": [
            {"actions": [{"input": {"element": "Access code", "text": CONTROL}}], "goal": STDERR_INJECTION},
            {"actions": [{"click": {"element": "Search"}}]},
            {"done": {"status": "pass", "reason": KEYED_REASON.format(API_KEY)}},
        ],
    },
]


def forms(value: str) -> list[str]:
    """Written out here, independently of preview_qa.secrets.redact: the forms docs/security.md promises are never in an
    output."""
    percent = [quote(value, safe=""), quote(value), quote_plus(value), quote_plus(value, safe="/")]
    percent += [re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), p) for p in percent]
    return list(
        {
            value,
            *percent,
            json.dumps(value)[1:-1],
            json.dumps(value, ensure_ascii=False)[1:-1],
            html.escape(value),
            html.escape(value, quote=False),
        }
    )


ALL_FORMS = [form for secret in (SEARCHED, TYPED, TOKEN, API_KEY) for form in forms(secret)]


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    workspace: Path
    summary: str
    llm_requests: list[dict[str, Any]]
    comments: list[str]
    site_paths: list[str]

    @property
    def out(self) -> Path:
        return self.workspace / "out"

    def test(self, name: str) -> dict[str, Any]:
        results = json.loads((self.out / "results.json").read_text(encoding="utf-8"))
        return next(t for t in results["tests"] if t["name"] == name)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[Run]:
    workspace = tmp_path_factory.mktemp("secret-forms") / "workspace"
    workspace.mkdir()
    (workspace / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    server = HTTPServer()
    server.start()
    github = FakeGitHub(server)
    env = clean_env(
        **runner_env(workspace, api_url=github.url), QA_SEARCH_CODE=SEARCHED, QA_TYPED_CODE=TYPED, OPENAI_API_KEY=API_KEY
    )
    env.pop("PREVIEW_QA_NO_CACHE")  # the replay cache is a sink too
    try:
        with ScriptedLLM(SCENARIOS) as llm:
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "preview_qa",
                    "run",
                    "qa.yml",
                    "--base-url",
                    site.url,
                    "--out",
                    "out",
                    "--cache",
                    "cache",
                    "--llm-base-url",
                    llm.url,
                    "--model",
                    "scripted",
                    "--extra-header",
                    f"X-Preview-Token: {TOKEN}",
                    "--concurrency",
                    "3",
                    "--verbose",
                ],
                env=env,
                cwd=workspace,
                capture_output=True,
                text=True,
                timeout=600,
            )
            yield Run(
                proc.returncode,
                proc.stdout,
                proc.stderr,
                workspace,
                Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8"),
                list(llm.requests),
                [c["body"] for c in github.comments],
                list(site.requests),
            )
    finally:
        server.stop()


def test_the_secrets_really_went_through_the_form_the_url_and_the_header(run: Run) -> None:
    assert run.exit_code == 1, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.test("secret search")["status"] == "passed", run.test("secret search")
    assert run.test("control search")["status"] == "passed", run.test("control search")
    typed = run.test("secret typed, a check fails")
    assert typed["status"] == "failed" and typed["reason"].startswith("expectation text failed"), typed
    assert f"/search?code={quote_plus(SEARCHED)}" in run.site_paths  # the GET form sent it percent-encoded
    assert f"/search?code={quote_plus(TYPED)}" in run.site_paths
    # ...and what reached the outputs is the placeholder, in the very place the encoded value was
    assert run.test("secret search")["final_url"].endswith("/search?code=<secret>code</secret>")
    assert "Preview token: <secret>header:X-Preview-Token</secret>" in json.dumps(run.llm_requests)
    assert run.test("control search")["reason"] == KEYED_REASON.format("<secret>api-key</secret>")


def _text_sinks(run: Run) -> dict[str, str]:
    shown = read_log(run.stdout)  # ::add-mask:: lines name the secrets to the runner, which never displays them
    stdout = "\n".join([*shown.displayed, *(f"{c.properties} {c.message}" for c in shown.commands if c.name != "add-mask")])
    sinks = {
        "stdout (annotations included)": stdout,
        "stderr (--verbose)": run.stderr,
        "job summary": run.summary,
        "PR comment": "\n".join(run.comments),
        "LLM requests": json.dumps(run.llm_requests, ensure_ascii=False),
    }
    for folder in ("out", "cache"):
        for path in sorted((run.workspace / folder).rglob("*")):
            if path.is_file() and path.suffix not in (".png", ".gif"):
                sinks[str(path.relative_to(run.workspace))] = path.read_text(encoding="utf-8", errors="replace")
    return sinks


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_no_form_of_any_secret_in_any_text_sink(run: Run) -> None:
    sinks = _text_sinks(run)
    assert {"out/results.json", "out/junit.xml", "out/report.html", "out/comment.md"} <= set(sinks)
    for kind in ("events.jsonl", "history.json"):
        assert [name for name in sinks if name.endswith(kind)], f"no {kind} written"
    assert [name for name in sinks if name.startswith("cache/")], "the passing tests were not cached"
    assert run.comments and "secret typed" in run.comments[0]  # the failure's details are in the comment
    for name, text in sinks.items():
        leaked = [form for form in ALL_FORMS if form.lower() in text.lower()]
        assert not leaked, f"{name} holds {leaked}"
        # nor a part of one: browser-use shortens long URLs to their start before it calls the LLM
        assert not [word for word in SECRET_WORDS if word in text.lower()], f"{name} holds part of a secret"
    for body in run.llm_requests:  # each message text too, as the provider decodes it
        leaked = [form for text in _strings(body) for form in ALL_FORMS if form.lower() in text.lower()]
        assert not leaked, leaked


def test_stderr_is_as_safe_as_stdout(run: Run) -> None:
    """The runner reads stderr unordered against stdout's ::stop-commands::; here read on its own, as if first."""
    everything = run.stdout + run.stderr
    assert "pwned-via-stderr" in everything, "the LLM's injection attempt never reached the log: the test proves nothing"
    assert read_log(run.stderr).commands == []
    log: StepLog = read_log(run.stdout)
    assert [c.name for c in log.commands if c.name != "add-mask"] == ["stop-commands", "error"], log.commands
    assert "typing the code" in run.stdout  # --verbose's log went inside the protected region on stdout


# --- pixels --------------------------------------------------------------------------------------------------------


def _frames(gif: Path) -> list[bytes]:
    frames = []
    with Image.open(gif) as image:
        for frame in ImageSequence.Iterator(image):
            buffer = io.BytesIO()
            frame.convert("RGB").save(buffer, "PNG")
            frames.append(buffer.getvalue())
    return frames


def _llm_images(run: Run) -> dict[str, list[bytes]]:
    """Every image in the recorded LLM requests, by the test whose task the request carried."""
    found: dict[str, list[bytes]] = {}
    for body in run.llm_requests:
        match = re.search(r"\[([\w-]+)\]", task_text(body))
        for message in body.get("messages") or []:
            for part in message.get("content") if isinstance(message.get("content"), list) else []:
                url = (part.get("image_url") or {}).get("url", "") if isinstance(part, dict) else ""
                if url.startswith("data:image/"):
                    found.setdefault(match.group(1) if match else "?", []).append(base64.b64decode(url.split(",", 1)[1]))
    return found


@pytest.fixture(scope="module")
def readings(run: Run) -> dict[str, dict[str, list[str]]]:
    """OCR of every image: test folder or LLM scenario -> kind (step, final, gif, llm) -> texts. Read once, in parallel."""
    assert shutil.which("tesseract"), "tesseract-ocr is not installed (apt-get install tesseract-ocr)"
    jobs: list[tuple[str, str, bytes]] = []
    for folder in sorted((run.out / "tests").iterdir()):
        for png in sorted(folder.glob("*.png")):
            jobs.append((folder.name, "final" if png.name == "final.png" else "step", png.read_bytes()))
        if (folder / "run.gif").exists():
            jobs += [(folder.name, "gif", frame) for frame in _frames(folder / "run.gif")]
    for scenario, images in _llm_images(run).items():
        jobs += [(scenario, "llm", image) for image in images]
    unique = {hashlib.sha256(png).hexdigest(): png for _, _, png in jobs}
    with ThreadPoolExecutor(max_workers=2) as pool:
        texts = dict(zip(unique, pool.map(ocr, unique.values()), strict=True))
    found: dict[str, dict[str, list[str]]] = {}
    for owner, kind, png in jobs:
        found.setdefault(owner, {}).setdefault(kind, []).append(texts[hashlib.sha256(png).hexdigest()])
    return found


def test_ocr_reads_the_control_string_in_every_kind_of_image(run: Run, readings: dict[str, dict[str, list[str]]]) -> None:
    control_folder = next(name for name in readings if name.startswith("control-search"))
    for owner, kind in [(control_folder, "step"), (control_folder, "final"), (control_folder, "gif"), ("control", "llm")]:
        texts = readings.get(owner, {}).get(kind, [])
        assert any(all(word in text for word in CONTROL_WORDS) for text in texts), (owner, kind, texts)


def test_ocr_reads_no_secret_in_any_image(run: Run, readings: dict[str, dict[str, list[str]]]) -> None:
    kinds = {kind for by_kind in readings.values() for kind in by_kind}
    assert kinds == {"step", "final", "gif", "llm"}, kinds
    assert {"secret-search", "secret-typed"} <= set(readings)  # the secret tests' LLM calls carried screenshots
    for owner, by_kind in readings.items():
        for kind, texts in by_kind.items():
            for text in texts:
                assert not [w for w in SECRET_WORDS if w in text], (owner, kind, text)


# --- the page cannot read what the masking knows ---------------------------------------------------------------------

SPYING_PAGE = """<!doctype html><body><input id="field"><p id="text">nothing here</p><script>
const log = [], push = Array.prototype.push;
window.spied = log;
for (const [owner, name] of [[CSSStyleDeclaration.prototype, "setProperty"], [String.prototype, "includes"],
                             [String.prototype, "toLowerCase"], [String.prototype, "replace"], [Array.prototype, "some"],
                             [Array.prototype, "map"], [JSON, "parse"]]) {
  const original = owner[name];
  owner[name] = function (...args) {
    let text = name + ":";
    for (let i = 0; i < args.length; i++) text += String(args[i]) + ",";
    push.call(log, text);
    return original.apply(this, args);
  };
}
new MutationObserver((changes) => { for (const c of changes) push.call(log, "mutation:" + c.target.id + ":" + c.attributeName); })
  .observe(document, {subtree: true, attributes: true});
</script></body>"""


def test_the_page_sees_a_style_on_its_own_field_but_no_secret_value() -> None:
    """The page spies on every builtin the masking script uses and on DOM changes; it learns that its own field was
    masked, never the values the masking looked for (one of which it never had)."""
    import asyncio

    from playwright.async_api import async_playwright

    from preview_qa.agent.guards.masking import Mask, screenshot
    from preview_qa.secrets.redact import Redactor

    never_given = "Capybara Soufflé 6630"

    async def main() -> tuple[list[str], str, str]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = await browser.new_page()
            await page.set_content(SPYING_PAGE)
            await page.fill("#field", SEARCHED)
            await screenshot(page, Mask(Redactor({"code": SEARCHED, "other": never_given})))
            spied = await page.evaluate("() => window.spied")
            style = await page.evaluate("() => document.getElementById('field').getAttribute('style')")
            dom = await page.content()
            await browser.close()
            return spied, style, dom

    spied, style, dom = asyncio.run(main())
    assert "-webkit-text-security: disc" in style
    assert "mutation:field:style" in spied  # what the page may know: its own field got a style
    seen = "\n".join([*spied, dom]).lower()
    assert not [form for form in forms(never_given) if form.lower() in seen]
    assert not [s for s in spied if not s.startswith("mutation:")]  # no builtin of the page's own world was used
