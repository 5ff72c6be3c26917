# Over 400 lines: each key carries its description, which is the user's documentation (JSON Schema, editor help).
"""The test manifest's pydantic models: every key, its rule and its JSON Schema, unknown keys refused."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    PrivateAttr,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from preview_qa.config import Vision
from preview_qa.errors import ManifestError
from preview_qa.manifest.devices import device_problem, emulation, timezone_problem
from preview_qa.manifest.expectations import Accessibility as Accessibility
from preview_qa.manifest.expectations import Expectations as Expectations
from preview_qa.manifest.expectations import Impact as Impact
from preview_qa.manifest.expectations import LinksCheck as LinksCheck
from preview_qa.manifest.expectations import OneOrMore, Strict
from preview_qa.manifest.expectations import RequestsCheck as RequestsCheck
from preview_qa.manifest.expectations import VisualCheck as VisualCheck
from preview_qa.manifest.steps import PATH_OR_URL, StepKind, TestStep
from preview_qa.manifest.yaml_source import Loc, YamlSource, format_loc
from preview_qa.results import ColorScheme, Emulation, Viewport

SECRET_TAG = re.compile(r"<secret>(.*?)</secret>")
TOTP_SUFFIX = "bu_2fa_code"  # browser-use's 2FA convention (secrets/totp.py)
# Each rule below is written once and given to both the loader and the JSON Schema (ECMA regex: the same syntax here).
ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$"
TAG = "^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$"
START = PATH_OR_URL
OUTSIDE_REPO = "(^|/)[.][.](/|$)"  # a `..` path segment
STATE_NAME = "^[A-Za-z0-9_][A-Za-z0-9_ .:-]{0,99}$"
APP_NAME = "^[A-Za-z0-9_][A-Za-z0-9_./-]{0,199}$"  # a monorepo app's folder (apps/web) or its last part (web)
_APP_URL: JsonDict = {"type": "string", "pattern": "^https?://"}
LOCALE = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$"  # a BCP 47 language tag: en, de-DE, zh-Hant-TW
SERVER_PATH = "^[/*]"  # an allow_server_errors glob: a path, or a glob that starts with *
_ENV_SCHEMA: JsonDict = {"type": "string", "pattern": ENV_NAME}
_SECRET_SOURCE: JsonDict = {
    "type": "object",
    "additionalProperties": False,
    "required": ["env"],
    "properties": {
        "env": {**_ENV_SCHEMA, "description": "The environment variable holding the value."},
        "totp": {
            "type": "boolean",
            "description": "The value is a TOTP seed (base32): the agent and the replay type a "
            "fresh code where the task says <secret>name</secret>.",
        },
    },
}
_ROUTE: JsonDict = {"type": "string", "pattern": "^/"}
_SECRET_NAMES: JsonDict = {
    "propertyNames": {"pattern": ENV_NAME},
    "additionalProperties": {"anyOf": [_ENV_SCHEMA, _SECRET_SOURCE]},
}


def _ecma(pattern: str) -> re.Pattern[str]:
    """The pattern as the schema's ECMA regex reads it: there `$` is the very end, in Python also before a final newline."""
    return re.compile(pattern.replace("$", r"\Z"))


_ENV_RE, _TAG_RE, _START_RE, _OUTSIDE_RE, _STATE_RE, _LOCALE_RE, _SERVER_PATH_RE = map(
    _ecma, (ENV_NAME, TAG, START, OUTSIDE_REPO, STATE_NAME, LOCALE, SERVER_PATH)
)


def _state_name(v: str | None) -> str | None:
    if v is not None and not _STATE_RE.search(v):
        raise ValueError("a state name is 1 to 100 letters, digits, spaces, '.', ':', '_' or '-'")
    return v


def _not_null(schema: JsonDict) -> None:
    """A key that Python leaves unset as None, whose value in a manifest may not be null: its schema without the null."""
    options = schema.pop("anyOf", None)
    if isinstance(options, list):
        schema.update(next(o for o in options if isinstance(o, dict) and o.get("type") != "null"))


TASK = (
    "What the agent does and checks, in plain language (any language); <secret>name</secret> stands for a "
    "secret declared under secrets."
)
OutputSchema = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "required": ["type"],
            "properties": {"type": {"const": "object", "description": "The extracted data is an object."}},
        }
    ),
]


