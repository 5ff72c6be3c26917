# Over 400 lines: every type the reporters read is here, the one contract between the run and its outputs (results.json
# mirrors it); splitting it would make each reporter import from several places.
"""What a run produced: statuses, verdicts and test results — the only data the reporters read — and the rules that
shorten their texts to one line."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field


class Execution(StrEnum):
    """How a test ran (results.json's `path`)."""

    AGENT = "agent"  # the agent drove it
    REPLAYED = "replayed"  # its recording replayed, without the agent
    REPLAY_FELL_BACK = "replay-fell-back"  # its recording stopped matching the app, and the agent ran it instead
    EXACT = "exact"  # a test written as exact steps only (open, click, fill, select, press): code alone, nothing to replay
    NOT_RUN = "none"  # it never started


EXECUTION_WORDS = {
    Execution.AGENT: "agent",
    Execution.REPLAYED: "replayed",
    Execution.REPLAY_FELL_BACK: "replay → agent",
    Execution.EXACT: "exact steps",
    Execution.NOT_RUN: "not run",
}


class FallBack(StrEnum):
    """Why a replay handed its test to the agent (results.json's `fell_back`). Only a page that changed is healed when
    the agent passes; an unusable LLM answer or our own trouble is a fall-back, nothing more."""

    PAGE_CHANGED = "page_changed"  # it drifted, or its final page failed a check or the page check's valid verdict
    LLM_ANSWER = "llm_answer"  # the page check's LLM call failed or gave no usable verdict: no word on the page
    TOOL = "tool"  # the browser's or preview-qa's own trouble during the replay (a crash, a timeout)

    @property
    def words(self) -> str:
        return {
            FallBack.PAGE_CHANGED: "the page no longer matched the recording",
            FallBack.LLM_ANSWER: "the page check's LLM answer was unusable",
            FallBack.TOOL: "the replay hit a browser or preview-qa error",
        }[self]


class StopReason(StrEnum):
    """How a run ended (results.json's `stop_reason`); `notice` says it in words. Ordered from the least telling."""

    COMPLETED = "completed"  # every selected test ran, or was skipped or refused a start with its own reason
    PREVIEW_UNREACHABLE = "preview-unreachable"  # the preview never answered within --wait-timeout: no test ran
    CANCELLED = "cancelled"  # a signal stopped it: the tests it cut short, or never started, errored "cancelled"

    @classmethod
    def merged(cls, reasons: list[StopReason]) -> StopReason:
        """How shards merged into one run ended: as the most telling of them (one cancelled shard, and it was cancelled)."""
        order = list(cls)
        return max(reasons, key=order.index, default=cls.COMPLETED)


class Status(StrEnum):
    """A test's outcome. Ordered by severity so that a run's status is its worst test's."""

    SKIPPED = "skipped"
    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def is_green(self) -> bool:
        return self in (Status.PASSED, Status.SKIPPED)

    @classmethod
    def worst(cls, statuses: list[Status]) -> Status:
        return max(statuses, key=lambda s: s.rank, default=cls.PASSED)


_RANK = {Status.SKIPPED: 0, Status.PASSED: 1, Status.FAILED: 2, Status.ERRORED: 3}


class ViolatingElement(BaseModel):
    """One element an axe-core rule failed on: how axe-core names it, its text, and what axe-core measured there."""

    target: str  # axe-core's CSS selector; in a frame, the frame's and the element's joined by ' >>> '
    text: str = ""  # its visible text, one line and clipped; "" for an element without (an input, an image)
    summary: str = ""  # axe-core's own words for what is wrong with it (its failure summary, on one line)
    data: dict[str, str | float | int | bool] = Field(default_factory=dict)  # axe-core's `data`, e.g. contrastRatio

    def measured(self) -> str:
        """What axe-core measured, in words: for colour contrast the ratio, both colours, the font and the ratio
        wanted (`contrast 2.32:1, #aaaaaa on #ffffff, 12.0pt (16px) normal, 4.5:1 expected`); else its other data."""
        d = self.data
        if "contrastRatio" in d:
            parts = [f"contrast {d['contrastRatio']}:1"]
            parts += [f"{d.get('fgColor', '?')} on {d.get('bgColor', '?')}"] if d.get("fgColor") or d.get("bgColor") else []
            parts += [" ".join(str(d[k]) for k in ("fontSize", "fontWeight") if d.get(k))]
            parts += [f"{d['expectedContrastRatio']} expected"] if d.get("expectedContrastRatio") else []
            return ", ".join(p for p in parts if p)
        return ", ".join(f"{k} {v}" for k, v in d.items() if k != "messageKey")

    def named(self) -> str:
        """`'a.docs' ('Read the docs')`: the element as axe-core names it, and its text."""
        return f"{clip(self.target, 160)!r}" + (f" ({clip(self.text, 80)!r})" if self.text else "")

    def line(self) -> str:
        """`'a.docs' ('Read the docs'): contrast 2.32:1, #aaaaaa on #ffffff, ...`: the element, what was measured."""
        measured = self.measured()
        return self.named() + (f": {measured}" if measured else "")


class AccessibilityViolation(BaseModel):
    """One axe-core rule that failed on the final page, with every element it failed on."""

    rule: str
    impact: str | None  # axe-core's impact name; None or an unknown name fails closed, as the most severe
    help: str  # axe-core's own words
    elements: list[ViolatingElement] = Field(default_factory=list)
    counted: bool = True  # at or above the test's impact threshold (false: seen, listed, not failing the test)


class ExpectationOutcome(BaseModel):
    """One deterministic check from `expect:`, as evaluated by code on the real final page."""

    check: str  # "url", "text", "data.price", ...
    expected: str
    found: str  # on the page as it was when the check's wait ended
    ok: bool
    timeout_s: float | None = None  # the bound a page check shared with settling the page: expect.timeout, or less
    waited_s: float | None = None  # how long it did wait: until its condition held, or until that bound ran out
    # accessibility only: every violation axe-core found, each element with its data (left out of results.json if none)
    violations: list[AccessibilityViolation] = Field(default_factory=list, exclude_if=lambda v: not v)


class QuoteCheck(BaseModel):
    """One text the agent quoted as the evidence for its verdict, looked up in what the run's pages showed a person
    (verdict/quotes.py): found or not, and where (`after step 2, on /checkout`). `in_instruction`: shown only inside
    text the page addressed to the agent (an instruction naming the text to cite), so it grounds nothing."""

    quote: str
    found: bool
    where: str | None = None
    in_instruction: bool = Field(default=False, exclude_if=lambda v: not v)


class ColorScheme(StrEnum):
    """The `prefers-color-scheme` a test's browser reports."""

    LIGHT = "light"
    DARK = "dark"
    NO_PREFERENCE = "no-preference"


class Viewport(BaseModel):
    """A page's size in CSS pixels."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    width: int = Field(ge=1, le=10000, description="CSS pixels.")
    height: int = Field(ge=1, le=10000, description="CSS pixels.")


class Emulation(BaseModel):
    """What a test's browser context emulated (results.json's `emulation`): a device's options under the test's own
    keys. A test with none of them runs on the default desktop (1280x800) and has no emulation."""

    model_config = ConfigDict(frozen=True)

    device: str | None = None  # Playwright's device name, e.g. "iPhone 15"
    viewport: Viewport | None = None
    device_scale_factor: float | None = None
    is_mobile: bool | None = None
    has_touch: bool | None = None
    user_agent: str | None = None
    locale: str | None = None
    timezone: str | None = None
    color_scheme: ColorScheme | None = None

    def label(self) -> str:
        """One line for the reports: "iPhone 15, 393x659 at 3x, mobile, touch, locale de-DE"."""
        parts = [self.device] if self.device else []
        if self.viewport is not None:
            scale = f" at {self.device_scale_factor:g}x" if self.device_scale_factor not in (None, 1) else ""
            parts.append(f"{self.viewport.width}x{self.viewport.height}{scale}")
        parts += [word for word, on in (("mobile", self.is_mobile), ("touch", self.has_touch)) if on]
        parts += [f"{key} {value}" for key, value in (("locale", self.locale), ("timezone", self.timezone)) if value]
        if self.color_scheme is not None:
            parts.append(f"{self.color_scheme} color scheme")
        return ", ".join(parts)


def emulation_label(emulation: Emulation | None) -> str:
    """What a test's browser emulated, in words; the default desktop when nothing."""
    return "the default desktop (1280x800)" if emulation is None else emulation.label()


