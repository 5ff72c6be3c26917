"""Issue #69's manifest rules: personas (`personas:`, a test's `as:` and `expect_as:`) expand into one ordinary test per
persona, refused at load with file, line and key when they name what is not there; `before:`/`after:` requests are
paths on the preview, their `save:` JSON paths and the <var>s and <secret>s they use are checked; the values saved
fill in the test."""

from __future__ import annotations

from typing import Any

import pytest

from preview_qa.engine.replay_cache import RecordingCache
from preview_qa.errors import ManifestError
from preview_qa.manifest.loader import loads, resolve_secrets
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.testdata.values import MISSING, filled, read_path
from tests.builders import spec

BASE = """version: 1
personas: {admin: {use_state: admin}, guest: {}}
tests:
  - name: Log in
    task: log in
    save_state: admin
"""
BILLING = """  - name: Billing
    task: open the billing page
    as: [admin, guest]
    expect: {text: Billing, timeout: 7}
    expect_as: {guest: {url: /login}}
"""


def test_a_test_as_personas_is_one_ordinary_test_per_persona_with_its_state_and_checks() -> None:
    manifest = loads(BASE + BILLING, "qa.yml")
    runs = {t.name: t for t in manifest.tests}
    assert list(runs) == ["Log in", "Billing [admin]", "Billing [guest]"]
    admin, guest = runs["Billing [admin]"], runs["Billing [guest]"]
    assert (admin.persona, admin.use_state, admin.expect.text, admin.line) == ("admin", "admin", ["Billing"], 7)
    assert (guest.persona, guest.use_state, guest.expect.url, guest.expect.text) == ("guest", None, "/login", [])
    assert guest.expect.timeout == 7  # how long to wait stays the test's
    assert admin.runs_as is None and admin.expect_as == {}


def test_an_error_about_a_personas_run_names_the_test_as_written() -> None:
    manifest = loads(BASE + BILLING.replace("    as:", "    secrets: {pw: BILLING_PW}\n    as:"), "qa.yml")
    with pytest.raises(ManifestError) as caught:
        resolve_secrets(manifest, {})
    assert str(caught.value).startswith("qa.yml:9: tests[1].secrets.pw: environment variable BILLING_PW is not set")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            BASE + "  - name: Billing\n    task: t\n    as: [admin, membr]\n",
            "qa.yml:9: tests[1].as[1]: unknown persona 'membr' (personas: admin, guest).",
        ),
        (
            BASE + "  - name: Billing\n    task: t\n    as: [admin]\n    expect_as: {admn: {text: x}}\n",
            "qa.yml:10: tests[1].expect_as.admn: unknown persona 'admn'; did you mean 'admin'? (personas: admin, guest).",
        ),
        (
            BASE + "  - name: Billing\n    task: t\n    as: [admin]\n    expect_as: {guest: {text: x}}\n",
            "qa.yml:10: tests[1].expect_as.guest: the test does not run as 'guest': add it to the test's as, or remove it.",
        ),
        (
            BASE.replace("    save_state: admin\n", "    save_state: admin\n    as: [guest]\n"),
            "qa.yml:7: tests[0].as: a test with save_state runs once, as itself; run the tests that use its state as personas.",
        ),
        (
            BASE.replace("{use_state: admin}", "{use_state: root}"),
            "qa.yml:2: personas.admin.use_state: no test saves a state named 'root'; add 'save_state: root' to the test "
            "that logs in as this persona.",
        ),
        (
            BASE + "  - name: B\n    task: t\n    as: [guest]\n  - name: B [guest]\n    task: t\n",
            "qa.yml:9: tests[1].as[0]: its run as 'guest' is named 'B [guest]', the name of another test; rename one.",
        ),
        (
            BASE + "  - name: B\n    task: t\n    before: [{method: POST, path: 'https://other.test/api'}]\n",
            "qa.yml:9: tests[1].before[0].path: must be a path on the preview starting with '/' (such as /api/orders), "
            "not a URL (got 'https://other.test/api').",
        ),
        (
            BASE + "  - name: B\n    task: t\n    after: [{method: DELETE, path: //other.test/api}]\n",
            "qa.yml:9: tests[1].after[0].path: must be a path on the preview starting with '/' (such as /api/orders), "
            "not a URL (got '//other.test/api').",
        ),
        (
            BASE + "  - name: B\n    task: t\n    before: [{method: POST, path: /api, save: {id: 'id'}}]\n",
            "qa.yml:9: tests[1].before[0].save: 'id' is not a JSON path such as $.id, $.order.id or $.items[0].id "
            "(got {'id': 'id'}).",
        ),
        (
            BASE + "  - name: B\n    task: 'open order <var>order_id</var>'\n",
            "qa.yml:8: tests[1].task: uses <var>order_id</var> but no before request saves 'order_id'; give it save: "
            "{order_id: $.id} (its JSON path).",
        ),
        (
            BASE + "  - name: B\n    task: t\n    before: [{path: /api, headers: {X-Token: '<secret>seed</secret>'}}]\n",
            "qa.yml:9: tests[1].before[0]: uses <secret>seed</secret> but 'secrets' does not declare 'seed'; add it "
            "under secrets.",
        ),
        (
            BASE + "  - name: B\n    task: t\n    secrets: {s: S}\n    after: [{path: '/x?token=<secret>s</secret>'}]\n",
            "qa.yml:10: tests[1].after[0].path: a secret goes in a header or the JSON body, never in the path (it is logged).",
        ),
        (
            BASE + "  - name: B\n    task: t\n    before: [{path: '/a/<var>id</var>'}, {path: /b, save: {id: $.id}}]\n",
            "qa.yml:9: tests[1].before[0]: uses <var>id</var> but no earlier before request saves 'id'; give it save: "
            "{id: $.id} (its JSON path).",
        ),
        (
            BASE + "  - name: B\n    steps: [{open: /a}, {click: {text: Go}}]\n    expect: {status: 403}\n",
            "qa.yml:9: tests[1].expect.status: expect.status checks what an open answered: this test's last step is no open.",
        ),
        (
            BASE + "  - name: B\n    steps: [{open: /a}, {click: {text: Go}, expect: {status: 403}}]\n",
            "qa.yml:8: tests[1].steps[1].expect.status: expect.status checks what an open answered: give it on an open.",
        ),
    ],
    ids=[
        "unknown persona in as",
        "unknown persona in expect_as",
        "expect_as for a persona not run",
        "as on a setup test",
        "a persona's state no test saves",
        "a run named as another test",
        "a URL for a path",
        "a protocol-relative URL for a path",
        "not a JSON path",
        "a var no request saves",
        "an undeclared secret in a header",
        "a secret in a path",
        "a var saved only later",
        "expect.status with no open last",
        "expect.status on a step that is no open",
    ],
)
def test_what_a_manifest_says_wrong_about_personas_and_requests(text: str, message: str) -> None:
    with pytest.raises(ManifestError) as caught:
        loads(text, "qa.yml")
    assert str(caught.value) == message


