"""Email in a test, end to end (issue #69): a real MailDev (npm maildev@3) and a fixture app that mails by real SMTP.
Two sign-up tests at concurrency 2 each get their own address (<inbox>), their own verification mail, open it as a
page, check it and follow its one-use link; a test waiting for a mail that never comes fails saying which came
instead; the mail's link token is in no output; a second run (the replay cache on) waits for new mail and passes. The
demo's sign-up test reads its mail from the demo's own catcher (aiosmtpd and our MailDev-compatible API)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import textwrap
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, clean_env, preview_qa_run
from tests.e2e.ocr import ocr
from tests.site.signup_mail import CODE, SUBJECT, SignupShop

pytestmark = pytest.mark.e2e

MAILDEV = "maildev@3.0.0"  # .ci/run installs the same
CACHE = Path(os.environ.get("PREVIEW_QA_CI_CACHE", Path.home() / ".cache" / "preview-qa-ci")) / "maildev"
START_S = 60  # MailDev's start: about 3 s here, far more on a busy machine


@dataclass(frozen=True)
class MailDev:
    url: str
    smtp_port: int

    def mails(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/api/email", timeout=10) as answer:
            return list(json.load(answer))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _maildev_bin() -> Path:
    """MailDev's script: under PREVIEW_QA_MAILDEV_DIR (.ci/run installs it there), else installed into the cache."""
    folder = Path(os.environ.get("PREVIEW_QA_MAILDEV_DIR", CACHE))
    script = folder / "node_modules" / "maildev" / "dist" / "bin" / "maildev.js"
    if not script.is_file():
        subprocess.run(["npm", "install", "--silent", "--no-save", "--prefix", str(folder), MAILDEV], check=True, timeout=300)
    return script


def _answers(url: str, port: int) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/api/healthz", timeout=2) as answer:
        if answer.status == 200:
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                return True
    return False


