"""Manifest errors as a user sees them: one line, `file:line: key: message`, and exit code 2 before any browser starts."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preview_qa.config import RunConfig, Vision
from preview_qa.errors import ManifestError
from preview_qa.manifest import loader as manifest
from preview_qa.manifest.yaml_source import MAX_BYTES, MAX_NODES
from tests.conftest import clean_env, run_in_process
from tests.site import DemoSite

OK_TEST = "  - name: a\n    task: t\n"

ERRORS = [
    (
        "typo in a test key",
        f"version: 1\ntests:\n{OK_TEST}    expct: {{url: /x}}\n",
        "qa.yml:5: tests[0].expct: unknown key 'expct'; did you mean 'expect'?",
    ),
    (
        "typo in a nested key",
        f"version: 1\ntests:\n{OK_TEST}    expect:\n      urll: /x\n",
        "qa.yml:6: tests[0].expect.urll: unknown key 'urll'; did you mean 'url'?",
    ),
    (
        "typo in a top-level key",
        "version: 1\ntestz:\n" + OK_TEST,
        "2 problems in qa.yml:\n  qa.yml:1: tests: this required key is missing.\n"
        "  qa.yml:2: testz: unknown key 'testz'; did you mean 'tests'?",
    ),
    (
        "typo in defaults",
        "version: 1\ndefaults:\n  max_step: 3\ntests:\n" + OK_TEST,
        "qa.yml:3: defaults.max_step: unknown key 'max_step'; did you mean 'max_steps'?",
    ),
    (
        "no near key lists the valid ones",
        f"version: 1\ntests:\n{OK_TEST}    zzzzqqq: 1\n",
        "qa.yml:5: tests[0].zzzzqqq: unknown key 'zzzzqqq'; valid keys are: after, allow_javascript, "
        "allow_server_errors, allowed_domains, app, as, before, color_scheme, device, dialogs, expect, expect_as, heal, "
        "judge, llm_timeout, locale, max_cost_usd, max_steps, max_tokens, name, output_schema, paths, retries, "
        "save_state, secrets, skip, start, steps, tags, task, timeout, timezone, use_state, viewport.",
    ),
    (
        "a name in defaults",
        "version: 1\ndefaults: {name: x}\ntests:\n" + OK_TEST,
        "qa.yml:2: defaults.name: unknown key 'name'; valid keys are: after, allow_javascript, "
        "allow_server_errors, allowed_domains, app, before, color_scheme, device, dialogs, expect, heal, judge, "
        "llm_timeout, locale, max_cost_usd, max_steps, max_tokens, output_schema, paths, retries, secrets, skip, start, "
        "tags, task, timeout, timezone, use_state, viewport, vision.",
    ),
    (
        "duplicate key",
        "version: 1\ntests:\n  - name: a\n    task: t\n    task: u\n",
        "qa.yml:5: tests[0].task: duplicate key 'task' (first given on line 4); keep one.",
    ),
    (
        "duplicate top-level key",
        "version: 1\nversion: 1\ntests:\n" + OK_TEST,
        "qa.yml:2: version: duplicate key 'version' (first given on line 1); keep one.",
    ),
    (
        "duplicate test name",
        f"version: 1\ntests:\n{OK_TEST}{OK_TEST}",
        "qa.yml:5: tests[1].name: duplicate test name 'a' (also test 1); names must be unique.",
    ),
    (
        "tab indentation",
        "version: 1\ntests:\n\t- name: a\n",
        "qa.yml:3: invalid YAML: found character '\\t' that cannot start any token "
        "(YAML does not allow tabs for indentation; use spaces).",
    ),
    (
        "wrong type",
        f"version: 1\ntests:\n{OK_TEST}    max_steps: lots\n",
        "qa.yml:5: tests[0].max_steps: input should be a valid integer (got 'lots').",
    ),
    (
        "out of range",
        f"version: 1\ntests:\n{OK_TEST}    max_steps: 0\n",
        "qa.yml:5: tests[0].max_steps: input should be greater than or equal to 1 (got 0).",
    ),
    (
        "unsupported version",
        "version: 2\ntests:\n" + OK_TEST,
        "qa.yml:1: version: unsupported manifest version; use 'version: 1'.",
    ),
    (
        "missing task",
        "version: 1\ntests:\n  - name: a\n",
        "qa.yml:3: tests[0]: give the test a task (what the agent does and checks) or steps.",
    ),
    (
        "an empty key beside a task",  # YAML reads `steps:` with nothing after it as null: a key left empty
        "version: 1\ntests:\n  - name: a\n    task: check it\n    steps:\n",
        "qa.yml:5: tests[0].steps: 'steps' is empty (null): give it a value, or remove the key (got None).",
    ),
    (
        "no tests",
        "version: 1\ntests: []\n",
        "qa.yml:2: tests: list should have at least 1 item after validation, not 0 (got []).",
    ),
    (
        "undeclared secret",
        "version: 1\ntests:\n  - name: a\n    task: use <secret>pw</secret>\n",
        "qa.yml:4: tests[0].task: uses <secret>pw</secret> but 'secrets' does not declare 'pw'; add it under secrets.",
    ),
    (
        "bad secret variable",
        f"version: 1\ntests:\n{OK_TEST}    secrets: {{pw: 'not a var'}}\n",
        "qa.yml:5: tests[0].secrets: 'not a var' is not an environment variable name (got {'pw': 'not a var'}).",
    ),
    (
        "relative start",
        f"version: 1\ntests:\n{OK_TEST}    start: login\n",
        "qa.yml:5: tests[0].start: must be a path starting with '/' or an http(s) URL (got 'login').",
    ),
    (
        "output schema not an object",
        f"version: 1\ntests:\n{OK_TEST}    output_schema: {{type: array}}\n",
        "qa.yml:5: tests[0].output_schema: must describe an object (type: object) (got {'type': 'array'}).",
    ),
    (
        "output schema invalid",
        f"version: 1\ntests:\n{OK_TEST}    output_schema: {{type: 3}}\n",
        "qa.yml:5: tests[0].output_schema: not a valid JSON Schema: 3 is not valid under any of the given schemas "
        "(got {'type': 3}).",
    ),
    (
        "a tag with a space",
        f"version: 1\ntests:\n{OK_TEST}    tags: [smoke, 'check out']\n",
        "qa.yml:5: tests[0].tags: tag 'check out' must be letters, digits and _ . : / - (no spaces or commas) "
        "(got ['smoke', 'check out']).",
    ),
    (
        "paths outside the repository",
        f"version: 1\ntests:\n{OK_TEST}    paths: ['src/**', '../shared/*.py']\n",
        "qa.yml:5: tests[0].paths: '../shared/*.py' points outside the repository ('..'); paths are relative to the "
        "repository root (got ['src/**', '../shared/*.py']).",
    ),
    (
        "an invalid glob",
        f"version: 1\ntests:\n{OK_TEST}    paths: ['src/[z-a].py']\n",
        "qa.yml:5: tests[0].paths: 'src/[z-a].py' is not a valid gitignore-style glob (bad character range z-a) "
        "(got ['src/[z-a].py']).",
    ),
    (
        "a glob that matches nothing",
        f"version: 1\ntests:\n{OK_TEST}    paths: ['# src']\n",
        "qa.yml:5: tests[0].paths: '# src' matches nothing (blank, a '#' comment or a lone '/'); write a glob such as "
        "src/** (got ['# src']).",
    ),
    (
        "a negation first",
        f"version: 1\ntests:\n{OK_TEST}    paths: ['!docs/**']\n",
        "qa.yml:5: tests[0].paths: '!docs/**' excludes files but nothing before it includes any; put a pattern such as "
        "src/** first (got ['!docs/**']).",
    ),
    (
        "a line key, which the loader sets",
        f"version: 1\ntests:\n{OK_TEST}    line: 3\n",
        "qa.yml:5: tests[0].line: unknown key 'line'; valid keys are: after, allow_javascript, "
        "allow_server_errors, allowed_domains, app, as, before, color_scheme, device, dialogs, expect, expect_as, heal, "
        "judge, llm_timeout, locale, max_cost_usd, max_steps, max_tokens, name, output_schema, paths, retries, "
        "save_state, secrets, skip, start, steps, tags, task, timeout, timezone, use_state, viewport.",
    ),
    (
        "a path key, which the loader sets",
        "version: 1\npath: x.yml\ntests:\n" + OK_TEST,
        "qa.yml:2: path: unknown key 'path'; valid keys are: apps, defaults, inbox, personas, routes, tests, version.",
    ),
    (
        "version true",
        "version: true\ntests:\n" + OK_TEST,
        "qa.yml:1: version: unsupported manifest version; use 'version: 1' (got True).",
    ),
    (
        "a quoted number",
        f"version: 1\ntests:\n{OK_TEST}    timeout: '30'\n",
        "qa.yml:5: tests[0].timeout: input should be a valid number (got '30').",
    ),
    (
        "an impact axe-core does not have",
        f"version: 1\ntests:\n{OK_TEST}    expect:\n      accessibility: {{impact: severe}}\n",
        "qa.yml:6: tests[0].expect.accessibility.impact: input should be 'minor', 'moderate', 'serious' or 'critical' "
        "(got 'severe').",
    ),
    ("not a mapping", "- a\n- b\n", "qa.yml:1: the manifest must be a mapping with 'version' and 'tests' keys."),
    ("a list as a key", "version: 1\n? [a, b]\n: 1\n", "qa.yml:2: a key must be a plain value, not a list or mapping."),
    (
        "broken YAML",
        "version: 1\ntests: [\n",
        "qa.yml:2: invalid YAML: expected the node content, but found '<stream end>' (the file ends after this line).",
    ),
    (
        "a goal cut by a comment",
        "version: 1\ntests:\n  - name: a\n    task: Check that order #1001 is listed\n",
        "qa.yml:4: tests[0].task: the text ends at ' #', which starts a YAML comment, so it reads 'Check that order'; quote "
        'the whole text (task: "Check that order #1001 is listed"), or put the comment on a line of its own.',
    ),
    (
        "a step's goal cut by a comment",
        "version: 1\ntests:\n  - name: a\n    steps:\n      - open: /orders  # the list\n      - do: Open order #1001 # x\n",
        "qa.yml:6: tests[0].steps[1].do: the text ends at ' #', which starts a YAML comment, so it reads 'Open order'; "
        'quote the whole text (do: "Open order #1001 # x"), or put the comment on a line of its own.',
    ),
    (
        "a checked text cut by a comment",
        f"version: 1\ntests:\n{OK_TEST}    expect:\n      text:\n        - Order #1001\n",
        "qa.yml:7: tests[0].expect.text[0]: the text ends at ' #', which starts a YAML comment, so it reads 'Order'; "
        'quote the whole text (- "Order #1001"), or put the comment on a line of its own.',
    ),
    (
        "an element's name cut by a comment",
        "version: 1\ntests:\n  - name: a\n    steps:\n      - click:\n          role: button\n          name: Pay #2\n",
        "qa.yml:7: tests[0].steps[0].click.name: the text ends at ' #', which starts a YAML comment, so it reads 'Pay'; "
        'quote the whole text (name: "Pay #2"), or put the comment on a line of its own.',
    ),
    (
        "a default goal cut by a comment",
        "version: 1\ndefaults:\n  task: Check the order #1001\ntests:\n  - name: a\n",
        "qa.yml:3: defaults.task: the text ends at ' #', which starts a YAML comment, so it reads 'Check the order'; quote "
        'the whole text (task: "Check the order #1001"), or put the comment on a line of its own.',
    ),
    (
        "a URL check cut by a comment (#66, 9)",
        f"version: 1\ntests:\n{OK_TEST}    expect:\n      url: /orders #1001\n",
        "qa.yml:6: tests[0].expect.url: the text ends at ' #', which starts a YAML comment, so it reads '/orders'; quote "
        'the whole text (url: "/orders #1001"), or put the comment on a line of its own.',
    ),
    (
        "a test's name cut by a comment (#66, 9)",
        "version: 1\ntests:\n  - name: Order #1001 is listed\n    task: t\n",
        "qa.yml:3: tests[0].name: the text ends at ' #', which starts a YAML comment, so it reads 'Order'; quote the "
        'whole text (name: "Order #1001 is listed"), or put the comment on a line of its own.',
    ),
    (
        "a path to open and a value to fill cut by comments (#66, 9)",
        "version: 1\ntests:\n  - name: a\n    steps:\n      - open: /orders #1001\n"
        "      - fill:\n          label: Note\n          value: Gift #2\n",
        "2 problems in qa.yml:\n"
        "  qa.yml:5: tests[0].steps[0].open: the text ends at ' #', which starts a YAML comment, so it reads '/orders'; "
        'quote the whole text (open: "/orders #1001"), or put the comment on a line of its own.\n'
        "  qa.yml:8: tests[0].steps[1].fill.value: the text ends at ' #', which starts a YAML comment, so it reads "
        "'Gift'; quote the whole text (value: \"Gift #2\"), or put the comment on a line of its own.",
    ),
    (
        "vision in a test: a setting of the whole run",
        f"version: 1\ndefaults: {{vision: sometimes}}\ntests:\n{OK_TEST}    vision: off\n",
        "2 problems in qa.yml:\n"
        "  qa.yml:2: defaults.vision: input should be 'auto', 'on' or 'off' (got 'sometimes').\n"
        "  qa.yml:6: tests[0].vision: vision is a setting of the whole run: give it in defaults (or --vision).",
    ),
    (
        "a flow list cut by a comment",
        f"version: 1\ntests:\n{OK_TEST}    expect: {{text: [Order #1001, Paid]}}\n",
        "qa.yml:5: invalid YAML: expected ',' or ']', but got '<stream end>' (line 5 has ' #', which starts a YAML comment "
        "there: quote a text that holds one).",
    ),
]


@pytest.mark.parametrize(("text", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_manifest_error_message(text: str, message: str) -> None:
    with pytest.raises(ManifestError) as caught:
        manifest.loads(text, "qa.yml")
    assert str(caught.value) == message


def test_comments_after_labels_numbers_and_quoted_or_block_texts_are_comments() -> None:
    m = manifest.loads(
        textwrap.dedent("""\
        version: 1  # the format
        tests:
          - name: checkout  # owned by payments: a test's name is a label, a comment after it is fine
            task: "Check that order #1001 is listed"  # quoted: whole
            start: /orders  # the list
            max_steps: 5  # more for checkout
            expect:
              text: ['Order #1001']
          - name: steps
            steps:
              - do: Add the anvil to the cart   # a comment as one writes it: two spaces before, one after
              - click: {role: button, name: Pay}  # flow
              - do: Pay  #
          - name: folded
            task: >
              Check that order #1001
              is listed
            expect: {text: "#1001"}
        """),
        "qa.yml",
    )
    assert [t.task for t in m.tests] == ["Check that order #1001 is listed", None, "Check that order #1001 is listed\n"]
    assert [s.do for s in m.tests[1].steps or []] == ["Add the anvil to the cart", None, "Pay"]
    assert (m.tests[0].name, m.tests[0].start, m.tests[0].max_steps, m.tests[0].expect.text) == (
        "checkout",
        "/orders",
        5,
        ["Order #1001"],
    )


def test_a_valid_manifest_merges_defaults_and_keeps_each_tests_line() -> None:
    m = manifest.loads(
        textwrap.dedent("""\
        version: 1
        defaults: {max_steps: 7, expect: {url: /home}}
        tests:
          - name: first
            task: t
          - name: second
            task: u
            max_steps: 3
            expect: {text: Welcome}
        """),
        "qa.yml",
    )
    assert [(t.name, t.line, t.max_steps) for t in m.tests] == [("first", 4, 7), ("second", 6, 3)]
    assert m.tests[0].expect.url == "/home"
    assert m.tests[1].expect.url is None and m.tests[1].expect.text == ["Welcome"]  # a test's key replaces the default


def test_merge_keys_expand_and_own_keys_win() -> None:
    m = manifest.loads(
        "version: 1\ndefaults: &base {max_steps: 9, timeout: 50}\ntests:\n  - <<: *base\n    name: a\n"
        "    task: t\n    max_steps: 2\n",
        "qa.yml",
    )
    assert (m.tests[0].max_steps, m.tests[0].timeout) == (2, 50)


def test_alias_bomb_is_refused_not_expanded() -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i, name in enumerate("bcdefg"):
        prev = "abcdefg"[i]
        levels.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 10)}]")
    with pytest.raises(ManifestError) as caught:
        manifest.loads("\n".join(levels) + "\n", "qa.yml")
    assert str(caught.value).startswith("qa.yml:1: ")
    assert str(caught.value).endswith(f"the document expands to more than {MAX_NODES} values (an alias bomb?); simplify it.")


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(ManifestError) as caught:
        manifest.loads("version: 1\ntests: &t\n  - *t\n", "qa.yml")
    assert "nested more than" in str(caught.value) or "expands to more than" in str(caught.value)


def test_a_10_mb_manifest_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "qa.yml"
    path.write_bytes(b"version: 1\n" + b"# padding\n" * (1024 * 1024))
    with pytest.raises(ManifestError) as caught:
        manifest.load(path)
    assert str(caught.value) == f"{path}: the file is {path.stat().st_size} bytes; a manifest may have at most {MAX_BYTES}."


def test_non_utf8_manifest_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "qa.yml"
    path.write_bytes(b"version: 1\ntests:\n  - name: caf\xe9\n    task: t\n")
    with pytest.raises(ManifestError) as caught:
        manifest.load(path)
    assert str(caught.value) == f"{path}:3: the file is not valid UTF-8; save it as UTF-8."


def test_a_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "qa.yml"
    path.write_bytes(b"\xef\xbb\xbfversion: 1\ntests:\n  - name: caf\xc3\xa9\n    task: t\n")
    assert manifest.load(path).tests[0].name == "café"


def test_a_missing_file_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as caught:
        manifest.load(tmp_path / "nope.yml")
    assert str(caught.value) == f"{tmp_path / 'nope.yml'}: cannot read the file (No such file or directory)."


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "environment variable QA_PW is not set; export it (or pass it as a workflow secret)."),
        (
            "123 45",
            "the value of QA_PW has 5 characters (whitespace aside); a secret needs at least 6 to be told apart "
            "from ordinary text.",
        ),
    ],
)
def test_a_missing_or_too_short_secret_names_its_key(value: str, message: str) -> None:
    m = manifest.loads(f"version: 1\ntests:\n{OK_TEST}  - name: b\n    task: t\n    secrets:\n      pw: QA_PW\n", "qa.yml")
    with pytest.raises(ManifestError) as caught:
        manifest.resolve_secrets(m, {"QA_PW": value})
    assert str(caught.value) == f"qa.yml:8: tests[1].secrets.pw: {message}"
    assert manifest.resolve_secrets(m, {"QA_PW": "x" * 6}) == {"a": {}, "b": {"pw": "x" * 6}}


# --- through the real CLI: exit 2, one line on stderr, and nothing started ---

SECRET_MANIFEST = "version: 1\ntests:\n  - name: a\n    task: use <secret>pw</secret>\n    secrets: {pw: QA_UNSET_PW}\n"


def _cli(tmp_path: Path, site: DemoSite, text: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, Path]:
    path = tmp_path / "qa.yml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    seen = len(site.requests)
    proc = run_in_process(["run", str(path), "--base-url", site.url, "--out", str(out), *args], env=env or clean_env())
    assert len(site.requests) == seen, "nothing may reach the preview when the configuration is wrong"
    assert not out.exists(), "nothing may be written when the configuration is wrong"
    assert proc.stdout == ""
    return proc.returncode, proc.stderr, path


def test_cli_missing_secret_variable_exits_2_before_any_browser(tmp_path: Path, site: DemoSite) -> None:
    code, stderr, path = _cli(tmp_path, site, SECRET_MANIFEST, "--api-key", "k")
    assert code == 2
    assert stderr == (
        f"preview-qa: error: {path}:5: tests[0].secrets.pw: environment variable QA_UNSET_PW is not set; "
        "export it (or pass it as a workflow secret).\n"
    )


def test_cli_short_secret_exits_2_before_any_browser(tmp_path: Path, site: DemoSite) -> None:
    code, stderr, path = _cli(tmp_path, site, SECRET_MANIFEST, "--api-key", "k", env=clean_env(QA_UNSET_PW="abc"))
    assert code == 2
    assert stderr == (
        f"preview-qa: error: {path}:5: tests[0].secrets.pw: the value of QA_UNSET_PW has 3 characters "
        "(whitespace aside); a secret needs at least 6 to be told apart from ordinary text.\n"
    )


def test_cli_missing_api_key_exits_2(tmp_path: Path, site: DemoSite) -> None:
    code, stderr, _ = _cli(tmp_path, site, f"version: 1\ntests:\n{OK_TEST}", "--provider", "anthropic")
    assert code == 2
    assert stderr == "preview-qa: error: no API key for provider 'anthropic'; set ANTHROPIC_API_KEY or pass --api-key.\n"


def test_a_manifest_of_exact_steps_runs_without_an_api_key(tmp_path: Path, site: DemoSite) -> None:
    # no LLM is called, so none is needed: a sweep's repro, pasted into qa.yml, runs as it stands
    path = tmp_path / "qa.yml"
    path.write_text("version: 1\ntests:\n  - name: home\n    steps: [{open: /}]\n    expect: {text: Acme demo shop}\n")
    proc = run_in_process(["run", str(path), "--base-url", site.url, "--out", str(tmp_path / "out")], env=clean_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_in_process(["validate", str(path)], env=clean_env())
    assert proc.returncode == 0 and "valid, and its secrets" in proc.stdout, proc.stdout + proc.stderr


def test_cli_unknown_provider_exits_2(tmp_path: Path, site: DemoSite) -> None:
    code, stderr, _ = _cli(tmp_path, site, f"version: 1\ntests:\n{OK_TEST}", "--provider", "skynet", "--api-key", "k")
    assert code == 2
    assert "Invalid value for '--provider': 'skynet' is not one of" in stderr and "Traceback" not in stderr


def test_cli_manifest_error_exits_2(tmp_path: Path, site: DemoSite) -> None:
    code, stderr, path = _cli(tmp_path, site, f"version: 1\ntests:\n{OK_TEST}    expct: {{}}\n", "--api-key", "k")
    assert code == 2
    assert stderr == f"preview-qa: error: {path}:5: tests[0].expct: unknown key 'expct'; did you mean 'expect'?\n"


def test_cli_validate(tmp_path: Path) -> None:
    path = tmp_path / "qa.yml"
    path.write_text(f"version: 1\ntests:\n{OK_TEST}", encoding="utf-8")
    ok = run_in_process(["validate", str(path), "--offline"])
    assert (ok.returncode, ok.stdout) == (0, f"{path}: 1 test(s), valid.\n")
    path.write_text("version: 1\ntests:\n  - name: a\n    task: t\n    task: u\n", encoding="utf-8")
    bad = run_in_process(["validate", str(path), "--offline"])
    assert (bad.returncode, bad.stderr) == (
        2,
        f"preview-qa: error: {path}:5: tests[0].task: duplicate key 'task' (first given on line 4); keep one.\n",
    )


def test_validate_and_run_refuse_a_goal_a_comment_cut(tmp_path: Path, site: DemoSite) -> None:
    text = "version: 1\ntests:\n  - name: a\n    task: Check that order #1001 is listed\n"
    code, stderr, path = _cli(tmp_path, site, text, "--api-key", "k")
    said = (
        f"preview-qa: error: {path}:4: tests[0].task: the text ends at ' #', which starts a YAML comment, so it reads "
        "'Check that order'; quote the whole text (task: \"Check that order #1001 is listed\"), or put the comment on a "
        "line of its own.\n"
    )
    assert (code, stderr) == (2, said)
    checked = run_in_process(["validate", str(path), "--offline"])
    assert (checked.returncode, checked.stderr) == (2, said)


SECRET_TEST = "version: 1\ntests:\n  - name: login\n    task: Log in with <secret>pw</secret>\n    secrets: {pw: QA_PASSWORD}\n"


def test_cli_validate_refuses_what_run_would_refuse_unless_offline(tmp_path: Path) -> None:
    path = tmp_path / "qa.yml"
    path.write_text(SECRET_TEST, encoding="utf-8")
    unset = run_in_process(["validate", str(path)], env=clean_env(OPENAI_API_KEY="k"))
    assert (unset.returncode, unset.stdout) == (2, "")
    assert unset.stderr == (
        f"preview-qa: error: {path}:5: tests[0].secrets.pw: environment variable QA_PASSWORD is not "
        "set; export it (or pass it as a workflow secret).\n"
    )
    no_key = run_in_process(["validate", str(path), "--provider", "anthropic"], env=clean_env(QA_PASSWORD="pw-123456"))
    assert (no_key.returncode, no_key.stderr) == (
        2,
        "preview-qa: error: no API key for provider 'anthropic'; set ANTHROPIC_API_KEY or pass --api-key.\n",
    )
    ready = run_in_process(["validate", str(path)], env=clean_env(QA_PASSWORD="pw-123456", OPENAI_API_KEY="k"))
    assert (ready.returncode, ready.stdout) == (
        0,
        f"{path}: 1 test(s), valid, and its secrets, API key and Chromium are there.\n",
    )
    offline = run_in_process(["validate", str(path), "--offline"], env=clean_env())
    assert (offline.returncode, offline.stdout) == (0, f"{path}: 1 test(s), valid.\n")


def _validate(tmp_path: Path, text: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, Path]:
    """`validate`'s exit code, and what it said: its error (stderr), or that the manifest is valid (stdout)."""
    path = tmp_path / "qa.yml"
    path.write_text(text, encoding="utf-8")
    proc = run_in_process(["validate", str(path), *args], env=env or clean_env())
    return proc.returncode, proc.stderr if proc.returncode else proc.stdout, path