class StepInWords(BaseModel):
    """One agent step as a reviewer reads it: what it did, in words, and the page it ended on (results.json's
    `steps_in_words`, from the test's events.jsonl)."""

    number: int
    actions: list[str] = Field(default_factory=list)  # "Clicked button 'Pay now'", "Waited 1 s", "Reported: fail"
    page: str = ""  # the URL the step ended on
    error: str | None = None  # what the step's actions failed with
    not_run: list[str] = Field(default_factory=list)  # actions it chose that never ran, each with why
    screenshot: str | None = None  # the page after the step, relative to the results folder


class MailRead(BaseModel):
    """A mail the test read from its inbox (an `email` step, the agent's read_mail), as its event log holds it: its
    codes and link tokens already redacted."""

    address: str  # the test's own address
    subject: str
    sender: str = ""
    links: list[str] = Field(default_factory=list)
    received: str | None = None


class Verdict(BaseModel):
    """The final, fail-closed decision for one test and the exact reason for it."""

    status: Status
    reason: str
    causes: list[str] = Field(default_factory=list)  # further evidence behind the reason, most telling first


class Usage(BaseModel):
    """Tokens and cost the test's LLM calls consumed."""

    llm_calls: int = 0
    llm_requests: int = 0  # HTTP requests to the provider: a call's retries by its SDK each count
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None

    def __sub__(self, before: Usage) -> Usage:
        """What the calls between an earlier reading of the same counter (`before`) and this one spent."""
        cost = None if self.cost_usd is None else self.cost_usd - (before.cost_usd or 0.0)
        return Usage(
            llm_calls=self.llm_calls - before.llm_calls,
            llm_requests=self.llm_requests - before.llm_requests,
            prompt_tokens=self.prompt_tokens - before.prompt_tokens,
            completion_tokens=self.completion_tokens - before.completion_tokens,
            total_tokens=self.total_tokens - before.total_tokens,
            cost_usd=cost,
        )

    def __add__(self, other: Usage) -> Usage:
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            llm_requests=self.llm_requests + other.llm_requests,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cost_usd=sum(costs) if costs else None,
        )


