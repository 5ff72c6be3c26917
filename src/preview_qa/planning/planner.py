"""Planning as one job on the run's browsers: the changed routes no test covers, each page read under the run's request
policy, drafts asked of the LLM (metered, scrubbed, within --run-max-cost-usd), then tried through the Runner like any test."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from preview_qa.app import Prepared, browser_setup
from preview_qa.config import RunConfig
from preview_qa.engine.saved_state import BrowserState
from preview_qa.engine.step_cache import opened, steps_visited
from preview_qa.errors import UnpricedBudgetError
from preview_qa.lifecycle import run_bounded, within
from preview_qa.manifest import loader
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.planning.drafts import INSTRUCTIONS, Drafted, Drafts, question, to_test
from preview_qa.planning.output import PROOF_NOT_RUN, PlanText, Proposed, render
from preview_qa.planning.pages import Pages, Unread
from preview_qa.providers import default_model
from preview_qa.results import PlannedRoute, PlanSummary, ProofVerdict, Status, TestResult, Usage
from preview_qa.selection.impact import covered_by
from preview_qa.selection.previews import Previews
from preview_qa.selection.repository import Repository
from preview_qa.selection.route import Route
from preview_qa.selection.routes import map_files
from preview_qa.verdict.agent_run import AgentRun

if TYPE_CHECKING:
    from preview_qa.agent.adapter.llm import RecordingLLM
    from preview_qa.agent.browser_agents import RunAgents

DEFAULT_MOST = 3  # drafts per route
LLM_DOWN = "not drafted: the LLM did not answer"


@dataclass(frozen=True)
class PlanOptions:
    """What to plan for: the changed files (None: no diff), routes given by hand, drafts per route, a cost budget."""

    changed_files: list[str] | None = None
    routes: list[str] = field(default_factory=list)
    most: int = DEFAULT_MOST
    max_cost_usd: float | None = None
    budget_flag: str = "--run-max-cost-usd"  # its name on the command line, for the refusal of a budget without a price
    repo: Repository | None = None  # where the changed files are read (by default the checkout holding the working folder)
    drafted_by: str = "preview-qa plan"  # the command, as the YAML's header names it
    given: str = "changed: given with --route"  # where the routes given came from, as the YAML says beside each draft


class Planner:
    """app.Planner: called with what the run prepared, returns the plan (its YAML in `yaml`)."""

    def __init__(self, manifest: Manifest, config: RunConfig, options: PlanOptions) -> None:
        """Refuses a budget on a model of unknown price at once, as a run does: before any test or browser starts."""
        from preview_qa.engine.pricing import find_price, unpriced

        self.manifest, self.config, self.options = manifest, config, options
        self._taken = {t.name for t in manifest.tests}  # test names in use: every draft of every route gets its own
        self._login: tuple[str, BrowserState] | str | None = None  # the saved login behind some routes, once run
        self._usage = Usage()  # the login's run
        provider, model = config.provider, default_model(config.provider, config.model)
        if options.max_cost_usd is not None and find_price(provider, model, config.price_per_mtok) is None:
            raise UnpricedBudgetError(unpriced(options.budget_flag, provider, model))

    def __call__(self, prepared: Prepared) -> PlanSummary:
        return run_bounded(self.plan(prepared))

    async def plan(self, prepared: Prepared) -> PlanSummary:
        from preview_qa.agent.adapter.llm import make_llm, recording_llm
        from preview_qa.agent.browser_agents import browser_agents
        from preview_qa.engine.preview import no_answer

        text = PlanText(self.config.previews, drafted_by=self.options.drafted_by, given=self.options.given)
        routes, mapped, previews = self._uncovered(prepared, text)
        summary = PlanSummary(routes=[PlannedRoute(route=r.shown, files=list(r.files)) for r in routes], notes=text.notes)
        summary.mapped = mapped
        if not routes:
            return summary
        bases = {route.shown: previews.of_route(route) for route in routes}
        on = [b for b in dict.fromkeys(bases.values()) if b]  # each preview a route is read on, asked once
        down = {b: silent for b in on if (silent := await no_answer(b, self.config.preview_headers))}
        if down and len(down) == len(on):  # every route's preview is down: nothing to plan
            return _stopped(summary, f"the preview did not answer ({'; '.join(down.values())})")
        llm = recording_llm(prepared.llm, prepared.redactor)
        setup = browser_setup(self.config)
        vision = self.config.vision_for(self.manifest.defaults.vision)
        async with browser_agents(setup, lambda: make_llm(prepared.llm), prepared.redactor, vision) as agents:
            pages = Pages(agents, prepared, self.config, self.manifest)
            drafted: list[Drafted] = []
            stops: list[str] = []  # why the preview or the LLM did not answer, route by route
            for route, planned in zip(routes, summary.routes, strict=True):
                base = bases[route.shown]
                if base is None:  # an app of several with no URL: never tried on another app's preview
                    planned.note = f"not drafted: {previews.unknown(route)}"
                    continue
                if base in down:  # its own preview did not answer (another app's did)
                    planned.note = f"not drafted: the preview did not answer ({down[base]})"
                    stops.append(planned.note)
                    continue
                found, why = await self._draft(pages, llm, prepared, route, base, text.dropped, stops)
                planned.note, drafted = why.why if isinstance(why, Unread) else why, drafted + found
                stops += [why.why] if isinstance(why, Unread) and not why.answered else []
            trials = await try_drafts(drafted, agents, self._trial_manifest(drafted), self.config, prepared, self._left(llm))
        _sort(drafted, trials, text)
        text.logins = self._logins([p.spec for p in text.proposed])
        for planned in summary.routes:
            tried = [d for d in drafted if d.route == planned.route]
            if tried:
                passed = sum(1 for p in text.proposed if p.route == planned.route)
                kept = "passed their trial run" + (" and are not vacuous" if self.config.prove else "")
                planned.note = f"{passed} of {len(tried)} draft(s) {kept}"
        summary.yaml, summary.tried = render(text, self._defaults_yaml()), len(drafted)
        summary.dropped = dict(text.dropped)
        summary.usage = llm.usage() + self._usage + sum((t.usage for t in trials.values()), Usage())
        if not drafted:  # routes needed a draft and none was tried: plan fails (exit 1) with the first cause
            summary.stopped = stops[0].removeprefix("not drafted: ") if stops else _none_tried(summary.routes)
        return summary

    def _uncovered(self, prepared: Prepared, text: PlanText) -> tuple[list[Route], int, Previews]:
        """The changed (and given) routes no test covers, static ones first (their pages' links give the dynamic ones
        a value), how many the change maps to, and the preview each is on; the others, and the files that map to none,
        as notes."""
        mapped = map_files(self.options.changed_files or [], self.manifest.routes, self.options.repo)
        given = [Route(r if r.startswith("/") else "/" + r) for r in self.options.routes]
        routes = list({r.shown: r for r in [*mapped.routes, *given]}.values())
        previews = Previews(self.config, routes)
        text.notes.extend(mapped.notes)
        if mapped.unmapped:
            text.notes.append(f"changed files that map to no route: {', '.join(mapped.unmapped)}")
        if mapped.no_page:
            text.notes.append(f"changed files the manifest's routes: says touch no page: {', '.join(mapped.no_page)}")
        visited = self._visited(prepared)
        left = []
        for route in routes:
            if by := covered_by(route, self.manifest.tests, visited, previews):
                text.notes.append(f"{route.shown} is covered: {by}")
            else:
                left.append(route)
        return sorted(left, key=lambda r: r.dynamic), len(routes), previews

    def _visited(self, prepared: Prepared) -> Callable[[TestSpec], list[str] | None]:
        """The pages a test's recording passed through, from the replay cache (none without one)."""
        from preview_qa.engine.replay_cache import RecordingCache

        if self.config.cache is None:
            return lambda _spec: None
        cache = RecordingCache(self.config.cache, self.manifest, prepared.llm.provider, self.config.model)

        def visited(spec: TestSpec) -> list[str] | None:
            if spec.steps is not None:  # its goals' recordings, and the pages it opens, recorded or not
                return steps_visited(spec, cache.lookup(spec)) or opened(spec) or None
            return found.pages() if (found := cache.load(spec)) else None

        return visited

    async def _draft(
        self,
        pages: Pages,
        llm: RecordingLLM,
        prepared: Prepared,
        route: Route,
        base: str,
        dropped: dict[str, str],
        stops: list[str],
    ) -> tuple[list[Drafted], str | Unread]:
        """The route's drafts, read and tried on `base` (its app's preview), that are valid tests (the others into
        `dropped`), and a note on the route (an Unread when the preview or the LLM did not answer)."""
        from preview_qa.agent.adapter.llm import ask

        if self._left(llm) == 0:
            return [], f"not drafted: the planning budget ({self.options.budget_flag}) is spent"
        if stops and stops[-1].startswith(LLM_DOWN):  # it did not answer for the route before: no call is worth making
            return [], Unread(stops[-1], answered=False)
        url = await pages.url_for(route, base)
        if isinstance(url, Unread):
            return [], url
        facts = await pages.visit(url)
        if isinstance(facts, Unread):
            return [], facts
        start, state = urlsplit(url).path or "/", None
        if not route.matches(urlsplit(facts.url).path):  # e.g. a sign-in page: read it again signed in, if we can
            landed = prepared.redactor.text(urlsplit(facts.url).path)
            login = await self._signed_in(pages.agents, prepared)
            again = await pages.visit(url, login[1]) if isinstance(login, tuple) else Unread(login)
            if isinstance(again, Unread) or not route.matches(urlsplit(again.url).path):
                why = again.why if isinstance(again, Unread) else f"signed in too, it led to {urlsplit(again.url).path}"
                return [], f"not drafted: its page led to {landed} (behind a login? {why})"
            facts, state = again, login[0]  # a tuple: the page matched signed in
        most = self.options.most
        scrub = prepared.redactor.text
        redacted = dataclasses.replace(facts, url=scrub(facts.url), title=scrub(facts.title), aria=scrub(facts.aria))
        redacted = dataclasses.replace(redacted, text=scrub(facts.text), headings=[scrub(h) for h in facts.headings])
        answer = await ask(llm, INSTRUCTIONS.format(most=most), question(route.label, redacted, most), Drafts)
        if answer is None:
            fault = llm.faults[-1] if llm.faults else None
            if fault is None or fault.kind == "provider":
                return [], Unread(f"{LLM_DOWN} ({fault.message if fault else 'no answer'})", answered=False)
            return [], f"no drafts: the LLM's answer was not usable ({fault.message})"
        found = []
        for draft in answer.drafts[:most]:
            test = to_test(draft, start, self.manifest, scrub, self._taken)
            if isinstance(test, str):
                dropped[draft.name or "(unnamed draft)"] = test
            else:  # a page read signed in starts from the same saved login; a named app's page, on its app
                app = self.config.app_name(route.app) if route.app else None
                found.append(Drafted(test.model_copy(update={"use_state": state, "app": app}), route.shown, route.files))
        return found, "" if found else "no draft was a valid test"

    async def _signed_in(self, agents: RunAgents, prepared: Prepared) -> tuple[str, BrowserState] | str:
        """The manifest's saved login (its first `save_state` test, run once as `run` runs it: a task by the agent, exact
        steps by Playwright, within its timeout, judged by the same final verdict), for the routes behind it; or why
        there is none."""
        from preview_qa.engine.agent_port import AgentRequest
        from preview_qa.engine.preview import origin_of
        from preview_qa.engine.runner import TEARDOWN_GRACE_S, allowed_hosts, start_url
        from preview_qa.verdict.final import Facts, final_verdict

        if self._login is not None:
            return self._login
        setup = next((t for t in self.manifest.tests if t.save_state is not None and t.use_state is None), None)
        if setup is None or setup.save_state is None:
            self._login = "planning reads pages signed out: the manifest saves no login (save_state)"
            return self._login
        kept: list[BrowserState] = []
        base = self.config.url_of(setup.app) or self.config.base_url
        if base is None:
            self._login = f"its login test '{setup.name}' is on no preview: it has no app:, and --base-url gave only apps'"
            return self._login
        request = AgentRequest(
            spec=setup,
            start_url=start_url(base, setup.start),
            origin=origin_of(base),
            allowed_hosts=allowed_hosts(base, setup),
            secrets=prepared.secrets.get(setup.name, {}),
            emit=lambda _e: None,
            keep_state=kept.append,
            base_url=base,  # where a step's `open: /path` leads
        )
        try:
            limit_s = browser_setup(self.config).start_budget_s + setup.timeout + TEARDOWN_GRACE_S
            run = await within(agents(request), limit_s)
        except TimeoutError:
            run = AgentRun(infrastructure_error=f"timed out after {setup.timeout:g} s (and its teardown hung)")
        self._usage += run.usage
        verdict = final_verdict(Facts(setup, run, state_read=bool(kept))).verdict
        if verdict.status is not Status.PASSED or not kept:
            self._login = f"its login test '{setup.name}' did not pass: {verdict.reason}"
            return self._login
        prepared.redactor.add(kept[0].secret_values(setup.save_state))  # its cookies, redacted like secrets
        self._login = (setup.save_state, kept[0])
        return self._login

    def _left(self, llm: RecordingLLM) -> float | None:
        """What is left of the planning budget (None: no budget)."""
        if self.options.max_cost_usd is None:
            return None
        return max(0.0, self.options.max_cost_usd - ((llm.usage() + self._usage).cost_usd or 0.0))

    def _defaults_yaml(self) -> dict[str, object]:
        """The manifest's defaults, so that the plan runs alone as it ran in its trial (a saved login's name left out:
        its setup test is not in the plan)."""
        return self.manifest.defaults.model_dump(mode="json", exclude_defaults=True, exclude={"use_state"})

    def _trial_manifest(self, drafted: list[Drafted]) -> Manifest | None:
        """The drafts as the YAML the reviewer gets, read back by the loader: what they run is what is proposed."""
        if not drafted:
            return None
        text = PlanText(self.config.previews, [Proposed(d.spec, d.route, d.files, "to try") for d in drafted])
        text.logins = self._logins([d.spec for d in drafted])
        return loader.loads(render(text, self._defaults_yaml()), "<drafts>")

    def _logins(self, specs: list[TestSpec]) -> list[dict[str, Any]]:
        """The manifest's login tests the drafts start from (use_state), as written: the plan carries them unchanged,
        so that it runs alone."""
        used = {s.use_state for s in specs if s.use_state is not None}
        return [self.manifest.as_written(t) for t in self.manifest.tests if t.save_state in used]