def test_validate_refuses_a_start_on_another_host_as_an_open_step_there(tmp_path: Path) -> None:
    """#66, 9: `start: https://other.example.net/login` was accepted; it is refused with the fix `open:` gets."""
    text = "version: 1\ntests:\n  - name: a\n    task: t\n    start: https://other.example.net/login\n"
    assert _validate(tmp_path, text, "--offline")[:2] == (
        2,
        f"preview-qa: error: {tmp_path / 'qa.yml'}:5: tests[0].start: 'https://other.example.net/login' is outside the "
        "preview and this test's allowed_domains; give a path (such as /login) under the preview, or add "
        "other.example.net to allowed_domains.\n",
    )
    allowed = text + "    allowed_domains: ['*.example.net']\n"
    assert _validate(tmp_path, allowed, "--offline")[:2] == (0, f"{tmp_path / 'qa.yml'}: 1 test(s), valid.\n")


def test_validate_refuses_a_url_check_a_comment_cut(tmp_path: Path) -> None:
    """#66, 9: `url: /orders #1001` was silently read as /orders."""
    code, stderr, path = _validate(
        tmp_path, f"version: 1\ntests:\n{OK_TEST}    expect: {{title: Order}}\n    start: /o #1\n", "--offline"
    )
    assert (code, stderr) == (
        2,
        f"preview-qa: error: {path}:6: tests[0].start: the text ends at ' #', which starts a YAML comment, so it reads "
        "'/o'; quote the whole text (start: \"/o #1\"), or put the comment on a line of its own.\n",
    )