def glob_problem(pattern: str, first: bool = False) -> str | None:
    """Why a `paths` entry cannot be used (None if it can): outside the repository, not a glob, or matching nothing."""
    if _OUTSIDE_RE.search(pattern):
        return f"'{pattern}' points outside the repository ('..'); paths are relative to the repository root"
    from pathspec import GitIgnoreSpec  # only a manifest with `paths` pays its import

    try:
        compiled = GitIgnoreSpec.from_lines([pattern]).patterns
    except (ValueError, re.error) as e:  # pathspec's pattern error is a ValueError; re's names a place in its own regex
        return f"'{pattern}' is not a valid gitignore-style glob ({str(e).split(' at position')[0]})"
    if not compiled or compiled[0].include is None:
        return f"'{pattern}' matches nothing (blank, a '#' comment or a lone '/'); write a glob such as src/**"
    if first and compiled[0].include is False:
        return f"'{pattern}' excludes files but nothing before it includes any; put a pattern such as src/** first"
    return None


class SecretSource(Strict):
    """A secret declared with options: where its value is, and whether it is a TOTP seed."""

    env: str
    totp: bool = False


class Dialogs(Strict):
    """How the page's dialogs are answered (alert, confirm and beforeunload are always accepted)."""

    prompt: str | None = Field(
        default=None,
        description=("The text typed into every prompt() dialog before it is accepted; without it a prompt is cancelled."),
    )


VAR_TAG = re.compile(r"<var>(.*?)</var>")
JSON_PATH = r"^\x24(\.[A-Za-z_][A-Za-z0-9_-]*|\[[0-9]+\])*$"  # $.a.b[0]: keys and list indexes, nothing more
_JSON_PATH_RE = _ecma(JSON_PATH)
_JSON_PATH_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[([0-9]+)\]")


def json_path_parts(path: str) -> list[str | int]:
    """`$.a.b[0]` as the keys and indexes it follows: ["a", "b", 0]."""
    return [key if key else int(index) for key, index in _JSON_PATH_PART.findall(path)]


