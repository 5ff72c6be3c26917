"""A plan written as a pytest-playwright test (pure): `pytest --base-url URL` runs it, without preview-qa or an LLM."""

from __future__ import annotations

import re
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

STEP_HELPER = '''@contextlib.contextmanager
def step(title: str) -> Iterator[None]:
    """One test step of the manifest: a failure inside it says which."""
    try:
        yield
    except Exception as e:
        e.add_note(f"in {title}")
        raise
'''


def render(plan: Plan) -> str:
    """The test module's source text."""
    uses_secret = any(isinstance(p, Secret) for o in plan.operations for p in o.text)
    uses_re = any(a.check in (Check.URL, Check.TITLE) for a in plan.all_assertions)
    imports = ["import contextlib"] * bool(plan.blocks) + ["import os"] * uses_secret + ["import re"] * uses_re
    imports += ["from collections.abc import Iterator"] * bool(plan.blocks)
    lines = [
        f'"""{_docstring(plan)}"""',
        "",
        *imports,
        *[""] * bool(imports),
        "from playwright.sync_api import Page, expect",
        "",
        "",
        *([STEP_HELPER, ""] if plan.blocks else []),
        f"def {function_name(plan.test)}(page: Page) -> None:",
    ]
    body = _steps(plan.steps, "agent step" if plan.blocks else "step")
    for block in plan.blocks:
        inner = _steps(block.steps, "agent step") + [line for a in block.assertions for line in _assertion(a)]
        body += [f"with step({_str(block.title)}):", *("    " + line for line in inner or ["pass"])]
    body.append("# the checks of the test's expect:")
    for assertion in plan.assertions:
        body += _assertion(assertion)
    body += [f"# TODO: {note}" for note in plan.unchecked]
    if all(line.startswith("#") for line in body):  # only comments and TODOs: still a valid (and empty) test
        body.append("pass")
    return "\n".join(lines + ["    " + line for line in body]) + "\n"


def _steps(steps: list[StepPlan], word: str) -> list[str]:
    """Each recorded step's operations under its comment, `# step 3: goal`; in a test written as steps, a goal's
    `# agent step 3: goal`, and an exact step's (or the start's, numbered 0) under none."""
    body: list[str] = []
    for step in steps:
        if word == "step" or step.number:
            body.append(f"# {word} {step.number}" + (f": {step.goal}" if step.goal else ""))
        for operation in step.operations:
            body += _operation(operation)
    return body


def function_name(test: str) -> str:
    words = re.sub(r"[^0-9a-z]+", "_", test.lower()).strip("_")
    return f"test_{words or 'exported'}"


def _docstring(plan: Plan) -> str:
    todo = f" {plan.todos} TODO(s) below need a person." if plan.todos else ""
    return (
        (
            f"{comment_text(plan.test, 120)!s} ({comment_text(plan.where, 200)}), exported by preview-qa from a passing "
            f"run.{todo}\n\nRun it with pytest-playwright: pytest --base-url https://your-preview.example.com\n"
        )
        .replace("\\", "\\\\")
        .replace('"""', '\\"\\"\\"')
    )


def _operation(o: Operation) -> list[str]:
    target = _locator(o.locator) if o.locator else ""
    fallback = [f"# {o.locator.fallback}"] if o.locator and o.locator.fallback else []
    code: dict[Op, Callable[[], str]] = {
        Op.GOTO: lambda: f"page.goto({_text(o.text)})",
        Op.GOTO_NEW_TAB: lambda: f"page = page.context.new_page()\npage.goto({_text(o.text)})",
        Op.GO_BACK: lambda: "page.go_back()",
        Op.CLICK: lambda: f"{target}.click()",
        Op.CLICK_AT: lambda: f"page.mouse.click({o.x:g}, {o.y:g})",
        Op.FILL: lambda: f"{target}.fill({_text(o.text)})",
        Op.APPEND: lambda: f'{target}.focus()\npage.keyboard.press("End")\npage.keyboard.insert_text({_text(o.text)})',
        Op.SELECT: lambda: f"{target}.select_option({_text(o.text)})",
        Op.UPLOAD: lambda: f"{target}.set_input_files({_text(o.text)})  # the file uploaded when recorded",
        Op.SCROLL_ELEMENT: lambda: f'{target}.evaluate("(el, dy) => el.scrollBy(0, dy * el.clientHeight)", {o.number:g})',
        Op.SCROLL_PAGE: lambda: f'page.evaluate("(dy) => window.scrollBy(0, dy * window.innerHeight)", {o.number:g})',
        Op.PRESS: lambda: f"page.keyboard.press({_text(o.text)})",
        Op.PRESS_ON: lambda: f"{target}.press({_text(o.text)})",
        Op.TYPE: lambda: f"page.keyboard.type({_text(o.text)})",
        Op.SWITCH_TAB: lambda: f"page = page.context.pages[{int(o.number)}]\npage.bring_to_front()",
        Op.CLOSE_TAB: lambda: f"page.context.pages[{int(o.number)}].close()\npage = page.context.pages[-1]",
        Op.SCROLL_TO_TEXT: lambda: (
            f"if page.get_by_text({_text(o.text)}).count():  # browser-use goes on without it\n"
            f"    page.get_by_text({_text(o.text)}).first.scroll_into_view_if_needed()"
        ),
        Op.WAIT: lambda: f"page.wait_for_timeout({o.number:g})",
        Op.NOTE: lambda: f"# not exported: {o.note}",
        Op.TODO: lambda: f"# TODO step {o.step}: {o.note}",
        Op.EXPECT_APPEARED: lambda: (
            "# expect.appeared: shown after the action above (it may be gone by the end)\n"
            f"expect(page.get_by_text({_text(o.text)}).filter(visible=True).first).to_be_visible(timeout={o.number:g})"
        ),
    }
    return fallback + code[o.op]().split("\n")