class StepExecution(StrEnum):
    """How a test step ran (results.json's `step_results[].execution`)."""

    AGENT = "agent"  # the agent carried out the goal
    REPLAY = "replay"  # the goal's recording replayed, without the agent
    HEALED = "healed"  # its replay no longer matched the app, and the agent carried the goal out from there
    EXACT = "exact"  # an exact step (open, click, fill, select, press): code alone


class StepStatus(StrEnum):
    """How a test step ended: as a test does, or not run (a step before it failed)."""

    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    NOT_RUN = "not_run"


class StepResult(BaseModel):
    """One test step (a manifest's step; a `task:` test has one), as results.json's `step_results` tells it: not to be
    confused with an agent step (`steps`, `step-01.png`), whose numbers run on across a test's goals."""

    index: int  # from 1
    name: str
    kind: str  # do, open, click, fill, select, press
    status: StepStatus
    reason: str = ""
    duration_s: float = 0.0
    agent_steps: tuple[int, int] | None = None  # the first and last agent step of its goal; None: none ran
    usage: Usage = Field(default_factory=Usage)
    execution: StepExecution | None = None  # None: not run
    screenshot: str | None = None  # the page once the step's checks ran, relative to the results folder

    def words(self, total: int) -> str:
        """`step 2 of 4 'Open the cart'`: how the reports name it."""
        return f"step {self.index} of {total} {clip(self.name, 80)!r}"


