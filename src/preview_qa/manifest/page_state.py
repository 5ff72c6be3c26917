"""The `expect:` checks of a state rather than a text: an element found by role and name (checked, expanded...), an
attribute or a CSS property of the element a selector finds; each rule shared by the loader and the JSON Schema."""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# ARIA roles as Playwright's get_by_role takes them (playwright 1.65's `role` parameter).
ROLES = (  # noqa: SIM905 - a long list, read as words
    "alert alertdialog application article banner blockquote button caption cell checkbox code columnheader "
    "combobox complementary contentinfo definition deletion dialog directory document emphasis feed figure form "
    "generic grid gridcell group heading img insertion link list listbox listitem log main marquee math menu "
    "menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option paragraph presentation "
    "progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider "
    "spinbutton status strong subscript superscript switch tab table tablist tabpanel term textbox time timer "
    "toolbar tooltip tree treegrid treeitem"
).split()
# The roles each state applies to, as Playwright's role selector allows them (its roleUtils: kAriaCheckedRoles, ...);
# Playwright refuses any other role with that state, so the loader does first. `disabled` and `visible` apply to all.
STATE_ROLES = {
    "checked": ("checkbox", "menuitemcheckbox", "option", "radio", "switch", "menuitemradio", "treeitem"),
    "pressed": ("button",),
    "selected": ("gridcell", "option", "row", "tab", "rowheader", "columnheader", "treeitem"),
    "expanded": (  # noqa: SIM905
        "application button checkbox combobox gridcell link listbox menuitem row rowheader "
        "tab treeitem columnheader menuitemcheckbox menuitemradio switch"
    ).split(),
}
STATES = ("visible", "checked", "pressed", "expanded", "selected", "disabled")


def role_problem(role: str) -> str | None:
    """Why `role` is no ARIA role Playwright's get_by_role takes (with the nearest ones), or None."""
    if role in ROLES:
        return None
    near = difflib.get_close_matches(role, ROLES, n=3)
    hint = f"; did you mean {' or '.join(repr(r) for r in near)}?" if near else " (see docs/manifest.md#state-checks)"
    return f"unknown ARIA role {role!r}{hint}"


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ElementCheck(_Check):
    """An element found by its ARIA role and accessible name, as Playwright's get_by_role finds it, and its state."""

    role: str = Field(
        json_schema_extra={"enum": list(ROLES)},
        description="The element's ARIA role (explicit, or its tag's own: a <button> is a button), e.g. switch, checkbox.",
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "Its accessible name (its label, aria-label or text): as get_by_role(name=...) matches it, "
            "case-insensitive and contained in the name unless exact is true."
        ),
    )
    exact: bool = Field(default=False, description="The name must equal the accessible name (case and all).")
    visible: bool | None = Field(
        default=None,
        description=(
            "true: shown (Playwright's to_be_visible); false: no such element is shown (to_be_hidden). With no "
            "state given, the element must be visible."
        ),
    )
    checked: bool | None = Field(default=None, description="A checkbox, radio, switch... is checked (or, false, not).")
    pressed: bool | None = Field(default=None, description="A toggle button is pressed (aria-pressed), or not.")
    expanded: bool | None = Field(default=None, description="A menu button, disclosure... is expanded (aria-expanded), or not.")
    selected: bool | None = Field(default=None, description="A tab, option, row... is selected, or not.")
    disabled: bool | None = Field(default=None, description="It is disabled (natively or aria-disabled), or enabled.")

    @field_validator("role")
    @classmethod
    def _known_role(cls, v: str) -> str:
        problem = role_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _states_fit_the_role(self) -> ElementCheck:
        for state, roles in STATE_ROLES.items():
            if getattr(self, state) is not None and self.role not in roles:
                raise ValueError(f"{state} applies to the roles {', '.join(sorted(roles))}, not to {self.role!r}")
        if self.visible is False and any(getattr(self, s) is not None for s in STATES[1:]):
            raise ValueError(
                "visible: false checks that no such element is shown; a hidden element's other states are not checked"
            )
        return self

    @property
    def states(self) -> dict[str, bool]:
        """The states to check, in a fixed order; with none given, that it is visible."""
        given = {s: v for s in STATES if (v := getattr(self, s)) is not None}
        return given or {"visible": True}

    def described(self) -> str:
        """`switch 'Dark mode'`, as a check's expected and found name it."""
        return self.role + (f" {self.name!r}" if self.name is not None else "") + (" (exact name)" if self.exact else "")


class AttributeCheck(_Check):
    """An attribute of the one element a selector finds, and its value."""

    selector: str = Field(min_length=1, description="A CSS selector (Playwright's selector syntax) that finds one element.")
    name: str = Field(min_length=1, description="The attribute's name, e.g. data-theme, aria-current, href.")
    value: str = Field(description="Its value, compared whole (to_have_attribute).")


class CssCheck(_Check):
    """A CSS property of the one element a selector finds, as the browser computed it."""

    selector: str = Field(min_length=1, description="A CSS selector (Playwright's selector syntax) that finds one element.")
    property: str = Field(min_length=1, description="The CSS property, e.g. background-color, display.")
    value: str = Field(description="Its computed value, compared whole (to_have_css): colours as rgb(17, 17, 17), sizes in px.")
