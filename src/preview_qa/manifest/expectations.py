"""The `expect:` checks a test (and each of its steps) declares: the page checks code runs, the agent's data, axe-core
and the visual comparison; shared by the test's own `expect` and a step's."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from preview_qa.manifest.page_state import AttributeCheck, CssCheck, ElementCheck


class Strict(BaseModel):
    # strict: a value is taken as written (no "20" for 20, no 1 for true), as the JSON Schema reads it too.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


OneOrMore = Annotated[list[str], BeforeValidator(_as_list, json_schema_input_type=str | list[str])]


class Impact(StrEnum):
    """axe-core's impact levels, least to most severe."""

    MINOR = "minor"
    MODERATE = "moderate"
    SERIOUS = "serious"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return list(Impact).index(self)


class Accessibility(Strict):
    """axe-core on the final page: violations at or above an impact fail the test."""

    # strict would refuse "serious" for the enum from YAML; the value is still checked against the four names
    impact: Annotated[Impact, Field(strict=False)] = Field(
        default=Impact.SERIOUS,
        description=("The least severe impact that fails the test: minor, moderate, serious (the default) or critical."),
    )
    skip_rules: list[str] = Field(
        default_factory=list,
        json_schema_extra={"items": {"type": "string", "minLength": 1}},
        description="axe-core rule ids not run, e.g. color-contrast.",
    )
    exclude: list[str] = Field(
        default_factory=list,
        json_schema_extra={"items": {"type": "string", "minLength": 1}},
        description="CSS selectors of parts of the page not checked, e.g. '#third-party-widget'.",
    )


NONE: Literal["none"] = "none"  # the one word a problem check takes: none of them may happen


class RequestsCheck(Strict):
    """expect.requests: the app's own requests (same origin) during the whole test, none failed."""

    failed: Literal["none"] = Field(
        default=NONE,
        description=(
            "none: no request to the app's origin (a page, fetch or XHR, script, stylesheet or image) answered 400 or "
            "above or failed to load (a request the page itself cancelled and the site's icon are not counted)."
        ),
    )
    allow: list[str] = Field(
        default_factory=list,
        json_schema_extra={"items": {"type": "string", "minLength": 1}},
        description="Globs of request paths not counted ('*' spans '/'), e.g. /api/metrics*, as allow_server_errors.",
    )


class LinksCheck(Strict):
    """expect.links: the final page's links to the app's own pages, each requested, none broken."""

    broken: Literal["none"] = Field(
        default=NONE,
        description=(
            "none: every link a person could follow on the final page to the app's origin (rendered, at most 50) "
            "answers below 400 when requested (with the test's headers, credentials and cookies; redirects followed "
            "on the app's origin). Links elsewhere, and sign-out links, are not requested."
        ),
    )


class VisualCheck(Strict):
    """expect.visual: the PR's screenshots against the default branch's (the baseline's, or the kept reference)."""

    max_diff: float = Field(
        default=0.001, ge=0, le=1, description="The share of pixels that may differ (0.001 = 0.1%, the default)."
    )
    threshold: float = Field(
        default=0.1, ge=0, le=1, description="How far two pixels' colours may be apart and still match (pixelmatch's, 0 to 1)."
    )
    mask: list[str] = Field(
        default_factory=list,
        json_schema_extra={"items": {"type": "string", "minLength": 1}},
        description="CSS selectors painted out before comparing: clocks, avatars, ads.",
    )
    full_page: bool = Field(default=False, description="Compare the whole scrollable page, not only the viewport.")
    steps: bool = Field(default=False, description="Compare every replayed step's screenshot too, not only the final one.")


