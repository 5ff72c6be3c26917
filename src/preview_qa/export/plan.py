# Over 400 lines: the plan's types and the rules that fill them (operations, assertions, what becomes a TODO), one
# vocabulary that both writers and the steps' plan read; apart, each reader would import from two places.
"""A recording and its test's `expect:` as a plan of Playwright operations and assertions (pure), which each language's
writer renders: every recorded action becomes an operation, a note (it changed nothing on the page) or a TODO."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from preview_qa.agent.evidence.action_names import KEYS, VERDICT
from preview_qa.agent.replay.recording import RecordedAction, RecordedStep, recorded_steps
from preview_qa.export.locators import Locator, exported
from preview_qa.manifest.models import Expectations, TestSpec
from preview_qa.manifest.page_state import ElementCheck
from preview_qa.results import one_line
from preview_qa.verdict.checks.url import held_only_as_part

SECRET = re.compile(r"<secret>(\w+)</secret>")
NAMED_KEYS = {
    *KEYS.values(),
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
    "Home",
    "End",
    "PageUp",
    "PageDown",
    "Insert",
    "ControlOrMeta",
    *(f"F{i}" for i in range(1, 13)),
}


class Op(StrEnum):
    """One thing the exported test does; the replay's table of actions, mirrored."""

    GOTO = "goto"
    GOTO_NEW_TAB = "goto_new_tab"
    GO_BACK = "go_back"
    CLICK = "click"
    CLICK_AT = "click_at"
    FILL = "fill"
    APPEND = "append"  # typed where the field's text ends (input with clear: false)
    SELECT = "select"
    UPLOAD = "upload"
    SCROLL_ELEMENT = "scroll_element"
    SCROLL_PAGE = "scroll_page"
    PRESS = "press"
    PRESS_ON = "press_on"  # a key pressed in the element found (a step's `press: {label, key}`)
    TYPE = "type"
    SWITCH_TAB = "switch_tab"
    CLOSE_TAB = "close_tab"
    SCROLL_TO_TEXT = "scroll_to_text"
    WAIT = "wait"
    NOTE = "note"  # a recorded action the test need not repeat, and why
    TODO = "todo"  # a recorded action no Playwright call expresses: the team writes it
    EXPECT_APPEARED = "expect_appeared"  # expect.appeared: asserted right after the last action that changed the page


@dataclass(frozen=True)
class Secret:
    """A secret's value, read at run time from this environment variable (never written into the file)."""

    env: str


Text = list[str | Secret]  # literal text and secrets, in order


@dataclass(frozen=True)
class Operation:
    op: Op
    step: int
    locator: Locator | None = None
    text: Text = field(default_factory=list)
    number: float = 0.0  # pages to scroll, milliseconds to wait, a tab's position
    x: float = 0.0
    y: float = 0.0
    note: str = ""  # for NOTE and TODO: what was recorded and why it is not an operation


class Check(StrEnum):
    URL = "url"
    TITLE = "title"
    TEXT = "text"
    NOT_TEXT = "not_text"
    ELEMENT = "element"  # one assertion per state of `state`'s element
    ATTRIBUTE = "attribute"
    CSS = "css"


class Assert(StrEnum):
    """One of Playwright's locator assertions, as a state check is written."""

    VISIBLE = "visible"
    CHECKED = "checked"
    UNCHECKED = "unchecked"
    DISABLED = "disabled"
    ENABLED = "enabled"
    COUNT = "count"  # args: the count
    ATTRIBUTE = "attribute"  # args: name, value (ignore_case: compared so, as Playwright reads aria-expanded)
    CSS = "css"  # args: property, value


@dataclass(frozen=True)
class Target:
    """The element a state assertion is on: by role (and name, and role filters such as pressed=True), or a selector;
    `shown_only`: only the matches that are shown, hidden ones included in the search."""

    role: str = ""
    name: str | None = None
    exact: bool = False
    filters: tuple[tuple[str, bool], ...] = ()
    shown_only: bool = False
    selector: str = ""


