"""Reads a manifest: YAML to the validated models, every error one sentence naming file, line and key; and the
tests' secret values from the environment."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from preview_qa.errors import ManifestError, ManifestProblems
from preview_qa.manifest.models import SECRET_TAG, Expectations, Manifest
from preview_qa.manifest.setup_tests import cycle_from, savers
from preview_qa.manifest.step_rules import inbox_problems, persona_problems, request_problems, step_texts, steps_problems
from preview_qa.manifest.yaml_source import Loc, YamlSource
from preview_qa.secrets.redact import MIN_SECRET_LENGTH, secret_length
from preview_qa.secrets.totp import normal_seed, seed_problem, totp_name


def load(path: str | Path) -> Manifest:
    """Read and validate a manifest; raise ManifestError (one sentence, file:line: key: ...) on any problem."""
    source = YamlSource.read(Path(path))
    return parse(source)


def loads(text: str, file: str = "<manifest>") -> Manifest:
    return parse(YamlSource.parse(text, file))


# The defaults keys that are not a test's: one setting for the whole run (a test giving its own is refused)
RUN_WIDE = ("vision",)

# A comment as people write one on purpose (yamllint's rule): two spaces or more before the '#' and one after it.
DELIBERATE_COMMENT = re.compile(r"[ \t]{2,}#(\s|$)")


def parse(source: YamlSource) -> Manifest:
    """The manifest, or every problem it has at once (ManifestProblems): those the YAML shows, the model's, and those
    of a valid model's tests and states."""
    data = source.data
    if not isinstance(data, dict):
        raise source.error((), "the manifest must be a mapping with 'version' and 'tests' keys.")
    problems = [*_cut_texts(source), *_internal_keys(data, source)]
    defaults = data.get("defaults", {})  # `defaults:` left empty (null), [] or 0 is refused, as the schema refuses it
    if not isinstance(defaults, dict):
        problems.append(source.error(("defaults",), "must be a mapping of per-test keys."))
        defaults = {}
    if "steps" in defaults:
        problems.append(source.error(("defaults", "steps"), "steps cannot be given in defaults: each test lists its own steps."))
        defaults = {key: value for key, value in defaults.items() if key != "steps"}  # said: not merged, not said again
    raw_tests = data.get("tests")
    merged = {**data, "defaults": defaults}
    if isinstance(raw_tests, list):
        problems += [
            source.error(("tests", i, key), f"{key} is a setting of the whole run: give it in defaults (or --{key}).")
            for i, t in enumerate(raw_tests)
            if isinstance(t, dict)
            for key in RUN_WIDE
            if key in t
        ]
        raw_tests = [{k: v for k, v in t.items() if k not in RUN_WIDE} if isinstance(t, dict) else t for t in raw_tests]
        merged["tests"] = [_with_defaults(defaults, t) for t in raw_tests]
        merged["tests"] = [
            {**t, "line": source.line(("tests", i)) or 0} if isinstance(t, dict) else t for i, t in enumerate(merged["tests"])
        ]
    manifest, invalid = _validate(Manifest, {**merged, "path": source.file}, ())
    if any(loc[:1] == ("defaults",) for loc, _ in invalid):  # what the tests took from invalid defaults: said there once
        invalid = [(loc, said) for loc, said in invalid if not _from_defaults_at(loc, raw_tests, defaults)]
    problems += [source.error(loc, said) for loc, said in invalid]
    if manifest is not None:
        manifest._source = source
        problems += [*_test_problems(manifest), *_state_problems(manifest), *_persona_problems(manifest)]
    if manifest is None or problems:
        raise ManifestProblems.of(problems)
    return manifest.with_personas()


def _from_defaults_at(loc: Loc, raw_tests: Any, defaults: dict[str, Any]) -> bool:
    """Whether `loc` (tests[i].key...) is a key test i does not set itself, so it holds the defaults' value."""
    if len(loc) < 3 or loc[0] != "tests" or not isinstance(loc[1], int) or not isinstance(raw_tests, list):
        return False
    own = raw_tests[loc[1]] if loc[1] < len(raw_tests) and isinstance(raw_tests[loc[1]], dict) else {}
    return loc[2] in defaults and loc[2] not in own