def _locator(locator: Locator) -> str:
    return "page" + "".join(f".{c.method}({', '.join(_args(c))})" for c in calls(locator))


def _args(call: Call) -> list[str]:
    return [_arg(call.arg), *(f"{k}={_arg(v)}" for k, v in call.options.items())]


def _arg(value: str | int | bool) -> str:
    return _str(value) if isinstance(value, str) else repr(value)


def _assertion(a: Assertion) -> list[str]:
    note = [f"# {a.note}"] if a.note else []
    if a.states:
        return [*note, *(_state(state, a.timeout_ms) for state in a.states)]
    pattern = f"re.compile(re.escape({_str(a.value)}){', re.IGNORECASE' if a.check is Check.TITLE else ''})"
    code = {
        Check.URL: f"expect(page).to_have_url({pattern}, timeout={a.timeout_ms})",
        Check.TITLE: f"expect(page).to_have_title({pattern}, timeout={a.timeout_ms})",
        Check.TEXT: f"expect(page.get_by_text({_str(a.value)}).filter(visible=True).first).to_be_visible(timeout={a.timeout_ms})",
        Check.NOT_TEXT: f"expect(page.get_by_text({_str(a.value)}).filter(visible=True)).to_have_count(0, "
        f"timeout={a.timeout_ms})",
    }[a.check]
    return [*note, code]


def _state(a: StateAssertion, ms: int) -> str:
    """`expect(<target>).to_be_checked(timeout=5000)`: Playwright's own assertion for one state."""
    args = [str(x) if isinstance(x, int) else _str(x) for x in a.args] + ["ignore_case=True"] * a.ignore_case
    call = {
        Assert.UNCHECKED: "to_be_checked",
        Assert.COUNT: "to_have_count",
        Assert.ATTRIBUTE: "to_have_attribute",
        Assert.CSS: "to_have_css",
    }.get(a.kind, f"to_be_{a.kind.value}")
    extra = ["checked=False"] if a.kind is Assert.UNCHECKED else []
    return f"expect({_target(a.target)}).{call}({', '.join([*args, *extra, f'timeout={ms}'])})"


def _target(t: Target) -> str:
    if t.selector:
        return f"page.locator({_str(t.selector)})"
    options = ([f"name={_str(t.name)}"] if t.name is not None else []) + ["exact=True"] * t.exact
    options += [f"{key}={value}" for key, value in t.filters]
    found = f"page.get_by_role({', '.join([_str(t.role), *options])})"
    return found + ".filter(visible=True)" * t.shown_only


def _text(text: Text) -> str:
    """A Python expression of the text: literals, and each secret read from its environment variable."""
    parts = [f"os.environ[{_str(p.env)}]" if isinstance(p, Secret) else _str(p) for p in text]
    return " + ".join(parts) or '""'


def _str(value: str) -> str:
    """A double-quoted Python string literal; any character that could end a line is escaped."""
    out = repr(value)
    if out.startswith("'"):
        out = '"' + out[1:-1].replace("\\'", "'").replace('"', '\\"') + '"'
    return "".join(c if c.isprintable() or c == " " else f"\\u{ord(c):04x}" for c in out)
