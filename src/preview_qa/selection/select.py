"""Which tests a run reports, and which of those it skips: --only, --tag/--skip-tag, changed files, then --shard."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field

from preview_qa.config import RunConfig
from preview_qa.errors import SelectionError
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.manifest.setup_tests import with_setup_tests
from preview_qa.selection.impact import Visited, impact
from preview_qa.selection.route import Route
from preview_qa.selection.shard import in_shard

NOT_CHANGED = "no changed file under its paths"


@dataclass(frozen=True)
class Selection:
    """The tests the run reports, in manifest order, and why the selection skips some of them."""

    tests: list[TestSpec]
    skipped: dict[str, str] = field(default_factory=dict)  # test name -> reason
    setups: set[str] = field(default_factory=set)  # tests run only because a selected one starts from their state
    notes: list[str] = field(default_factory=list)  # what --impacted says about the whole run
    untested: list[Route] | None = None  # with --impacted: the changed routes no test starts on or visits
    mapped: int = 0  # with --impacted: the routes the change maps to, covered or not

    def skip_reason(self, spec: TestSpec) -> str | None:
        """The manifest's own `skip:` first (its reason is the author's), then the selection's."""
        return spec.skip_reason or self.skipped.get(spec.name)

    @property
    def runs(self) -> list[TestSpec]:
        """The tests the run runs (the setup tests they start from among them): only these need their secrets."""
        return [spec for spec in self.tests if self.skip_reason(spec) is None]

    @property
    def spending(self) -> list[TestSpec]:
        """The tests the run runs that may call the LLM: only these can spend a cost budget (a run of exact steps
        spends nothing, whatever the model's price)."""
        return [spec for spec in self.runs if spec.calls_llm]


def select(manifest: Manifest, config: RunConfig, visited: Visited | None = None) -> Selection:
    """The one place that decides, in this order: names and tags choose the tests (the others are not reported);
    changed files mark the chosen tests whose paths match none of them as skipped (reported, with the reason), and with
    --impacted those without paths that visit no page the change touches (`visited`: the pages each test's recording
    visited, as the engine hands them over; None: no recording is read);
    then --shard takes its share of the tests to run and, apart, of the skipped ones, so each shard's run is balanced
    and `merge` sees every test exactly once; last, the setup tests that the tests left to run need (use_state) are
    added, or no longer skipped (`merge` prefers the run of a test in its own shard)."""
    tests = _chosen(manifest, config)
    skipped = _not_changed(tests, config.changed_files)
    found = None
    if config.impacted and config.changed_files is not None:
        found = impact(tests, config.changed_files, manifest.routes, visited, config)
        skipped |= found.skipped
    if config.shard is not None:
        runs = in_shard([t.name for t in tests if t.name not in skipped], *config.shard)
        keep = set(runs) | set(in_shard([t.name for t in tests if t.name in skipped], *config.shard))
        tests = [t for t in tests if t.name in keep]
        skipped = {name: reason for name, reason in skipped.items() if name in keep}
    selection = _with_setups(manifest, tests, skipped)
    _on_a_preview(manifest, config, selection.runs)
    if found is None:
        return selection
    return dataclasses.replace(selection, notes=found.notes, untested=found.untested, mapped=found.mapped)


def _on_a_preview(manifest: Manifest, config: RunConfig, tests: list[TestSpec]) -> None:
    """A test for an app with no preview URL cannot run (never on another app's preview), nor one without app: when
    only the apps' previews were given: the run is refused first."""
    for spec in tests:
        if spec.app is None and config.url_of(None) is None and "://" not in spec.start:
            raise SelectionError(
                f"{manifest.path}:{spec.line}: test {spec.name!r} has no app:, and --base-url gave only apps' previews: "
                "give the plain preview too (--base-url URL), or the test's app: NAME."
            )
        if spec.app is not None and config.url_of(spec.app) is None:
            raise SelectionError(
                f"{manifest.path}:{spec.line}: test {spec.name!r} is for app {spec.app!r}, which has no preview URL: give "
                f"--base-url {spec.app}=URL, or apps: {{{spec.app}: URL}} in the manifest."
            )


