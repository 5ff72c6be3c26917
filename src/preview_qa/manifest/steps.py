"""A test as steps (issue #47): agent goals (`do`), navigations (`open`) and exact actions (`click`, `fill`, `select`,
`press`), each with its own page checks and a name; each step in words."""

from __future__ import annotations

import difflib
import re
from enum import StrEnum
from typing import ClassVar

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic.config import JsonDict, JsonValue

from preview_qa.manifest.expectations import Expectations, Strict
from preview_qa.manifest.page_state import ROLES, role_problem

SECRET_TAG = re.compile(r"<secret>(.*?)</secret>")
INBOX = "<inbox>"  # the test's own mail address (the manifest's inbox), in a task, a do or a fill value
WHOLE_SECRET = re.compile(r"<secret>([A-Za-z_][A-Za-z0-9_]*)</secret>")
PATH_OR_URL = "^(/|https?://)"  # where a browser goes: a path under the preview, or an absolute http(s) URL
NAME_LIMIT = 200
FILL_VALUE = r"^(?![\s\S]*<secret>)[\s\S]*$|^<secret>[A-Za-z_][A-Za-z0-9_]*</secret>$"  # literal, or one whole secret
# Playwright's names of keys (its US keyboard layout) besides single characters; `+` joins modifiers: Control+A.
NAMED_KEYS = frozenset(
    [
        *("Alt", "AltLeft", "AltRight", "ArrowDown", "ArrowLeft", "ArrowRight", "ArrowUp", "Backquote", "Backslash"),
        *("Backspace", "BracketLeft", "BracketRight", "CapsLock", "Comma", "Control", "ControlLeft", "ControlOrMeta"),
        *("ControlRight", "Delete", "End", "Enter", "Equal", "Escape", "Home", "Insert", "Meta", "MetaLeft", "MetaRight"),
        *("Minus", "NumLock", "PageDown", "PageUp", "Pause", "Period", "Quote", "ScrollLock", "Semicolon", "Shift"),
        *("ShiftLeft", "ShiftRight", "Slash", "Space", "Tab", "ContextMenu", "PrintScreen"),
        *(f"F{n}" for n in range(1, 25)),
        *(f"Digit{n}" for n in range(10)),
        *(f"Numpad{n}" for n in range(10)),
        *(f"Key{c}" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    ]
)


_KEY = f"([\\s\\S]|{'|'.join(sorted(NAMED_KEYS))})"
KEY = f"^{_KEY}(\\+{_KEY})*$"  # a key, or keys joined by `+`: a, Enter, Control+Shift+K
_KEY_RE = re.compile(KEY.replace("$", r"\Z"))  # as the schema's ECMA regex reads it


class StepKind(StrEnum):
    """What a step does: an agent goal, or one of the exact steps that need no LLM."""

    DO = "do"
    OPEN = "open"
    CLICK = "click"
    FILL = "fill"
    SELECT = "select"
    PRESS = "press"
    EMAIL = "email"

    @property
    def exact(self) -> bool:
        return self is not StepKind.DO


def _one_of(keys: tuple[str, ...]) -> JsonDict:
    return {"oneOf": [{"required": [key]} for key in keys]}


FIND = ("role", "label", "text", "css", "test_id")  # the ways an exact step finds its element, as Playwright's locators
FIELD = ("role", "label", "css", "test_id")  # a field's: its text is its label's, or none (get_by_text finds no field)


def _or(keys: tuple[str, ...]) -> str:
    return ", ".join(keys[:-1]) + f" or {keys[-1]}"


def _found_by(schema: JsonDict, keys: tuple[str, ...], needed: bool = True) -> None:
    """The schema of a target found one of `keys` ways (exactly one; or, not `needed`, at most one); name with role;
    exact with a name, label or text."""
    props = schema.get("properties")
    if isinstance(props, dict):
        for key in set(FIND) - set(keys):
            props.pop(key, None)
    ways: list[JsonDict] = [{"required": [key]} for key in keys]
    none: list[JsonDict] = [] if needed else [{"not": {"anyOf": [{"required": [key]} for key in keys]}}]
    worded: list[JsonValue] = [{"required": [key]} for key in ("name", "label", "text") if key in (*keys, "name")]
    schema.update({"oneOf": [*ways, *none], "dependentRequired": {"name": ["role"]}})
    exact: JsonDict = {"const": True, "description": "exact: true matches a name, label or text whole: give one of them."}
    schema.update({"if": {"properties": {"exact": exact}, "required": ["exact"]}, "then": {"anyOf": worded}})


class Located(Strict):
    """The one element an exact step acts on, found as Playwright's locators find it: by role (and accessible name), by
    its label, by its text (click only), by a CSS selector, or by its test id."""

    role: str | None = Field(
        default=None,
        json_schema_extra={"enum": list(ROLES)},
        description="Its ARIA role, as get_by_role; with `name` (else it must be the page's only one of its role).",
    )
    name: str | None = Field(
        default=None, min_length=1, description="With role: its accessible name (contained, case-insensitive, unless exact)."
    )
    label: str | None = Field(default=None, min_length=1, description="The text of its label (get_by_label).")
    text: str | None = Field(default=None, min_length=1, description="Text it shows (get_by_text); click only.")
    css: str | None = Field(
        default=None, min_length=1, description="A CSS selector (Playwright's page.locator), e.g. select[name=country]."
    )
    test_id: str | None = Field(default=None, min_length=1, description="Its data-testid attribute (get_by_test_id).")
    exact: bool = Field(default=False, description="The name, label or text must match whole (case and all).")

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, json_schema_extra=lambda s: _found_by(s, FIND))
    BY: ClassVar[tuple[str, ...]] = FIND
    NEEDED: ClassVar[bool] = True  # one way to find it must be given (a press may go to the focused element instead)

    @field_validator("role")
    @classmethod
    def _known_role(cls, v: str | None) -> str | None:
        problem = None if v is None else role_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _found_one_way(self) -> Located:
        given = [key for key in FIND if getattr(self, key) is not None]
        allowed = self.BY
        if "text" in given and "text" not in allowed:
            raise ValueError(f"a field is not found by text (that finds what the page shows): find it by {_or(allowed)}")
        if len(given) > 1 or (self.NEEDED and not given):
            raise ValueError(f"find the element one way: give one of {', '.join(allowed)} ({len(given)} given)")
        if self.name is not None and self.role is None:
            raise ValueError("name goes with role: {role: button, name: Save}")
        if self.exact and self.name is None and self.label is None and self.text is None:
            raise ValueError("exact goes with a name, label or text (a css selector or test id matches as written)")
        return self

    @property
    def given(self) -> bool:
        return any(getattr(self, key) is not None for key in FIND)

    def described(self, noun: str = "field") -> str:
        """`button 'Add to cart'` (`button (any name)`), `the field labelled 'Email'` (`noun`: a select's `list`), `the
        text 'More'`, `the element matching css 'select[name=q]'`, `the element with test id 'save'`."""
        if self.role is not None:
            return self.role + (f" {self.name!r}" if self.name is not None else " (any name)")
        if self.label is not None:
            return f"the {noun} labelled {self.label!r}"
        if self.css is not None:
            return f"the element matching css {self.css!r}"
        if self.test_id is not None:
            return f"the element with test id {self.test_id!r}"
        return f"the text {self.text!r}"


