"""Reads a manifest: YAML to the validated models, every error one sentence naming file, line and key; and the
tests' secret values from the environment."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from preview_qa.manifest.models import SECRET_TAG, Defaults, Expectations, Manifest
from preview_qa.manifest.setup_tests import cycle_from, savers
from preview_qa.manifest.step_rules import step_texts, steps_problem
from preview_qa.manifest.yaml_source import Loc, YamlSource
from preview_qa.secrets.redact import MIN_SECRET_LENGTH, secret_length
from preview_qa.secrets.totp import normal_seed, seed_problem, totp_name


def load(path: str | Path) -> Manifest:
    """Read and validate a manifest; raise ManifestError (one sentence, file:line: key: ...) on any problem."""
    source = YamlSource.read(Path(path))
    return parse(source)


def loads(text: str, file: str = "<manifest>") -> Manifest:
    return parse(YamlSource.parse(text, file))


# The texts the agent reads, a check looks for or an exact step finds its element by: YAML ends an unquoted one at ' #'
# (a comment), so a cut one would test something else without a word. A test's or step's own `name` is only a label.
CUT_TEXTS = frozenset({"task", "do", "text", "not_text", "appeared", "not_appeared", "title", "label", "option", "value"})
ELEMENT_KEYS = frozenset({"click", "fill", "select", "press", "element"})  # where `name` is an element's accessible name
# A comment as people write one on purpose (yamllint's rule): two spaces or more before the '#' and one after it.
DELIBERATE_COMMENT = re.compile(r"[ \t]{2,}#(\s|$)")


def parse(source: YamlSource) -> Manifest:
    data = source.data
    if not isinstance(data, dict):
        raise source.error((), "the manifest must be a mapping with 'version' and 'tests' keys.")
    _refuse_cut_texts(source)
    _refuse_internal_keys(data, source)
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise source.error(("defaults",), "must be a mapping of per-test keys.")
    if "steps" in defaults:
        raise source.error(("defaults", "steps"), "steps cannot be given in defaults: each test lists its own steps.")
    _validate(Defaults, defaults, source, ("defaults",))
    raw_tests = data.get("tests")
    merged = dict(data)
    if isinstance(raw_tests, list):
        merged["tests"] = [_with_defaults(defaults, t) for t in raw_tests]
        merged["tests"] = [
            {**t, "line": source.line(("tests", i)) or 0} if isinstance(t, dict) else t for i, t in enumerate(merged["tests"])
        ]
    manifest = _validate(Manifest, {**merged, "path": source.file}, source, ())
    manifest._source = source
    _check_tests(manifest)
    _check_states(manifest)
    return manifest


def _with_defaults(defaults: dict[str, Any], test: Any) -> Any:
    """The test's keys over the defaults'. A test's own `expect` replaces the default checks, but a default
    expect.timeout (and expect.visual) still applies to it unless it sets its own: how long to wait is a run-wide habit,
    not a check."""
    if not isinstance(test, dict):
        return test
    # A default task is every test's goal, unless the test is written as steps.
    left_out = {"name", "task"} if "steps" in test else {"name"}
    merged = {**{k: v for k, v in defaults.items() if k not in left_out}, **test}
    default_expect, own_expect = defaults.get("expect"), test.get("expect")
    if isinstance(default_expect, dict) and isinstance(own_expect, dict):  # and expect.visual: a run-wide habit too
        kept = {k: default_expect[k] for k in ("timeout", "visual") if k in default_expect and k not in own_expect}
        merged["expect"] = {**own_expect, **kept}
    return merged


def _refuse_cut_texts(source: YamlSource) -> None:
    """An error, never a warning, for a text a comment may have cut (`do: Check that order #1001 is listed`): the goal
    or check would be another one, a cut goal may well pass, and a warning scrolls past in CI. A comment written as
    one (`do: Pay  # the last goal`: two spaces before the '#', one after) is a comment."""
    for loc, comment in source.commented.items():
        keys = [part for part in loc if isinstance(part, str)]
        element_name = keys[-1:] == ["name"] and len(keys) > 1 and keys[-2] in ELEMENT_KEYS
        if not keys or (keys[-1] not in CUT_TEXTS and not element_name) or DELIBERATE_COMMENT.match(comment):
            continue
        value = _at(source.data, loc)
        whole = json.dumps(f"{value}{comment.replace(chr(9), ' ')}", ensure_ascii=False)
        written = f"- {whole}" if isinstance(loc[-1], int) else f"{loc[-1]}: {whole}"
        raise source.error(
            loc,
            f"the text ends at ' #', which starts a YAML comment, so it reads {value!r}; quote the whole text "
            f"({written}), or put the comment on a line of its own.",
        )


def _at(data: Any, loc: Loc) -> Any:
    for part in loc:
        data = data[part]
    return data


def _refuse_internal_keys(data: dict[str, Any], source: YamlSource) -> None:
    """`path` and a test's `line` are set by the loader, never read from the file (it would overwrite them silently)."""
    if "path" in data:
        raise source.error(("path",), _unknown_key("path", Manifest, []))
    tests = data.get("tests")
    for i, test in enumerate(tests if isinstance(tests, list) else []):
        if isinstance(test, dict) and "line" in test:
            raise source.error(("tests", i, "line"), _unknown_key("line", Manifest, ["tests"]))


