"""What an exact step that found no element says the page has instead (#65, 12): the fields labelled most like its
label, or the fields there are (agent/steps/missing.py, its pure part)."""

from __future__ import annotations

from preview_qa.agent.steps.missing import nearest_fields


def test_a_missing_field_is_named_with_the_fields_labelled_most_like_it() -> None:
    roles = [("textbox", "Display name"), ("textbox", "Email"), ("button", "Display nme"), ("checkbox", "Newsletter")]
    assert nearest_fields("Display nme", roles) == "nearest: the field labelled 'Display name'"
    assert nearest_fields("Phone", roles) == (
        "the page's 3 labelled field(s), none labelled like it: 'Display name', 'Email', 'Newsletter'"
    )
    assert nearest_fields("Email", [("button", "Email")]) == "the page has no labelled field"
