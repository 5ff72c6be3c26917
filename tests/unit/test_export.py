"""`preview-qa export`: a passing recording written as a pytest-playwright or @playwright/test file (the generator and
the command; the exported file running green and red is tests/e2e/test_export_e2e.py)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from preview_qa.agent.replay.actions import ON_ELEMENT, ON_PAGE
from preview_qa.engine.replay_cache import RecordingCache
from preview_qa.export import Language, export_test
from preview_qa.manifest.loader import loads
from preview_qa.manifest.models import Manifest
from tests.builders import spec
from tests.conftest import clean_env, run_in_process

ORIGIN = "http://127.0.0.1:4000"
EMAIL = {
    "node_name": "INPUT",
    "attributes": {"id": "email", "type": "text", "placeholder": "Email"},
    "x_path": "html/body/form/input[1]",
    "ax_name": "Email",
}
PASSWORD = {
    "node_name": "INPUT",
    "attributes": {"id": "password", "type": "password", "placeholder": "Password"},
    "x_path": "html/body/form/input[2]",
    "ax_name": "Password",
}
BUTTON = {"node_name": "BUTTON", "attributes": {"type": "submit"}, "x_path": "html/body/form/button", "ax_name": "Log in"}
LOGIN = spec(
    "Log in works",
    7,
    start="/login",
    secrets={"pw": "APP_PASSWORD"},
    expect={"url": "/dashboard", "title": "Home", "text": ["Signed in"], "not_text": ["Error"]},
)


def step(
    actions: list[dict[str, Any]],
    elements: list[dict[str, Any] | None] | None = None,
    goal: str = "g",
    url: str = f"{ORIGIN}/login",
) -> dict[str, Any]:
    return {
        "model_output": {"next_goal": goal, "action": actions},
        "state": {
            "url": url,
            "interacted_element": elements or [None] * len(actions),
            "tabs": [{"target_id": "AAAA1111", "url": url}, {"target_id": "BBBB2222", "url": url}],
        },
        "result": [{} for _ in actions],
    }


def login_history(goal: str = "Fill in the form") -> dict[str, Any]:
    return {
        "history": [
            step([{"navigate": {"url": f"{ORIGIN}/login"}}]),
            step(
                [
                    {"input": {"index": 1, "text": "ada@acme.test"}},
                    {"input": {"index": 2, "text": "<secret>pw</secret>"}},
                    {"click": {"index": 3}},
                ],
                [EMAIL, PASSWORD, BUTTON],
                goal=goal,
            ),
            step([{"done": {"success": True, "text": "ok"}}]),
        ]
    }


def python_of(history: dict[str, Any], test: Any = LOGIN) -> str:
    source = export_test(test, history, ORIGIN, "qa.yml:7", Language.PYTHON)
    ast.parse(source)  # whatever the recording held, the file is Python
    return source


def code_lines(source: str) -> list[str]:
    """The statements of the test function, comments left out."""
    return [
        line.strip()
        for line in source.split("def test_", 1)[1].splitlines()[1:]
        if line.strip() and not line.strip().startswith("#")
    ]


def test_a_login_becomes_role_placeholder_and_secret_from_the_environment() -> None:
    assert code_lines(python_of(login_history())) == [
        'page.goto("/login")',
        'page.get_by_role("textbox", name="Email", exact=True).fill("ada@acme.test")',
        'page.get_by_placeholder("Password", exact=True).fill(os.environ["APP_PASSWORD"])',
        'page.get_by_role("button", name="Log in", exact=True).click()',
        'expect(page).to_have_url(re.compile(re.escape("/dashboard")), timeout=5000)',
        'expect(page).to_have_title(re.compile(re.escape("Home"), re.IGNORECASE), timeout=5000)',
        'expect(page.get_by_text("Signed in").filter(visible=True).first).to_be_visible(timeout=5000)',
        'expect(page.get_by_text("Error").filter(visible=True)).to_have_count(0, timeout=5000)',
    ]


def test_the_typescript_spec_does_the_same() -> None:
    source = export_test(LOGIN, login_history(), ORIGIN, "qa.yml:7", Language.TS)
    assert 'await page.getByPlaceholder("Password", { exact: true }).fill(secret("APP_PASSWORD"));' in source
    assert 'await page.getByRole("button", { name: "Log in", exact: true }).click();' in source
    assert 'await expect(page).toHaveURL(new RegExp(escapeRegExp("/dashboard")), { timeout: 5000 });' in source
    assert source.count("{") == source.count("}")  # its blocks are closed


@pytest.mark.parametrize(
    "element, expected",
    [
        (
            {"node_name": "INPUT", "attributes": {"aria-label": "Search", "type": "password"}, "ax_name": ""},
            'page.get_by_label("Search", exact=True)',
        ),
        (
            {"node_name": "SELECT", "attributes": {}, "ax_name": "Country"},
            'page.get_by_role("combobox", name="Country", exact=True)',
        ),
        (
            {"node_name": "INPUT", "attributes": {"type": "password"}, "ax_name": "Password"},
            'page.get_by_label("Password", exact=True)',
        ),
        ({"node_name": "SPAN", "attributes": {}, "ax_name": "Next"}, 'page.get_by_text("Next", exact=True)'),
        ({"node_name": "DIV", "attributes": {"data-testid": "cart"}, "ax_name": ""}, 'page.get_by_test_id("cart")'),
        ({"node_name": "DIV", "attributes": {"id": "cart"}, "ax_name": ""}, 'page.locator("#cart")'),
        ({"node_name": "DIV", "attributes": {}, "x_path": "html/body/div[2]"}, 'page.locator("xpath=/html/body/div[2]")'),
    ],
)
def test_locators_follow_playwrights_order_and_a_fallback_says_why(element: dict[str, Any], expected: str) -> None:
    source = python_of({"history": [step([{"click": {"index": 1}}], [element])]})
    assert f"{expected}.click()" in code_lines(source)
    fallback = expected.startswith("page.locator(")
    assert ("# no role with a name" in source or "# nothing but its place" in source) == fallback


def one_action(name: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"history": [step([{name: params}], [BUTTON] if "index" in params else None)]}


REPLAYABLE = {  # one recorded example of each action the replay's table runs
    "click": {"index": 1},
    "input": {"index": 1, "text": "x", "clear": False},
    "select_dropdown": {"index": 1, "text": "DE"},
    "upload_file": {"index": 1, "path": "/tmp/a.txt"},
    "scroll": {"index": 1, "down": False, "pages": 2},
    "navigate": {"url": "https://other.example/x", "new_tab": True},
    "go_back": {},
    "send_keys": {"keys": "ctrl+a"},
    "switch": {"tab_id": "2222"},
    "close": {"tab_id": "2222"},
    "find_text": {"text": "Terms"},
    "wait": {"seconds": 3},
}


def test_every_action_the_replay_runs_is_exported_as_code() -> None:
    assert set(REPLAYABLE) == set(ON_ELEMENT) | set(ON_PAGE)  # a new replay handler needs its export too
    for name, params in REPLAYABLE.items():
        source = python_of(one_action(name, params))
        assert "TODO" not in source, name
        assert len(code_lines(source)) >= 1, name


def test_what_cannot_be_expressed_is_a_visible_todo_naming_the_step() -> None:
    source = python_of({"history": [step([{"evaluate": {"code": "document.body.remove()"}}])]})
    assert "# TODO step 0: evaluate" in source
    assert "1 TODO(s) below need a person" in source


def test_page_and_llm_text_cannot_escape_a_comment_or_a_string() -> None:
    goal = "fill\nimport shutil; shutil.rmtree('/')\u2028x = 1"
    history = login_history(goal=goal)
    history["history"][1]["model_output"]["action"][0]["input"]["text"] = 'a"\n)\nimport shutil #\u2028'
    source = python_of(history)
    assert not any(line.startswith(("import shutil", "x = 1")) for line in (s.strip() for s in source.splitlines()))
    assert "\u2028" not in source
    ts = export_test(LOGIN, history, ORIGIN, "qa.yml:7", Language.TS)
    assert "\u2028" not in ts and "\nimport shutil" not in ts


def test_data_checks_become_text_on_the_page_or_a_todo() -> None:
    test = spec("Price", expect={"data": {"price": "$19.99", "items": [1, 2]}})
    source = python_of({"history": []}, test)
    assert 'expect(page.get_by_text("$19.99").filter(visible=True).first).to_be_visible(timeout=5000)' in source
    assert "# TODO: expect.data.items must be [1, 2]" in source


def test_the_test_data_requests_are_todos_never_dropped() -> None:
    """Before, an exported test with before:/after: said nothing of them: the order it needs was never made."""
    data = {"before": [{"method": "POST", "path": "/api/orders", "json": {"item": "anvil"}}]}
    data["after"] = [{"method": "DELETE", "path": "/api/orders/<var>id</var>"}]
    data["before"][0]["save"] = {"id": "$.id"}
    source = python_of({"history": []}, spec("Order page", expect={"url": "/orders"}, **data))
    assert "# TODO: before: preview-qa sent POST /api/orders before the first step; send it in a beforeEach" in source
    assert "# TODO: after: preview-qa sent DELETE /api/orders/<var>id</var> when the test ended, however it ended" in source


def test_an_accessibility_check_is_a_todo_with_its_settings_never_dropped() -> None:
    a11y = {"impact": "critical", "skip_rules": ["color-contrast"], "exclude": ["form.filters"]}
    source = python_of({"history": []}, spec("Orders", expect={"url": "/orders", "accessibility": a11y}))
    assert (
        "# TODO: expect.accessibility was checked with axe-core on the final page: no violation of impact critical or "
        "above, rules color-contrast not run, form.filters excluded; add an axe check" in source
    )
    assert "to_have_url" in source


def test_the_problem_checks_are_todos_with_their_allowed_paths() -> None:
    expect = {"url": "/orders", "console_errors": "none", "requests": {"allow": ["/api/metrics*"]}, "links": {}}
    source = python_of({"history": []}, spec("Orders", expect=expect))
    assert "# TODO: expect.console_errors: none was checked on the whole run: no uncaught exception" in source
    assert "or above or failed (paths /api/metrics* allowed); collect them with page.on('response')" in source
    assert "# TODO: expect.links: {broken: none} requested the final page's same-origin links" in source
    assert "to_have_url" in source


def test_appeared_is_asserted_right_after_the_last_action_and_not_appeared_is_a_todo() -> None:
    toast = spec("Save", expect={"appeared": ["Saved!"], "not_appeared": ["Conflict"], "timeout": 3})
    lines = code_lines(python_of(login_history(), toast))
    click = lines.index('page.get_by_role("button", name="Log in", exact=True).click()')
    assert lines[click + 1] == 'expect(page.get_by_text("Saved!").filter(visible=True).first).to_be_visible(timeout=3000)'
    source = python_of(login_history(), toast)
    assert "# expect.appeared: shown after the action above (it may be gone by the end)" in source
    assert "# TODO: expect.not_appeared 'Conflict' was watched for from the last action that changed the page on" in source
    ts = export_test(toast, login_history(), ORIGIN, "qa.yml:7", Language.TS)
    assert (
        "click();\n  // expect.appeared: shown after the action above (it may be gone by the end)\n  await expect(page.getByText("
        '"Saved!").filter({ visible: true }).first()).toBeVisible({ timeout: 3000 });' in ts
    )


def test_a_test_on_a_device_says_so_as_a_todo() -> None:
    source = python_of({"history": []}, spec("Menu", device="iPhone 15", locale="de-DE"))
    assert "# TODO: it passed under iPhone 15, 393x659 at 3x, mobile, touch, locale de-DE; run it with the same" in source
    assert "TODO" not in python_of({"history": []}, spec("Menu"))


def write_results(folder: Path, status: str, history: dict[str, Any] | None) -> None:
    test_folder = folder / "tests" / "log-in"
    test_folder.mkdir(parents=True)
    artifacts = {}
    if history is not None:
        (test_folder / "history.json").write_text(json.dumps(history), encoding="utf-8")
        artifacts["history"] = "tests/log-in/history.json"
    (folder / "results.json").write_text(
        json.dumps(
            {"base_url": ORIGIN, "tests": [{"name": "Log in works", "status": status, "path": "agent", "artifacts": artifacts}]}
        ),
        encoding="utf-8",
    )


MANIFEST = """version: 1
tests:
  - name: Log in works
    start: /login
    task: Log in with <secret>pw</secret>
    secrets: {pw: APP_PASSWORD}
    expect: {url: /dashboard}
