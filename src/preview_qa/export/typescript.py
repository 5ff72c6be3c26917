"""A plan written as an @playwright/test spec (pure): `npx playwright test` runs it with `use.baseURL` set to the
preview, without preview-qa or an LLM."""

from __future__ import annotations

import json
from collections.abc import Callable

from preview_qa.export.locators import Call, Locator, calls
from preview_qa.export.plan import (
    Assert,
    Assertion,
    Check,
    Op,
    Operation,
    Plan,
    Secret,
    StateAssertion,
    StepPlan,
    Target,
    Text,
    comment_text,
)

_SECRET_HELPER = """function secret(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`set the environment variable ${name}: this test types its value`);
  return value;
}"""

_ESCAPE_HELPER = r"""function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}"""


def render(plan: Plan) -> str:
    """The spec file's source text."""
    todo = f" {plan.todos} TODO(s) below need a person." if plan.todos else ""
    head = [
        f"// {comment_text(plan.test, 120)} ({comment_text(plan.where, 200)}), exported by preview-qa from a passing run.{todo}",
        "// Run it with @playwright/test: baseURL (use.baseURL in playwright.config) is the preview's URL.",
        "import { test, expect } from '@playwright/test';",
        "",
    ]
    uses_secret = any(isinstance(p, Secret) for o in plan.operations for p in o.text)
    if uses_secret:
        head += [_SECRET_HELPER, ""]
    if any(a.check in (Check.URL, Check.TITLE) for a in plan.all_assertions):
        head += [_ESCAPE_HELPER, ""]
    body: list[str] = ["let page = firstPage;", *_steps(plan.steps, "agent step" if plan.blocks else "step")]
    for block in plan.blocks:  # a test step: Playwright's own test.step, which its report names
        inner = _steps(block.steps, "agent step") + [line for a in block.assertions for line in _assertion(a)]
        body += [f"await test.step({_str(block.title)}, async () => {{", *("  " + line for line in inner), "});"]
    body.append("// the checks of the test's expect:")
    for assertion in plan.assertions:
        body += _assertion(assertion)
    body += [f"// TODO: {note}" for note in plan.unchecked]
    return (
        "\n".join([*head, f"test({_str(plan.test)}, async ({{ page: firstPage }}) => {{", *("  " + line for line in body), "});"])
        + "\n"
    )


def _steps(steps: list[StepPlan], word: str) -> list[str]:
    """Each recorded step's operations under its comment (as in python.py)."""
    body: list[str] = []
    for step in steps:
        if word == "step" or step.number:
            body.append(f"// {word} {step.number}" + (f": {step.goal}" if step.goal else ""))
        for operation in step.operations:
            body += _operation(operation)
    return body


def _operation(o: Operation) -> list[str]:
    target = _locator(o.locator) if o.locator else ""
    fallback = [f"// {o.locator.fallback}"] if o.locator and o.locator.fallback else []
    code: dict[Op, Callable[[], str]] = {
        Op.GOTO: lambda: f"await page.goto({_text(o.text)});",
        Op.GOTO_NEW_TAB: lambda: f"page = await page.context().newPage();\nawait page.goto({_text(o.text)});",
        Op.GO_BACK: lambda: "await page.goBack();",
        Op.CLICK: lambda: f"await {target}.click();",
        Op.CLICK_AT: lambda: f"await page.mouse.click({o.x:g}, {o.y:g});",
        Op.FILL: lambda: f"await {target}.fill({_text(o.text)});",
        Op.APPEND: lambda: (
            f"await {target}.focus();\nawait page.keyboard.press('End');\nawait page.keyboard.insertText({_text(o.text)});"
        ),
        Op.SELECT: lambda: f"await {target}.selectOption({_text(o.text)});",
        Op.UPLOAD: lambda: f"await {target}.setInputFiles({_text(o.text)});  // the file uploaded when recorded",
        Op.SCROLL_ELEMENT: lambda: f"await {target}.evaluate((el, dy) => el.scrollBy(0, dy * el.clientHeight), {o.number:g});",
        Op.SCROLL_PAGE: lambda: f"await page.evaluate((dy) => window.scrollBy(0, dy * window.innerHeight), {o.number:g});",
        Op.PRESS: lambda: f"await page.keyboard.press({_text(o.text)});",
        Op.PRESS_ON: lambda: f"await {target}.press({_text(o.text)});",
        Op.TYPE: lambda: f"await page.keyboard.type({_text(o.text)});",
        Op.SWITCH_TAB: lambda: f"page = page.context().pages()[{int(o.number)}];\nawait page.bringToFront();",
        Op.CLOSE_TAB: lambda: (
            f"await page.context().pages()[{int(o.number)}].close();\npage = page.context().pages().at(-1) ?? page;"
        ),
        Op.SCROLL_TO_TEXT: lambda: (
            f"if (await page.getByText({_text(o.text)}).count()) {{  // browser-use goes on "
            f"without it\n  await page.getByText({_text(o.text)}).first().scrollIntoViewIfNeeded();"
            "\n}"
        ),
        Op.WAIT: lambda: f"await page.waitForTimeout({o.number:g});",
        Op.NOTE: lambda: f"// not exported: {o.note}",
        Op.TODO: lambda: f"// TODO step {o.step}: {o.note}",
        Op.EXPECT_APPEARED: lambda: (
            "// expect.appeared: shown after the action above (it may be gone by the end)\n"
            f"await expect(page.getByText({_text(o.text)}).filter({{ visible: true }}).first())"
            f".toBeVisible({{ timeout: {o.number:g} }});"
        ),
    }
    return fallback + code[o.op]().split("\n")