@pytest.fixture(scope="module")
def maildev() -> Iterator[MailDev]:
    """A MailDev of its own on free ports, until the module's tests end."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to run MailDev (npm maildev@3); install Node.js")
    web, smtp = _free_port(), _free_port()
    command = ["node", str(_maildev_bin()), "--smtp", str(smtp), "--web", str(web), "--ip", "127.0.0.1", "--web-ip", "127.0.0.1"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{web}"
    try:
        import time

        deadline = time.monotonic() + START_S  # a readiness wait, not a timed assertion: it ends when MailDev answers
        while not _answers(url, smtp):
            assert process.poll() is None, f"MailDev exited: {process.stderr.read().decode() if process.stderr else ''}"
            assert time.monotonic() < deadline, f"MailDev did not answer within {START_S} s"
            time.sleep(0.2)
        yield MailDev(url, smtp)
    finally:
        process.terminate()
        process.wait(timeout=30)


def signs_up(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "start": "/signup",
        "steps": [
            {"fill": {"label": "Email", "value": "<inbox>"}},
            {"click": {"role": "button", "name": "Create account"}, "expect": {"text": "We sent a confirmation"}},
            {"email": {"subject": "verify your", "from": "acme"}, "expect": {"text": ["Welcome to Acme"], "title": SUBJECT}},
            {"click": {"role": "link", "name": "Verify"}, "expect": {"text": "Email verified", "url": "/verify"}},
        ],
    }


def manifest(maildev: MailDev) -> str:
    waits = {
        "name": "waits for a welcome",
        "start": "/signup",
        "steps": [
            {"fill": {"label": "Email", "value": "<inbox>"}},
            {"click": {"role": "button", "name": "Create account"}},
            {"email": {"subject": "Welcome", "timeout": 2}},
        ],
    }
    body = {"version": 1, "inbox": {"maildev": maildev.url}, "tests": [signs_up("sign-up one"), signs_up("sign-up two"), waits]}
    return json.dumps(body, indent=2)


@dataclass(frozen=True)
class Runs:
    first: CliRun
    second: CliRun
    app: SignupShop
    mails: list[dict[str, Any]]


@pytest.fixture(scope="module")
def runs(maildev: MailDev, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("email")
    path = folder / "qa.yml"
    path.write_text(textwrap.dedent(manifest(maildev)), encoding="utf-8")
    extra = ("--concurrency", "2", "--cache", str(folder / "cache"))
    with SignupShop(maildev.smtp_port) as app:
        first = preview_qa_run(path, app.url, folder / "first", None, *extra, env=clean_env())
        second = preview_qa_run(path, app.url, folder / "second", None, *extra, env=clean_env())
        yield Runs(first, second, app, maildev.mails())


def _events(run: CliRun, name: str) -> list[dict[str, Any]]:
    found = []
    for path in run.out.rglob("events.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event.get("name", name) == name:
                found.append(event)
    return found


def test_two_sign_ups_at_once_each_read_their_own_mail_and_follow_its_link(runs: Runs) -> None:
    first = runs.first
    assert first.test("sign-up one")["status"] == "passed", first.test("sign-up one")["reason"]
    assert first.test("sign-up two")["status"] == "passed", first.test("sign-up two")["reason"]
    # each test (and run) signed up with its own address, and each address got one mail
    to = [m["to"][0]["address"] for m in runs.mails]
    assert len(to) == len(set(to)) == 6  # three tests, two runs
    assert runs.app.pixels == 0  # the opened mail loaded nothing, and its script never retitled it (the step's check)
    signed_up = [m for m in runs.mails if m["to"][0]["address"].startswith("pqa-sign-up-")]
    assert len(signed_up) == 4
    for mail in signed_up:  # each link was used once, by its test: opened again, it is not valid
        with urllib.request.urlopen(_links(mail)[0], timeout=10) as answer:
            assert "This link is not valid" in answer.read().decode()


def test_a_mail_that_never_comes_fails_its_step_saying_what_came(runs: Runs) -> None:
    result = runs.first.test("waits for a welcome")
    assert result["status"] == "failed"
    assert "with subject 'Welcome' in 2 s (1 other mail arrived: 'Verify your email')" in result["reason"]
    assert "no mail to pqa-waits-for-a-welcome-" in result["reason"]
    assert runs.first.exit_code == 1


def test_the_link_token_is_in_no_output(runs: Runs) -> None:
    tokens = [parse_qs(urlsplit(link).query)["token"][0] for m in runs.mails for link in _links(m)]
    assert tokens
    for run in (runs.first, runs.second):
        text = run.all_output_text()
        assert not [t for t in tokens if t in text] and CODE not in text
        assert "<secret>mail-link-token-1</secret>" in text  # the step's page left for the link, redacted


def _links(mail: dict[str, Any]) -> list[str]:
    return [part for part in mail["html"].split("'") if "/verify?token=" in part]


def test_the_mails_read_are_evidence_in_results_and_report(runs: Runs) -> None:
    (mail,) = runs.first.test("sign-up one")["mails"]
    assert mail["subject"] == SUBJECT and mail["address"].startswith("pqa-sign-up-one-") and mail["links"]
    assert not [link for link in mail["links"] if "token=" in link and "<secret>" not in link]  # its token redacted
    report = (runs.first.out / "report.html").read_text(encoding="utf-8")
    assert "<h3>Mails read</h3>" in report and mail["address"] in report


def test_the_opened_mail_is_its_steps_picture(runs: Runs) -> None:
    step = runs.first.test("sign-up one")["step_results"][2]
    assert (step["name"], step["status"]) == ("Open the newest mail with subject 'verify your' from 'acme'", "passed")
    shot = ocr((runs.first.out / step["screenshot"]).read_bytes())
    assert "welcome to acme" in shot and "verify your email" in shot  # ocr() reads it in lower case
    assert CODE not in shot  # the mail's one-time code is masked (its line with it)


def test_the_second_run_waits_for_a_new_mail_and_passes(runs: Runs) -> None:
    second = runs.second
    assert [second.test(n)["status"] for n in ("sign-up one", "sign-up two")] == ["passed", "passed"]
    opened = [e for e in _events(second, "sign-up one") if e.get("type") == "mail"]
    earlier = {e["address"] for e in _events(runs.first, "sign-up one") if e.get("type") == "mail"}
    assert opened and opened[0]["address"] not in earlier


def test_the_demos_sign_up_reads_its_mail_from_the_demos_own_catcher(demo_run: CliRun) -> None:
    test = demo_run.test("Signup verifies the email")
    assert (test["status"], test["path"], test["usage"]["llm_calls"]) == ("passed", "exact", 0), test["reason"]
    mails = [e for e in _events(demo_run, "Signup verifies the email") if e.get("type") == "mail"]
    assert mails and {m["subject"] for m in mails} == {"Verify your email"}
    assert mails[0]["links"][0].endswith("/verify?token=<secret>mail-link-token-1</secret>")


@pytest.fixture(scope="module")
def agent_run(maildev: MailDev, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[CliRun, list[dict[str, Any]]]]:
    """A `do` goal whose agent reads the test's newest mail with its read_mail tool and opens the mail's link by its
    token's placeholder (the scripted LLM knows no token: it writes the placeholder the mail showed it)."""
    folder = tmp_path_factory.mktemp("email-agent")
    with SignupShop(maildev.smtp_port) as app:
        goal = "[mail] Read the newest mail and open its verification link."
        scenario = {
            "name": "mail",
            "match": "[mail]",
            "turns": [
                {"goal": "Read the mail", "actions": [{"read_mail": {}}]},
                {
                    "goal": "Open its link",
                    "actions": [{"navigate": {"url": f"{app.url}/verify?token=<secret>mail-link-token-1</secret>"}}],
                },
                {
                    "goal": "Report",
                    "done": {"status": "pass", "reason": "The link said Email verified.", "quotes": ["Email verified"]},
                },
            ],
        }
        test = {
            "name": "agent reads its mail",
            "start": "/signup",
            "steps": [
                {"fill": {"label": "Email", "value": "<inbox>"}},
                {"click": {"role": "button", "name": "Create account"}, "expect": {"text": "We sent a confirmation"}},
                {"do": goal, "expect": {"text": "Email verified"}},
            ],
        }
        path = folder / "qa.yml"
        path.write_text(json.dumps({"version": 1, "inbox": {"maildev": maildev.url}, "tests": [test]}), encoding="utf-8")
        with ScriptedLLM([scenario]) as llm:
            run = preview_qa_run(path, app.url, folder / "out", llm, env=clean_env())
            yield run, list(llm.requests)


def test_an_agent_reads_its_mail_fenced_and_opens_its_link_by_the_tokens_placeholder(
    agent_run: tuple[CliRun, list[dict[str, Any]]], maildev: MailDev
) -> None:
    run, calls = agent_run
    result = run.test("agent reads its mail")
    assert result["status"] == "passed", result["reason"]
    asked = json.dumps(calls)
    assert "<untrusted-page-text>\\nSubject: Verify your email" in asked  # fenced as text from outside, like page text
    assert "token=\\u003csecret\\u003email-link-token-1" in asked or "token=<secret>mail-link-token-1" in asked
    assert "Email verified" in json.dumps(calls[-1])  # the link worked: the token was filled in for the agent
    address = next(e["address"] for e in _events(run, "agent reads its mail") if e.get("type") == "mail")
    mail = next(m for m in maildev.mails() if m["to"][0]["address"] == address)
    token = parse_qs(urlsplit(_links(mail)[0]).query)["token"][0]
    assert token not in asked and token not in run.all_output_text()  # the LLM and every output see its placeholder
