"""Which app a changed file belongs to, and its framework: the nearest folder above it with a framework's config file
or a package.json (a monorepo has one per app), so that only that framework's conventions apply to it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum

from preview_qa.selection.repository import Repository


class Framework(Enum):
    """The frameworks whose file layout gives routes (their names as users know them)."""

    NUXT = "Nuxt"
    NEXT = "Next.js"
    SVELTEKIT = "SvelteKit"
    ASTRO = "Astro"
    REACT_ROUTER = "React Router"  # 7 in framework mode, and Remix on it: app/routes.ts
    REMIX = "Remix"  # 2: flat routes in app/routes/


_CONFIGS = [  # a config file names its framework outright; checked before package.json
    (Framework.REACT_ROUTER, "react-router.config"),
    (Framework.NUXT, "nuxt.config"),
    (Framework.NEXT, "next.config"),
    (Framework.SVELTEKIT, "svelte.config"),
    (Framework.ASTRO, "astro.config"),
    (Framework.REMIX, "remix.config"),
]
_CONFIG_EXTENSIONS = ("ts", "js", "mjs", "mts", "cjs", "cts")
_PACKAGES = [  # package.json's (dev)dependencies; the first found wins (React Router's before React's others)
    (Framework.REACT_ROUTER, "@react-router/dev"),
    (Framework.REMIX, "@remix-run/dev"),
    (Framework.NUXT, "nuxt"),
    (Framework.NEXT, "next"),
    (Framework.SVELTEKIT, "@sveltejs/kit"),
    (Framework.ASTRO, "astro"),
]
_MAJOR = re.compile(r"(\d+)")


@dataclass(frozen=True)
class App:
    """An app's root folder in the repository ('' for the root), its framework, and what was read to tell it."""

    root: str
    framework: Framework
    config: str | None  # the config file's path, if it has one
    major: int | None  # the framework's major version, from package.json's range ("^4.1.0" -> 4), when given

    def relative(self, file: str) -> str:
        """The file's path inside the app."""
        return file[len(self.root) + 1 :] if self.root else file

    def path(self, inside: str) -> str:
        """A path inside the app as a repository path."""
        return f"{self.root}/{inside}" if self.root else inside

    def config_text(self, repo: Repository) -> str:
        return (repo.read(self.config) if self.config else None) or ""


class Apps:
    """Finds each file's app, reading each folder once."""

    def __init__(self, repo: Repository):
        self.repo = repo
        self._seen: dict[str, App | None] = {}  # folder -> the app rooted there, or None when none is
        self._stops: dict[str, bool] = {}  # folder -> whether it has a package.json that names no framework

    def of(self, file: str) -> App | None:
        """The app holding `file`: the nearest folder above it that has a framework's config file or a package.json
        naming one. A package.json naming none ends the search there (the file is in a package that is no app)."""
        parts = file.split("/")[:-1]
        for depth in range(len(parts), -1, -1):
            folder = "/".join(parts[:depth])
            app = self._app_at(folder)
            if app is not None:
                return app
            if self._stops.get(folder):
                return None
        return None

    def _app_at(self, folder: str) -> App | None:
        if folder not in self._seen:
            self._seen[folder] = self._detect(folder)
        return self._seen[folder]

    def _detect(self, folder: str) -> App | None:
        join = (lambda name: f"{folder}/{name}") if folder else (lambda name: name)
        package = _read_json(self.repo.read(join("package.json")))
        deps = {**_deps(package, "devDependencies"), **_deps(package, "dependencies")}
        for framework, stem in _CONFIGS:
            config = next((join(f"{stem}.{ext}") for ext in _CONFIG_EXTENSIONS if self.repo.is_file(join(f"{stem}.{ext}"))), None)
            if config is not None:
                return App(folder, framework, config, _major(deps.get(_package_of(framework), "")))
        for framework, name in _PACKAGES:
            if name in deps:
                return App(folder, framework, None, _major(deps[name]))
        self._stops[folder] = package is not None
        return None


def _package_of(framework: Framework) -> str:
    return next(name for f, name in _PACKAGES if f is framework)


def _read_json(text: str | None) -> dict[str, object] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return {}  # a package.json that cannot be read is still a package's root
    return value if isinstance(value, dict) else {}


def _deps(package: dict[str, object] | None, key: str) -> dict[str, str]:
    found = (package or {}).get(key)
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _major(version_range: str) -> int | None:
    found = _MAJOR.search(version_range)
    return int(found.group(1)) if found else None