class EvidenceSummary(BaseModel):
    """Counts and first occurrences of what went wrong in the browser while the test ran."""

    console_errors: int = 0
    page_errors: int = 0
    failed_requests: int = 0
    first_console_error: str | None = None
    first_page_error: str | None = None
    first_failed_request: str | None = None


class ProblemKind(StrEnum):
    """What went wrong on a page of the app, as the browser saw it (no LLM): what `explore` compares on both sides."""

    PAGE_ERROR = "page_error"  # an uncaught exception
    CONSOLE_ERROR = "console_error"
    HTTP_ERROR = "http_error"  # a same-origin request answered >= 400, or failed
    BROKEN_LINK = "broken_link"  # a same-origin link whose page answers >= 400 (with expect.links only)
    BROKEN_IMAGE = "broken_image"  # an image request that answered >= 400 or failed


class PageProblem(BaseModel):
    """One thing the browser saw go wrong on a page of the app while the test ran."""

    kind: ProblemKind
    page: str  # the URL path of the page it was seen on (no query: it may hold a secret)
    target: str | None = None  # the same-origin request's or link's path, no query
    status: int | None = None  # its HTTP status; None: it failed without one, or not a request
    message: str = ""  # clipped; redacted as every text of a result
    resource_type: str | None = None  # the request's (document, fetch, script, image...)


class OtherRun(BaseModel):
    """Another run of a test beside the one its result is: an earlier attempt a retry replaced, or its run on the
    baseline deployment."""

    status: Status
    reason: str
    causes: list[str] = Field(default_factory=list)
    duration_s: float = 0.0
    artifacts: dict[str, str | list[str]] = Field(default_factory=dict)  # that run's own evidence
    attempt: int | None = None  # --repeat-each: which run of the test it was (its result is one of the others)


class ProofVerdict(StrEnum):
    """What proving a passing test against mutations of the preview says about the test (--prove; verdict/proof.py)."""

    PROVEN = "proven"  # it failed under a mutation of what the app does (or, with no request to break, of its page)
    WEAK = "weak"  # it failed only when its page broke: its checks look at the page, not at what the app did
    VACUOUS = "vacuous"  # it passed under every mutation: it would stay green with the app broken
    NOT_PROVEN = "not_proven"  # no mutation could decide (reason says why): never counted as vacuous


class MutationOutcome(BaseModel):
    """One mutation of the preview, replayed: whether the test `failed` under it (caught it), `passed` (survived),
    `errored` (the replay could not be judged) or `not_applied` (it met no request of the replay), and why."""

    name: str  # "POST /api/settings answers 500"
    outcome: str  # failed | passed | errored | not_applied
    reason: str


class Proof(BaseModel):
    """A passing test's proof (results.json's `proof`): its verdict, why, and each mutation's outcome."""

    verdict: ProofVerdict
    reason: str
    mutations: list[MutationOutcome] = Field(default_factory=list)
    cached: bool = False  # taken from the cache: same recording, same preview content


FINAL_SHOT = "final"  # among a run's screenshots to compare (expect.visual), the final page's; a step's is its number


class VisualShot(BaseModel):
    """One screenshot of the PR's run compared with the default branch's (expect.visual): which step, the share of
    pixels that differ, and the images (paths relative to the results folder, once written)."""

    step: int | Literal["final"]
    diff_ratio: float
    diff: str | None = None  # changed pixels in red over a faded copy of the default branch's page
    before: str | None = None  # the default branch's screenshot
    after: str | None = None  # this PR's
    size_problem: str | None = None  # both sizes, when they differ
    over: bool = False  # over the test's max_diff
    label: str | None = None  # a test written as steps: the test step it shows, "step 2 of 4 'Open the cart'"

    def where(self) -> str:
        return "the final page" if self.step == "final" else self.label or f"step {self.step}"