def _with_defaults(defaults: dict[str, Any], test: Any) -> Any:
    """The test's keys over the defaults'. A test's own `expect` replaces the default checks, but a default
    expect.timeout (and expect.visual) still applies to it unless it sets its own: how long to wait is a run-wide habit,
    not a check."""
    if not isinstance(test, dict):
        return test
    # A default task is every test's goal, unless the test is written as steps.
    left_out = {"name", "task", *RUN_WIDE} if "steps" in test else {"name", *RUN_WIDE}
    merged = {**{k: v for k, v in defaults.items() if k not in left_out}, **test}
    default_expect, own_expect = defaults.get("expect"), test.get("expect")
    if isinstance(default_expect, dict) and isinstance(own_expect, dict):  # and expect.visual: a run-wide habit too
        kept = {k: default_expect[k] for k in ("timeout", "visual") if k in default_expect and k not in own_expect}
        merged["expect"] = {**own_expect, **kept}
    return merged


def _cut_texts(source: YamlSource) -> list[ManifestError]:
    """An error, never a warning, for any text a comment may have cut (`do: Check that order #1001 is listed`,
    `url: /orders #1001`, a name, a value to fill): the goal, check or value would be another one, a cut goal may well
    pass, and a warning scrolls past in CI. A comment written as one (`do: Pay  # the last goal`: two spaces before
    the '#', one after) is a comment."""
    found = []
    for loc, comment in source.commented.items():
        if not loc or DELIBERATE_COMMENT.match(comment):
            continue
        value = _at(source.data, loc)
        whole = json.dumps(f"{value}{comment.replace(chr(9), ' ')}", ensure_ascii=False)
        written = f"- {whole}" if isinstance(loc[-1], int) else f"{loc[-1]}: {whole}"
        found.append(
            source.error(
                loc,
                f"the text ends at ' #', which starts a YAML comment, so it reads {value!r}; quote the whole text "
                f"({written}), or put the comment on a line of its own.",
            )
        )
    return found


def _at(data: Any, loc: Loc) -> Any:
    for part in loc:
        data = data[part]
    return data


def _internal_keys(data: dict[str, Any], source: YamlSource) -> list[ManifestError]:
    """`path` and a test's `line` are set by the loader, never read from the file (it would overwrite them silently)."""
    found = [source.error(("path",), _unknown_key("path", Manifest, []))] if "path" in data else []
    tests = data.get("tests")
    for i, test in enumerate(tests if isinstance(tests, list) else []):
        if isinstance(test, dict) and "line" in test:
            found.append(source.error(("tests", i, "line"), _unknown_key("line", Manifest, ["tests"])))
    return found


def _test_problems(manifest: Manifest) -> Iterator[ManifestError]:
    seen: dict[str, int] = {}
    for i, test in enumerate(manifest.tests):
        if test.name in seen:
            yield manifest.error(
                ("tests", i, "name"),
                f"duplicate test name '{test.name}' (also test {seen[test.name] + 1}); names must be unique.",
            )
        seen[test.name] = i
        for loc, text in [(("tests", i, "task"), test.task or ""), *step_texts(test, ("tests", i))]:
            for placeholder in SECRET_TAG.findall(text):
                if placeholder not in test.secrets:
                    yield manifest.error(
                        loc,
                        f"uses <secret>{placeholder}</secret> but 'secrets' does not declare '{placeholder}'; "
                        "add it under secrets.",
                    )
        expects: list[tuple[Loc, Expectations]] = [(("tests", i, "expect"), test.expect)]
        expects += [(("tests", i, "steps", j, "expect"), s.expect) for j, s in enumerate(test.steps or [])]
        for loc, expect in expects:
            if "timeout" in expect.model_fields_set and expect.timeout > test.timeout:  # else the test's bounds it
                yield manifest.error(
                    (*loc, "timeout"),
                    f"waits {expect.timeout:g} s, longer than the test's timeout of {test.timeout:g} s; "
                    "lower expect.timeout or raise timeout.",
                )
        yield from (manifest.error(*problem) for problem in steps_problems(test, ("tests", i)))
        yield from (manifest.error(*problem) for problem in request_problems(test, ("tests", i)))
        yield from (manifest.error(*problem) for problem in inbox_problems(test, manifest.inbox is not None, ("tests", i)))


