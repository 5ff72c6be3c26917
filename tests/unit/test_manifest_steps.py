"""A test as steps in the manifest (issue #47): what a user may write, the one-sentence errors at file:line:key for
what they may not, the defaults rules, and each step as the run and the reports see it."""

from __future__ import annotations

import pytest

from preview_qa.errors import ManifestError
from preview_qa.manifest import loader as manifest
from preview_qa.manifest.steps import StepKind, step_words

CHECKOUT = """\
version: 1
defaults: {max_steps: 8, expect: {timeout: 3}, task: "Check the home page."}
tests:
  - name: checkout
    start: /login
    secrets: {pw: QA_PASSWORD}
    steps:
      - fill: {label: Email, value: demo@acme.test}
      - fill: {label: Password, value: "<secret>pw</secret>"}
      - click: {role: button, name: Log in}
        expect: {url: /dashboard}
      - do: Add the anvil to the cart
        max_steps: 4
        expect: {text: "Cart: 1 item"}
      - open: /cart
        name: Open the cart
        expect: {text: "Acme Anvil", timeout: 1}
      - select: {label: Shipping, option: Express}
      - press: {key: Enter, label: Coupon}
      - do: Pay with the test card
    output_schema: {type: object, properties: {order: {type: string}}}
    expect: {data: {order: "A-1"}, text: ["Thank you"]}
  - name: home
"""


def test_a_checkout_written_as_steps_reads_as_each_step_says() -> None:
    test, home = manifest.loads(CHECKOUT).tests
    assert test.task is None and home.task == "Check the home page."  # a default task is not a steps test's
    assert test.steps is not None
    assert [s.kind for s in test.steps] == [
        StepKind.FILL,
        StepKind.FILL,
        StepKind.CLICK,
        StepKind.DO,
        StepKind.OPEN,
        StepKind.SELECT,
        StepKind.PRESS,
        StepKind.DO,
    ]
    assert [s.title for s in test.steps] == [
        "Fill the field labelled 'Email' with 'demo@acme.test'",
        "Fill the field labelled 'Password' with '<secret>pw</secret>'",
        "Click button 'Log in'",
        "Add the anvil to the cart",
        "Open the cart",
        "Select 'Express' in the list labelled 'Shipping'",
        "Press Enter in the field labelled 'Coupon'",
        "Pay with the test card",
    ]
    assert test.secret_placeholders == ["pw"]
    assert step_words(5, 8, "Open the cart") == "step 5 of 8, 'Open the cart'"


def test_a_goal_is_a_task_with_its_own_checks_max_steps_and_the_tests_timeout() -> None:
    test = manifest.loads(CHECKOUT).tests[0]
    add = test.goal(4)
    assert (add.task, add.max_steps, add.steps, add.output_schema) == ("Add the anvil to the cart", 4, None, None)
    assert (add.expect.text, add.expect.timeout, add.expect.data) == (["Cart: 1 item"], 3, {})
    assert test.step_checks(5).timeout == 1  # its own
    pay = test.goal(8)  # the last goal's report carries the test's data, checked after the last step
    assert (pay.max_steps, pay.expect.data, pay.output_schema) == (8, {}, test.output_schema)
    assert pay.expect.text == []  # the test's own page checks are judged after the last step, not as this goal's
    assert test.data_step == 8


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (
            "[{do: y, open: /x}]",
            "qa.yml:4: tests[0].steps[0]: a step does one thing: give one of do, open, click, fill, select, press, email "
            "(this one has do and open).",
        ),
        (
            "[{name: x}]",
            "qa.yml:4: tests[0].steps[0]: a step does one thing: give one of do, open, click, fill, select, "
            "press, email (this one has none).",
        ),
        (
            "[{open: /x, max_steps: 3}]",
            "qa.yml:4: tests[0].steps[0]: max_steps counts an agent goal's steps: it goes with do, not with an exact step.",
        ),
        (
            "[{click: {role: button, label: X}}]",
            "qa.yml:4: tests[0].steps[0].click: find the element one way: give one of role, label, text, css, test_id "
            "(2 given) (got {'role': 'button', 'label': 'X'}).",
        ),
        (
            "[{fill: {text: X, value: Y}}]",
            "qa.yml:4: tests[0].steps[0].fill: a field is not found by text (that finds what the page shows): find it by "
            "role, label, css or test_id (got {'text': 'X', 'value': 'Y'}).",
        ),
        (
            "[{press: {key: Entr}}]",
            "qa.yml:4: tests[0].steps[0].press.key: unknown key 'Entr'; did you mean 'Enter'? (got 'Entr').",
        ),
        (
            "[{click: {role: buton, name: Go}}]",
            "qa.yml:4: tests[0].steps[0].click.role: unknown ARIA role 'buton'; did you mean 'button' or 'spinbutton'? "
            "(got 'buton').",
        ),
        (
            "[{open: 'https://evil.example/x'}]",
            "qa.yml:4: tests[0].steps[0].open: 'https://evil.example/x' is outside the preview and this test's "
            "allowed_domains; give a path (such as /x) under the preview, or add evil.example to allowed_domains.",
        ),
        (
            "[{do: x, expect: {data: {a: 1}}}]",
            "qa.yml:4: tests[0].steps[0].expect.data: data is judged after the last step: give it in the test's own "
            "expect, not a step's (got {'a': 1}).",
        ),
        (
            "[{fill: {label: X, value: '<secret>pw</secret>'}}]",
            "qa.yml:4: tests[0].steps[0].fill.value: uses <secret>pw</secret> but 'secrets' does not declare 'pw'; add it "
            "under secrets.",
        ),
        ("[{open: /x, expct: {}}]", "qa.yml:4: tests[0].steps[0].expct: unknown key 'expct'; did you mean 'expect'?"),
        (
            "[{select: {label: Column, css: select, option: name}}]",
            "qa.yml:4: tests[0].steps[0].select: find the element one way: give one of role, label, css, test_id (2 "
            "given) (got {'label': 'Column', 'css': 'select', 'option': 'name'}).",
        ),
        (
            "[{click: {css: 'button.save', exact: true}}]",
            "qa.yml:4: tests[0].steps[0].click: exact goes with a name, label or text (a css selector or test id matches "
            "as written) (got {'css': 'button.save', 'exact': True}).",
        ),
    ],
)
def test_a_step_that_cannot_run_is_refused_in_one_sentence_at_its_key(steps: str, message: str) -> None:
    with pytest.raises(ManifestError) as caught:
        manifest.loads(f"version: 1\ntests:\n  - name: a\n    steps: {steps}\n", "qa.yml")
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "version: 1\ndefaults: {steps: [{do: x}]}\ntests:\n  - {name: a, task: x}\n",
            "qa.yml:2: defaults.steps: steps cannot be given in defaults: each test lists its own steps.",
        ),
        (
            "version: 1\ntests:\n  - {name: a, task: x, steps: [{do: y}]}\n",
            "qa.yml:3: tests[0]: a test has a task or steps, not both: make the task a `do` step, or drop it.",
        ),
        (
            "version: 1\ntests:\n  - name: a\n    steps: [{open: /x}]\n    expect: {data: {a: 1}}\n",
            "qa.yml:5: tests[0].expect: the test's data is read by its last `do` step (the agent's report), and this test "
            "has no do step; check the page with expect's page checks instead.",
        ),
        (
            "version: 1\ntests:\n  - name: a\n    timeout: 10\n    steps: [{open: /x, expect: {timeout: 20}}]\n",
            "qa.yml:5: tests[0].steps[0].expect.timeout: waits 20 s, longer than the test's timeout of 10 s; lower "
            "expect.timeout or raise timeout.",
        ),
    ],
)
def test_the_rules_beyond_one_step(text: str, message: str) -> None:
    with pytest.raises(ManifestError) as caught:
        manifest.loads(text, "qa.yml")
    assert str(caught.value) == message


