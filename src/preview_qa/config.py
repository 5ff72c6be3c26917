"""RunConfig: CLI flags > INPUT_* / environment > built-in defaults, in one typed place."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from preview_qa.providers import Provider
from preview_qa.results import ProofVerdict, RunResult, Status

DEFAULT_OUT = "preview-qa-results"
DEFAULT_CACHE = ".preview-qa-cache"
# one try of a browser's start; a healthy Chromium answers within a few seconds even on a busy 2-core runner
BROWSER_START_TIMEOUT_S = 30.0
WAIT_TIMEOUT_S = 120.0  # --wait-timeout's default (the action's too): a preview still deploying gets two minutes to answer
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


class FailOn(StrEnum):
    """--fail-on's words. One says which failing tests fail the run (the base: failed, errored, regressions or never);
    the others each add passing tests that fail it too, on top of the base (failed unless one is given)."""

    FAILED = "failed"  # a test failed or errored
    ERRORED = "errored"  # a test errored
    REGRESSIONS = "regressions"  # a test errored, or failed without failing on the baseline too
    NEVER = "never"  # no test fails the run
    HEALED = "healed"  # also a test that passed only because the agent healed its drifted replay
    VACUOUS = "vacuous"  # also a test that --prove found vacuous: it passes with the app broken
    VISUAL = "visual"  # also a test that looks different from the default branch (expect.visual)
    UNVERIFIED = "unverified"  # also a test that passed on the agent's word alone (verdict/quotes.py)
    # also a test that passed with no deterministic page check of its own that held: what no page can talk an agent
    # (or a page check's LLM) round, for required checks on pull requests from outside the team
    UNCHECKED = "unchecked"
    # also (`run --explore`) a new finding its repro confirmed, or a page the exploration could not compare on both
    # sides: not knowing is no pass
    FINDINGS = "findings"
    FLAKY = "flaky"  # also a flaky test: one that passed on a retry, or on some of its --repeat-each runs and not others

    @property
    def is_base(self) -> bool:
        return self in BASES

    def fails(self, run: RunResult) -> bool:
        """Whether the run fails under this word alone (an added one on top of `failed`)."""
        return FailRules((self,)).fails(run)

    def holds(self, run: RunResult) -> bool:
        """Whether the run has what this word names."""
        match self:
            case FailOn.FAILED:
                return run.status.rank >= Status.FAILED.rank
            case FailOn.ERRORED:
                return run.status is Status.ERRORED
            case FailOn.REGRESSIONS:  # a failure the baseline could not confirm blocks too: not knowing is no pass
                return any(t.blocks_on_regressions for t in run.tests)
            case FailOn.NEVER:
                return False
            case FailOn.HEALED:  # a release gate: a pass the agent rescued from a drifted replay is no pass
                return bool(run.healed)
            case FailOn.VACUOUS:
                return bool(run.proved(ProofVerdict.VACUOUS))
            case FailOn.VISUAL:
                return bool(run.changed)
            case FailOn.UNVERIFIED:
                return bool(run.unverified)
            case FailOn.UNCHECKED:
                return bool(run.unchecked)
            case FailOn.FINDINGS:
                return run.explore is not None and run.explore.fails
            case FailOn.FLAKY:
                return bool(run.flaky)


BASES = (FailOn.FAILED, FailOn.ERRORED, FailOn.REGRESSIONS, FailOn.NEVER)


@dataclass(frozen=True)
class FailRules:
    """--fail-on: at most one base word (failed unless given) and any added words, comma-separated
    (`regressions,visual`): the run fails when its base says so or any added word does."""

    rules: tuple[FailOn, ...] = (FailOn.FAILED,)  # as given, without repeats

    @classmethod
    def parse(cls, text: str) -> FailRules:
        """`failed`, or words separated by commas; ValueError naming what is wrong: an unknown word, two bases (one
        always covers or contradicts the other), `never` with an added word (a run that never fails cannot fail on it)."""
        names = [name.strip() for name in text.split(",") if name.strip()]
        known = [rule.value for rule in FailOn]
        unknown = [name for name in names if name not in known]
        if unknown or not names:
            raise ValueError(f"{', '.join(map(repr, unknown)) or 'nothing'} is not one of {', '.join(known)}")
        rules = tuple(dict.fromkeys(FailOn(name) for name in names))
        if FailOn.NEVER in rules and len(rules) > 1:
            raise ValueError("'never' cannot be combined with other rules: a run that never fails cannot fail on them")
        bases = [repr(rule.value) for rule in rules if rule.is_base]
        if len(bases) > 1:
            raise ValueError(
                f"{' and '.join(bases)} cannot be combined: give one of {', '.join(BASES)}, which says which failing "
                "tests fail the run, and add any of the others"
            )
        return cls(rules)

    @property
    def base(self) -> FailOn:
        """Which failing tests fail the run."""
        return next((rule for rule in self.rules if rule.is_base), FailOn.FAILED)

    def fails(self, run: RunResult) -> bool:
        return self.base.holds(run) or any(rule.holds(run) for rule in self.rules if not rule.is_base)

    def __contains__(self, rule: FailOn) -> bool:
        return rule in self.rules

    def __str__(self) -> str:
        return ",".join(rule.value for rule in self.rules)


class TraceMode(StrEnum):
    """Which tests keep a Playwright trace.zip (--trace), as Playwright's own option names them."""

    ON = "on"
    OFF = "off"
    RETAIN_ON_FAILURE = "retain-on-failure"  # recorded for every test, kept for those that failed or errored


