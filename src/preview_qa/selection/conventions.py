"""Each framework's file layout -> routes, inside the app a file belongs to: Next.js (app/ and pages/, with or without
src/), Nuxt 3 and 4 (its srcDir), SvelteKit, Astro, React Router 7's app/routes.ts and flat routes, Remix's flat
routes, and Django's urls.py. A layout, template, error page, middleware or root component maps to every route under
it (`Route.under`); one in a route group (`app/(marketing)/layout.tsx`, `src/routes/(app)/+layout.svelte`, Remix's
`_auth.tsx`), which adds no URL segment, to the pages in its group. Not-found and error pages are no routes of their
own. Each route knows its app, and the app's other routes (which serve a page before it when more specific)."""

from __future__ import annotations

import re
from collections.abc import Callable

from preview_qa.selection.apps import App, Apps, Framework
from preview_qa.selection.repository import Repository, walk
from preview_qa.selection.route import Route
from preview_qa.selection.routes_ts import RouteConfig, read_route_config

SCRIPT = r"(?:tsx|ts|jsx|js|mdx|md|mjs|mts)"
_NEXT_APP = re.compile(rf"^(?:src/)?app/(?:(.*)/)?([a-z-]+)\.{SCRIPT}$")
_NEXT_PAGE_FILES = {"page": False, "layout": True, "template": True, "error": True, "loading": True, "not-found": True,
                    "default": True, "global-error": True, "global-not-found": True, "forbidden": True,
                    "unauthorized": True}  # fmt: skip
_NEXT_PAGES = re.compile(rf"^(?:src/)?pages/(.*)\.{SCRIPT}$")
_NEXT_ROOT = re.compile(rf"^(?:src/)?(?:middleware|proxy|instrumentation(?:-client)?)\.{SCRIPT}$")
_NEXT_PAGES_EVERY = ("_app", "_document", "_error", "404", "500")
_SVELTEKIT = re.compile(r"^src/routes/(?:(.*)/)?\+(page|layout|error)(?:@[^.]*)?(?:\.server)?\.(?:svelte|ts|js)$")
_SVELTEKIT_ROOT = re.compile(r"^src/(?:app\.html|error\.html|hooks(?:\.server|\.client)?\.(?:ts|js))$")
_ASTRO_PAGE = re.compile(r"^src/pages/(.*)\.(?:astro|md|mdx|html|markdown)$")
_ASTRO_EVERY = ("404", "500")  # the not-found and error pages: shown for any URL, no route of their own
_ASTRO_ROOT = re.compile(rf"^src/(?:layouts/.*|middleware(?:/index)?\.{SCRIPT})$")
_VUE_PAGE = re.compile(r"^(.*)\.(?:vue|tsx|jsx|ts|js|mjs)$")
_NUXT_EVERY = re.compile(rf"^(?:(?:layouts|middleware|plugins)/.*|(?:app|error)\.vue|app\.config\.{SCRIPT})$")
_NUXT_SRC_DIR = re.compile(r"""\bsrcDir\s*:\s*["'`]([^"'`]+)["'`]""")
_NUXT_V4 = re.compile(r"compatibilityVersion\s*:\s*4\b")
_ROOT_MODULE = re.compile(rf"^(?:root|entry\.client|entry\.server)\.{SCRIPT}$")
_DJANGO_PATH = re.compile(r"""\bpath\(\s*r?["']([^"']*)["']""")
_DJANGO_PARAM = re.compile(r"<(?:\w+:)?(\w+)>")
EVERY = Route("/", under=True)
_ROUTE_FOLDERS = {  # where each framework keeps its page routes, inside the app (React Router: its routes.ts)
    Framework.NEXT: ("app", "src/app", "pages", "src/pages"),
    Framework.NUXT: ("pages", "app/pages", "src/pages"),
    Framework.SVELTEKIT: ("src/routes",),
    Framework.ASTRO: ("src/pages",),
    Framework.REMIX: ("app/routes",),
}