def test_a_yaml_error_at_the_end_of_the_file_names_a_line_in_it(tmp_path: Path) -> None:
    """#66, 9: a quote left open in a 5-line file was reported at line 6; it is the line the quote opens on."""
    text = 'version: 1\ntests:\n  - name: a\n    task: "Open the page\n      and check it\n'
    code, stderr, path = _validate(tmp_path, text, "--offline")
    assert (code, stderr) == (
        2,
        f"preview-qa: error: {path}:4: invalid YAML: found unexpected end of stream (the file ends before what starts "
        "on this line is closed).\n",
    )


def test_validate_lists_every_problem_each_at_its_line_and_key(tmp_path: Path) -> None:
    """#66, 9: two problems showed one and "(and 1 more problem)"; each is listed, in the order of the file, up to 20."""
    text = (
        "version: 1\ndefaults:\n  max_step: 3\ntests:\n  - name: a\n    task: t\n    timeout: soon\n"
        "  - name: b\n    task: t\n    use_state: nobody\n"
    )
    code, stderr, path = _validate(tmp_path, text, "--offline")
    assert (code, stderr) == (
        2,
        f"preview-qa: error: 2 problems in {path}:\n"
        f"  {path}:3: defaults.max_step: unknown key 'max_step'; did you mean 'max_steps'?\n"
        f"  {path}:7: tests[0].timeout: input should be a valid number (got 'soon').\n",
    )
    valid = text.replace("  max_step: 3\n", "  max_steps: 3\n").replace("timeout: soon", "timeout: 30")
    code, stderr, _ = _validate(tmp_path, valid, "--offline")
    assert (code, stderr) == (
        2,
        f"preview-qa: error: {path}:10: tests[1].use_state: no test saves a state named 'nobody'; add "
        "'save_state: nobody' to the test that logs in.\n",
    )
    many = "version: 1\ntests:\n" + "".join(f"  - name: t{i}\n    task: t\n    max_steps: x\n" for i in range(25))
    code, stderr, _ = _validate(tmp_path, many, "--offline")
    assert code == 2 and stderr.startswith(f"preview-qa: error: 25 problems in {path}:\n  {path}:5: tests[0].max_steps: ")
    assert stderr.count(f"\n  {path}:") == 20 and stderr.endswith("\n  ... and 5 more (fix these first)\n")