def changed_line(shot: VisualShot) -> str:
    """`the page looks different from the default branch at step 3 (2.4% of pixels)`."""
    how = shot.size_problem or f"{shot.diff_ratio:.1%} of pixels"
    return f"the page looks different from the default branch at {shot.where()} ({how})"


class TestResult(BaseModel):
    """Everything a reporter needs to know about one finished (or never-started) test."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    name: str
    file: str
    line: int
    status: Status
    reason: str
    causes: list[str] = Field(default_factory=list)
    duration_s: float = 0.0
    steps: int = 0
    execution: Execution = Field(default=Execution.AGENT, alias="path")
    agent_report: dict[str, Any] | None = None  # the agent's own structured report, if it gave a valid one
    expectations: list[ExpectationOutcome] = Field(default_factory=list)
    evidence: EvidenceSummary = Field(default_factory=EvidenceSummary)
    usage: Usage = Field(default_factory=Usage)
    artifacts: dict[str, str | list[str]] = Field(default_factory=dict)  # paths relative to the output folder
    final_url: str | None = None
    secrets_blocked: list[str] = Field(default_factory=list)  # each secret stopped on its way off the allowed hosts
    replay_drift: str | None = None  # "replay drifted at step 3: ...": where a cached recording stopped matching the app
    setup_only: bool = False  # run only as the setup test of a selected one (--only, --shard): merge prefers another copy
    attempts: int = 1  # runs of the test on the preview; the result is the last one's (usage and duration: all)
    flaky: bool = False  # it passed after an earlier attempt did not (--repeat-each: it passed on some runs, not all)
    passes: int | None = None  # --repeat-each: how many of its `attempts` passed
    shown_attempt: int | None = None  # --repeat-each: which run this result is (its last pass, if any), else the last
    healed: bool = False  # its replay drifted on the page (fell_back: page_changed) and the agent then passed it
    fell_back: FallBack | None = None  # why its replay handed it to the agent (path replay-fell-back)
    earlier_attempts: list[OtherRun] = Field(default_factory=list)  # attempt 1, 2, ... before the last
    baseline: OtherRun | None = None  # how it ended on the baseline, for a test that failed or errored on the preview
    regression: bool | None = None  # compared with the baseline: true when it passed there
    steps_in_words: list[StepInWords] = Field(default_factory=list)  # its last run's, when its events are on disk
    emulation: Emulation | None = None  # the device, viewport, locale... its browser emulated; None: the default desktop
    proof: Proof | None = None  # with --prove, for a test that passed: would it fail if the app broke? (verdict/proof.py)
    visual: list[VisualShot] = Field(default_factory=list)  # expect.visual's comparisons, in step order
    visual_accepted: bool = False  # its difference was accepted for this PR (--accept-visual)
    step_results: list[StepResult] = Field(default_factory=list)  # its test steps (one for a task), in order
    problems: list[PageProblem] = Field(default_factory=list)  # what went wrong on its pages, in order (capped)
    problems_left_off: int = 0  # problems seen past the cap of `problems` (verdict/checks/problems.py)
    links: list[str] = Field(default_factory=list)  # with expect.links: the same-origin links its final page showed
    mails: list[MailRead] = Field(default_factory=list)  # the mails it read, in order (from its events.jsonl)
    persona: str | None = None  # the persona this run of a test with `as:` ran as (its name ends in [persona])
    after_failed: list[str] = Field(default_factory=list)  # its after: requests that failed: a warning, not its verdict

    quotes: list[QuoteCheck] = Field(default_factory=list)  # the agent's quotes, each looked up in what the pages showed
    unverified: str | None = None  # a pass on the agent's word alone: why (no quote, no page check of its own...)
    # the page text the agent reported as addressed to it (an instruction, a note to "QA agents"), each looked up
    addressed: list[QuoteCheck] = Field(default_factory=list)
    steered: str | None = None  # a pass its own checks held although a page addressed the agent: the warning
    checked: bool = False  # it passed, and a deterministic page check of its own held (--fail-on unchecked)
    second_look: str | None = None  # the judge's second look at its quotes: asked and found, or skipped and why

    @property
    def written_as_steps(self) -> bool:
        """More than one test step: the reports name them ("step 2 of 4 'Open the cart'"); a task reads as before."""
        return len(self.step_results) > 1

    @property
    def healed_line(self) -> str:
        """What the agent did in place of the replay, from the steps it took itself (a healed goal's, never the
        replayed ones before it): "the agent passed in 2 step(s) of its own", and in a test written as steps "the agent
        passed step 5 of 7 in 2 agent step(s) of its own"; "" for a test that did not heal."""
        healed = [s for s in self.step_results if s.execution is StepExecution.HEALED]
        if not self.healed or not healed:
            return ""
        made = sum(s.agent_steps[1] - s.agent_steps[0] + 1 for s in healed if s.agent_steps)
        if not self.written_as_steps:
            return f"the agent passed in {made} step(s) of its own"
        which = ", ".join(f"step {s.index} of {len(self.step_results)}" for s in healed)
        return f"the agent passed {which} in {made} agent step(s) of its own"

    @property
    def how_run(self) -> str:
        """How it ran, with its LLM calls, for the console and the job summary: "replayed (0 LLM calls)", "agent (6 LLM
        calls)", "replay → agent (7 LLM calls)"; "" for a test that never ran."""
        if self.execution is Execution.NOT_RUN:
            return ""
        calls = self.usage.llm_calls
        return f"{EXECUTION_WORDS[self.execution]} ({calls} LLM call{'' if calls == 1 else 's'})"

    @property
    def fails_on_baseline_too(self) -> bool:
        return self.baseline is not None and self.baseline.status is Status.FAILED

    @property
    def blocks_on_regressions(self) -> bool:
        """Under `--fail-on regressions`: errored, or failed without having failed on the baseline too. A failure the
        baseline could not confirm (it errored there, or was never compared) blocks: not knowing is not a pass."""
        return self.status is Status.ERRORED or (self.status is Status.FAILED and not self.fails_on_baseline_too)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        """--repeat-each: the share of its runs that passed."""
        return None if self.passes is None else round(self.passes / self.attempts, 3)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def changed(self) -> str | None:
        """How it looks different from the default branch (the first screenshot over max_diff), unless accepted."""
        over = next((v for v in self.visual if v.over), None)
        return None if over is None or self.visual_accepted else changed_line(over)

    @property
    def marks(self) -> list[str]:
        """Short notes every reporter shows beside the status: flaky, regression, failing on the baseline too."""
        marks = []
        if self.healed:
            marks.append("healed: the replay drifted, the agent passed")
        elif self.fell_back is not None:
            marks.append(f"fell back, not healed: {self.fell_back.words}")
        if self.passes is not None:
            marks.append(f"{'flaky: ' if self.flaky else ''}passed {self.passes} of {self.attempts} runs ({self.pass_rate:.0%})")
        elif self.flaky:
            marks.append(f"flaky: passed on attempt {self.attempts}")
        elif self.attempts > 1:
            marks.append(f"{self.attempts} attempts")
        if self.proof is not None and self.proof.verdict in (ProofVerdict.VACUOUS, ProofVerdict.WEAK):  # --prove
            marks.append(f"{self.proof.verdict.value}: {self.proof.reason}")
        if self.unverified and self.status is Status.PASSED:
            marks.append(self.unverified)
        if self.steered and self.status is Status.PASSED:
            marks.append(f"warning: {self.steered}; its own checks held")
        marks += [f"warning: {line}" for line in self.after_failed]  # the cleanup's failure, whatever the verdict
        if self.changed:
            marks.append(f"changed: {self.changed}")
        if self.regression:
            marks.append("regression: passed on the baseline")
        elif self.baseline is not None:
            marks.append(
                f"{self.baseline.status.value} on the baseline too"
                if self.baseline.status is self.status
                else f"{self.baseline.status.value} on the baseline"
            )
        return marks