class Conventions:
    """Maps files to routes by their app's framework; says in `notes` what it could not read."""

    def __init__(self, repo: Repository):
        self.repo, self.apps = repo, Apps(repo)
        self.notes: list[str] = []
        self._configs: dict[str, RouteConfig] = {}  # a React Router app's root -> its app/routes.ts, read once
        self._by_framework: dict[Framework, Callable[[App, str], list[Route]]] = {
            Framework.NEXT: self._next,
            Framework.NUXT: self._nuxt,
            Framework.SVELTEKIT: self._sveltekit,
            Framework.ASTRO: lambda _app, file: _astro(file),
            Framework.REACT_ROUTER: self._react_router,
            Framework.REMIX: lambda app, file: _remix(app, file, repo),
        }
        self._routes_of: dict[str, tuple[str, ...]] = {}  # an app's root -> the paths of all its routes, read once
        self._expanding = False  # a route group's pages are being read (_in_group)

    def routes(self, file: str) -> list[Route]:
        """The routes `file` serves, each knowing its app; none when its app's framework gives it none (or it is in no
        app we know). A dynamic route also knows its app's other routes (`Route.serves`)."""
        app = self.apps.of(file)
        if app is None:
            return self._django(file) if file == "urls.py" or file.endswith("/urls.py") else []
        found = self._by_framework[app.framework](app, app.relative(file))
        return [Route(r.path, r.files, r.under, app.root, self._all_routes(app) if r.dynamic or r.under else ()) for r in found]

    def _all_routes(self, app: App) -> tuple[str, ...]:
        """The paths of every route of `app` (a layout's path too: a more specific route may serve it, which only makes
        a link there no example of a less specific one), from the files where its framework keeps them."""
        if app.root not in self._routes_of:
            if app.framework is Framework.REACT_ROUTER:
                appdir = _app_directory(app, self.repo)
                config = self._route_config(app, appdir)
                paths = [r.path for routes in config.files.values() for r in routes]
                folders = [f"{appdir}/{config.flat_routes}"] if config.flat_routes else []
            else:
                paths, folders = [], list(_ROUTE_FOLDERS[app.framework])
            mapper = self._by_framework[app.framework]
            files = [app.relative(f) for folder in folders for f in walk(self.repo, app.path(folder))]
            paths += [r.path for f in files for r in mapper(app, f)]  # a layout's too: a page beside it may serve it
            self._routes_of[app.root] = tuple(dict.fromkeys(paths))
        return self._routes_of[app.root]

    def _in_group(self, app: App, folder: str, routes: list[Route]) -> list[Route]:
        """A layout's (or error page's) routes: every route under its folder, but the pages of its route group when a
        group adds no URL segment (`app/(marketing)/layout.tsx` wraps /pricing, not the whole app). `folder` is inside
        the app; a group with no page in it keeps the folder's routes."""
        if self._expanding or not any(s.startswith("(") and s.endswith(")") for s in folder.split("/")):
            return routes  # (while a group is read, its own layouts' reach is not wanted: only its pages are kept)
        mapper, self._expanding = self._by_framework[app.framework], True
        try:
            below = [mapper(app, app.relative(f)) for f in walk(self.repo, app.path(folder))]
        finally:
            self._expanding = False
        pages = list(dict.fromkeys(r for found in below for r in found if not r.under))
        return pages or routes

    def _next(self, app: App, file: str) -> list[Route]:
        if _NEXT_ROOT.match(file):
            return [EVERY]
        if (m := _NEXT_APP.match(file)) and m.group(2) in _NEXT_PAGE_FILES:
            folder = m.group(1) or ""
            if any(s.startswith("_") for s in folder.split("/")):  # a private folder: never a route
                return []
            if m.group(2).startswith("global"):  # the root layout's own error and not-found pages
                return [EVERY]
            route = Route(_url(folder), under=_NEXT_PAGE_FILES[m.group(2)])
            return self._in_group(app, file.rsplit("/", 1)[0], [route]) if route.under else [route]
        if m := _NEXT_PAGES.match(file):
            name = m.group(1)
            if name in _NEXT_PAGES_EVERY:
                return [EVERY]
            if name.startswith("api/") or name.split("/")[-1].startswith("_"):
                return []
            return [Route(_url(re.sub(r"(^|/)index$", "", name)))]
        return []

    def _nuxt(self, app: App, file: str) -> list[Route]:
        src = _nuxt_src_dir(app, self.repo)
        inside = file[len(src) + 1 :] if src and file.startswith(src + "/") else None if src else file
        if inside is None:
            return []
        if _NUXT_EVERY.match(inside):
            return [EVERY]
        page = _VUE_PAGE.match(inside[len("pages/") :]) if inside.startswith("pages/") else None
        if page is None:
            return []
        name = re.sub(r"(^|/)index$", "", page.group(1))
        # a page beside a folder of its name is their parent: it renders every route in the folder (<NuxtPage/>)
        parent = bool(name) and self.repo.is_dir(app.path(f"{src + '/' if src else ''}pages/{page.group(1)}"))
        return [Route(_url(name), under=parent)]

    def _sveltekit(self, app: App, file: str) -> list[Route]:
        if _SVELTEKIT_ROOT.match(file):
            return [EVERY]
        if m := _SVELTEKIT.match(file):
            route = Route(_url(m.group(1) or ""), under=m.group(2) != "page")
            return self._in_group(app, file.rsplit("/", 1)[0], [route]) if route.under else [route]
        return []

    def _react_router(self, app: App, file: str) -> list[Route]:
        appdir = _app_directory(app, self.repo)
        if not file.startswith(appdir + "/"):
            return []
        inside = file[len(appdir) + 1 :]
        if _ROOT_MODULE.match(inside) or re.fullmatch(rf"routes\.{SCRIPT}", inside):
            return [EVERY]
        config = self._route_config(app, appdir)
        routes = config.routes_of(inside)
        if routes is None and config.flat_routes is not None and inside.startswith(config.flat_routes + "/"):
            return _flat(app, f"{appdir}/{config.flat_routes}", file, self.repo)
        if routes is None:
            self.notes.extend(n for n in config.notes if n not in self.notes)
            return []
        return routes

    def _route_config(self, app: App, appdir: str) -> RouteConfig:
        if app.root not in self._configs:
            where = next((app.path(f"{appdir}/routes.{x}") for x in ("ts", "tsx", "js", "mts", "mjs") if
                          self.repo.is_file(app.path(f"{appdir}/routes.{x}"))), app.path(f"{appdir}/routes.ts"))  # fmt: skip
            self._configs[app.root] = read_route_config(self.repo.read(where), where)
        return self._configs[app.root]

    def _django(self, file: str) -> list[Route]:
        return [Route(_url(_DJANGO_PARAM.sub(r"[\1]", p))) for p in _DJANGO_PATH.findall(self.repo.read(file) or "")]


