"""The tools that only read, in this process: list_tests (the manifest), test_evidence (a run's results) and
export_test (a passing test's recording as a Playwright file's text)."""

from __future__ import annotations

from preview_qa.config import DEFAULT_CACHE
from preview_qa.errors import ExportError
from preview_qa.manifest import loader
from preview_qa.mcp.models import Evidence, Exported, ExportTestArgs, ListedTest, ListTestsArgs, TestEvidenceArgs, TestList
from preview_qa.mcp.results_file import ResultsFile
from preview_qa.mcp.settings import Settings


def list_tests(settings: Settings, args: ListTestsArgs) -> TestList:
    """The manifest's tests: names, tags, start, and the task or the steps."""
    path = settings.folder.existing_file(args.manifest, "manifest")
    manifest = loader.load(path)
    tests = []
    for spec in manifest.tests:
        written = spec.model_dump(mode="json", include={"task", "steps"}, exclude_none=True)
        tests.append(
            ListedTest(
                name=spec.name,
                line=spec.line,
                tags=spec.tags,
                start=spec.start,
                task=written.get("task"),
                steps=written.get("steps"),
                skip=spec.skip_reason,
            )
        )
    return TestList(manifest=settings.folder.shown(path), tests=tests)


def test_evidence(settings: Settings, args: TestEvidenceArgs) -> tuple[Evidence, bytes | None]:
    """A test's evidence from the last run (or the results given), and its final screenshot."""
    return ResultsFile(settings.folder, args.results).evidence(args.name)


def export_test(settings: Settings, args: ExportTestArgs) -> Exported:
    """The Playwright file of a test that passed after an agent run: from the results (default: the last run's), else,
    for a test the run replayed, from the replay cache's recording for the server's provider and model."""
    from preview_qa.engine.replay_cache import RecordingCache
    from preview_qa.export import Language, export_test, file_name, sources

    path = settings.folder.existing_file(args.manifest, "manifest")
    manifest = loader.load(path)
    spec = sources.find_test(manifest, args.name)
    results = ResultsFile(settings.folder, args.results)
    try:
        source, where = sources.from_results(results.path.parent, spec), settings.folder.shown(results.path.parent)
    except ExportError:
        cache = settings.folder.inside(DEFAULT_CACHE, "the replay cache")
        if args.results is not None or not cache.is_dir():
            raise
        recordings = RecordingCache(cache, manifest, settings.provider, settings.model)
        source, where = sources.from_cache(recordings, spec), settings.folder.shown(cache)
    language = Language(args.language)
    text = export_test(spec, source.history, source.origin, f"{settings.folder.shown(path)}:{spec.line}", language)
    return Exported(file_name=file_name(spec.name, language), language=args.language, source=where, text=text)