class ApiRequest(Strict):
    """One HTTP request to the preview's API, sent by preview-qa itself (not the browser), for a test's data."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = Field(default="GET", description="The HTTP method.")
    path: str = Field(
        json_schema_extra={"pattern": "^/"},
        description="A path on the test's preview (never a URL: the request goes to the preview alone), e.g. /api/orders.",
    )
    body: JsonValue | None = Field(
        default=None,
        alias="json",
        description="A JSON body to send; <secret>name</secret> and <var>name</var> in its strings are filled in.",
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Headers to send besides the preview's own (--extra-header, basic auth); <secret>name</secret> allowed.",
    )
    expect_status: int | list[int] | None = Field(
        default=None,
        description="The status (or statuses) the answer must have; without it any 2xx.",
    )
    save: dict[str, str] = Field(
        default_factory=dict,
        json_schema_extra={"propertyNames": {"pattern": ENV_NAME}, "additionalProperties": {"pattern": JSON_PATH}},
        description=(
            "Values of the JSON answer the test uses as <var>name</var> (in its task, start, open, fill and checks, and "
            "in later requests): name -> a path such as $.id or $.items[0].id."
        ),
    )

    @field_validator("path")
    @classmethod
    def _a_path(cls, v: str) -> str:
        if not v.startswith("/") or v.startswith("//"):
            raise ValueError("must be a path on the preview starting with '/' (such as /api/orders), not a URL")
        return v

    @field_validator("expect_status")
    @classmethod
    def _statuses(cls, v: int | list[int] | None) -> int | list[int] | None:
        for status in [v] if isinstance(v, int) else v or []:
            if not 100 <= status <= 599:
                raise ValueError(f"{status} is not an HTTP status (100 to 599)")
        return v

    @field_validator("save")
    @classmethod
    def _json_paths(cls, v: dict[str, str]) -> dict[str, str]:
        for name, path in v.items():
            if not _ENV_RE.search(name):
                raise ValueError(f"'{name}' must be letters, digits and underscores (it is used as <var>{name}</var>)")
            if not _JSON_PATH_RE.search(path):
                raise ValueError(f"'{path}' is not a JSON path such as $.id, $.order.id or $.items[0].id")
        return v

    def expected(self, status: int) -> bool:
        """Whether `status` is the answer this request expects."""
        wanted = self.expect_status
        return 200 <= status < 300 if wanted is None else status in ([wanted] if isinstance(wanted, int) else wanted)

    @property
    def line(self) -> str:
        """The request in words: "POST /api/orders"."""
        return f"{self.method} {self.path}"

    @property
    def texts(self) -> str:
        """Its path, body and headers as one text: where its <secret>s and <var>s are looked for."""
        return json.dumps([self.path, self.body, self.headers], ensure_ascii=False)


class Persona(Strict):
    """Who a test runs as (personas:, a test's as:): the browser state it starts from; {} starts signed out."""

    use_state: str | None = Field(
        default=None,
        json_schema_extra={"pattern": STATE_NAME},
        description="Start from the state saved under this name (by the test with that save_state); none: signed out.",
    )

    _use_state_name = field_validator("use_state")(_state_name)


class TestOptions(Strict):
    """Keys that a test may set and `defaults:` may set for every test."""

    __test__ = False

    start: str = Field(
        default="/",
        json_schema_extra={"pattern": START},
        description=("Where the browser starts: a path under --base-url (starting with '/'), or an absolute http(s) URL."),
    )
    task: str | None = Field(default=None, min_length=1, description=TASK)
    secrets: dict[str, str | SecretSource] = Field(
        default_factory=dict,
        json_schema_extra=_SECRET_NAMES,
        description=(
            "Placeholder name -> the environment variable holding the value (or {env, totp: true} for a "
            "TOTP seed). The LLM only ever sees <secret>name</secret>; every output has the value replaced "
            "by it."
        ),
    )
    expect: Expectations = Field(
        default_factory=Expectations,
        description=(
            "Deterministic checks, run by code on the final page after the agent is done: any that fails fails the test, "
            "whatever the agent said."
        ),
    )
    output_schema: OutputSchema | None = Field(
        default=None,
        description=("A JSON Schema (type: object) of the data the agent must extract and return; its data must satisfy it."),
    )
    max_steps: int = Field(default=20, ge=1, le=500, description="Agent steps before the test fails as unfinished.")
    timeout: float = Field(
        default=300,
        gt=0,
        le=24 * 3600,
        description=("Seconds for the whole test (browser start, agent, checks, evidence) before it errors."),
    )
    allowed_domains: list[str] = Field(default_factory=list, description=("Hosts the agent may visit besides the preview's own."))
    app: str | None = Field(
        default=None,
        json_schema_extra={"pattern": APP_NAME},
        description=(
            "In a monorepo whose apps have previews of their own: the app this test is for, by its name in the "
            "manifest's apps: or in --base-url NAME=URL (its folder, apps/web, or the folder's name, web). Its start "
            "and open: paths are read on that app's preview, its credentials go to that origin. Without it, the test "
            "runs on --base-url's plain URL."
        ),
    )
    allow_server_errors: list[str] = Field(
        default_factory=list,
        json_schema_extra={"items": {"type": "string", "pattern": SERVER_PATH}},
        description=(
            "Paths whose 5xx answers do not fail the test: globs on the request's path (no query; '*' matches any "
            "characters, '/' included), e.g. /api/metrics*. Without them, a 5xx answer to the app's own fetch, XHR or "
            "form POST after an action fails the test, unless the same request later succeeded."
        ),
    )
    allow_javascript: bool = Field(
        default=False,
        description=(
            "Give the agent browser-use's evaluate action, which runs JavaScript the model wrote on the page: a risk (a "
            "page can talk the model into reading and sending anything the page holds), so off unless a test needs it."
        ),
    )
    dialogs: Dialogs = Field(
        default_factory=Dialogs,
        description=(
            "Dialogs are answered one way, whoever drives the page: alert OK, confirm OK, beforeunload leave, prompt "
            "cancel, or the text given here as prompt; each one is an event in the test's evidence."
        ),
    )
    skip: bool | str = Field(default=False, description="true, or the reason: the test is reported as skipped, not run.")
    judge: bool = Field(
        default=False, description=("Also ask browser-use's judge: its 'fail' fails the test, its 'pass' adds nothing.")
    )
    max_tokens: int | None = Field(
        default=None,
        ge=1,
        description=("Per-test LLM token budget: past it the test stops as errored (--max-tokens overrides it)."),
    )
    llm_timeout: float | None = Field(
        default=None,
        gt=0,
        le=3600,
        description=(
            "Seconds one LLM call may take before it is given up on (--llm-timeout overrides it). Unset: 75 s at most "
            "for a hosted provider, 600 s for a model served here (ollama, or --llm-base-url on this machine or a private "
            "network); a sixth (hosted) or half (local) of the test's timeout when that is shorter."
        ),
    )
    max_cost_usd: float | None = Field(
        default=None,
        gt=0,
        description=("Per-test LLM cost budget in US dollars: past it the test stops as errored (--max-cost-usd overrides it)."),
    )
    tags: list[str] = Field(
        default_factory=list,
        json_schema_extra={"items": {"type": "string", "pattern": TAG}},
        description=(
            "Labels to pick tests by: `run --tag T` runs the tests with any of the given "
            "tags, `--skip-tag T` leaves them out. Letters, digits and _ . : / -"
        ),
    )
    paths: list[str] = Field(
        default_factory=list,
        json_schema_extra={"items": {"type": "string", "minLength": 1, "not": {"pattern": OUTSIDE_REPO}}},
        description=(
            "Repository files this test covers: gitignore-style globs relative to the repository root, e.g. "
            "src/checkout/**. Given changed files (--changed-files, or the action's changed-only), the test "
            "runs only when one of them matches; a test without paths always runs."
        ),
    )
    use_state: str | None = Field(
        default=None,
        json_schema_extra={"pattern": STATE_NAME},
        description=(
            "Start signed in: in a fresh browser that already holds the state (cookies, localStorage, IndexedDB) saved "
            "under this name by the test with that save_state, which runs first. null opts out of a default."
        ),
    )
    heal: bool = Field(
        default=True,
        description=(
            "When the test's cached replay no longer matches the app, let the agent take over: a pass is reported as "
            "healed. false: the drifted replay fails the test instead (a release gate); --fail-on healed fails the run."
        ),
    )
    retries: int = Field(
        default=0,
        ge=0,
        le=5,
        description=(
            "Run a test that failed or errored again, from scratch in a fresh browser, up to this many more times "
            "(--retries overrides it); a test that passes on a retry is reported flaky."
        ),
    )
    before: list[ApiRequest] = Field(
        default_factory=list,
        description=(
            "HTTP requests to the preview's API made once the test's browser is ready, before its first step (test data: "
            "an order to find); one that does not answer as expected errors the test. Each one's save names values of "
            "its answer for <var>name</var>."
        ),
    )
    after: list[ApiRequest] = Field(
        default_factory=list,
        description=(
            "HTTP requests to the preview's API made when the test ends, however it ends (passed, failed, errored, timed "
            "out, cancelled): to delete what before made. One that fails is a warning on the test, never its verdict."
        ),
    )

    device: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "Emulate this device, by Playwright's name for it (e.g. 'iPhone 15', 'Pixel 7', 'iPad Mini'): its viewport, "
            "scale, mobile and touch, and user agent, for the agent, the replay, the checks and the screenshots. "
            "viewport, locale, timezone and color_scheme replace the device's. null opts out of a default."
        ),
    )
    viewport: Viewport | None = Field(
        default=None,
        description="The page's size in CSS pixels ({width, height}); without it and a device, 1280x800.",
    )
    locale: str | None = Field(
        default=None,
        json_schema_extra={"pattern": LOCALE},
        description="The browser's locale (navigator.language, Accept-Language, number and date formats), e.g. de-DE.",
    )
    timezone: str | None = Field(
        default=None, min_length=1, description="The browser's time zone, an IANA name such as Europe/Berlin."
    )
    # strict would refuse "dark" for the enum from YAML; the value is still checked against the three names
    color_scheme: Annotated[ColorScheme | None, Field(strict=False)] = Field(
        default=None, description="What the page's prefers-color-scheme media query matches: light, dark or no-preference."
    )

    _use_state_name = field_validator("use_state")(_state_name)

    @property
    def emulation(self) -> Emulation | None:
        """The test's device and locale as its browser context emulates them; None: the default desktop."""
        return emulation(self.device, self.viewport, self.locale, self.timezone, self.color_scheme)

    @field_validator("device", "timezone")
    @classmethod
    def _known_name(cls, v: str | None, info: ValidationInfo) -> str | None:
        problem = None if v is None else (device_problem if info.field_name == "device" else timezone_problem)(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("locale")
    @classmethod
    def _locale_tag(cls, v: str | None) -> str | None:
        if v is not None and not _LOCALE_RE.search(v):
            raise ValueError("a locale is a language tag such as en, de-DE or zh-Hant-TW")
        return v

    @field_validator("start")
    @classmethod
    def _start_is_path_or_url(cls, v: str) -> str:
        if not _START_RE.search(v):
            raise ValueError("must be a path starting with '/' or an http(s) URL")
        return v

    @field_validator("secrets")
    @classmethod
    def _secret_names(cls, v: dict[str, str | SecretSource]) -> dict[str, str | SecretSource]:
        for placeholder, source in v.items():
            if not _ENV_RE.search(placeholder):
                raise ValueError(f"placeholder '{placeholder}' must be letters, digits and underscores")
            env = source if isinstance(source, str) else source.env
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

    @field_validator("allow_server_errors")
    @classmethod
    def _server_paths(cls, v: list[str]) -> list[str]:
        for glob in v:
            if not _SERVER_PATH_RE.search(glob):
                raise ValueError(f"'{glob}' is matched against a request's path: start it with '/' (or '*')")
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
        import jsonschema  # only a manifest with an output_schema pays its import

        try:
            jsonschema.validators.validator_for(v).check_schema(v)
        except jsonschema.SchemaError as e:
            raise ValueError(f"not a valid JSON Schema: {e.message}") from None
        if v.get("type") != "object":
            raise ValueError("must describe an object (type: object)")
        return v


def _on_off(value: Any) -> Any:
    return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value


class Defaults(TestOptions):
    """`defaults:` — any per-test key but the name, and the run-wide settings a manifest may give."""

    # strict would refuse "off" for the enum from YAML; the value is still checked against the three names. YAML 1.1
    # (PyYAML) reads a bare on/off as true/false: taken as the word written, as a YAML 1.2 editor reads it
    vision: Annotated[Vision | None, Field(strict=False), BeforeValidator(_on_off)] = Field(
        default=None,
        description=(
            "Run-wide: send the model screenshots: auto (the default: until the provider says the model takes no "
            "images, then none for the rest of the run), on, or off (a text-only model: tests are judged on the pages' "
            "text, checks and quotes). --vision overrides it."
        ),
    )


class TestSpec(TestOptions):
    """One natural-language browser test."""

    name: str = Field(
        min_length=1,
        max_length=1000,
        description=("Unique: names the JUnit test case, the artifact folder, and the test for `--only NAME`."),
    )
    # Optional in Python (a test may have steps instead), but never null in a manifest: the schema says so too.
    task: str | None = Field(
        default=None,
        min_length=1,
        description=TASK + " A test has a task or steps.",
        json_schema_extra=_not_null,
    )
    steps: list[TestStep] | None = Field(
        default=None,
        min_length=1,
        json_schema_extra=_not_null,
        description=(
            "Instead of a task: the test as steps, each one of do (an agent goal), open, click, fill, select or press "
            "(exact actions, no LLM), with its own expect and name; run in order in one browser, the first that fails "
            "fails the test there. The test's expect is judged after the last step."
        ),
    )
    line: SkipJsonSchema[int] = Field(default=0, exclude=True)  # where the test starts in the manifest (not a key)
    save_state: str | None = Field(
        default=None,
        json_schema_extra={"pattern": STATE_NAME},
        description=(
            "When this test passes, keep its browser state (a login) under this name, for the tests with that use_state. "
            "A credential: it never reaches an output, and is deleted when the run ends."
        ),
    )

    runs_as: list[str] | None = Field(
        default=None,
        alias="as",
        min_length=1,
        description=(
            "Run the test once as each of these personas (named under personas:), reported as 'NAME [persona]': "
            "each run starts from its persona's state and is selected, recorded and replayed on its own."
        ),
    )
    expect_as: dict[str, Expectations] = Field(
        default_factory=dict,
        description="A persona's own checks in place of the test's expect (persona -> checks), e.g. {member: {text: Forbidden}}.",
    )
    persona: SkipJsonSchema[str | None] = Field(default=None, exclude=True)  # the persona of one run of `as` (not a key)
    _save_state_name = field_validator("save_state")(_state_name)

    @field_validator("task", "steps", mode="before")
    @classmethod
    def _not_null_when_given(cls, value: Any, info: ValidationInfo) -> Any:
        """`task:` or `steps:` with nothing after it is a key left empty, not a test without one (the schema agrees)."""
        if value is None:
            raise ValueError(f"'{info.field_name}' is empty (null): give it a value, or remove the key")
        return value

    @model_validator(mode="after")
    def _task_or_steps(self) -> TestSpec:
        if self.task is not None and self.steps is not None:
            raise ValueError("a test has a task or steps, not both: make the task a `do` step, or drop it")
        if self.task is None and self.steps is None:
            raise ValueError("give the test a task (what the agent does and checks) or steps")
        return self

    @property
    def data_step(self) -> int | None:
        """The test step (from 1) whose agent report carries the test's data: its last `do` step; None for a task."""
        goals = [i for i, step in enumerate(self.steps or [], start=1) if step.kind is StepKind.DO]
        return goals[-1] if goals else None

    @property
    def calls_llm(self) -> bool:
        """Whether a run of the test may call the LLM: a task or a `do` step (its agent, or the page check after its
        replay); a test of exact steps only (open, click, fill, select, press) never does."""
        return self.task is not None or any(step.kind is StepKind.DO for step in self.steps or [])

    def step_checks(self, index: int) -> Expectations:
        """Test step `index`'s checks (from 1), waiting as long as the test's own unless the step says otherwise."""
        assert self.steps is not None
        own = self.steps[index - 1].expect
        values = {name: getattr(own, name) for name in Expectations.model_fields}
        if "timeout" not in own.model_fields_set:
            values["timeout"] = self.expect.timeout
        return Expectations.model_construct(set(own.model_fields_set) | {"timeout"}, **values)

    def goal(self, index: int) -> TestSpec:
        """Test step `index` (from 1, a `do` step) as a task: its goal, its checks, its max_steps. The last goal's
        report carries the test's data (its output_schema), which is checked after the last step (expect.data)."""
        assert self.steps is not None
        step = self.steps[index - 1]
        changes = {
            "task": step.do,
            "steps": None,
            "expect": self.step_checks(index),
            "max_steps": step.max_steps or self.max_steps,
        }
        return self.model_copy(update={**changes, "output_schema": self.output_schema if index == self.data_step else None})

    @property
    def skip_reason(self) -> str | None:
        if self.skip is False:
            return None
        return self.skip if isinstance(self.skip, str) and self.skip else "skipped in the manifest"

    @property
    def secret_placeholders(self) -> list[str]:
        return SECRET_TAG.findall(self.task or "") + [name for step in self.steps or [] for name in step.secret_placeholders]

    @property
    def agent_task(self) -> str:
        """The task as the agent gets it: a TOTP seed's placeholder under browser-use's 2FA name, so that typing it
        types a fresh code (the loader resolves the seed under that name)."""

        def named(match: re.Match[str]) -> str:
            name = match.group(1)
            return f"<secret>{self.agent_placeholder(name)}</secret>" if name in self.secrets else match.group(0)

        return SECRET_TAG.sub(named, self.task or "")

    def agent_placeholder(self, name: str) -> str:
        """A secret's placeholder as the agent uses it: a TOTP seed's under browser-use's 2FA name (name_bu_2fa_code)."""
        totp = self.is_totp(name) and not name.endswith(TOTP_SUFFIX)
        return f"{name}_{TOTP_SUFFIX}" if totp else name

    def secret_env(self, placeholder: str) -> str:
        source = self.secrets[placeholder]
        return source if isinstance(source, str) else source.env

    def is_totp(self, placeholder: str) -> bool:
        """A TOTP seed: declared `totp: true`, or named by browser-use's 2FA convention (ending in bu_2fa_code)."""
        source = self.secrets[placeholder]
        return placeholder.endswith(TOTP_SUFFIX) or (isinstance(source, SecretSource) and source.totp)


_ONE_CATCHER: JsonDict = {"oneOf": [{"required": ["maildev"]}, {"required": ["mailpit"]}]}


class Inbox(Strict):
    """`inbox:` — the mail catcher the preview's mail goes to, by its REST API; each test gets an address of its own."""

    maildev: str | None = Field(
        default=None, json_schema_extra={"pattern": "^https?://"}, description="MailDev's web URL (its API: /api/email)."
    )
    mailpit: str | None = Field(
        default=None, json_schema_extra={"pattern": "^https?://"}, description="Mailpit's web URL (its API: /api/v1)."
    )
    domain: str = Field(
        default="example.com",  # validators take it (email-validator, behind pydantic's EmailStr, refuses .test)
        json_schema_extra={"pattern": "^[A-Za-z0-9.-]+$"},
        description="The domain of the addresses; each test (and attempt) writes <inbox> for its own: pqa-...@domain.",
    )

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, json_schema_extra=_ONE_CATCHER)

    @model_validator(mode="after")
    def _one_catcher(self) -> Inbox:
        given = [url for url in (self.maildev, self.mailpit) if url is not None]
        if len(given) != 1:
            raise ValueError("name one mail catcher: {maildev: URL} or {mailpit: URL}")
        if not given[0].startswith(("http://", "https://")):
            raise ValueError(f"the mail catcher's URL must start with http:// or https:// (got {given[0]!r})")
        if not re.fullmatch(r"[A-Za-z0-9.-]+", self.domain):
            raise ValueError(f"{self.domain!r} is not a mail domain (letters, digits, '.' and '-')")
        return self

    @property
    def url(self) -> str:
        return (self.maildev or self.mailpit or "").rstrip("/")