def _url(folder: str) -> str:
    """A folder path as a URL path: route groups `(group)`, parallel slots `@slot` and intercepting markers leave no
    segment; a SvelteKit param matcher (`[id=integer]`) is only its name."""
    kept = [
        re.sub(r"\[([^\]=]+)=[^\]]+\]", r"[\1]", s)
        for s in folder.split("/")
        if s and not (s.startswith("(") and s.endswith(")")) and not s.startswith("@")
    ]
    return "/" + "/".join(kept)


def _astro(file: str) -> list[Route]:
    if _ASTRO_ROOT.match(file):
        return [EVERY]
    m = _ASTRO_PAGE.match(file)
    if m is None or any(s.startswith("_") for s in m.group(1).split("/")):
        return []
    if m.group(1) in _ASTRO_EVERY:
        return [EVERY]
    # Astro's rest parameter matches no segment too: /[...slug] serves / as well
    name = re.sub(r"\[\.\.\.([^\]]+)\]", r"[[...\1]]", re.sub(r"(^|/)index$", "", m.group(1)))
    return [Route(_url(name))]


def _nuxt_src_dir(app: App, repo: Repository) -> str:
    """Nuxt's srcDir inside the app: its config's `srcDir`, else `app/` in Nuxt 4 (when that folder is there), else
    the app's root."""
    config = app.config_text(repo)
    if m := _NUXT_SRC_DIR.search(config):
        return m.group(1).strip("./").rstrip("/")
    v4 = (app.major or 0) >= 4 or bool(_NUXT_V4.search(config))
    # Nuxt 4's own rule: app/ when it holds anything but its router options or SPA loading template
    held = [n for n in repo.names(app.path("app")) if n != "spa-loading-template.html" and not n.startswith("router.options")]
    return "app" if v4 and held else ""