@dataclass(frozen=True)
class StateAssertion:
    target: Target
    kind: Assert
    args: tuple[str | int, ...] = ()
    ignore_case: bool = False


@dataclass(frozen=True)
class Assertion:
    check: Check
    value: str  # the text, URL or title; "" for a state check, whose `states` say it all
    timeout_ms: int
    note: str = ""
    states: tuple[StateAssertion, ...] = ()


@dataclass(frozen=True)
class StepPlan:
    number: int
    goal: str
    operations: list[Operation]


@dataclass(frozen=True)
class Block:
    """One test step of a test written as steps: a `test.step` (TypeScript) or a `with step(...)` block (Python), with
    its goal's agent steps (or its exact action) and its own checks."""

    title: str  # "step 2 of 4: Open the cart"
    steps: list[StepPlan]
    assertions: list[Assertion]


@dataclass(frozen=True)
class Plan:
    """What the exported test does, step by step (a test written as steps: its start, then one block per test step),
    then what it asserts; `todos` counts what a person must write."""

    test: str
    where: str  # manifest:line
    steps: list[StepPlan]
    assertions: list[Assertion]
    unchecked: list[str]  # expect: checks no assertion expresses: each a TODO in the file
    todos: int
    blocks: list[Block] = field(default_factory=list)

    @property
    def operations(self) -> list[Operation]:
        return [o for s in [*self.steps, *(s for b in self.blocks for s in b.steps)] for o in s.operations]

    @property
    def all_assertions(self) -> list[Assertion]:
        return [*(a for b in self.blocks for a in b.assertions), *self.assertions]


def plan_test(spec: TestSpec, history: dict[str, Any], origin: str, where: str) -> Plan:
    """The plan of one passing recording (`where`: its manifest and line); URLs on the recorded preview's origin
    become paths under the base URL."""
    steps = agent_steps(spec, history, origin)
    assertions, unchecked = _assertions(spec)
    steps, placed = _with_appeared(steps, spec)
    if not placed:  # no recorded action to follow: asserted with the other checks
        assertions = [*appeared_assertions(spec.expect), *assertions]
    todos = sum(1 for s in steps for o in s.operations if o.op is Op.TODO) + len(unchecked)
    return Plan(spec.name, where, steps, assertions, unchecked, todos)


def _with_appeared(steps: list[StepPlan], spec: TestSpec) -> tuple[list[StepPlan], bool]:
    """expect.appeared as assertions right after the last operation that changed the page (what the run's window
    starts at: not a wait, nor a note), where a text that comes and goes is still shown; and whether there was one."""
    expect = spec.expect
    checks = [Operation(Op.EXPECT_APPEARED, 0, text=[t], number=expect.timeout * 1000) for t in expect.appeared]
    moved = [(i, j) for i, s in enumerate(steps) for j, o in enumerate(s.operations) if o.op not in (Op.NOTE, Op.WAIT)]
    if not checks or not moved:
        return steps, not checks
    i, j = moved[-1]
    step = steps[i]
    operations = [*step.operations[: j + 1], *(replace(c, step=step.number) for c in checks), *step.operations[j + 1 :]]
    return [*steps[:i], replace(step, operations=operations), *steps[i + 1 :]], True


def appeared_assertions(expect: Expectations) -> list[Assertion]:
    """expect.appeared as text assertions, each saying it may be gone later (where they follow the actions)."""
    ms = int(expect.timeout * 1000)
    note = "expect.appeared: shown after the actions above (it may be gone by the end)"
    return [Assertion(Check.TEXT, t, ms, note=note) for t in expect.appeared]


def not_appeared_todos(expect: Expectations, where: str = "") -> list[str]:
    """expect.not_appeared, which no Playwright assertion says: a TODO each."""
    return [
        f"{where}expect.not_appeared {comment_text(repr(t), 120)} was watched for from the last action that changed "
        f"the page on (at least {expect.timeout:g} s): Playwright has no assertion that a text never showed; watch for it"
        for t in expect.not_appeared
    ]