async def try_drafts(
    drafted: list[Drafted],
    agents: RunAgents,
    manifest: Manifest | None,
    config: RunConfig,
    prepared: Prepared,
    budget: float | None,
) -> dict[str, TestResult]:
    """Each draft run once by the Runner, as `run` runs a test (no cache, no retry, the rest of the budget for the
    run); with --prove, each that passed is proven as a test of the run is (engine/proof.py)."""
    from preview_qa.engine.runner import Runner

    if manifest is None:
        return {}
    trial = dataclasses.replace(
        config,
        only=[],
        keywords=[],
        tags=[],
        skip_tags=[],
        changed_files=None,
        shard=None,
        retries=0,
        baseline_url=None,
        cache=None,
        run_max_cost_usd=budget,
        wait_timeout=0.0,
    )
    secrets = loader.resolve_secrets(manifest, prepared.env)
    start_s = browser_setup(config).start_budget_s
    result = await Runner(manifest, trial, secrets, agents, lambda _e: None, prepared.redactor, browser_start_s=start_s).run()
    return {t.name: t for t in result.tests if any(d.spec.name == t.name for d in drafted)}


def _none_tried(routes: list[PlannedRoute]) -> str:
    """Why no route got a draft to try, in one line: the first route's reason (a failed login, an answer that was not
    usable, a page that answered 404...)."""
    first = routes[0]
    more = f"; {len(routes) - 1} more route(s) above" if len(routes) > 1 else ""
    return f"no draft was tried ({first.route}: {first.note.removeprefix('not drafted: ')}{more})"


