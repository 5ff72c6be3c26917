"""State checks without a browser: the manifest keys and what they refuse, what a check says it found, the nearest
elements from Playwright's aria snapshot, the replay judged by them alone, and the assertions an export writes."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from preview_qa.errors import ManifestError
from preview_qa.export import python, typescript
from preview_qa.export.plan import plan_test
from preview_qa.manifest.loader import loads
from preview_qa.manifest.models import Expectations
from preview_qa.manifest.page_state import AttributeCheck, CssCheck, ElementCheck
from preview_qa.results import Execution, Status
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.checks.page_state import (
    ElementFound,
    attribute_outcome,
    css_outcome,
    element_outcome,
    nearest_elements,
    parse_aria_snapshot,
)
from preview_qa.verdict.decide import decide, replay_needs_llm_check
from tests.builders import spec

DARK = ElementCheck(role="switch", name="Dark mode", checked=True)
HIDDEN = ElementCheck(role="link", name="Profile", visible=False)
SNAPSHOT = """- main:
  - heading "Settings" [level=1]
  - switch "Dark mode"
  - checkbox "Email me \\"weekly\\" updates" [checked]
  - text: Email me updates
  - button "Menu" [expanded]
  - link "Help":
    - /url: "#help"
"""


def element(**keys: object) -> ElementCheck:
    return Expectations.model_validate({"element": [keys]}).element[0]


def refusal(keys: dict[str, object]) -> str:
    with pytest.raises(ValidationError) as caught:
        Expectations.model_validate({"element": [keys]})
    return caught.value.errors()[0]["msg"]


def test_the_manifest_reads_an_element_an_attribute_and_a_css_property() -> None:
    expect = Expectations.model_validate(
        {
            "element": [{"role": "switch", "name": "Dark mode", "checked": True}],
            "attribute": [{"selector": "html", "name": "data-theme", "value": "dark"}],
            "css": [{"selector": "body", "property": "background-color", "value": "rgb(17, 17, 17)"}],
        }
    )
    assert expect.element == [DARK]
    assert expect.attribute == [AttributeCheck(selector="html", name="data-theme", value="dark")]
    assert expect.css == [CssCheck(selector="body", property="background-color", value="rgb(17, 17, 17)")]
    assert DARK.states == {"checked": True}
    assert element(role="link", name="Docs").states == {"visible": True}  # no state given: it must be shown


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"role": "swich", "name": "Dark mode"}, "unknown ARIA role 'swich'; did you mean 'switch'?"),
        ({"role": "link", "checked": True}, "checked applies to the roles checkbox, menuitemcheckbox, menuitemradio, option"),
        ({"role": "link", "pressed": False}, "pressed applies to the roles button, not to 'link'"),
        ({"role": "heading", "expanded": True}, "expanded applies to the roles application, button"),
        ({"role": "button", "visible": False, "pressed": True}, "visible: false checks that no such element is shown"),
    ],
)
def test_what_playwright_would_refuse_is_refused_when_the_manifest_is_read(keys: dict[str, object], message: str) -> None:
    assert message in refusal(keys)


def test_unknown_keys_and_quoted_booleans_are_refused() -> None:
    assert "Extra inputs" in refusal({"role": "switch", "on": True})
    assert "valid boolean" in refusal({"role": "switch", "checked": "true"})
    with pytest.raises(ValidationError, match="Field required"):
        Expectations.model_validate({"attribute": [{"selector": "html", "name": "data-theme"}]})


@pytest.mark.parametrize("key", ["element", "attribute", "css"])
def test_state_checks_are_page_checks_so_code_alone_judges_a_replay(key: str) -> None:
    checks = {
        "element": [{"role": "switch", "name": "Dark mode", "checked": True}],
        "attribute": [{"selector": "html", "name": "data-theme", "value": "dark"}],
        "css": [{"selector": "body", "property": "color", "value": "rgb(0, 0, 0)"}],
    }
    test = spec(expect={key: checks[key]})
    assert test.expect.has_page_checks and not replay_needs_llm_check(test)
    outcome = element_outcome(DARK, ElementFound(1, {"checked": False}))
    verdict = decide(test, AgentRun(execution=Execution.REPLAYED, expectations=[outcome])).verdict
    assert (verdict.status, verdict.reason) == (
        Status.FAILED,
        "expectation element failed: expected switch 'Dark mode' checked, found checked is false",
    )


@pytest.mark.parametrize(
    ("check", "found", "ok", "expected", "said"),
    [
        (DARK, ElementFound(1, {"checked": True}), True, "switch 'Dark mode' checked", "it is checked"),
        (DARK, ElementFound(1, {"checked": False}), False, "switch 'Dark mode' checked", "checked is false"),
        (DARK, ElementFound(1, {"checked": "mixed"}), False, "switch 'Dark mode' checked", "checked is mixed"),
        (
            ElementCheck(role="button", name="Menu", expanded=False, disabled=False),
            ElementFound(1, {"expanded": None, "disabled": False}),
            False,
            "button 'Menu' collapsed, enabled",
            "expanded is not set",
        ),
        (
            DARK,
            ElementFound(2),
            False,
            "switch 'Dark mode' checked",
            "2 elements match (a check needs exactly one: give more of the name, or exact: true)",
        ),
        (
            ElementCheck(role="switch", name="Night mode", exact=True, checked=True),
            ElementFound(0, roles=parse_aria_snapshot(SNAPSHOT)),
            False,
            "switch 'Night mode' (exact name) checked",
            "no element with role switch named 'Night mode'; nearest: switch 'Dark mode'",
        ),
        (
            ElementCheck(role="link", name="Profile", visible=False),
            ElementFound(0),
            True,
            "no link 'Profile' visible",
            "none is visible",
        ),
        (
            HIDDEN,
            ElementFound(2),
            False,
            "no link 'Profile' visible",
            "2 visible element(s) match",
        ),
    ],
)
def test_an_element_check_says_what_it_found_instead(
    check: ElementCheck, found: ElementFound, ok: bool, expected: str, said: str
) -> None:
    outcome = element_outcome(check, found)
    assert (outcome.check, outcome.ok, outcome.expected, outcome.found) == ("element", ok, expected, said)


def test_the_aria_snapshot_gives_each_elements_role_and_name_and_the_nearest_are_named() -> None:
    roles = parse_aria_snapshot(SNAPSHOT)
    assert roles == [
        ("main", ""),
        ("heading", "Settings"),
        ("switch", "Dark mode"),
        ("checkbox", 'Email me "weekly" updates'),
        ("button", "Menu"),
        ("link", "Help"),
    ]
    assert nearest_elements(ElementCheck(role="button", name="Dark mode"), roles) == "nearest: switch 'Dark mode'"
    assert nearest_elements(ElementCheck(role="switch", name="Sound"), roles) == (
        "the page has 1 switch element(s), none named like it"
    )
    assert nearest_elements(ElementCheck(role="tab", name="Billing"), roles) == "the page has no tab"


def test_an_attribute_and_a_css_check_say_what_they_found() -> None:
    theme = AttributeCheck(selector="html", name="data-theme", value="dark")
    assert [(o.ok, o.found) for o in (attribute_outcome(theme, 1, "dark"), attribute_outcome(theme, 1, "light"))] == [
        (True, "it is 'dark'"),
        (False, "it is 'light'"),
    ]
    assert attribute_outcome(theme, 1, None).found == "'html' has no data-theme attribute"
    assert attribute_outcome(theme, 0, None).found == "no element matches 'html'"
    assert attribute_outcome(theme, 3, None).found.startswith("3 elements match 'html' (a check needs exactly one")
    assert attribute_outcome(theme, 1, "dark").expected == "data-theme='dark' on 'html'"
    colour = CssCheck(selector="body", property="background-color", value="rgb(17, 17, 17)")
    outcome = css_outcome(colour, 1, "rgb(255, 255, 255)")
    assert (outcome.check, outcome.ok, outcome.expected, outcome.found) == (
        "css",
        False,
        "CSS background-color 'rgb(17, 17, 17)' on 'body'",
        "it is 'rgb(255, 255, 255)'",
    )


STATES = {
    "element": [
        {"role": "switch", "name": "Dark mode", "checked": True},
        {"role": "checkbox", "name": "Email", "exact": True, "checked": False},
        {"role": "button", "name": "Menu", "pressed": True, "expanded": False, "disabled": False},
        {"role": "tab", "name": "Billing", "selected": True, "disabled": True},
        {"role": "link", "name": "Profile", "visible": False},
        {"role": "navigation"},
    ],
    "attribute": [{"selector": "html", "name": "data-theme", "value": "dark"}],
    "css": [{"selector": "body", "property": "background-color", "value": "rgb(17, 17, 17)"}],
    "timeout": 3,
}


def test_the_python_export_asserts_each_state_with_playwrights_own_assertion() -> None:
    source = python.render(plan_test(spec(expect=STATES), {"history": []}, "http://x", "qa.yml:1"))
    body = source.split("# the checks of the test's expect:\n")[1].splitlines()
    assert [line.strip() for line in body] == [
        'expect(page.get_by_role("switch", name="Dark mode")).to_be_checked(timeout=3000)',
        'expect(page.get_by_role("checkbox", name="Email", exact=True)).to_be_checked(checked=False, timeout=3000)',
        'expect(page.get_by_role("button", name="Menu", pressed=True)).to_have_count(1, timeout=3000)',
        'expect(page.get_by_role("button", name="Menu")).to_have_attribute("aria-expanded", "false", ignore_case=True, '
        "timeout=3000)",
        'expect(page.get_by_role("button", name="Menu")).to_be_enabled(timeout=3000)',
        'expect(page.get_by_role("tab", name="Billing", selected=True)).to_have_count(1, timeout=3000)',
        'expect(page.get_by_role("tab", name="Billing")).to_be_disabled(timeout=3000)',
        'expect(page.get_by_role("link", name="Profile", include_hidden=True).filter(visible=True)).to_have_count(0, '
        "timeout=3000)",
        'expect(page.get_by_role("navigation")).to_be_visible(timeout=3000)',
        'expect(page.locator("html")).to_have_attribute("data-theme", "dark", timeout=3000)',
        'expect(page.locator("body")).to_have_css("background-color", "rgb(17, 17, 17)", timeout=3000)',
    ]
    compile(source, "test_states.py", "exec")


def test_the_typescript_export_asserts_each_state_likewise() -> None:
    source = typescript.render(plan_test(spec(expect=STATES), {"history": []}, "http://x", "qa.yml:1"))
    body = source.split("// the checks of the test's expect:\n")[1].splitlines()[:-1]
    t = "{ timeout: 3000 }"
    assert [line.strip() for line in body] == [
        f'await expect(page.getByRole("switch", {{ name: "Dark mode" }})).toBeChecked({t});',
        'await expect(page.getByRole("checkbox", { name: "Email", exact: true }))'
        ".toBeChecked({ checked: false, timeout: 3000 });",
        f'await expect(page.getByRole("button", {{ name: "Menu", pressed: true }})).toHaveCount(1, {t});',
        'await expect(page.getByRole("button", { name: "Menu" })).toHaveAttribute("aria-expanded", "false", '
        "{ ignoreCase: true, timeout: 3000 });",
        f'await expect(page.getByRole("button", {{ name: "Menu" }})).toBeEnabled({t});',
        f'await expect(page.getByRole("tab", {{ name: "Billing", selected: true }})).toHaveCount(1, {t});',
        f'await expect(page.getByRole("tab", {{ name: "Billing" }})).toBeDisabled({t});',
        'await expect(page.getByRole("link", { name: "Profile", includeHidden: true }).filter({ visible: true }))'
        f".toHaveCount(0, {t});",
        f'await expect(page.getByRole("navigation")).toBeVisible({t});',
        f'await expect(page.locator("html")).toHaveAttribute("data-theme", "dark", {t});',
        f'await expect(page.locator("body")).toHaveCSS("background-color", "rgb(17, 17, 17)", {t});',
    ]


def test_names_from_the_manifest_cannot_break_out_of_the_exported_string() -> None:
    hostile = {"element": [{"role": "button", "name": 'Go")\nimport os\n("'}], "attribute": []}
    source = python.render(plan_test(spec(expect=hostile), {"history": []}, "http://x", "qa.yml:1"))
    assert 'page.get_by_role("button", name="Go\\")\\nimport os\\n(\\"")' in source
    compile(source, "test_hostile.py", "exec")


def test_a_refused_state_check_names_its_file_line_and_key() -> None:
    manifest = """version: 1
tests:
  - name: t
    task: x
    expect:
      element:
        - {role: swich, name: Dark mode, checked: true}
"""
    with pytest.raises(ManifestError) as caught:
        loads(manifest, "qa.yml")
    assert str(caught.value).startswith(
        "qa.yml:7: tests[0].expect.element[0].role: unknown ARIA role 'swich'; did you mean 'switch'?"
    )