def _locator(locator: Locator) -> str:
    return "page" + "".join(f".{_camel(c.method)}({', '.join(_args(c))})" for c in calls(locator))


def _camel(method: str) -> str:
    first, *rest = method.split("_")
    return first + "".join(word.capitalize() for word in rest)


def _args(call: Call) -> list[str]:
    options = ", ".join(f"{k}: {_str(v)}" for k, v in call.options.items())
    return [_str(call.arg), *([f"{{ {options} }}"] if options else [])]


def _assertion(a: Assertion) -> list[str]:
    note = [f"// {a.note}"] if a.note else []
    if a.states:
        return [*note, *(_state(state, a.timeout_ms) for state in a.states)]
    flags = ", 'i'" if a.check is Check.TITLE else ""
    pattern = f"new RegExp(escapeRegExp({_str(a.value)}){flags})"
    timeout = f"{{ timeout: {a.timeout_ms} }}"
    code = {
        Check.URL: f"await expect(page).toHaveURL({pattern}, {timeout});",
        Check.TITLE: f"await expect(page).toHaveTitle({pattern}, {timeout});",
        Check.TEXT: f"await expect(page.getByText({_str(a.value)}).filter({{ visible: true }}).first()).toBeVisible({timeout});",
        Check.NOT_TEXT: f"await expect(page.getByText({_str(a.value)}).filter({{ visible: true }})).toHaveCount(0, {timeout});",
    }[a.check]
    return [*note, code]


def _state(a: StateAssertion, ms: int) -> str:
    """`await expect(<target>).toBeChecked({ timeout: 5000 });`: Playwright's own assertion for one state."""
    args = [str(x) if isinstance(x, int) else _str(x) for x in a.args]
    call = {
        Assert.UNCHECKED: "toBeChecked",
        Assert.COUNT: "toHaveCount",
        Assert.ATTRIBUTE: "toHaveAttribute",
        Assert.CSS: "toHaveCSS",
    }.get(a.kind, f"toBe{a.kind.value.capitalize()}")
    options = ["checked: false"] * (a.kind is Assert.UNCHECKED) + ["ignoreCase: true"] * a.ignore_case
    options_text = "{ " + ", ".join([*options, f"timeout: {ms}"]) + " }"
    return f"await expect({_target(a.target)}).{call}({', '.join([*args, options_text])});"


def _target(t: Target) -> str:
    if t.selector:
        return f"page.locator({_str(t.selector)})"
    options = ([f"name: {_str(t.name)}"] if t.name is not None else []) + ["exact: true"] * t.exact
    options += [f"{_camel(key)}: {str(value).lower()}" for key, value in t.filters]
    options_text = ", { " + ", ".join(options) + " }" if options else ""
    found = f"page.getByRole({_str(t.role)}{options_text})"
    return found + ".filter({ visible: true })" * t.shown_only


def _text(text: Text) -> str:
    parts = [f"secret({_str(p.env)})" if isinstance(p, Secret) else _str(p) for p in text]
    return " + ".join(parts) or "''"


def _str(value: str | int | bool) -> str:
    """A JavaScript string literal: JSON's, with every non-ASCII character escaped (U+2028 ends no line then)."""
    return json.dumps(value, ensure_ascii=True)