class PlannedRoute(BaseModel):
    """Issue #39: a route the change touched that no test covers, the changed files behind it, and why it has no draft."""

    route: str
    files: list[str] = Field(default_factory=list)
    note: str = ""  # e.g. "needs a value for [slug]: no link to one found on the preview"


class PlanSummary(BaseModel):
    """What `run --plan` adds to a run (the PR comment's "Changed routes with no test"): the drafts that passed their
    trial as manifest YAML, and the others with why they are not proposed."""

    routes: list[PlannedRoute] = Field(default_factory=list)
    yaml: str = ""  # empty: no draft passed
    dropped: dict[str, str] = Field(default_factory=dict)  # draft name -> why it is not proposed
    notes: list[str] = Field(default_factory=list)  # the files that map to no route, the routes a test covers
    usage: Usage = Field(default_factory=Usage)
    mapped: int = 0  # routes the change maps to, covered or not
    tried: int = 0  # drafts tried on the preview
    stopped: str | None = None  # why nothing could be planned: the preview or the LLM did not answer, or no route got
    # a draft to try (its login failed, the LLM answered prose...): plan exits 1


class RunResult(BaseModel):
    """A whole run: its tests in manifest order and its totals."""

    manifest: str
    base_url: str
    started_at: str
    duration_s: float = 0.0
    tests: list[TestResult] = Field(default_factory=list)
    stop_reason: StopReason = StopReason.COMPLETED
    notice: str | None = None  # one run-level message for people, e.g. "preview unreachable: ..." or "cancelled"
    baseline_url: str | None = None  # where failed and errored tests ran once more (--baseline-url)
    warnings: list[str] = Field(default_factory=list)  # about the whole run (RunWarning): the preview, the model
    baseline_error: str | None = None  # why they could not, e.g. the baseline was unreachable
    plan: PlanSummary | None = None  # `run --plan` (issue #39): planning after the tests
    explore: ExploreResult | None = None  # `run --explore` (issue #68): the exploration after the tests

    @property
    def status(self) -> Status:
        return Status.worst([t.status for t in self.tests])

    def count(self, status: Status) -> int:
        return sum(1 for t in self.tests if t.status is status)

    @property
    def usage(self) -> Usage:
        return sum((t.usage for t in self.tests), Usage())

    @property
    def regressions(self) -> list[TestResult]:
        return [t for t in self.tests if t.regression]

    @property
    def flaky(self) -> list[TestResult]:
        return [t for t in self.tests if t.flaky]

    @property
    def healed(self) -> list[TestResult]:
        return [t for t in self.tests if t.healed]

    @property
    def unverified(self) -> list[TestResult]:
        """The tests that passed on the agent's word alone: no quote found on a page, no page check of their own."""
        return [t for t in self.tests if t.unverified and t.status is Status.PASSED]

    @property
    def unchecked(self) -> list[TestResult]:
        """The tests that passed with no deterministic page check of their own that held: on an LLM's word (the agent's,
        or a replay's page check), its quotes at best."""
        return [t for t in self.tests if t.status is Status.PASSED and not t.checked]

    def proved(self, *verdicts: ProofVerdict) -> list[TestResult]:
        """The tests whose proof (--prove) ended in one of `verdicts`."""
        return [t for t in self.tests if t.proof is not None and t.proof.verdict in verdicts]

    @property
    def changed(self) -> list[TestResult]:
        """The tests that look different from the default branch (expect.visual), not accepted."""
        return [t for t in self.tests if t.changed]

    @property
    def fell_back(self) -> list[TestResult]:
        """The tests whose replay fell back to the agent without healing (an unusable LLM answer, our own error...)."""
        return [t for t in self.tests if t.fell_back is not None and not t.healed]