def agent_steps(spec: TestSpec, history: dict[str, Any], origin: str, before: int = 0) -> list[StepPlan]:
    """A recording's agent steps as operations, numbered on from `before` (a goal's, in a test written as steps)."""
    # placeholder -> its environment variable; a 2FA seed's placeholder is the agent's (name_bu_2fa_code), and its
    # variable holds the seed, not the code to type: such a step is a TODO (see _operation)
    secrets = secret_envs(spec)
    totp = {spec.agent_placeholder(name) for name in spec.secrets if spec.is_totp(name)}
    return [
        StepPlan(s.number, comment_text(s.goal), [_operation(s, a, secrets, totp, origin) for a in s.actions])
        for s in (replace(step, number=step.number + before) for step in recorded_steps(history, origin, origin))
    ]


def secret_envs(spec: TestSpec) -> dict[str, str]:
    """Each secret's placeholder as the agent uses it -> the environment variable the exported test reads."""
    return {spec.agent_placeholder(name): spec.secret_env(name) for name in spec.secrets}


def comment_text(text: str, limit: int = 200) -> str:
    """Page or LLM text made safe for a one-line comment: no control or line-separator character, one line."""
    return one_line("".join(c if c.isprintable() else " " for c in text), limit)


def _operation(step: RecordedStep, action: RecordedAction, secrets: dict[str, str], totp: set[str], origin: str) -> Operation:
    said = comment_text(action.describe())
    code = next((name for name in SECRET.findall(str(action.params)) if name in totp), None)
    if code is not None:
        return Operation(
            Op.TODO,
            step.number,
            note=f"{said}: types a fresh 2FA code from the seed in {secrets[code]}, e.g. with pyotp.TOTP(seed).now()",
        )
    if action.name == VERDICT:
        return Operation(Op.NOTE, step.number, note="the agent's verdict: the checks of expect: below decide instead")
    if action.skip is not None:
        return Operation(Op.NOTE, step.number, note=f"{said}: {comment_text(action.skip)}")
    p = action.params
    if action.needs_element:
        if not action.element:
            return Operation(Op.TODO, step.number, note=f"{said}: its element was not recorded")
        return _on_element(step, action, exported(action.element), secrets, said)
    text = str(p.get("text", ""))
    match action.name:
        case "navigate":
            url = str(p.get("url", ""))
            url = url[len(origin) :] or "/" if url.startswith(origin) else url
            return Operation(Op.GOTO_NEW_TAB if p.get("new_tab") else Op.GOTO, step.number, text=text_parts(url, secrets))
        case "click" if p.get("coordinate_x") is not None:
            return Operation(Op.CLICK_AT, step.number, x=float(p["coordinate_x"]), y=float(p.get("coordinate_y", 0)))
        case "go_back":
            return Operation(Op.GO_BACK, step.number)
        case "send_keys":
            return _keys(step, str(p.get("keys", "")), secrets)
        case "switch" | "close":
            return _tab(step, action, said)
        case "scroll":
            return Operation(Op.SCROLL_PAGE, step.number, number=_pages(p))
        case "find_text":
            return Operation(Op.SCROLL_TO_TEXT, step.number, text=[text])
        case "wait":  # browser-use's own reckoning, as the replay waits
            return Operation(Op.WAIT, step.number, number=1000 * min(max(float(p.get("seconds", 3)) - 1, 0), 30))
    return Operation(Op.TODO, step.number, note=f"{said}: no Playwright call does what this agent action did")


def _on_element(step: RecordedStep, action: RecordedAction, locator: Locator, secrets: dict[str, str], said: str) -> Operation:
    p, n = action.params, step.number
    text = text_parts(str(p.get("text", "")), secrets)
    match action.name:
        case "click":
            return Operation(Op.CLICK, n, locator)
        case "input":
            return Operation(Op.FILL if p.get("clear", True) else Op.APPEND, n, locator, text)
        case "select_dropdown":
            return Operation(Op.SELECT, n, locator, text)
        case "upload_file":
            return Operation(Op.UPLOAD, n, locator, [str(p.get("path", ""))])
        case "scroll":
            return Operation(Op.SCROLL_ELEMENT, n, locator, number=_pages(p))
    return Operation(Op.TODO, n, locator, note=f"{said}: no Playwright call does what this agent action did")


