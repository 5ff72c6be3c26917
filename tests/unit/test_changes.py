"""The changed files: a list given by the user, or a pull request's files from git or a fake GitHub API (paginated)."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from preview_qa.errors import ChangedFilesError
from preview_qa.selection.changed_files import ChangedFiles, changed_files, pull_request_files, read_list
from tests.fakes.github import PR, REPO, TOKEN, FakeGitHub, runner_env


def test_a_list_is_one_path_a_line_from_a_file_or_stdin(tmp_path: Path) -> None:
    listed = tmp_path / "changed.txt"
    listed.write_text("src/a.py\r\n\n./docs/b.md\n  src/a.py  \n", encoding="utf-8")
    assert read_list(str(listed), io.StringIO()) == ["src/a.py", "docs/b.md"]
    assert read_list("-", io.StringIO("x/y.ts\n")) == ["x/y.ts"]
    with pytest.raises(ChangedFilesError, match=r"^--changed-files .*nope\.txt: no such file; give a file"):
        read_list(str(tmp_path / "nope.txt"), io.StringIO())


def test_an_empty_list_or_none_at_all_is_told_apart_and_said_with_what_the_command_does(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    run = (": a test with paths runs only if one matches", "; running every test")
    assert changed_files(str(empty), True, {}, io.StringIO()) == ChangedFiles([], str(empty))
    assert ChangedFiles([], str(empty)).said(*run) == f"the list of changed files ({empty}) is empty; running every test."
    unavailable = changed_files(None, True, {}, io.StringIO())
    assert unavailable == ChangedFiles(None, why_none="not in a GitHub Actions run (give the files with --changed-files)")
    assert unavailable.said(*run) == (
        "--changed-only: not in a GitHub Actions run (give the files with --changed-files); running every test."
    )
    assert changed_files(None, False, {}, io.StringIO()) == ChangedFiles(None) and ChangedFiles(None).said(*run) is None
    found = changed_files("-", True, {}, io.StringIO("a.py\n"))  # a given list wins over asking the pull request
    assert found.files == ["a.py"] and found.said("", "") == "1 changed file(s) from stdin."


def _files(count: int) -> list[dict[str, str]]:
    return [{"filename": f"src/file{i}.py", "status": "modified"} for i in range(count)]


def test_the_pull_requests_files_come_from_the_api_page_by_page_with_the_jobs_token(
    tmp_path: Path, httpserver: HTTPServer
) -> None:
    renamed = {"filename": "src/checkout/new.py", "previous_filename": "src/cart/old.py", "status": "renamed"}
    github = FakeGitHub(httpserver, pull_files=[*_files(120), renamed])
    files, origin = pull_request_files(runner_env(tmp_path, github.url))
    assert files is not None and len(files) == 122 and files[-2:] == ["src/checkout/new.py", "src/cart/old.py"]
    assert origin == f"the pull request's files (GitHub API, #{PR})"
    assert github.calls == [("GET", f"/repos/{REPO}/pulls/{PR}/files")] * 2
    pages = [(r.args["page"], r.args["per_page"], r.headers["Authorization"]) for r, _ in httpserver.log]
    assert pages == [("1", "100", f"Bearer {TOKEN}"), ("2", "100", f"Bearer {TOKEN}")]


@pytest.mark.parametrize(
    ("fake", "why"),
    [
        (
            {"deny": 403},
            f"could not list the pull request's files (HTTP 403 from GET /repos/{REPO}/pulls/{PR}/files: "
            "Resource not accessible by integration)",
        ),
        ({"pull_files": _files(3000)}, "the pull request changes 3000 or more files, more than GitHub's API lists"),
    ],
)
def test_when_the_api_cannot_give_the_whole_list_every_test_runs(
    tmp_path: Path, httpserver: HTTPServer, fake: dict, why: str
) -> None:
    github = FakeGitHub(httpserver, **fake)
    assert pull_request_files(runner_env(tmp_path, github.url)) == (None, why)


def test_a_push_has_no_pull_request(tmp_path: Path, httpserver: HTTPServer) -> None:
    github = FakeGitHub(httpserver)
    env = {**runner_env(tmp_path, github.url, event={"ref": "refs/heads/main"}), "GITHUB_EVENT_NAME": "push"}
    assert pull_request_files(env) == (None, "the push event has no pull request")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_with_the_history_checked_out_git_gives_the_files_without_any_api_call(tmp_path: Path) -> None:
    repo = tmp_path / "workspace"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "qa@example.com")
    _git(repo, "config", "user.name", "qa")
    (repo / "keep.py").write_text("a\n")
    (repo / "old.py").write_text("old\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "checkout", "-q", "-b", "feature")
    (repo / "src").mkdir()
    (repo / "src" / "new file.py").write_text("new\n")
    _git(repo, "mv", "old.py", "moved.py")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "change")
    head = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "main")
    (repo / "keep.py").write_text("changed on main after the branch: not the PR's change\n")
    _git(repo, "commit", "-q", "-am", "main moves on")
    event = {
        "number": PR,
        "pull_request": {"number": PR, "base": {"sha": _git(repo, "rev-parse", "HEAD")}, "head": {"sha": head}},
    }
    env = runner_env(repo, "http://127.0.0.1:9", event=event)  # an API call would fail: the port is closed
    files, origin = pull_request_files(env)
    assert (sorted(files or []), origin) == (["moved.py", "old.py", "src/new file.py"], "git diff of the pull request")
    # a shallow checkout (the default) has no merge base: git gives up and the API is asked
    shallow = {**event, "pull_request": {**event["pull_request"], "base": {"sha": "0" * 40}}}
    files, origin = pull_request_files(runner_env(repo, "http://127.0.0.1:9", event=shallow))
    assert files is None and origin.startswith("could not list the pull request's files (ConnectError")