class FindingKind(StrEnum):
    """What `explore` found: a problem the browser saw (ProblemKind's), an axe-core violation, a visual change, or an
    agent's report."""

    PAGE_ERROR = "page_error"
    CONSOLE_ERROR = "console_error"
    HTTP_ERROR = "http_error"
    BROKEN_LINK = "broken_link"
    BROKEN_IMAGE = "broken_image"
    ACCESSIBILITY = "accessibility"
    VISUAL = "visual"
    AGENT = "agent"


class Finding(BaseModel):
    """One thing `explore` found wrong on the preview. It counts (`confirmed`) only when it is not on the baseline and
    its repro, an ordinary test, failed on the preview for that check and passed on the baseline."""

    kind: FindingKind
    url: str  # the page's path on both deployments
    summary: str  # one line: what is wrong
    on_baseline: bool  # the baseline's same page shows it too: not this PR's doing
    confirmed: bool
    reason: str  # why it is confirmed, or why not
    evidence: dict[str, Any] = Field(default_factory=dict)  # the message or request, screenshot paths
    repro: dict[str, Any]  # the test as a manifest mapping, ready to paste into qa.yml

    @property
    def breaks(self) -> bool:
        """This PR breaks it: new, and its repro confirmed it."""
        return self.confirmed and not self.on_baseline