class Vision(StrEnum):
    """--vision: whether screenshots go to the model. Auto sends them until the provider says the model takes no
    images, then sends none for the rest of the run (agent/adapter/vision.py)."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


TEST_MEMORY_MB = 250  # room for one more test at once: its context and page (37 MB measured on the demo: bench/speed.py)


def default_concurrency() -> int:
    """Tests at once by the machine: two a core (a test waits on its LLM and its pages most of its wall: at a real
    model's latency, 8 at once on 2 cores ran 16 tests several times faster than 1), within the memory free now at
    TEST_MEMORY_MB a test; at least 1. A GitHub-hosted Linux runner (4 cores, 16 GB) gives 8."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    free = _available_mb()
    return max(1, min(2 * cores, int(free // TEST_MEMORY_MB) if free is not None else 2 * cores))


def _available_mb() -> float | None:
    """The memory free for new work: the kernel's MemAvailable, within a container's own limit (cgroup v2); None
    where neither can be read."""
    found: list[float] = []
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            found += [int(line.split()[1]) / 1024 for line in meminfo if line.startswith("MemAvailable:")]
        limit, used = (Path("/sys/fs/cgroup") / name for name in ("memory.max", "memory.current"))
        if limit.is_file() and used.is_file() and limit.read_text().strip() != "max":
            found.append((int(limit.read_text()) - int(used.read_text())) / 2**20)
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def same_app(a: str, b: str) -> bool:
    """Whether two names are one app of a monorepo: its folder (apps/web), or that folder's name (web) for either."""
    return a == b or ("/" not in a and b.rsplit("/", 1)[-1] == a) or ("/" not in b and a.rsplit("/", 1)[-1] == b)


def preview_headers(extra_headers: dict[str, str], http_credentials: tuple[str, str] | None) -> dict[str, str]:
    """The extra headers and, with credentials, basic auth's Authorization header (sent at once, unasked)."""
    if http_credentials is None:
        return dict(extra_headers)
    token = base64.b64encode(":".join(http_credentials).encode("utf-8")).decode("ascii")
    return {**extra_headers, "Authorization": f"Basic {token}"}


def fall_back_recordings_kept(env: Mapping[str, str]) -> bool:
    """Whether the agent's recording after any fall-back (healed or not) may replace the one in the cache: always on
    one's own machine; in GitHub Actions only in a run on the repository's default branch, never in a pull request's
    (its drift may be the very regression under review, and whatever made it fall back, the recording that passed on
    the default branch is the one that replays there)."""
    return env.get("GITHUB_ACTIONS") != "true" or on_default_branch(env)


def on_default_branch(env: Mapping[str, str]) -> bool:
    """A GitHub Actions run on the repository's default branch (not a pull request's): only its screenshots become the
    visual reference a pull request is compared with (expect.visual)."""
    if env.get("GITHUB_ACTIONS") != "true" or env.get("GITHUB_EVENT_NAME") in PULL_REQUEST_EVENTS:
        return False
    return bool(env.get("GITHUB_REF_NAME")) and env.get("GITHUB_REF_NAME") == _default_branch(env)


def _default_branch(env: Mapping[str, str]) -> str | None:
    try:
        event = json.loads(Path(env.get("GITHUB_EVENT_PATH", "")).read_text(encoding="utf-8"))
        branch = event["repository"]["default_branch"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not knowing the default branch keeps the recording that is there
    return branch if isinstance(branch, str) else None


@dataclass
class RunConfig:
    """Everything `run` needs beyond the manifest."""

    manifest: Path
    base_url: str | None  # the preview of the tests without app:; None when only apps' previews were given
    # a monorepo's apps with previews of their own, name (apps/web, or web) -> URL: the manifest's apps:, then
    # --base-url NAME=URL; a test with `app:` runs on its app's
    app_urls: dict[str, str] = field(default_factory=dict)
    out: Path = Path(DEFAULT_OUT)
    provider: Provider = "openai"
    model: str | None = None
    api_key: str | None = None
    llm_base_url: str | None = None
    concurrency: int = field(default_factory=default_concurrency)
    chromium: str | None = None  # --browser-path; None: found as the run starts (agent/browsers/chromium.py)
    cdp_url: str | None = None  # --cdp-url: every test in this remote browser, none launched (agent/browsers/remote.py)
    headless: bool = True
    extra_headers: dict[str, str] = field(default_factory=dict)  # sent to the preview's origin only (agent/guards/network.py)
    http_credentials: tuple[str, str] | None = None  # (user, password) for HTTP basic auth, to the preview's origin only
    wait_timeout: float = 0.0  # seconds to wait for the preview to answer before the first test; 0 = do not wait
    only: list[str] = field(default_factory=list)  # run just these tests (by name)
    keywords: list[str] = field(default_factory=list)  # -k: run just the tests whose name contains one (case ignored)
    tags: list[str] = field(default_factory=list)  # run just the tests with any of these tags
    skip_tags: list[str] = field(default_factory=list)  # leave out the tests with any of these tags
    changed_files: list[str] | None = None  # files the change touched: tests whose paths match none are skipped
    impacted: bool = False  # --impacted: a test without paths runs only if the change touches a page it visits
    fail_on: FailRules = field(default_factory=FailRules)
    comment: bool = True  # in a GitHub pull request run: post or update the sticky PR comment
    cache: Path | None = None  # replay cache folder; None = always run the agent
    max_tokens: int | None = None  # per test, overriding the manifest
    max_cost_usd: float | None = None  # per test, overriding the manifest
    llm_timeout: float | None = None  # --llm-timeout: seconds per LLM call, per test, overriding the manifest
    max_output_tokens: int | None = None  # --max-output-tokens: what each LLM call may answer at most
    run_max_tokens: int | None = None  # for the whole run: no new test starts once it is spent
    run_max_cost_usd: float | None = None
    price_per_mtok: tuple[float, float] | None = None  # (input, output) USD per million tokens, over the bundled prices
    shard: tuple[int, int] | None = None  # (I, N): run only shard I of N (1-based)
    retries: int | None = None  # further attempts for a failed or errored test, overriding the manifest
    repeat_each: int = 1  # --repeat-each: each test's runs, each from scratch, none retried (engine/retries.py: repeated)
    baseline_url: str | None = None  # after the run, failed and errored tests run once more here
    trace: TraceMode = TraceMode.RETAIN_ON_FAILURE
    vision: Vision | None = None  # --vision: screenshots to the model (a text-only model takes none); None: not given
    browser_start_timeout: float = BROWSER_START_TIMEOUT_S  # seconds one try of a browser's start may take (2 tries)
    prove: bool = False  # --prove: replay each passing test against mutations of the preview (engine/proof.py)
    keep_fall_back_recordings: bool = True  # fall_back_recordings_kept: off in a pull request's run in GitHub Actions
    accept_visual: list[str] = field(default_factory=list)  # --accept-visual: tests whose visual change this PR means
    visual_references: bool = False  # on_default_branch: this run keeps its expect.visual screenshots as the reference

    def url_of(self, app: str | None) -> str | None:
        """The preview of a monorepo's app (by its folder or the folder's name): --base-url's plain URL for None; None
        when the app has no URL given."""
        if app is None:
            return self.base_url
        name = self.app_name(app)
        return None if name is None else self.app_urls[name]

    @property
    def previews(self) -> str:
        """The previews a run is on, in one line: the plain URL, then each app's (`web: https://web-pr-7.example`)."""
        return ", ".join([*([self.base_url] if self.base_url else []), *(f"{n}: {u}" for n, u in self.app_urls.items())])

    def app_name(self, app: str) -> str | None:
        """The name an app's preview URL was given under (`web` for apps/web), if one was."""
        return next((name for name in self.app_urls if same_app(name, app)), None)

    def vision_for(self, manifest_default: Vision | None) -> Vision:
        """--vision, else the manifest's `defaults.vision`, else auto."""
        return self.vision or manifest_default or Vision.AUTO

    @property
    def basic_auth_password(self) -> str | None:
        return self.http_credentials[1] if self.http_credentials else None

    @property
    def preview_headers(self) -> dict[str, str]:
        """What every request to the preview's origin (or the baseline's, on its runs) carries, and no other's."""
        return preview_headers(self.extra_headers, self.http_credentials)