FIRST_RUN = """\
version: 1
tests:
  - name: Home page loads
    tags: [smoke]
    task: Open the home page.
  - name: Log in works
    tags: [auth]
    save_state: signed in
    task: Log in with <secret>password</secret>
    secrets: {password: QA_PASSWORD}
  - name: Account page
    use_state: signed in
    task: Open the account page.
"""


def test_a_first_run_needs_only_the_secrets_of_what_it_runs(tmp_path: Path, site: DemoSite) -> None:
    """#66, 4: `run --only "Home page loads"` exited 2 for QA_PASSWORD, which only the login test needs. What it runs
    gets that far (here: to the missing API key), while a test that starts from the login's state still needs it."""
    no_key = "preview-qa: error: no API key for provider 'anthropic'; set ANTHROPIC_API_KEY or pass --api-key.\n"
    for selected in (["--only", "Home page loads"], ["--tag", "smoke"], ["--skip-tag", "auth", "--only", "Home page loads"]):
        assert _cli(tmp_path, site, FIRST_RUN, *selected, "--provider", "anthropic")[:2] == (2, no_key)
    unset = (
        f"preview-qa: error: {tmp_path / 'qa.yml'}:10: tests[1].secrets.password: environment variable QA_PASSWORD is "
        "not set; export it (or pass it as a workflow secret).\n"
    )
    assert _cli(tmp_path, site, FIRST_RUN, "--only", "Account page", "--provider", "anthropic")[:2] == (2, unset)


