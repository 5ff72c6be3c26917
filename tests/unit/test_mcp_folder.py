"""The MCP server's folder: every path a tool is given resolves, symlinks included, inside the folder it started in."""

from __future__ import annotations

from pathlib import Path

import pytest

from preview_qa.mcp.folder import RUNS, Folder, ToolRefused


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "qa.yml").write_text("version: 1\n", encoding="utf-8")
    (tmp_path / "outside.yml").write_text("version: 1\n", encoding="utf-8")
    return root


def test_a_path_inside_the_folder_resolves(project: Path) -> None:
    folder = Folder(project)
    assert folder.existing_file("qa.yml", "manifest") == (project / "qa.yml").resolve()
    assert folder.inside(project / "tests" / "new.yml", "manifest") == (project / "tests" / "new.yml").resolve()
    assert folder.shown(folder.inside("tests/../qa.yml", "manifest")) == "qa.yml"


@pytest.mark.parametrize("given", ["../outside.yml", "/etc/passwd", "tests/../../outside.yml"])
def test_a_path_outside_is_refused_in_one_sentence(project: Path, given: str) -> None:
    with pytest.raises(ToolRefused, match=r"outside the folder the server started in .*; give a path inside it\.$"):
        Folder(project).inside(given, "manifest")


def test_a_symlink_out_of_the_folder_is_refused(project: Path) -> None:
    (project / "qa-link.yml").symlink_to(project.parent / "outside.yml")
    (project / "elsewhere").symlink_to(project.parent)
    folder = Folder(project)
    for given in ("qa-link.yml", "elsewhere/outside.yml"):
        with pytest.raises(ToolRefused, match="outside the folder"):
            folder.existing_file(given, "manifest")


def test_a_symlink_loop_is_refused(project: Path) -> None:
    (project / "loop").symlink_to(project / "loop")
    with pytest.raises(ToolRefused):
        Folder(project).existing_file("loop", "manifest")


def test_a_missing_file_is_refused(project: Path) -> None:
    with pytest.raises(ToolRefused, match=r"'nope\.yml' is not a file"):
        Folder(project).existing_file("nope.yml", "manifest")


def test_runs_are_numbered_and_the_last_one_with_results_is_read(project: Path) -> None:
    folder = Folder(project)
    with pytest.raises(ToolRefused, match="no run_tests call has written results"):
        folder.last_results()
    first, second, third = folder.new_run(), folder.new_run(), folder.new_run()
    assert [p.name for p in (first, second, third)] == ["1", "2", "3"]
    (second / "results.json").write_text("{}", encoding="utf-8")
    assert folder.last_results() == second / "results.json"  # the third (a plan) has none


def test_runs_are_never_written_through_a_symlink_out_of_the_folder(project: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (project / RUNS.parent).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ToolRefused, match="the runs folder"):
        Folder(project).new_run()
    assert list((tmp_path / "elsewhere").iterdir()) == []