class Expectations(Strict):
    """Deterministic checks, run by code on the final page after the agent is done."""

    url: str | None = Field(default=None, min_length=1, description="The final page's URL contains this string.")
    text: OneOrMore = Field(
        default_factory=list,
        description=(
            "Text that must be visible on the final page where a person could see it (case-insensitive, "
            "whitespace-normalised; not hidden, transparent, clipped away or off the page; a field's value counts): one "
            "string or a list, each must be there."
        ),
    )
    not_text: OneOrMore = Field(
        default_factory=list,
        description=("Text that must not be visible on the final page: one string or a list, none may be there."),
    )
    appeared: OneOrMore = Field(
        default_factory=list,
        description=(
            "Text that must have been visible at some moment after the last action that changed the page, even if "
            "it is gone by the end (a toast): one string or a list; each waits up to timeout if it has not shown yet."
        ),
    )
    not_appeared: OneOrMore = Field(
        default_factory=list,
        description=(
            "Text that must not have been visible at any moment after the last action that changed the page (an "
            "error toast that flashes): one string or a list; watched for at least timeout after that action."
        ),
    )
    title: str | None = Field(default=None, min_length=1, description="The final page's title contains this (case-insensitive).")
    status: int | None = Field(
        default=None,
        ge=100,
        le=599,
        description=(
            "The HTTP status an `open` answered: an open step's own, or the test's last step's when it is an open (403 "
            "for a persona that must be refused). Without it, an open that answers 400 or more fails its step."
        ),
    )
    data: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "Keys (dotted paths reach into objects and lists) and the values the agent's extracted data must have there "
            "(strings compared trimmed; 3 equals 3.0, never true)."
        ),
    )
    element: list[ElementCheck] = Field(
        default_factory=list,
        description=(
            "Elements found by ARIA role and accessible name (as Playwright's get_by_role) in the given states, e.g. "
            "{role: switch, name: Dark mode, checked: true}: exactly one must match, and be in every state given."
        ),
    )
    attribute: list[AttributeCheck] = Field(
        default_factory=list,
        description="Attributes of the one element a selector finds, e.g. {selector: html, name: data-theme, value: dark}.",
    )
    css: list[CssCheck] = Field(
        default_factory=list,
        description=(
            "Computed CSS properties of the one element a selector finds, e.g. "
            "{selector: body, property: background-color, value: 'rgb(17, 17, 17)'}."
        ),
    )
    accessibility: Accessibility | None = Field(
        default=None,
        description=(
            "Run axe-core (bundled, offline) on the final page: any violation at or above `impact` fails the test. "
            "`accessibility: {}` uses the defaults."
        ),
    )
    console_errors: Literal["none"] | None = Field(
        default=None,
        description=(
            "none: no uncaught exception and no console error on a page of the app during the whole test (the "
            "browser's own 'Failed to load resource' line for a failed request is left to `requests`)."
        ),
    )
    requests: RequestsCheck | None = Field(
        default=None,
        description=(
            "{failed: none}: no request to the app's origin failed or answered 400 or above during the whole test; "
            "`allow` lists path globs not counted. `requests: {}` uses the defaults."
        ),
    )
    links: LinksCheck | None = Field(
        default=None,
        description=(
            "{broken: none}: every same-origin link a person could follow on the final page answers below 400. "
            "`links: {}` uses the defaults."
        ),
    )
    visual: VisualCheck | None = Field(
        default=None,
        description=(
            "Compare the final page (and with steps: true each step) with the default branch's: a difference over "
            "max_diff marks the test changed. `visual: {}` uses the defaults. Given in defaults, it applies also to "
            "tests with an expect of their own."
        ),
    )
    timeout: float = Field(
        default=5,
        gt=0,
        description=(
            "Seconds each page check (url, title, text, not_text, appeared, element, attribute, css) waits for its "
            "condition to hold, as Playwright's expect does: text until it is visible, not_text until it is gone; "
            "not_appeared watches at least this long after the last action; at most the test's timeout. Given in "
            "defaults, it applies also to tests with an expect of their own."
        ),
    )

    @property
    def checks_anything(self) -> bool:
        """Whether there is anything to check on a page or in the report (the visual comparison is made apart)."""
        return self.has_page_checks or self.accessibility is not None or self.problem_checks or bool(self.data)

    @property
    def problem_checks(self) -> bool:
        """Whether the test checks for problems the run saw (console errors, failed requests, broken links): like
        accessibility, none of them says whether the task was done, so they never judge a replay alone."""
        return self.console_errors is not None or self.requests is not None or self.links is not None

    @property
    def shown_texts(self) -> list[str]:
        """The texts a page must show a person, at the end (`text`) or on the way (`appeared`): what --prove cuts."""
        return [*self.text, *self.appeared]

    @property
    def has_page_checks(self) -> bool:
        """Checks that code runs on the final page itself (data checks need the agent's report). Not accessibility:
        a page free of violations says nothing about whether the task was done, so it never judges a replay alone."""
        return bool(
            self.url
            or self.status is not None
            or self.text
            or self.not_text
            or self.appeared
            or self.not_appeared
            or self.title
            or self.element
            or self.attribute
            or self.css
        )