"""


def test_the_command_writes_a_passing_runs_test_and_refuses_the_rest(tmp_path: Path) -> None:
    (tmp_path / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    write_results(tmp_path / "out", "passed", login_history())
    done = run_in_process(["export", "qa.yml", "--test", "Log in works", "--results", "out"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = (tmp_path / "test_log_in_works.py").read_text(encoding="utf-8")
    assert 'os.environ["APP_PASSWORD"]' in written and "<secret>" not in written
    again = run_in_process(["export", "qa.yml", "--test", "Log in works", "--results", "out"], cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr

    write_results(tmp_path / "failed", "failed", login_history())
    refused = run_in_process(["export", "qa.yml", "--test", "Log in works", "--results", "failed", "-o", "-"], cwd=tmp_path)
    assert refused.returncode == 2 and "only a passing run is exported" in refused.stderr
    unknown = run_in_process(["export", "qa.yml", "--test", "Nope", "--results", "out", "-o", "-"], cwd=tmp_path)
    assert unknown.returncode == 2 and "has no test named 'Nope'" in unknown.stderr


def test_the_command_counts_the_todos_a_person_must_write(tmp_path: Path) -> None:
    manifest = MANIFEST.replace("expect: {url: /dashboard}", "expect: {url: /dashboard, accessibility: {impact: serious}}")
    (tmp_path / "qa.yml").write_text(manifest, encoding="utf-8")
    write_results(tmp_path / "out", "passed", login_history())
    done = run_in_process(["export", "qa.yml", "--test", "Log in works", "--results", "out"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "(1 TODO(s) to write by hand)" in done.stdout  # the file's docstring, which counts them too, is no TODO
    assert "1 TODO(s) below need a person" in (tmp_path / "test_log_in_works.py").read_text(encoding="utf-8")


def test_the_command_exports_from_the_replay_cache(tmp_path: Path) -> None:
    (tmp_path / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    from preview_qa.manifest import loader

    manifest: Manifest = loader.load(tmp_path / "qa.yml")
    RecordingCache(tmp_path / "cache", manifest, "openai", None).store(manifest.tests[0], ORIGIN, login_history())
    done = run_in_process(
        ["export", "qa.yml", "--test", "Log in works", "--cache", "cache", "--lang", "ts", "-o", "-"],
        cwd=tmp_path,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stderr
    assert 'test("Log in works", async ({ page: firstPage }) => {' in done.stdout
    other_model = run_in_process(["export", "qa.yml", "--test", "Log in works", "--cache", "cache", "--model", "x"], cwd=tmp_path)
    assert other_model.returncode == 2 and "holds no recording" in other_model.stderr


def test_a_2fa_code_is_a_visible_todo_never_the_seed_typed() -> None:
    """A TOTP seed's variable holds the seed: typing it would be wrong, so the step that typed a fresh code is a TODO."""
    test = spec("2FA works", 7, start="/2fa", secrets={"otp": {"env": "OTP_SEED", "totp": True}})
    history = {
        "history": [
            step([{"input": {"index": 1, "text": "<secret>otp_bu_2fa_code</secret>"}}], [EMAIL]),
            step([{"done": {"success": True, "text": "ok"}}]),
        ]
    }
    source = python_of(history, test)
    assert "# TODO step 0: input" in source and "OTP_SEED" in source and "pyotp.TOTP(seed).now()" in source
    assert not any("OTP_SEED" in line for line in code_lines(source))  # no statement types the seed


def test_an_email_step_and_an_inbox_address_are_todos_saying_what_to_write() -> None:
    manifest = loads(
        "version: 1\ninbox: {maildev: 'http://m:1080'}\ntests:\n  - name: Sign up\n    steps:\n"
        "      - fill: {label: Email, value: <inbox>}\n      - email: {subject: Verify}\n        expect: {text: Welcome}\n"
    )
    for language in Language:
        source = export_test(manifest.tests[0], {}, ORIGIN, "qa.yml:4", language)
        assert "fill in a fresh address your mail catcher receives, where preview-qa typed <inbox>" in source
        assert "open the newest mail to that address with subject 'Verify'" in source and "Welcome" in source
