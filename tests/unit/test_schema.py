"""The manifest's JSON Schema: generated from the models, kept in the repository, and in agreement with the loader."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import regress  # check-jsonschema's ECMA regex engine: patterns read as editors and check-jsonschema read them
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from preview_qa.errors import ManifestError
from preview_qa.manifest import loader as manifest
from preview_qa.manifest.schema import MODELINE, manifest_schema, render
from preview_qa.manifest.yaml_source import YamlSource
from tests.repo import DEMO, ROOT, SCHEMA_FILE, tool


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "string") and regress.Regex(pattern).find(instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


ECMA = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})
VALIDATOR = ECMA(manifest_schema())


def check_jsonschema(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("check-jsonschema"), "--schemafile", str(SCHEMA_FILE), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_repository_copy_is_what_the_models_generate_and_what_the_cli_prints() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render(), "regenerate it: preview-qa schema > schema/manifest-v1.json"
    printed = subprocess.run([sys.executable, "-m", "preview_qa", "schema"], capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0 and printed.stdout == render()
    jsonschema.Draft202012Validator.check_schema(json.loads(printed.stdout))


def _properties(node: Any, where: str = "$") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            yield f"{where}.{name}", prop
        for key, child in node.items():
            yield from _properties(child, f"{where}.{key}")
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from _properties(child, f"{where}[{i}]")


def test_every_key_has_a_description_for_the_editor_to_show() -> None:
    schema = manifest_schema()
    keys = {path.rsplit(".", 1)[1] for path, _ in _properties(schema)}
    assert {"version", "defaults", "tests", "name", "task", "expect", "tags", "paths", "url", "not_text"} <= set(keys)
    undescribed = [
        path for path, prop in _properties(schema) if not prop.get("description") and not path.startswith(("$.if", "$.else"))
    ]
    assert undescribed == []
    # set by the loader, never written in a manifest (an API request's `path` is a path on the preview: its own key)
    own = {path.rsplit(".", 1)[1] for path, _ in _properties(schema) if not path.startswith("$.$defs.ApiRequest.")}
    assert "line" not in own and "path" not in own


def _documented_manifests(page: Path) -> list[str]:
    blocks = re.findall(r"```yaml\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    return [b for b in blocks if re.search(r"^version: 1$", b, re.M)]


def test_the_bundled_and_the_documented_manifests_validate_with_check_jsonschema(tmp_path: Path) -> None:
    readme = _documented_manifests(ROOT / "README.md")
    assert readme and readme[0].startswith(MODELINE + "\n")  # the README shows editors where the schema is
    reference = _documented_manifests(ROOT / "docs" / "manifest.md")
    assert reference and reference[0].startswith(MODELINE + "\n")  # and so does the manifest reference
    files = [DEMO / "qa.yml"]
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for i, text in enumerate(_documented_manifests(page)):
            files.append(tmp_path / f"{page.relative_to(ROOT).as_posix().replace('/', '-')}-{i}.yml")
            files[-1].write_text(text, encoding="utf-8")
            manifest.loads(text)  # and the loader takes them too
    assert len(files) >= 4  # the bundled one, the README's, the reference's and the saved-logins guide's
    checked = check_jsonschema(*files)
    assert checked.returncode == 0, checked.stdout + checked.stderr


OK = "  - name: a\n    task: t\n"
BAD = {  # each is refused by the loader (exit 2) and by the schema (in the editor, before it is ever run)
    "unknown key": f"version: 1\ntests:\n{OK}    expct: {{url: /x}}\n",
    "nested unknown key": f"version: 1\ntests:\n{OK}    expect: {{urll: /x}}\n",
    "no task": "version: 1\ntests:\n  - name: a\n",
    "task only in a null default": "version: 1\ndefaults: {task: null}\ntests:\n  - name: a\n",
    "no tests": "version: 1\ntests: []\n",
    "version 2": f"version: 2\ntests:\n{OK}",
    "version true": f"version: true\ntests:\n{OK}",
    "quoted number": f"version: 1\ntests:\n{OK}    max_steps: '20'\n",
    "out of range": f"version: 1\ntests:\n{OK}    max_steps: 501\n",
    "relative start": f"version: 1\ntests:\n{OK}    start: login\n",
    "bad secret variable": f"version: 1\ntests:\n{OK}    secrets: {{pw: not-a-var}}\n",
    "bad placeholder": f"version: 1\ntests:\n{OK}    secrets: {{'p w': PW}}\n",
    "output schema not an object": f"version: 1\ntests:\n{OK}    output_schema: {{type: array}}\n",
    "tag with a space": f"version: 1\ntests:\n{OK}    tags: ['check out']\n",
    "paths outside the repository": f"version: 1\ntests:\n{OK}    paths: ['../x/**']\n",
    "a name in defaults": f"version: 1\ndefaults: {{name: x}}\ntests:\n{OK}",
    "a line key": f"version: 1\ntests:\n{OK}    line: 3\n",
    "judge as a string": f"version: 1\ntests:\n{OK}    judge: 'yes'\n",
    "a null task": "version: 1\ntests:\n  - name: a\n    task: null\n",
    "a task and steps": f"version: 1\ntests:\n{OK}    steps: [{{do: x}}]\n",
    "steps in defaults": f"version: 1\ndefaults: {{steps: [{{do: x}}]}}\ntests:\n{OK}",
    "two actions in a step": "version: 1\ntests:\n  - name: a\n    steps: [{do: x, open: /y}]\n",
    "a step doing nothing": "version: 1\ntests:\n  - name: a\n    steps: [{name: x}]\n",
    "max_steps of an exact step": "version: 1\ntests:\n  - name: a\n    steps: [{open: /y, max_steps: 3}]\n",
    "a click found two ways": "version: 1\ntests:\n  - name: a\n    steps: [{click: {role: button, text: Go}}]\n",
    "a name without a role": "version: 1\ntests:\n  - name: a\n    steps: [{click: {text: Go, name: Go}}]\n",
    "a fill found by text": "version: 1\ntests:\n  - name: a\n    steps: [{fill: {text: Email, value: x}}]\n",
    "a fill mixing a secret": (
        "version: 1\ntests:\n  - name: a\n    secrets: {pw: PW}\n    steps: [{fill: {label: P, value: 'x<secret>pw</secret>'}}]\n"
    ),
    "an unknown key to press": "version: 1\ntests:\n  - name: a\n    steps: [{press: {key: Entr}}]\n",
    "a data check on a step": "version: 1\ntests:\n  - name: a\n    steps: [{do: x, expect: {data: {a: 1}}}]\n",
    "a secret in a URL to open": (
        "version: 1\ntests:\n  - name: a\n    secrets: {pw: PW}\n    steps: [{open: '/x?p=<secret>pw</secret>'}]\n"
    ),
    "an empty list of steps": "version: 1\ntests:\n  - name: a\n    steps: []\n",
}


def test_known_bad_manifests_are_refused_by_the_schema_and_by_the_loader(tmp_path: Path) -> None:
    files = []
    for name, text in BAD.items():
        with pytest.raises(ManifestError):
            manifest.loads(text)
        assert list(VALIDATOR.iter_errors(YamlSource.parse(text).data)), name
        files.append(tmp_path / (name.replace(" ", "-") + ".yml"))
        files[-1].write_text(text, encoding="utf-8")
    checked = check_jsonschema(*files)
    assert checked.returncode == 1
    refused = {Path(line.strip().split("::", 1)[0]).name for line in checked.stdout.splitlines() if "::" in line}
    assert refused == {f.name for f in files}, checked.stdout


# --- generated manifests: the schema never refuses what the loader takes ---


def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], odds: int = 12) -> st.SearchStrategy[Any]:
    """`bad` once in `odds` draws, so that a good share of the manifests is valid."""
    return st.integers(1, odds).flatmap(lambda n: bad if n == odds else good)  # hypothesis starts low: good first


ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 600),
    st.floats(allow_nan=False),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
NAMES = _mostly(st.sampled_from(["PW", "pw", "_x1"]), st.sampled_from(["1x", "a-b", "PW\n", ""]))
TEXTS = st.one_of(st.text(max_size=5), st.lists(st.text(max_size=5), max_size=2))
EXPECT = st.fixed_dictionaries(
    {},
    optional={
        "url": _mostly(st.sampled_from(["/x", "dash"]), ANY),
        "text": _mostly(TEXTS, ANY),
        "not_text": _mostly(TEXTS, ANY),
        "title": _mostly(st.text(min_size=1, max_size=4), ANY),
        "data": _mostly(st.dictionaries(st.text(max_size=3), ANY), ANY),
    },
)
LOCATED = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["button", "link", "buton", "combobox"]),
        "name": TEXTS,
        "label": TEXTS,
        "text": TEXTS,
        "css": st.sampled_from(["select[name=q]", ""]),
        "test_id": TEXTS,
        "exact": st.booleans(),
    },
)
STEP = st.fixed_dictionaries(
    {},
    optional={
        "do": _mostly(st.sampled_from(["add it", "log in with <secret>pw</secret>"]), ANY),
        "open": _mostly(st.sampled_from(["/cart", "https://a.test/x", "http://elsewhere.test/"]), st.sampled_from(["cart", ""])),
        "click": _mostly(LOCATED, ANY),
        "fill": _mostly(
            st.builds(lambda at, value: {**at, "value": value}, LOCATED, st.sampled_from(["x", "<secret>pw</secret>"])),
            st.one_of(ANY, st.just({"label": "P", "value": "a<secret>pw</secret>"})),
        ),
        "select": _mostly(st.builds(lambda at: {**at, "option": "O"}, LOCATED), ANY),
        "press": _mostly(
            st.builds(lambda at, key: {**at, "key": key}, LOCATED, st.sampled_from(["Enter", "a", "Control+A"])), ANY
        ),
        "name": _mostly(st.text(min_size=1, max_size=4), ANY),
        "expect": _mostly(EXPECT, ANY),
        "max_steps": _mostly(st.integers(1, 500), ANY),
    },
)
OPTIONS = {
    "start": _mostly(
        st.sampled_from(["/", "/login", "http://a.test", "https://a.test/x"]),
        st.sampled_from(["login", "", " /", "HTTP://a", "ftp://a", "//a", "http:x", "/\n"]),
    ),
    "task": _mostly(st.sampled_from(["check it", "go", "log in with <secret>pw</secret>"]), st.sampled_from(["", None, 3])),
    "secrets": _mostly(st.dictionaries(NAMES, NAMES, max_size=2), ANY),
    "expect": _mostly(EXPECT, st.one_of(ANY, st.fixed_dictionaries({"urll": ANY}))),
    "output_schema": _mostly(
        st.sampled_from([None, {"type": "object"}, {"type": "object", "required": ["a"]}]),
        st.sampled_from([{}, {"type": "array"}, {"type": 3}, {"type": ["object"]}, "x"]),
    ),
    "max_steps": _mostly(st.integers(1, 500), st.one_of(st.integers(-1, 600), st.sampled_from([20.0, 20.5, True, "20"]))),
    "timeout": _mostly(st.floats(0.1, 86400), st.one_of(st.sampled_from([0, 86400, 86401, "30", True]), st.floats())),
    "allowed_domains": _mostly(st.lists(st.text(max_size=5), max_size=2), ANY),
    "skip": _mostly(st.one_of(st.booleans(), st.text(max_size=4)), ANY),
    "judge": _mostly(st.booleans(), st.sampled_from([1, 0, "true", None])),
    "max_tokens": _mostly(st.one_of(st.none(), st.integers(1, 10**6)), st.sampled_from([0, -1, 1.5, "10"])),
    "max_cost_usd": _mostly(st.one_of(st.none(), st.floats(0.01, 100), st.integers(1, 9)), st.sampled_from([0, -1, "1"])),
    "tags": _mostly(
        st.lists(st.sampled_from(["smoke", "x/y:z.1-_", "_a"]), max_size=3),
        st.one_of(st.lists(st.sampled_from(["a b", "a,b", "", "-x", "x\n", "ü", 3]), min_size=1), ANY),
    ),
    "paths": _mostly(
        st.lists(st.sampled_from(["src/**", "*.py", "app/routes/cart.*", "src/", "docs/**/*.md"]), max_size=3),
        st.one_of(
            st.lists(
                st.sampled_from(["../x", "a/../b", "..", "...", "a/..\n", "[", "# c", "!x", "", "/", "src/[z-a]", "a\\", "   "]),
                min_size=1,
            ),
            ANY,
        ),
    ),
    "device": _mostly(st.sampled_from([None, "iPhone 15", "Pixel 7"]), st.sampled_from(["", "iPhone 99", 3, True])),
    "viewport": _mostly(
        st.one_of(st.none(), st.fixed_dictionaries({"width": st.integers(1, 10000), "height": st.integers(1, 10000)})),
        st.one_of(ANY, st.fixed_dictionaries({"width": st.integers(-1, 10001)}, optional={"height": ANY, "depth": ANY})),
    ),
    "locale": _mostly(st.sampled_from([None, "en", "de-DE", "zh-Hant-TW"]), st.sampled_from(["", "de DE", "d", "de-DE\n", 3])),
    "timezone": _mostly(st.sampled_from([None, "Europe/Berlin", "UTC"]), st.sampled_from(["", "Mars/Olympus", 3])),
    "color_scheme": _mostly(st.sampled_from([None, "light", "dark", "no-preference"]), st.sampled_from(["black", "", 1, True])),
}
STEPS = _mostly(st.lists(STEP, min_size=1, max_size=3), st.one_of(ANY, st.just([])))
TEST_NAMES = _mostly(st.text(min_size=1, max_size=8), st.sampled_from(["", None, 3, "c" * 1001, "a"]))
TESTS = st.builds(
    lambda required, optional, extra: {**required, **optional, **extra},
    _mostly(
        st.fixed_dictionaries({"name": TEST_NAMES, "task": OPTIONS["task"]}),
        st.fixed_dictionaries({}, optional={"name": TEST_NAMES, "task": OPTIONS["task"]}),
    ),
    st.fixed_dictionaries({}, optional={k: v for k, v in OPTIONS.items() if k != "task"} | {"steps": STEPS}),
    _mostly(st.just({}), st.one_of(st.fixed_dictionaries({"line": ANY}), st.fixed_dictionaries({"nmae": ANY})), 6),
)
DEFAULTS = st.builds(
    lambda options, name: {**options, **name},
    st.fixed_dictionaries({}, optional=OPTIONS),
    _mostly(st.just({}), st.fixed_dictionaries({"name": ANY})),
)
MANIFESTS = st.builds(
    lambda known, extra: {**known, **extra},
    st.fixed_dictionaries(
        {
            "version": _mostly(st.just(1), st.sampled_from([1.0, 2, True, "1", None])),
            "tests": _mostly(st.lists(_mostly(TESTS, ANY), min_size=1, max_size=3), ANY),
        },
        optional={"defaults": _mostly(DEFAULTS, ANY)},
    ),
    _mostly(st.just({}), st.one_of(st.fixed_dictionaries({"path": ANY}), st.fixed_dictionaries({"testz": ANY})), 6),
)

# What the loader checks that JSON Schema cannot state; only these may be refused by the loader alone. YAML has NaN
# (`.nan`) and JSON has none: a schema's bounds hold for it vacuously, the loader's refuse it.
BEYOND_THE_SCHEMA = re.compile(
    r"duplicate test name|but 'secrets' does not declare|not a valid JSON Schema|not a valid gitignore-style glob"
    r"|matches nothing|excludes files but nothing before it|input should be a valid integer \(got -?\d+\.0\)"
    r"|longer than the test's timeout|\(got nan\)|unknown device|unknown timezone"
    r"|outside the preview and this test's allowed_domains|read by its last `do` step"
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=MANIFESTS)
@example(data={"version": 1, "tests": [{"name": "0", "task": "check it"}], "defaults": None})  # `defaults:` left empty
def test_what_the_loader_accepts_the_schema_validates_and_what_the_schema_refuses_the_loader_refuses(data: Any) -> None:
    """The two halves of the title are one implication; beyond it, the loader refuses alone only what a schema cannot say."""
    try:
        manifest.parse(YamlSource("qa.yml", data, {}))
        accepted, message = True, ""
    except ManifestError as e:
        accepted, message = False, str(e)
    errors = [e.message for e in VALIDATOR.iter_errors(data)]
    event("accepted" if accepted else ("refused by both" if errors else "refused by the loader alone"))
    if accepted:
        assert errors == [], f"the loader accepts it, the schema refuses it: {errors}"
    elif not errors:
        assert BEYOND_THE_SCHEMA.search(message), f"only the loader refuses it, for a rule the schema could state: {message}"