class Click(Located):
    """click: the one element found by {role, name}, {label}, {text}, {css} or {test_id}."""


class Fill(Located):
    """fill: the one field found by {label}, {role, name}, {css} or {test_id}, and the value typed into it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, json_schema_extra=lambda s: _found_by(s, FIELD))
    BY: ClassVar[tuple[str, ...]] = FIELD

    value: str = Field(
        json_schema_extra={"pattern": FILL_VALUE},
        description=(
            "The text typed into it: literal text, or one whole <secret>name</secret> (typed by code, never shown to an "
            "LLM; a TOTP secret types its current code)."
        ),
    )

    @field_validator("value")
    @classmethod
    def _literal_or_one_secret(cls, v: str) -> str:
        if "<secret>" in v and not WHOLE_SECRET.fullmatch(v):
            raise ValueError("a fill value is literal text or one whole <secret>name</secret>, not a mix of both")
        return v


class Select(Located):
    """select: an option, by its text, of the one list found by {label}, {role: combobox, name}, {css} or {test_id}."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, json_schema_extra=lambda s: _found_by(s, FIELD))
    BY: ClassVar[tuple[str, ...]] = FIELD

    option: str = Field(min_length=1, description="The option to choose: its text (or, failing that, its value).")


class Press(Located):
    """press: a key (or shortcut) on the focused element, or on the one field found by {label}, {role, name}, {css} or
    {test_id}."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, json_schema_extra=lambda s: _found_by(s, FIELD, needed=False)
    )
    BY: ClassVar[tuple[str, ...]] = FIELD
    NEEDED: ClassVar[bool] = False

    key: str = Field(
        min_length=1,
        json_schema_extra={"pattern": KEY},
        description="Playwright's key name: Enter, Tab, Escape, ArrowDown, Control+A, a...",
    )

    @field_validator("key")
    @classmethod
    def _known_key(cls, v: str) -> str:
        if not _KEY_RE.search(v):
            part = next((p for p in v.split("+") if len(p) != 1 and p not in NAMED_KEYS), v)
            near = difflib.get_close_matches(part, sorted(NAMED_KEYS), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else " (Playwright's key names: Enter, Tab, ArrowDown, Control+A...)"
            raise ValueError(f"unknown key {part!r}{hint}")
        return v


class Email(Strict):
    """email: wait for the newest mail to the test's address (<inbox>) with this subject, and open it as a page."""

    subject: str = Field(min_length=1, description="Text its subject contains (case-insensitive).")
    sender: str | None = Field(
        default=None, alias="from", min_length=1, description="Text its sender's address or name contains (case-insensitive)."
    )
    timeout: float = Field(default=30, gt=0, le=3600, description="Seconds to wait for the mail to arrive.")

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)

    def described(self) -> str:
        return f"the newest mail with subject {self.subject!r}" + (f" from {self.sender!r}" if self.sender else "")