def _state_problems(manifest: Manifest) -> Iterator[ManifestError]:
    """save_state names are unique, every use_state names one of them, and no test ends up waiting for itself."""
    saved: dict[str, int] = {}
    for i, test in enumerate(manifest.tests):
        if test.save_state is None:
            continue
        if test.save_state in saved:
            first = manifest.tests[saved[test.save_state]]
            yield manifest.error(
                ("tests", i, "save_state"),
                f"state '{test.save_state}' is already saved by test "
                f"'{first.name}' (line {first.line}); give each save_state its own name.",
            )
            continue
        saved[test.save_state] = i
    saved_by = savers(manifest.tests)
    in_cycles: set[str] = set()  # a cycle is said once, at its first test
    for i, test in enumerate(manifest.tests):
        if test.use_state is None or test.name in in_cycles:
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
            yield manifest.error(("tests", i, "use_state"), f"no test saves a state named '{test.use_state}'{origin}; {hint}")
            continue
        cycle = cycle_from(manifest.tests, test.name)
        if cycle is None or test.name not in cycle:
            continue
        in_cycles.update(cycle)
        if len(cycle) == 1:
            fix = "set 'use_state: null' on it" if origin else "remove one of the two keys"
            yield manifest.error(
                ("tests", i, "use_state"),
                f"test '{test.name}' starts from state '{test.use_state}'{origin}, which it saves itself; {fix}.",
            )
            continue
        chain = " -> ".join(f"'{name}'" for name in [*cycle, cycle[0]])
        yield manifest.error(
            ("tests", i, "use_state"),
            f"setup tests wait for each other in a cycle ({chain}, each "
            f"waiting for the test that saves its use_state){origin}; break the cycle.",
        )


def _persona_problems(manifest: Manifest) -> Iterator[ManifestError]:
    """Every persona a test runs as is declared, and its state saved by a test; a run's name is no other test's."""
    saved_by = savers(manifest.tests)
    for name, persona in manifest.personas.items():
        if persona.use_state is not None and persona.use_state not in saved_by:
            yield manifest.error(
                ("personas", name, "use_state"),
                f"no test saves a state named '{persona.use_state}'; add 'save_state: {persona.use_state}' to the test "
                "that logs in as this persona.",
            )
    names = {test.name for test in manifest.tests}
    for i, test in enumerate(manifest.tests):
        for loc, message in persona_problems(test, manifest.personas, ("tests", i)):
            yield manifest.error(loc, message)
        for j, runs_as in enumerate(test.runs_as or []):
            if f"{test.name} [{runs_as}]" in names:
                yield manifest.error(
                    ("tests", i, "as", j),
                    f"its run as '{runs_as}' is named '{test.name} [{runs_as}]', the name of another test; rename one.",
                )


def _from_defaults(manifest: Manifest, index: int, key: str) -> str:
    """' (set in defaults)' when the test's own mapping lacks `key`, so the error explains where the value came from."""
    raw = manifest._source.data.get("tests", []) if manifest._source is not None else []
    own = raw[index] if index < len(raw) and isinstance(raw[index], dict) else {}
    return "" if key in own else " (set in defaults)"


M = TypeVar("M", bound=BaseModel)


def _validate(model: type[M], data: Any, base: Loc) -> tuple[M | None, list[tuple[Loc, str]]]:
    """The model, or None and each of its problems: where (under `base`) and what, in words."""
    try:
        return model.model_validate(data), []
    except ValidationError as e:
        located = [((*base, *error["loc"]), error) for error in e.errors(include_url=False)]
        return None, [(loc, _describe(error, loc, model)) for loc, error in located]


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
    names = [f.alias or n for n, f in getattr(current, "model_fields", {}).items() if not f.exclude]
    return names


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds: itself, or inside an optional or a list (steps: list[TestStep] | None)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for a in getattr(annotation, "__args__", ()) if (m := _model_in(a)) is not None), None)


def resolve_secrets(
    manifest: Manifest, environ: Mapping[str, str], required: Collection[str] | None = None
) -> dict[str, dict[str, str]]:
    """Each test's secret values, read from the environment. A variable missing (or unusable) for a test in `required`
    (names; None: every test) is a ManifestError at its key, all of them at once; the other tests get the values that
    are set and usable (still redacted), the others left out without an error: a run needs the secrets of the tests it
    runs, and the MCP server (required=()) redacts its results with what its environment holds."""
    resolved: dict[str, dict[str, str]] = {}
    problems: list[ManifestError] = []
    for i, test in enumerate(manifest.tests):
        values: dict[str, str] = {}
        for placeholder in test.secrets:
            env, totp = test.secret_env(placeholder), test.is_totp(placeholder)
            value = environ.get(env, "")
            problem = _secret_problem(value, env, totp)
            if problem is not None:
                if required is None or test.name in required:
                    problems.append(manifest.error(("tests", i, "secrets", placeholder), problem))
                continue
            if totp:
                values[totp_name(placeholder)] = normal_seed(value)  # browser-use's name: a code when typed
            else:
                values[placeholder] = value
        resolved[test.name] = values
    if problems:  # a test run as several personas is one test in the file: its problem is said once
        raise ManifestProblems.of(list({str(problem): problem for problem in problems}.values()))
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
