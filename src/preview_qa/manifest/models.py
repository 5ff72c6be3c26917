"""The test manifest: pydantic models (unknown keys refused) and a loader whose errors name file, line and key."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import jsonschema
from pathspec import GitIgnoreSpec
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, ValidationError, WithJsonSchema, field_validator
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from preview_qa.errors import ManifestError
from preview_qa.manifest.setup_tests import cycle_from, savers
from preview_qa.manifest.yaml_source import Loc, YamlSource, format_loc
from preview_qa.secrets.redact import MIN_SECRET_LENGTH, secret_length

SECRET_TAG = re.compile(r"<secret>(.*?)</secret>")
# Each rule below is written once and given to both the loader and the JSON Schema (ECMA regex: the same syntax here).
ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$"
TAG = "^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$"
START = "^(/|https?://)"
OUTSIDE_REPO = "(^|/)[.][.](/|$)"  # a `..` path segment
STATE_NAME = "^[A-Za-z0-9_][A-Za-z0-9_ .:-]{0,99}$"
_ENV_SCHEMA: JsonDict = {"type": "string", "pattern": ENV_NAME}
_SECRET_NAMES: JsonDict = {"propertyNames": {"pattern": ENV_NAME}, "additionalProperties": _ENV_SCHEMA}


def _ecma(pattern: str) -> re.Pattern[str]:
    """The pattern as the schema's ECMA regex reads it: there `$` is the very end, in Python also before a final newline."""
    return re.compile(pattern.replace("$", r"\Z"))


_ENV_RE, _TAG_RE, _START_RE, _OUTSIDE_RE, _STATE_RE = map(_ecma, (ENV_NAME, TAG, START, OUTSIDE_REPO, STATE_NAME))


class _Strict(BaseModel):
    # strict: a value is taken as written (no "20" for 20, no 1 for true), as the JSON Schema reads it too.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


OneOrMore = Annotated[list[str], BeforeValidator(_as_list, json_schema_input_type=str | list[str])]


def _state_name(v: str | None) -> str | None:
    if v is not None and not _STATE_RE.search(v):
        raise ValueError("a state name is 1 to 100 letters, digits, spaces, '.', ':', '_' or '-'")
    return v


class Expectations(_Strict):
    """Deterministic checks, run by code on the final page after the agent is done."""

    url: str | None = Field(default=None, min_length=1, description="The final page's URL contains this string.")
    text: OneOrMore = Field(default_factory=list, description=(
        "Text that must be visible on the final page (case-insensitive, whitespace-normalised, rendered and not "
        "hidden): one string or a list, each must be there."))
    not_text: OneOrMore = Field(default_factory=list, description=(
        "Text that must not be visible on the final page: one string or a list, none may be there."))
    title: str | None = Field(default=None, min_length=1,
                              description="The final page's title contains this (case-insensitive).")
    data: dict[str, Any] = Field(default_factory=dict, description=(
        "Keys (dotted paths reach into objects and lists) and the values the agent's extracted data must have there "
        "(strings compared trimmed; 3 equals 3.0, never true)."))
    timeout: float = Field(default=5, gt=0, description=(
        "Seconds each page check (url, title, text, not_text) waits for its condition to hold, as Playwright's expect "
        "does: text until it is visible, not_text until it is gone; at most the test's timeout. Given in defaults, it "
        "applies also to tests with an expect of their own."))

    @property
    def has_page_checks(self) -> bool:
        """Checks that code runs on the final page itself (data checks need the agent's report)."""
        return bool(self.url or self.text or self.not_text or self.title)


TASK = ("What the agent does and checks, in plain language (any language); <secret>name</secret> stands for a "
        "secret declared under secrets.")
OutputSchema = Annotated[dict[str, Any], WithJsonSchema(
    {"type": "object", "required": ["type"],
     "properties": {"type": {"const": "object", "description": "The extracted data is an object."}}})]


def glob_problem(pattern: str, first: bool = False) -> str | None:
    """Why a `paths` entry cannot be used (None if it can): outside the repository, not a glob, or matching nothing."""
    if _OUTSIDE_RE.search(pattern):
        return f"'{pattern}' points outside the repository ('..'); paths are relative to the repository root"
    try:
        compiled = GitIgnoreSpec.from_lines([pattern]).patterns
    except (ValueError, re.error) as e:  # pathspec's pattern error is a ValueError; re's names a place in its own regex
        return f"'{pattern}' is not a valid gitignore-style glob ({str(e).split(' at position')[0]})"
    if not compiled or compiled[0].include is None:
        return f"'{pattern}' matches nothing (blank, a '#' comment or a lone '/'); write a glob such as src/**"
    if first and compiled[0].include is False:
        return f"'{pattern}' excludes files but nothing before it includes any; put a pattern such as src/** first"
    return None