def _with_setups(manifest: Manifest, tests: list[TestSpec], skipped: dict[str, str]) -> Selection:
    needed = {t.name for t in with_setup_tests(manifest.tests, [t for t in tests if t.name not in skipped])}
    chosen = {t.name for t in tests}
    return Selection(
        [t for t in manifest.tests if t.name in chosen | needed],
        {name: reason for name, reason in skipped.items() if name not in needed},
        needed - chosen,
    )


def chosen(manifest: Manifest, config: RunConfig) -> list[TestSpec]:
    """The tests --only, --tag and --skip-tag choose and the setup tests they start from, less those the manifest
    skips: whose secrets `validate` checks when given the same flags (it knows no preview and no changed files)."""
    return [spec for spec in with_setup_tests(manifest.tests, _chosen(manifest, config)) if spec.skip_reason is None]


def _chosen(manifest: Manifest, config: RunConfig) -> list[TestSpec]:
    names = [t.name for t in manifest.tests]
    unknown = [name for name in config.only if name not in names]
    if unknown:
        raise SelectionError(f"--only names no test called {unknown[0]!r}{_nearest(unknown[0], names, config)}.")
    missing = [word for word in config.keywords if not any(_contains(name, word) for name in names)]
    if missing:
        raise SelectionError(
            f"-k {missing[0]!r}: no test's name contains it (case ignored){_nearest(missing[0], names, config, within=True)}."
        )
    tags = {tag for t in manifest.tests for tag in t.tags}
    for flag, given in (("--tag", config.tags), ("--skip-tag", config.skip_tags)):
        missing = [tag for tag in given if tag not in tags]
        if missing:
            known = ", ".join(sorted(tags)) or "none"
            raise SelectionError(f"{flag} {missing[0]!r}: no test in {config.manifest} has this tag (its tags: {known}).")
    tests = [
        t
        for t in manifest.tests
        if (not config.only or t.name in config.only)
        and (not config.keywords or any(_contains(t.name, word) for word in config.keywords))
        and (not config.tags or set(t.tags) & set(config.tags))
        and not set(t.tags) & set(config.skip_tags)
    ]
    if not tests:
        raise SelectionError(
            f"no test is left to run once --only, -k, --tag and --skip-tag are applied; check them against {config.manifest}."
        )
    return tests


def _contains(name: str, word: str) -> bool:
    """-k: `word` in `name`, case ignored (as pytest -k matches a plain word)."""
    return word.casefold() in name.casefold()


def _nearest(given: str, names: list[str], config: RunConfig, within: bool = False) -> str:
    """ "; did you mean 'Home page loads'?" with the manifest's names nearest to `given`, case ignored (`within`: -k's,
    a name with a run of words near it), else where the names are."""
    folded = given.casefold()
    if within:
        n = len(folded.split())
        near = [name for name in names if difflib.get_close_matches(folded, _runs(name.casefold(), n), n=1, cutoff=0.75)]
    else:
        by_fold = {name.casefold(): name for name in names}
        near = [by_fold[m] for m in difflib.get_close_matches(folded, list(by_fold), n=3, cutoff=0.6)]
    if not near:
        return f"; check the names in {config.manifest}"
    return f"; did you mean {' or '.join(map(repr, near[:3]))}?"


def _runs(name: str, n: int) -> list[str]:
    """The runs of `n` consecutive words of `name`."""
    words = name.split()
    return [" ".join(words[i : i + n]) for i in range(max(1, len(words) - n + 1))]


def _not_changed(tests: list[TestSpec], changed: list[str] | None) -> dict[str, str]:
    """The tests with `paths` that no changed file matches; a test without paths is never skipped by the change."""
    if changed is None:
        return {}
    return {t.name: NOT_CHANGED for t in tests if t.paths and not _covers(t.paths, changed)}


def _covers(paths: list[str], changed: list[str]) -> bool:
    from pathspec import GitIgnoreSpec  # only a run given changed files: not on every run's start

    spec = GitIgnoreSpec.from_lines(paths)
    return any(spec.match_file(path) for path in changed)