def test_an_absolute_url_on_an_allowed_domain_may_be_the_start_or_opened() -> None:
    loaded = manifest.loads(
        "version: 1\ntests:\n  - name: a\n    start: https://shop.test/\n    allowed_domains: [pay.test, '*.shop.test']\n"
        "    steps: [{open: 'https://pay.test/x'}, {open: 'https://www.shop.test/cart'}]\n"
    )
    assert loaded.tests[0].steps is not None


def test_every_exact_action_finds_its_element_the_same_ways_css_test_id_and_role_included() -> None:
    """#65, 11: Datasette's `<select name="_filter_column">` has no label; every exact action takes the locators
    Playwright offers (click also by its text), and a role without a name is the page's only element of that role."""
    steps = [
        "{select: {css: 'select[name=_filter_column]', option: name}}",
        "{select: {role: combobox, name: Sort, option: id, exact: true}}",
        "{select: {test_id: column, option: name}}",
        "{fill: {css: 'input[name=_filter_value]', value: Ada}}",
        "{fill: {test_id: query, value: Ada}}",
        "{press: {css: 'input[name=_filter_value]', key: Enter}}",
        "{press: {role: searchbox, name: Search, key: Enter}}",
        "{click: {css: 'input[type=submit]'}}",
        "{click: {test_id: apply}}",
        "{click: {role: button}}",
    ]
    test = manifest.loads("version: 1\ntests:\n  - name: a\n    steps:\n" + "".join(f"      - {s}\n" for s in steps)).tests[0]
    assert [s.title for s in test.steps or []] == [
        "Select 'name' in the element matching css 'select[name=_filter_column]'",
        "Select 'id' in combobox 'Sort'",
        "Select 'name' in the element with test id 'column'",
        "Fill the element matching css 'input[name=_filter_value]' with 'Ada'",
        "Fill the element with test id 'query' with 'Ada'",
        "Press Enter in the element matching css 'input[name=_filter_value]'",
        "Press Enter in searchbox 'Search'",
        "Click the element matching css 'input[type=submit]'",
        "Click the element with test id 'apply'",
        "Click button (any name)",
    ]


def test_a_steps_expect_lists_every_page_check_it_takes_in_the_schema_and_the_docs() -> None:
    """`appeared` and `not_appeared` are judged in a step (since its last action): the editor's description and the
    manifest page name them with the other page checks (#65, 11)."""
    from pathlib import Path

    from preview_qa.manifest.steps import StepExpectations, TestStep

    checks = sorted(set(StepExpectations.model_json_schema()["properties"]) - {"timeout"})
    described = TestStep.model_fields["expect"].description or ""
    assert [c for c in checks if c not in described] == []
    page = (Path(__file__).parents[2] / "docs" / "manifest.md").read_text(encoding="utf-8")
    sentence = page.split("**A step's `expect`** takes the page checks (", 1)[1].split(")", 1)[0]
    assert [c for c in checks if f"`{c}`" not in sentence] == []