def _check_tests(manifest: Manifest) -> None:
    seen: dict[str, int] = {}
    for i, test in enumerate(manifest.tests):
        if test.name in seen:
            raise manifest.error(
                ("tests", i, "name"),
                f"duplicate test name '{test.name}' (also test {seen[test.name] + 1}); names must be unique.",
            )
        seen[test.name] = i
        for loc, text in [(("tests", i, "task"), test.task or ""), *step_texts(test, ("tests", i))]:
            for placeholder in SECRET_TAG.findall(text):
                if placeholder not in test.secrets:
                    raise manifest.error(
                        loc,
                        f"uses <secret>{placeholder}</secret> but 'secrets' does not declare '{placeholder}'; "
                        "add it under secrets.",
                    )
        expects: list[tuple[Loc, Expectations]] = [(("tests", i, "expect"), test.expect)]
        expects += [(("tests", i, "steps", j, "expect"), s.expect) for j, s in enumerate(test.steps or [])]
        for loc, expect in expects:
            if "timeout" in expect.model_fields_set and expect.timeout > test.timeout:  # else the test's bounds it
                raise manifest.error(
                    (*loc, "timeout"),
                    f"waits {expect.timeout:g} s, longer than the test's timeout of {test.timeout:g} s; "
                    "lower expect.timeout or raise timeout.",
                )
        problem = steps_problem(test, ("tests", i))
        if problem is not None:
            raise manifest.error(*problem)


def _check_states(manifest: Manifest) -> None:
    """save_state names are unique, every use_state names one of them, and no test ends up waiting for itself."""
    saved: dict[str, int] = {}
    for i, test in enumerate(manifest.tests):
        if test.save_state is None:
            continue
        if test.save_state in saved:
            first = manifest.tests[saved[test.save_state]]
            raise manifest.error(
                ("tests", i, "save_state"),
                f"state '{test.save_state}' is already saved by test "
                f"'{first.name}' (line {first.line}); give each save_state its own name.",
            )
        saved[test.save_state] = i
    saved_by = savers(manifest.tests)
    for i, test in enumerate(manifest.tests):
        if test.use_state is None:
            continue
        origin = _from_defaults(manifest, i, "use_state")
        if test.use_state not in saved_by:
            guess = difflib.get_close_matches(test.use_state, list(saved_by), n=1)
            hint = (
                f"did you mean '{guess[0]}'?"
                if guess
                else f"add 'save_state: {test.use_state}' to the test that logs in"
                + (f" (saved states: {', '.join(sorted(saved_by))})." if saved_by else ".")
            )
            raise manifest.error(("tests", i, "use_state"), f"no test saves a state named '{test.use_state}'{origin}; {hint}")
        cycle = cycle_from(manifest.tests, test.name)
        if cycle is None or test.name not in cycle:
            continue
        if len(cycle) == 1:
            fix = "set 'use_state: null' on it" if origin else "remove one of the two keys"
            raise manifest.error(
                ("tests", i, "use_state"),
                f"test '{test.name}' starts from state '{test.use_state}'{origin}, which it saves itself; {fix}.",
            )
        chain = " -> ".join(f"'{name}'" for name in [*cycle, cycle[0]])
        raise manifest.error(
            ("tests", i, "use_state"),
            f"setup tests wait for each other in a cycle ({chain}, each "
            f"waiting for the test that saves its use_state){origin}; break the cycle.",
        )