def test_a_saved_value_fills_the_test_where_its_var_is() -> None:
    test = TestSpec(
        name="order",
        start="/orders/<var>id</var>",
        steps=[{"open": "/orders/<var>id</var>", "expect": {"text": ["Order <var>id</var>"]}}],
        expect={"url": "/orders/<var>id</var>"},
    )
    done = filled(test, {"id": "ord-7"})
    assert done.start == "/orders/ord-7" and done.expect.url == "/orders/ord-7"
    assert done.steps is not None and (done.steps[0].open, done.steps[0].expect.text) == ("/orders/ord-7", ["Order ord-7"])
    assert test.start == "/orders/<var>id</var>"  # the test as written is left as it was


@pytest.mark.parametrize(
    ("path", "found"),
    [("$.id", 7), ("$.order.items[1].sku", "b"), ("$.order.items[2].sku", MISSING), ("$.nope", MISSING), ("$", {})],
)
def test_a_json_path_reads_keys_and_indexes(path: str, found: Any) -> None:
    document: dict[str, Any] = {"id": 7, "order": {"items": [{"sku": "a"}, {"sku": "b"}]}}
    assert read_path(document if path != "$" else {}, path) == found


def test_each_personas_run_has_its_own_recording_even_with_the_same_state(tmp_path: Any) -> None:
    """Two personas both signed out would otherwise share one recording, though each is checked its own way."""
    text = "version: 1\npersonas: {guest: {}, visitor: {}}\ntests:\n  - {name: Home, task: t, as: [guest, visitor]}\n"
    manifest = loads(text, "qa.yml")
    cache = RecordingCache(tmp_path, manifest, "openai", "gpt-x")
    keys = {cache.key(t) for t in manifest.tests}
    plain = Manifest(version=1, tests=[spec("Home", task="t")])
    assert len(keys) == 2 and cache.key(plain.tests[0]) not in keys