TEST_LEVEL = ("data", "accessibility", "visual", "console_errors", "requests", "links")


def _drop_test_level(schema: JsonDict) -> None:
    props = schema.get("properties")
    if isinstance(props, dict):
        for key in TEST_LEVEL:
            props.pop(key, None)


class StepExpectations(Expectations):
    """A step's checks: the page checks of `expect:`, judged once the step's page has settled. `data`, `accessibility`,
    `visual` and the problem checks (console_errors, requests, links) are the test's own (judged after its last step).
    Without `timeout`, the test's expect.timeout."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, json_schema_extra=_drop_test_level)

    @field_validator(*TEST_LEVEL, mode="before")
    @classmethod
    def _page_checks_only(cls, v: object, info: ValidationInfo) -> object:
        raise ValueError(f"{info.field_name} is judged after the last step: give it in the test's own expect, not a step's")


ACTIONS = tuple(kind.value for kind in StepKind)


class TestStep(Strict):
    """One step of a test: exactly one of do, open, click, fill, select, press, email; its checks; its name."""

    __test__ = False
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        json_schema_extra={**_one_of(ACTIONS), "dependentRequired": {"max_steps": ["do"]}},
    )

    do: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "An agent goal in plain words, carried out from the page the step starts on; <secret>name</secret> "
            "stands for a secret."
        ),
    )
    open: str | None = Field(
        default=None,
        json_schema_extra={"pattern": PATH_OR_URL, "not": {"pattern": "<secret>"}},
        description="Go to this path under the preview (or an absolute URL on an allowed domain); no LLM.",
    )
    click: Click | None = Field(
        default=None, description="Click the one element found by {role, name}, {label}, {text}, {css} or {test_id}."
    )
    fill: Fill | None = Field(
        default=None, description="Type `value` into the one field found by {label}, {role, name}, {css} or {test_id}."
    )
    select: Select | None = Field(
        default=None, description="Choose `option` in the one list found by {label}, {role, name}, {css} or {test_id}."
    )
    press: Press | None = Field(
        default=None, description="Press `key` on the focused element, or in the one field found as fill finds it."
    )
    email: Email | None = Field(
        default=None,
        description=(
            "Wait for the newest mail to the test's address with this subject (the manifest's inbox) and open it as a "
            "page, sandboxed (no script, no network but its links): its expect checks it, the next step can click its links."
        ),
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=NAME_LIMIT,
        description="What the reports call the step (default: its goal or action in words).",
    )
    expect: StepExpectations = Field(
        default_factory=StepExpectations,
        description=(
            "Page checks (url, title, text, not_text, appeared, not_appeared, element, attribute, css) judged by code "
            "once this step's page has settled (appeared and not_appeared: since the step's last action), and an open "
            "step's status: any that fails fails the test at this step."
        ),
    )
    max_steps: int | None = Field(
        default=None, ge=1, le=500, description="With do: agent steps (LLM turns) for this goal; default the test's max_steps."
    )

    @field_validator("open")
    @classmethod
    def _path_or_url(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"(/|https?://)", v):
            raise ValueError("open a path starting with '/' or an http(s) URL")
        if v is not None and SECRET_TAG.search(v):
            raise ValueError("open takes no secret: a secret is typed into a field (fill), never put in a URL")
        return v

    @model_validator(mode="after")
    def _one_action(self) -> TestStep:
        given = [key for key in ACTIONS if getattr(self, key) is not None]
        if len(given) != 1:
            which = f"this one has {' and '.join(given)}" if given else "this one has none"
            raise ValueError(f"a step does one thing: give one of {', '.join(ACTIONS)} ({which})")
        if self.max_steps is not None and self.do is None:
            raise ValueError("max_steps counts an agent goal's steps: it goes with do, not with an exact step")
        return self

    @property
    def kind(self) -> StepKind:
        return next(StepKind(key) for key in ACTIONS if getattr(self, key) is not None)

    @property
    def title(self) -> str:
        """The step's name: its own, or its goal or action in words."""
        return self.name or described(self)

    @property
    def secret_placeholders(self) -> list[str]:
        return SECRET_TAG.findall(self.do or "") + SECRET_TAG.findall(self.fill.value if self.fill else "")


def described(step: TestStep) -> str:
    """A step's goal or action in words: `Open /cart`, `Click button 'Add'`, `Fill the field labelled 'Email' with ...`."""
    one_line = " ".join
    match step.kind:
        case StepKind.DO:
            return one_line((step.do or "").split())
        case StepKind.OPEN:
            return f"Open {step.open}"
        case StepKind.CLICK:
            assert step.click is not None
            return f"Click {step.click.described()}"
        case StepKind.FILL:
            assert step.fill is not None
            return f"Fill {step.fill.described()} with {step.fill.value!r}"
        case StepKind.SELECT:
            assert step.select is not None
            return f"Select {step.select.option!r} in {step.select.described('list')}"
        case StepKind.EMAIL:
            assert step.email is not None
            return f"Open {step.email.described()}"
    assert step.press is not None
    return f"Press {step.press.key}" + (f" in {step.press.described()}" if step.press.given else "")


def step_words(index: int, total: int, title: str) -> str:
    """`step 2 of 4, 'Open the cart'`: how a reason names a test step (an agent step is `agent step 5`)."""
    return f"step {index} of {total}, {clip_title(title)!r}"


def clip_title(title: str, limit: int = 80) -> str:
    return title if len(title) <= limit else title[: limit - 1] + "…"