def _from_defaults(manifest: Manifest, index: int, key: str) -> str:
    """' (set in defaults)' when the test's own mapping lacks `key`, so the error explains where the value came from."""
    raw = manifest._source.data.get("tests", []) if manifest._source is not None else []
    own = raw[index] if index < len(raw) and isinstance(raw[index], dict) else {}
    return "" if key in own else " (set in defaults)"


M = TypeVar("M", bound=BaseModel)


def _validate(model: type[M], data: Any, source: YamlSource, base: Loc) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        # An unknown key first: a typo ("testz") is what explains the required key that is then missing.
        errors = sorted(e.errors(include_url=False), key=lambda err: err["type"] != "extra_forbidden")
        first = errors[0]
        loc: Loc = (*base, *first["loc"])
        more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        raise source.error(loc, _describe(first, loc, model) + more) from None


def _describe(error: Mapping[str, Any], loc: Loc, model: type[BaseModel]) -> str:
    kind, key = error["type"], loc[-1] if loc else ""
    if kind == "extra_forbidden":
        return _unknown_key(str(key), model, [p for p in error["loc"][:-1] if isinstance(p, str)])
    if kind == "missing":
        return "this required key is missing."
    if kind == "literal_error" and key == "version":
        return "unsupported manifest version; use 'version: 1'."
    message = str(error["msg"]).removeprefix("Value error, ")
    given = error.get("input")
    if isinstance(given, dict) and isinstance(key, int):  # a whole test's or step's mapping says less than its line
        return f"{message[0].lower()}{message[1:]}."
    shown = repr(given) if len(repr(given)) <= 60 else repr(given)[:57] + "..."
    return f"{message[0].lower()}{message[1:]} (got {shown})."


def _unknown_key(key: str, model: type[BaseModel], path: list[str]) -> str:
    known = _fields_at(model, path)
    guess = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean '{guess[0]}'?" if guess else f"valid keys are: {', '.join(sorted(known))}."
    return f"unknown key '{key}'; {hint}"


def _fields_at(model: type[BaseModel], path: list[str]) -> list[str]:
    """The field names of the model reached by following `path` (the keys of the error location)."""
    current: Any = model
    for part in path:
        fields = getattr(current, "model_fields", {})
        if part not in fields:
            continue
        current = _model_in(fields[part].annotation) or fields[part].annotation
    names = [n for n, f in getattr(current, "model_fields", {}).items() if not f.exclude]
    return names


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds: itself, or inside an optional or a list (steps: list[TestStep] | None)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for a in getattr(annotation, "__args__", ()) if (m := _model_in(a)) is not None), None)


def resolve_secrets(manifest: Manifest, environ: Mapping[str, str], strict: bool = True) -> dict[str, dict[str, str]]:
    """Each test's secret values, read from the environment; a missing variable is a ManifestError at its key. Not
    `strict` (what the MCP server redacts its results with, whatever manifest a call names): the values that are set
    and usable, the others left out without an error."""
    resolved: dict[str, dict[str, str]] = {}
    for i, test in enumerate(manifest.tests):
        values: dict[str, str] = {}
        for placeholder in test.secrets:
            env, totp = test.secret_env(placeholder), test.is_totp(placeholder)
            value = environ.get(env, "")
            problem = _secret_problem(value, env, totp)
            if problem is not None:
                if strict:
                    raise manifest.error(("tests", i, "secrets", placeholder), problem)
                continue
            if totp:
                values[totp_name(placeholder)] = normal_seed(value)  # browser-use's name: a code when typed
            else:
                values[placeholder] = value
        resolved[test.name] = values
    return resolved


def _secret_problem(value: str, env: str, totp: bool) -> str | None:
    """Why a secret's value cannot be used, in words, or None."""
    if not value:
        return f"environment variable {env} is not set; export it (or pass it as a workflow secret)."
    if secret_length(value) < MIN_SECRET_LENGTH:  # redacting so short a value would shred every output
        return (
            f"the value of {env} has {secret_length(value)} characters (whitespace aside); "
            f"a secret needs at least {MIN_SECRET_LENGTH} to be told apart from ordinary text."
        )
    problem = seed_problem(value) if totp else None
    return f"the value of {env} {problem}." if problem else None
