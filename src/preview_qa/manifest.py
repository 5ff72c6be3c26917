"""The test manifest: pydantic models (unknown keys refused) and a loader whose errors name file, line and key."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from preview_qa.yamlsource import Loc, SourceError, YamlSource, format_loc

ManifestError = SourceError

SECRET_TAG = re.compile(r"<secret>(.*?)</secret>")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class Expectations(_Strict):
    """Deterministic checks, run by code on the final page after the agent is done."""

    url: str | None = Field(default=None, min_length=1)  # the final URL contains this
    text: list[str] = Field(default_factory=list)  # each is visible on the final page (case-insensitive)
    not_text: list[str] = Field(default_factory=list)  # none of these is visible on the final page
    title: str | None = Field(default=None, min_length=1)  # the page title contains this (case-insensitive)
    data: dict[str, Any] = Field(default_factory=dict)  # the extracted data has these keys with these values
    timeout: float = Field(default=5, gt=0)  # seconds each page check waits for its condition to hold

    _text_list = field_validator("text", "not_text", mode="before")(_as_list)

    @property
    def has_page_checks(self) -> bool:
        """Checks that code runs on the final page itself (data checks need the agent's report)."""
        return bool(self.url or self.text or self.not_text or self.title)


class TestOptions(_Strict):
    """Keys that a test may set and `defaults:` may set for every test."""

    __test__ = False

    start: str = "/"
    task: str | None = Field(default=None, min_length=1)
    secrets: dict[str, str] = Field(default_factory=dict)  # placeholder -> environment variable
    expect: Expectations = Field(default_factory=Expectations)
    output_schema: dict[str, Any] | None = None
    max_steps: int = Field(default=20, ge=1, le=500)
    timeout: float = Field(default=300, gt=0, le=24 * 3600)
    allowed_domains: list[str] = Field(default_factory=list)  # beyond the preview's own host
    skip: bool | str = False  # true, or the reason
    judge: bool = False  # also ask browser-use's judge; its "fail" fails the test
    max_tokens: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)
    retries: int = Field(default=0, ge=0, le=5)  # further attempts, from scratch, for a test that failed or errored

    @field_validator("start")
    @classmethod
    def _start_is_path_or_url(cls, v: str) -> str:
        scheme = urlsplit(v).scheme
        if not (v.startswith("/") or scheme in ("http", "https")):
            raise ValueError("must be a path starting with '/' or an http(s) URL")
        return v

    @field_validator("secrets")
    @classmethod
    def _secret_names(cls, v: dict[str, str]) -> dict[str, str]:
        for placeholder, env in v.items():
            if not _ENV_NAME.match(placeholder):
                raise ValueError(f"placeholder '{placeholder}' must be letters, digits and underscores")
            if not _ENV_NAME.match(str(env)):
                raise ValueError(f"'{env}' is not an environment variable name")
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

    name: str = Field(min_length=1, max_length=1000)
    task: str = Field(min_length=1)  # type: ignore[assignment]
    line: int = Field(default=0, exclude=True)  # where the test starts in the manifest

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

    version: Literal[1]
    defaults: Defaults = Field(default_factory=Defaults)
    tests: list[TestSpec] = Field(min_length=1)
    path: str = Field(default="<manifest>", exclude=True)
    _source: YamlSource | None = PrivateAttr(default=None)

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
        if test.expect.timeout > test.timeout:
            raise manifest.error(("tests", i, "expect", "timeout"),
                                 f"waits {test.expect.timeout:g} s, longer than the test's timeout of {test.timeout:g} s; "
                                 "lower expect.timeout or raise timeout.")


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
        known = _fields_at(model, [p for p in error["loc"][:-1] if isinstance(p, str)])
        guess = difflib.get_close_matches(str(key), known, n=1)
        hint = f"did you mean '{guess[0]}'?" if guess else f"valid keys are: {', '.join(sorted(known))}."
        return f"unknown key '{key}'; {hint}"
    if kind == "missing":
        return "this required key is missing."
    if kind == "literal_error" and key == "version":
        return "unsupported manifest version; use 'version: 1'."
    message = str(error["msg"]).removeprefix("Value error, ")
    given = error.get("input")
    shown = repr(given) if len(repr(given)) <= 60 else repr(given)[:57] + "..."
    return f"{message[0].lower()}{message[1:]} (got {shown})."


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
            values[placeholder] = environ[env]
        resolved[test.name] = values
    return resolved