def _keys(step: RecordedStep, keys: str, secrets: dict[str, str]) -> Operation:
    """A key or shortcut Playwright can press, else text typed, as browser-use does."""
    parts = [KEYS.get(k.lower(), k) for k in keys.split("+")]
    if all(len(k) == 1 or k in NAMED_KEYS for k in parts) and "" not in parts:
        return Operation(Op.PRESS, step.number, text=["+".join(parts)])
    return Operation(Op.TYPE, step.number, text=text_parts(keys, secrets))


def _tab(step: RecordedStep, action: RecordedAction, said: str) -> Operation:
    wanted = str(action.params.get("tab_id", ""))[-4:]
    position = next((i for i, tab in enumerate(step.tabs) if tab.tab_id == wanted), None)
    if position is None:
        return Operation(Op.TODO, step.number, note=f"{said}: the recording does not say which tab that was")
    return Operation(Op.CLOSE_TAB if action.name == "close" else Op.SWITCH_TAB, step.number, number=position)


def _pages(params: dict[str, Any]) -> float:
    pages = float(params.get("pages", params.get("num_pages", 1.0)) or 1.0)
    return pages if params.get("down", True) else -pages


def text_parts(value: str, secrets: dict[str, str]) -> Text:
    """Literal parts and secrets; a placeholder the test does not declare stays literal text (it was typed so)."""
    parts: Text = []
    at = 0
    for match in SECRET.finditer(value):
        env = secrets.get(match.group(1))
        if env is None:
            continue
        parts += [value[at : match.start()], Secret(env)]
        at = match.end()
    parts.append(value[at:])
    return [p for p in parts if p != ""]


def page_assertions(expect: Expectations) -> list[Assertion]:
    """The page checks of an expect: (the test's, or a step's), each as Playwright's own assertion."""
    ms = int(expect.timeout * 1000)
    found = [Assertion(Check.URL, expect.url, ms)] if expect.url else []
    found += [Assertion(Check.TITLE, expect.title, ms)] if expect.title else []
    found += [Assertion(Check.TEXT, t, ms) for t in expect.text]
    found += [Assertion(Check.NOT_TEXT, t, ms) for t in expect.not_text]
    found += [Assertion(Check.ELEMENT, "", ms, states=_element_assertions(e)) for e in expect.element]
    found += [
        Assertion(
            Check.ATTRIBUTE, "", ms, states=(StateAssertion(Target(selector=a.selector), Assert.ATTRIBUTE, (a.name, a.value)),)
        )
        for a in expect.attribute
    ]
    found += [
        Assertion(Check.CSS, "", ms, states=(StateAssertion(Target(selector=c.selector), Assert.CSS, (c.property, c.value)),))
        for c in expect.css
    ]
    return found