class Manifest(Strict):
    """A whole manifest, version 1."""

    version: Literal[1] = Field(description="The manifest format's version: 1.")
    defaults: Defaults = Field(
        default_factory=Defaults,
        description=("Keys given to every test (any test key but name); a test's own value replaces the default."),
    )
    tests: list[TestSpec] = Field(min_length=1, description="The tests, reported in this order.")
    routes: dict[str, OneOrMore] = Field(  # issue #39: `preview-qa plan` maps changed files to routes by these first
        default_factory=dict,
        json_schema_extra={"additionalProperties": {"anyOf": [_ROUTE, {"type": "array", "items": _ROUTE}]}},
        description=(
            "For `preview-qa plan` and `run --impacted`: which pages a change to these files affects, as `glob: /route` "
            "(or a list of routes; an empty list: the files touch no page); globs are gitignore-style like a test's "
            "paths (escape a literal bracket: \\[slug\\]), routes may hold [dynamic] segments. Files no glob matches "
            "are mapped by the conventions of their app's framework (Next.js, Nuxt, SvelteKit, Astro, React Router, "
            "Remix, Django)."
        ),
    )
    apps: dict[str, str] = Field(
        default_factory=dict,
        json_schema_extra={"additionalProperties": _APP_URL, "propertyNames": {"pattern": APP_NAME}},
        description=(
            "A monorepo's apps and the preview URL of each, as `name: URL` (name: the app's folder, apps/web, or the "
            "folder's name, web); --base-url NAME=URL gives or replaces one at run time. A test with `app: NAME` runs "
            "on that URL; `plan` reads and tries each changed route on its own app's preview, and lists the routes of "
            "an app with no URL instead of trying them on another app's."
        ),
    )
    personas: dict[str, Persona] = Field(
        default_factory=dict,
        json_schema_extra={"propertyNames": {"pattern": ENV_NAME}},
        description=(
            "Who tests can run as (a test's as:): name -> {use_state: STATE} (signed in as the test with that save_state "
            "left it), or {} (signed out)."
        ),
    )
    inbox: Inbox | None = Field(
        default=None,
        json_schema_extra=_not_null,
        description=(
            "The mail catcher the preview sends its mail to ({maildev: URL} or {mailpit: URL}, optional domain): each "
            "test gets its own address, <inbox> in a task, do or fill value; an `email` step opens its newest mail."
        ),
    )
    path: SkipJsonSchema[str] = Field(default="<manifest>", exclude=True)  # the file it was read from (not a key)
    _source: YamlSource | None = PrivateAttr(default=None)
    _written: list[int] = PrivateAttr(default_factory=list)  # each test's place among the file's tests (personas)

    @field_validator("routes")
    @classmethod
    def _route_globs(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        for glob, routes in v.items():
            problem = glob_problem(glob, first=True) or next(
                (f"route '{r}' must start with '/'" for r in routes if r[:1] != "/"), None
            )
            if problem:
                raise ValueError(problem)
        return v

    @field_validator("apps")
    @classmethod
    def _app_urls(cls, v: dict[str, str]) -> dict[str, str]:
        for name, url in v.items():
            if not re.fullmatch(APP_NAME, name):
                raise ValueError(f"app name {name!r} must be a folder (apps/web) or its name (web)")
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"app {name!r}: its preview URL must start with http:// or https:// (got {url!r})")
        return {name: url.rstrip("/") for name, url in v.items()}

    @field_validator("version", mode="before")
    @classmethod
    def _not_a_bool(cls, v: Any) -> Any:
        if isinstance(v, bool):  # True == 1 in Python, but not in YAML nor in the JSON Schema's const
            raise ValueError("unsupported manifest version; use 'version: 1'")
        return v

    @field_validator("personas")
    @classmethod
    def _persona_names(cls, v: dict[str, Persona]) -> dict[str, Persona]:
        for name in v:
            if not _ENV_RE.search(name):
                raise ValueError(f"persona name '{name}' must be letters, digits and underscores")
        return v

    def with_personas(self) -> Manifest:
        """The manifest with each test that has `as:` made one ordinary test per persona, "NAME [persona]", starting
        from the persona's state and checked by its expect_as (else the test's expect): selection, the engine, the cache
        and the reporters see ordinary tests. Errors about a test still name its place in the file (`_written`)."""
        runs: list[TestSpec] = []
        written: list[int] = []
        for i, test in enumerate(self.tests):
            personas: list[str | None] = list(test.runs_as) if test.runs_as else [None]
            for persona in personas:
                runs.append(test if persona is None else self._as(test, persona))
                written.append(i)
        expanded = self.model_copy(update={"tests": runs})
        expanded._written = written
        return expanded

    def _as(self, test: TestSpec, persona: str) -> TestSpec:
        expect = test.expect_as.get(persona, test.expect)
        if "timeout" not in expect.model_fields_set:  # how long to wait stays the test's
            expect = expect.model_copy(update={"timeout": test.expect.timeout})
        changes: dict[str, Any] = {"name": f"{test.name} [{persona}]", "persona": persona, "runs_as": None, "expect_as": {}}
        return test.model_copy(update={**changes, "use_state": self.personas[persona].use_state, "expect": expect})

    def written_index(self, index: int) -> int:
        """The place in the file's tests of test `index` (of `tests`, personas expanded)."""
        return self._written[index] if index < len(self._written) else index

    def as_written(self, spec: TestSpec) -> dict[str, Any]:
        """The test's mapping as the manifest's file has it, without the defaults merged in (else as the model holds it,
        its defaults left out): what a plan carries unchanged."""
        raw = self._source.data.get("tests") if self._source is not None and isinstance(self._source.data, dict) else None
        index = next((i for i, test in enumerate(self.tests) if test is spec), None)
        index = None if index is None or spec.persona is not None else self.written_index(index)
        if isinstance(raw, list) and index is not None and index < len(raw) and isinstance(raw[index], dict):
            return dict(raw[index])
        return spec.model_dump(mode="json", exclude_defaults=True, exclude={"line"})

    def error(self, loc: Loc, message: str) -> ManifestError:
        if len(loc) > 1 and loc[0] == "tests" and isinstance(loc[1], int):
            loc = ("tests", self.written_index(loc[1]), *loc[2:])
        if self._source is None:
            return ManifestError(self.path, None, format_loc(loc), message)
        return self._source.error(loc, message)