def _stopped(summary: PlanSummary, why: str) -> PlanSummary:
    """Nothing could be planned: each route says why, and so does the summary (plan exits 1)."""
    for planned in summary.routes:
        planned.note = f"not drafted: {why}"
    summary.stopped = why
    return summary


def _sort(drafted: list[Drafted], trials: dict[str, TestResult], text: PlanText) -> None:
    """Each draft proposed when its trial passed (and, with --prove, it proves something), else dropped with why: a
    failure may be the PR's regression, an error says only that the draft could not be tried."""
    for d in drafted:
        result = trials[d.spec.name]
        proof = result.proof
        if result.status is Status.PASSED and proof is not None and proof.verdict is ProofVerdict.VACUOUS:
            text.dropped[d.spec.name] = f"passed its trial run but is vacuous: it {proof.reason}"
        elif result.status is Status.PASSED:
            words = PROOF_NOT_RUN if proof is None else f"{proof.verdict.value.replace('_', ' ')} ({proof.reason})"
            text.proposed.append(Proposed(d.spec, d.route, d.files, _ran(result), words))
        elif result.status is Status.FAILED:
            text.dropped[d.spec.name] = (
                f"did not pass its trial run (failed: {result.reason}): it may have found a regression the PR brought"
            )
        else:
            text.dropped[d.spec.name] = f"its trial run could not decide ({result.status.value}: {result.reason})"


def _ran(result: TestResult) -> str:
    return f"passed in {result.duration_s:.1f} s: {result.how_run}, {result.steps} step(s)"