class TestOptions(_Strict):
    """Keys that a test may set and `defaults:` may set for every test."""

    __test__ = False

    start: str = Field(default="/", json_schema_extra={"pattern": START}, description=(
        "Where the browser starts: a path under --base-url (starting with '/'), or an absolute http(s) URL."))
    task: str | None = Field(default=None, min_length=1, description=TASK)
    secrets: dict[str, str] = Field(
        default_factory=dict, json_schema_extra=_SECRET_NAMES,
        description=("Placeholder name -> the environment variable holding the value. The LLM only ever sees "
                     "<secret>name</secret>; every output has the value replaced by it."))
    expect: Expectations = Field(default_factory=Expectations, description=(
        "Deterministic checks, run by code on the final page after the agent is done: any that fails fails the test, "
        "whatever the agent said."))
    output_schema: OutputSchema | None = Field(default=None, description=(
        "A JSON Schema (type: object) of the data the agent must extract and return; its data must satisfy it."))
    max_steps: int = Field(default=20, ge=1, le=500, description="Agent steps before the test fails as unfinished.")
    timeout: float = Field(default=300, gt=0, le=24 * 3600, description=(
        "Seconds for the whole test (browser start, agent, checks, evidence) before it errors."))
    allowed_domains: list[str] = Field(default_factory=list, description=(
        "Hosts the agent may visit besides the preview's own."))
    skip: bool | str = Field(default=False, description="true, or the reason: the test is reported as skipped, not run.")
    judge: bool = Field(default=False, description=(
        "Also ask browser-use's judge: its 'fail' fails the test, its 'pass' adds nothing."))
    max_tokens: int | None = Field(default=None, ge=1, description=(
        "Per-test LLM token budget: past it the test stops as errored (--max-tokens overrides it)."))
    max_cost_usd: float | None = Field(default=None, gt=0, description=(
        "Per-test LLM cost budget in US dollars: past it the test stops as errored (--max-cost-usd overrides it)."))
    tags: list[str] = Field(default_factory=list, json_schema_extra={"items": {"type": "string", "pattern": TAG}},
                            description=("Labels to pick tests by: `run --tag T` runs the tests with any of the given "
                                         "tags, `--skip-tag T` leaves them out. Letters, digits and _ . : / -"))
    paths: list[str] = Field(
        default_factory=list,
        json_schema_extra={"items": {"type": "string", "minLength": 1, "not": {"pattern": OUTSIDE_REPO}}},
        description=("Repository files this test covers: gitignore-style globs relative to the repository root, e.g. "
                     "src/checkout/**. Given changed files (--changed-files, or the action's changed-only), the test "
                     "runs only when one of them matches; a test without paths always runs."))
    use_state: str | None = Field(default=None, json_schema_extra={"pattern": STATE_NAME}, description=(
        "Start signed in: in a fresh browser that already holds the state (cookies, localStorage, IndexedDB) saved "
        "under this name by the test with that save_state, which runs first. null opts out of a default."))
    retries: int = Field(default=0, ge=0, le=5, description=(
        "Run a test that failed or errored again, from scratch in a fresh browser, up to this many more times "
        "(--retries overrides it); a test that passes on a retry is reported flaky."))

    _use_state_name = field_validator("use_state")(_state_name)

    @field_validator("start")
    @classmethod
    def _start_is_path_or_url(cls, v: str) -> str:
        if not _START_RE.search(v):
            raise ValueError("must be a path starting with '/' or an http(s) URL")
        return v

    @field_validator("secrets")
    @classmethod
    def _secret_names(cls, v: dict[str, str]) -> dict[str, str]:
        for placeholder, env in v.items():
            if not _ENV_RE.search(placeholder):
                raise ValueError(f"placeholder '{placeholder}' must be letters, digits and underscores")
            if not _ENV_RE.search(env):
                raise ValueError(f"'{env}' is not an environment variable name")
        return v

    @field_validator("tags")
    @classmethod
    def _tag_names(cls, v: list[str]) -> list[str]:
        for tag in v:
            if not _TAG_RE.search(tag):
                raise ValueError(f"tag '{tag}' must be letters, digits and _ . : / - (no spaces or commas)")
        return v

    @field_validator("paths")
    @classmethod
    def _globs(cls, v: list[str]) -> list[str]:
        for i, pattern in enumerate(v):
            problem = glob_problem(pattern, first=i == 0)
            if problem:
                raise ValueError(problem)
        return v

    @field_validator("output_schema")
    @classmethod
    def _schema_is_valid(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is None:
            return v
        try:
            jsonschema.validators.validator_for(v).check_schema(v)
        except jsonschema.SchemaError as e:
            raise ValueError(f"not a valid JSON Schema: {e.message}") from None
        if v.get("type") != "object":
            raise ValueError("must describe an object (type: object)")
        return v


class Defaults(TestOptions):
    """`defaults:` — any per-test key but the name."""


class TestSpec(TestOptions):
    """One natural-language browser test."""

    name: str = Field(min_length=1, max_length=1000, description=(
        "Unique: names the JUnit test case, the artifact folder, and the test for `--only NAME`."))
    task: str = Field(min_length=1, description=TASK)
    line: SkipJsonSchema[int] = Field(default=0, exclude=True)  # where the test starts in the manifest (not a key)
    save_state: str | None = Field(default=None, json_schema_extra={"pattern": STATE_NAME}, description=(
        "When this test passes, keep its browser state (a login) under this name, for the tests with that use_state. "
        "A credential: it never reaches an output, and is deleted when the run ends."))

    _save_state_name = field_validator("save_state")(_state_name)

    @property
    def skip_reason(self) -> str | None:
        if self.skip is False:
            return None
        return self.skip if isinstance(self.skip, str) and self.skip else "skipped in the manifest"

    @property
    def secret_placeholders(self) -> list[str]:
        return SECRET_TAG.findall(self.task)


class Manifest(_Strict):
    """A whole manifest, version 1."""

    version: Literal[1] = Field(description="The manifest format's version: 1.")
    defaults: Defaults = Field(default_factory=Defaults, description=(
        "Keys given to every test (any test key but name); a test's own value replaces the default."))
    tests: list[TestSpec] = Field(min_length=1, description="The tests, reported in this order.")
    path: SkipJsonSchema[str] = Field(default="<manifest>", exclude=True)  # the file it was read from (not a key)
    _source: YamlSource | None = PrivateAttr(default=None)

    @field_validator("version", mode="before")
    @classmethod
    def _not_a_bool(cls, v: Any) -> Any:
        if isinstance(v, bool):  # True == 1 in Python, but not in YAML nor in the JSON Schema's const
            raise ValueError("unsupported manifest version; use 'version: 1'")
        return v

    def error(self, loc: Loc, message: str) -> ManifestError:
        if self._source is None:
            return ManifestError(self.path, None, format_loc(loc), message)
        return self._source.error(loc, message)


def load(path: str | Path) -> Manifest:
    """Read and validate a manifest; raise ManifestError (one sentence, file:line: key: ...) on any problem."""
    source = YamlSource.read(Path(path))
    return parse(source)


def loads(text: str, file: str = "<manifest>") -> Manifest:
    return parse(YamlSource.parse(text, file))


def parse(source: YamlSource) -> Manifest:
    data = source.data
    if not isinstance(data, dict):
        raise source.error((), "the manifest must be a mapping with 'version' and 'tests' keys.")
    _refuse_internal_keys(data, source)
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise source.error(("defaults",), "must be a mapping of per-test keys.")
    _validate(Defaults, defaults, source, ("defaults",))
    raw_tests = data.get("tests")
    merged = dict(data)
    if isinstance(raw_tests, list):
        merged["tests"] = [_with_defaults(defaults, t) for t in raw_tests]
        merged["tests"] = [
            {**t, "line": source.line(("tests", i)) or 0} if isinstance(t, dict) else t
            for i, t in enumerate(merged["tests"])
        ]
    manifest = _validate(Manifest, {**merged, "path": source.file}, source, ())
    manifest._source = source
    _check_tests(manifest)
    _check_states(manifest)
    return manifest


def _with_defaults(defaults: dict[str, Any], test: Any) -> Any:
    """The test's keys over the defaults'. A test's own `expect` replaces the default checks, but a default
    expect.timeout still applies to it unless it sets its own: how long to wait is a run-wide habit, not a check."""
    if not isinstance(test, dict):
        return test
    merged = {**{k: v for k, v in defaults.items() if k != "name"}, **test}
    default_expect, own_expect = defaults.get("expect"), test.get("expect")
    if isinstance(default_expect, dict) and "timeout" in default_expect and isinstance(own_expect, dict) \
            and "timeout" not in own_expect:
        merged["expect"] = {**own_expect, "timeout": default_expect["timeout"]}
    return merged


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
            raise manifest.error(("tests", i, "name"), f"duplicate test name '{test.name}' (also test {seen[test.name] + 1}); "
                                                     "names must be unique.")
        seen[test.name] = i
        for placeholder in test.secret_placeholders:
            if placeholder not in test.secrets:
                raise manifest.error(("tests", i, "task"), f"uses <secret>{placeholder}</secret> but 'secrets' does not "
                                                         f"declare '{placeholder}'; add it under secrets.")
        if "timeout" in test.expect.model_fields_set and test.expect.timeout > test.timeout:  # else the test's bounds it
            raise manifest.error(("tests", i, "expect", "timeout"),
                                 f"waits {test.expect.timeout:g} s, longer than the test's timeout of {test.timeout:g} s; "
                                 "lower expect.timeout or raise timeout.")


def _check_states(manifest: Manifest) -> None:
    """save_state names are unique, every use_state names one of them, and no test ends up waiting for itself."""
    saved: dict[str, int] = {}
    for i, test in enumerate(manifest.tests):
        if test.save_state is None:
            continue
        if test.save_state in saved:
            first = manifest.tests[saved[test.save_state]]
            raise manifest.error(("tests", i, "save_state"), f"state '{test.save_state}' is already saved by test "
                                 f"'{first.name}' (line {first.line}); give each save_state its own name.")
        saved[test.save_state] = i
    saved_by = savers(manifest.tests)
    for i, test in enumerate(manifest.tests):
        if test.use_state is None:
            continue
        origin = _from_defaults(manifest, i, "use_state")
        if test.use_state not in saved_by:
            guess = difflib.get_close_matches(test.use_state, list(saved_by), n=1)
            hint = (f"did you mean '{guess[0]}'?" if guess else
                    f"add 'save_state: {test.use_state}' to the test that logs in" +
                    (f" (saved states: {', '.join(sorted(saved_by))})." if saved_by else "."))
            raise manifest.error(("tests", i, "use_state"), f"no test saves a state named '{test.use_state}'{origin}; {hint}")
        cycle = cycle_from(manifest.tests, test.name)
        if cycle is None or test.name not in cycle:
            continue
        if len(cycle) == 1:
            fix = "set 'use_state: null' on it" if origin else "remove one of the two keys"
            raise manifest.error(("tests", i, "use_state"), f"test '{test.name}' starts from state '{test.use_state}'"
                                 f"{origin}, which it saves itself; {fix}.")
        chain = " -> ".join(f"'{name}'" for name in [*cycle, cycle[0]])
        raise manifest.error(("tests", i, "use_state"), f"setup tests wait for each other in a cycle ({chain}, each "
                             f"waiting for the test that saves its use_state){origin}; break the cycle.")


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
        annotation = fields[part].annotation
        args = [a for a in getattr(annotation, "__args__", ()) if isinstance(a, type) and issubclass(a, BaseModel)]
        current = args[0] if args else annotation
    names = [n for n, f in getattr(current, "model_fields", {}).items() if not f.exclude]
    return names


def resolve_secrets(manifest: Manifest, environ: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Each test's secret values, read from the environment; a missing variable is a ManifestError at its key."""
    resolved: dict[str, dict[str, str]] = {}
    for i, test in enumerate(manifest.tests):
        values: dict[str, str] = {}
        for placeholder, env in test.secrets.items():
            if not environ.get(env):
                raise manifest.error(("tests", i, "secrets", placeholder),
                                     f"environment variable {env} is not set; export it (or pass it as a workflow secret).")
            if secret_length(environ[env]) < MIN_SECRET_LENGTH:  # redacting so short a value would shred every output
                raise manifest.error(("tests", i, "secrets", placeholder),
                                     f"the value of {env} has {secret_length(environ[env])} characters (whitespace aside); "
                                     f"a secret needs at least {MIN_SECRET_LENGTH} to be told apart from ordinary text.")
            values[placeholder] = environ[env]
        resolved[test.name] = values
    return resolved