def _assertions(spec: TestSpec) -> tuple[list[Assertion], list[str]]:
    expect = spec.expect
    ms = int(expect.timeout * 1000)
    found = page_assertions(expect)
    unchecked: list[str] = []
    if expect.url and held_only_as_part(expect.url, spec.start):  # preview-qa's rule, which toHaveURL does not have
        unchecked.append(
            f"expect.url {comment_text(repr(expect.url), 120)} also fails when the page is still the start page "
            f"{comment_text(spec.start, 120)}, whose URL already contains it: assert what only the result page shows"
        )
    for key, value in expect.data.items():  # checked on the agent's report, which an exported test has not
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            found.append(
                Assertion(
                    Check.TEXT,
                    str(value).strip(),
                    ms,
                    note=(
                        f"expect.data.{comment_text(key, 60)} was checked on the data the agent read off the page: here, "
                        "that its value is shown on the final page"
                    ),
                )
            )
        else:
            unchecked.append(
                f"expect.data.{comment_text(key, 60)} must be {comment_text(repr(value), 120)}: it was "
                "checked on the data the agent read off the page; assert where the page shows it"
            )
    unchecked += not_appeared_todos(expect)
    if spec.output_schema:
        unchecked.append("output_schema was checked on the data the agent read off the page; assert where it is shown")
    if (a11y := expect.accessibility) is not None:  # axe-core is no dependency of a plain Playwright test
        unchecked.append(
            f"expect.accessibility was checked with axe-core on the final page: no violation of impact "
            f"{a11y.impact.value} or above"
            + (f", rules {comment_text(', '.join(a11y.skip_rules), 200)} not run" if a11y.skip_rules else "")
            + (f", {comment_text(', '.join(a11y.exclude), 200)} excluded" if a11y.exclude else "")
            + "; add an axe check (axe-playwright-python, @axe-core/playwright)"
        )
    unchecked += problem_todos(expect)
    if expect.status is not None:  # the answer of the test's last open, which no page assertion reads
        unchecked.append(f"expect.status: the last open answered HTTP {expect.status}; check the response of its goto")
    for when, requests, hook in (("before", spec.before, "beforeEach"), ("after", spec.after, "afterEach")):
        unchecked += [  # preview-qa's own requests for the test's data: a plain Playwright test sends none of its own
            f"{when}: preview-qa sent {r.method} {comment_text(r.path, 120)} "
            + ("before the first step" if when == "before" else "when the test ended, however it ended")
            + f"; send it in a {hook} (Playwright's request fixture)"
            for r in requests
        ]
    if spec.emulation is not None:  # the export writes no browser options: the file would run on a desktop
        unchecked.append(
            f"it passed under {comment_text(spec.emulation.label(), 200)}; run it with the same options "
            "(Playwright's devices, locale, timezoneId, colorScheme)"
        )
    return found, unchecked


def problem_todos(expect: Expectations) -> list[str]:
    """The problem checks, which watch the whole run (its console, its requests) or request the final page's links:
    no assertion of a Playwright test says that."""
    todos = []
    if expect.console_errors is not None:
        todos.append(
            "expect.console_errors: none was checked on the whole run: no uncaught exception or console error on a "
            "page of the app; collect them with page.on('pageerror') and page.on('console') and assert none"
        )
    if (wanted := expect.requests) is not None:
        allowed = f" (paths {comment_text(', '.join(wanted.allow), 200)} allowed)" if wanted.allow else ""
        todos.append(
            "expect.requests: {failed: none} was checked on the whole run: no request to the app's origin answered 400 "
            f"or above or failed{allowed}; collect them with page.on('response') and page.on('requestfailed')"
        )
    if expect.links is not None:
        todos.append(
            "expect.links: {broken: none} requested the final page's same-origin links: each answered below 400; "
            "request each a[href] with page.request.get and assert its status"
        )
    return todos


def _element_assertions(check: ElementCheck) -> tuple[StateAssertion, ...]:
    """Playwright's own assertion for each state of an element check, on the element found as the check found it."""
    element = Target(role=check.role, name=check.name, exact=check.exact)
    found: list[StateAssertion] = []
    for state, on in check.states.items():
        if state == "visible" and not on:  # none of them shown, hidden ones included
            hidden_too = replace(element, filters=(("include_hidden", True),), shown_only=True)
            found.append(StateAssertion(hidden_too, Assert.COUNT, (0,)))
        elif state in ("pressed", "selected"):  # Playwright reads these through the role selector alone
            found.append(StateAssertion(replace(element, filters=((state, on),)), Assert.COUNT, (1,)))
        elif state == "expanded":  # Playwright reads it from aria-expanded, case-insensitively
            found.append(StateAssertion(element, Assert.ATTRIBUTE, ("aria-expanded", str(on).lower()), ignore_case=True))
        else:
            found.append(StateAssertion(element, _STATE_ASSERTIONS[state, on]))
    return tuple(found)


_STATE_ASSERTIONS = {
    ("visible", True): Assert.VISIBLE,
    ("checked", True): Assert.CHECKED,
    ("checked", False): Assert.UNCHECKED,
    ("disabled", True): Assert.DISABLED,
    ("disabled", False): Assert.ENABLED,
}