def test_validate_checks_every_tests_secrets_unless_given_the_run_s_selection(tmp_path: Path) -> None:
    """#66, 4: validate keeps checking all; with --only/--tag/--skip-tag, what `run` with them would run."""
    env = clean_env(OPENAI_API_KEY="k")
    unset = (
        f"preview-qa: error: {tmp_path / 'qa.yml'}:10: tests[1].secrets.password: environment variable QA_PASSWORD is "
        "not set; export it (or pass it as a workflow secret).\n"
    )
    assert _validate(tmp_path, FIRST_RUN, env=env)[:2] == (2, unset)
    for needs_login in (["--only", "Account page"], ["--skip-tag", "auth"]):  # Account page starts from the login's state
        assert _validate(tmp_path, FIRST_RUN, *needs_login, env=env)[:2] == (2, unset), needs_login
    ready = f"{tmp_path / 'qa.yml'}: 3 test(s), valid, and its secrets, API key and Chromium are there.\n"
    for selected in (["--only", "Home page loads"], ["--tag", "smoke"], ["--skip-tag", "auth", "--only", "Home page loads"]):
        assert _validate(tmp_path, FIRST_RUN, *selected, env=env)[:2] == (0, ready), selected


@pytest.mark.parametrize(
    ("written", "vision"), [("off", Vision.OFF), ("on", Vision.ON), ("'off'", Vision.OFF), ("auto", Vision.AUTO)]
)
def test_vision_in_defaults_reads_as_written_and_a_flag_overrides_it(written: str, vision: Vision) -> None:
    m = manifest.loads(f"version: 1\ndefaults:\n  vision: {written}\ntests:\n{OK_TEST}", "qa.yml")
    assert m.defaults.vision is vision  # a bare off/on, which YAML 1.1 reads as false/true, is the word written
    assert RunConfig(Path("qa.yml"), "http://x").vision_for(m.defaults.vision) is vision
    given = RunConfig(Path("qa.yml"), "http://x", vision=Vision.ON)
    assert given.vision_for(m.defaults.vision) is Vision.ON
    assert RunConfig(Path("qa.yml"), "http://x").vision_for(None) is Vision.AUTO
