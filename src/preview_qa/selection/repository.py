"""The repository the changed files are paths of: read from disk (the checkout holding the working directory), or from
memory (the demo, the tests); paths are relative to its root, as git and GitHub name them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol


class Repository(Protocol):
    """What route mapping reads of a repository: a file's text, whether a file or a folder is there, a folder's names."""

    def read(self, path: str) -> str | None: ...

    def is_file(self, path: str) -> bool: ...

    def is_dir(self, path: str) -> bool: ...

    def names(self, folder: str) -> list[str]: ...


class DiskRepository:
    """The checkout at `root` (by default the one holding the working directory: the nearest folder with `.git` above
    it, else the working directory itself)."""

    def __init__(self, root: Path | None = None):
        self.root = root if root is not None else checkout_root(Path.cwd())

    def read(self, path: str) -> str | None:
        try:
            return (self.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    def is_file(self, path: str) -> bool:
        return (self.root / path).is_file()

    def is_dir(self, path: str) -> bool:
        return (self.root / path).is_dir()

    def names(self, folder: str) -> list[str]:
        """The names in a folder (none when it is not there)."""
        try:
            return sorted(p.name for p in (self.root / folder).iterdir())
        except OSError:
            return []


class MemoryRepository:
    """A repository given as its files' texts (path -> text); a folder is there when a file is under it."""

    def __init__(self, files: Mapping[str, str]):
        self.files = dict(files)

    def read(self, path: str) -> str | None:
        return self.files.get(path)

    def is_file(self, path: str) -> bool:
        return path in self.files

    def is_dir(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/" if path else ""
        return any(name.startswith(prefix) for name in self.files)

    def names(self, folder: str) -> list[str]:
        prefix = folder.rstrip("/") + "/" if folder else ""
        return sorted({name[len(prefix) :].split("/")[0] for name in self.files if name.startswith(prefix)})


SKIPPED = ("node_modules",)  # a folder walk() never enters, as no dot-folder either (.git, .next, .nuxt, .svelte-kit)


def walk(repo: Repository, folder: str) -> list[str]:
    """Every file under `folder` (repository paths, sorted), its installed packages and dot-folders left out."""
    found = []
    for name in repo.names(folder):
        path = f"{folder}/{name}" if folder else name
        if repo.is_file(path):
            found.append(path)
        elif not name.startswith(".") and name not in SKIPPED and repo.is_dir(path):
            found += walk(repo, path)
    return found


def checkout_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding `.git` (a folder, or a worktree's file); else `start`: git diff
    names files from there, whichever folder preview-qa runs in."""
    for folder in [start, *start.parents]:
        if (folder / ".git").exists():
            return folder
    return start