class ExploreResult(BaseModel):
    """`preview-qa explore`: the pages swept on both deployments and what was found."""

    base_url: str
    baseline_url: str
    started_at: str
    duration_s: float = 0.0
    pages: list[str] = Field(default_factory=list)  # the paths swept, in the order they were found
    findings: list[Finding] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # what was left out and why: pages past --max-pages, a side down
    runs: list[str] = Field(default_factory=list)  # each run's results folder, relative to the output folder
    manifests: dict[str, str] = Field(default_factory=dict, exclude=True)  # the runs' manifests: file name -> YAML
    # pages whose sweep errored on a side (the preview or the baseline down, a crash), or whose agent charter gave
    # nothing to go on (the LLM down, no usable report): never "nothing broken"
    uncompared: dict[str, str] = Field(default_factory=dict)
    charters: dict[str, str] = Field(default_factory=dict)  # each page an agent used as a user would: what it reported
    usage: Usage = Field(default_factory=Usage)  # the LLM calls of the charters and their repros

    @property
    def breaks(self) -> list[Finding]:
        return [f for f in self.findings if f.breaks]

    @property
    def fails(self) -> bool:
        """The PR breaks something, or a page could not be compared: not knowing is not a pass."""
        return bool(self.breaks or self.uncompared)


# How the verdict words the causes that structured data also holds: the failure card shows that data (a table of
# checks, the evidence) and leaves these lines out, so each fact is said once.

REASON_LIMIT = 500


def check_line(e: ExpectationOutcome) -> str:
    """A failed expectation as a cause."""
    waited = f" after waiting {e.timeout_s:g} s" if e.timeout_s else ""  # a failed check waited out its timeout
    return one_line(f"expectation {e.check} failed: expected {e.expected}, found {e.found}{waited}", REASON_LIMIT)


def evidence_lines(ev: EvidenceSummary) -> list[str]:
    """The first of each kind of browser error, and how many more of that kind the event log holds."""
    out = []
    for first, count, label in (
        (ev.first_page_error, ev.page_errors, "the page threw an uncaught exception"),
        (ev.first_failed_request, ev.failed_requests, "a request failed"),
        (ev.first_console_error, ev.console_errors, "console error"),
    ):
        if first:
            out.append(one_line(f"{label}: {first}{f' ({count - 1} more in events.jsonl)' if count > 1 else ''}", REASON_LIMIT))
    return out


def agent_said_pass_line(reason: str) -> str:
    """The agent's pass, as a cause of a failure its checks found."""
    return one_line(f"the agent said pass: {reason}", REASON_LIMIT)


# Shortening text for one-line messages: the same rules in every reason, event and report.


def clip(text: str, limit: int) -> str:
    """At most `limit` characters; a cut one ends with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str, limit: int) -> str:
    """Whitespace (line breaks included) folded to single spaces, then clipped."""
    return clip(" ".join(text.split()), limit)


def error_line(error: object, limit: int = 300) -> str:
    """An exception's text on one line, cut (without an ellipsis) at `limit`."""
    return " ".join(str(error).split())[:limit]