def _app_directory(app: App, repo: Repository) -> str:
    m = re.search(r"""\bappDirectory\s*:\s*["'`]([^"'`]+)["'`]""", app.config_text(repo))
    return m.group(1).strip("./").rstrip("/") if m else "app"


def _remix(app: App, file: str, repo: Repository) -> list[Route]:
    """Remix 2: app/root.tsx maps to every route, app/routes/ holds flat routes."""
    if file.startswith("app/") and _ROOT_MODULE.match(file[len("app/") :]):
        return [EVERY]
    return _flat(app, "app/routes", file, repo)


def _flat(app: App, folder: str, file: str, repo: Repository) -> list[Route]:
    """A file under `folder` (an app's flat routes) as its route; a file elsewhere maps to none."""
    if not file.startswith(folder + "/"):
        return []
    return flat_route(file[len(folder) + 1 :], repo.names(app.path(folder)))


def flat_route(name: str, siblings: list[str]) -> list[Route]:
    """Remix's flat routes, a file (`concerts.$city.tsx`) or a folder's (`concerts.$city/route.tsx`, whose other files
    are its own modules): dots are slashes, `$param` a dynamic segment, a lone `$` the rest of the path, `($lang)` an
    optional one, `[.]` a literal dot, `_index` the parent, a leading `_` a layout without a segment, a trailing `_`
    only unnests. A route others nest in (`concerts.tsx`, for `concerts.$city.tsx` among its `siblings`) maps to every
    route under it."""
    head, _, rest = name.partition("/")
    stem = head if rest else re.sub(rf"\.{SCRIPT}$", "", head)
    if stem == head and not rest:
        return []  # not a script
    escaped = re.split(r"(\[[^\]]*\])", stem)  # [.] is a literal dot
    text = "".join(p if p.startswith("[") else p.replace(".", "\0") for p in escaped)
    segments = []
    for part in text.split("\0"):
        part = re.sub(r"\[([^\]]*)\]", r"\1", part)
        if part == "_index" or (part.startswith("_") and part != "_"):
            continue
        part = part.rstrip("_")
        if part.startswith("(") and part.endswith(")"):
            segments.append(f"[[{part[1:-1].lstrip('$')}]]")
        else:
            segments.append("[...rest]" if part == "$" else f"[{part[1:]}]" if part.startswith("$") else part)
    children = [s for s in siblings if s != head and s.startswith(stem + ".")]
    last = text.split("\0")[-1]
    if children and last.startswith("_") and last not in ("_", "_index"):  # a pathless layout: the routes it wraps
        files = [c if re.search(rf"\.{SCRIPT}$", c) else f"{c}/route.tsx" for c in children]  # a folder: its route module
        return list(dict.fromkeys(r for f in files for r in flat_route(f, siblings)))
    return [Route(_url("/".join(segments)), under=bool(children))]
