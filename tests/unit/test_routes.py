"""Changed files -> routes: the manifest's globs first, then the conventions of the framework each file's app uses,
found by its config file or package.json. The trees are the frameworks' own starter templates (create-next-app, Nuxt's
minimal template, `sv create`, create-astro's blog, create-react-router's default), with a few pages added."""

from __future__ import annotations

import pytest

from preview_qa.selection.repository import MemoryRepository
from preview_qa.selection.route import Route
from preview_qa.selection.routes import RouteMap, map_files

NEXT_APP = {  # create-next-app 15/16, App Router (optionally under src/)
    "package.json": '{"dependencies": {"next": "16.0.0", "react": "19.2.0"}}',
    "next.config.ts": "export default {};",
    "app/layout.tsx": "",
    "app/page.tsx": "",
    "app/globals.css": "",
    "app/blog/[slug]/page.tsx": "",
    "app/(shop)/cart/page.tsx": "",
    "app/settings/@modal/page.tsx": "",
    "app/docs/[[...path]]/page.mdx": "",
    "app/dashboard/layout.tsx": "",
    "app/api/hello/route.ts": "",
    "app/_lib/page.tsx": "",
}
NEXT_PAGES = {
    "package.json": '{"dependencies": {"next": "14.2.0"}}',
    "src/pages/_app.tsx": "",
    "src/pages/_document.tsx": "",
    "src/pages/index.tsx": "",
    "src/pages/posts/[id].tsx": "",
    "src/pages/api/hello.ts": "",
    "src/middleware.ts": "",
}
NUXT_4 = {  # nuxi init -t minimal (Nuxt 4): the app in app/
    "package.json": '{"dependencies": {"nuxt": "^4.2.0", "vue": "^3.5.0"}}',
    "nuxt.config.ts": "export default defineNuxtConfig({ compatibilityDate: '2025-07-15', devtools: { enabled: true } })",
    "app/app.vue": "",
    "app/pages/index.vue": "",
    "app/pages/about.vue": "",
    "app/pages/products/[id].vue": "",
    "app/pages/docs/[[section]].vue": "",
    "app/pages/users.vue": "",
    "app/pages/users/[id].vue": "",
    "app/layouts/default.vue": "",
    "app/components/Header.vue": "",
    "server/api/hello.ts": "",
}
NUXT_3 = {
    "package.json": '{"devDependencies": {"nuxt": "^3.15.0"}}',
    "nuxt.config.ts": "export default defineNuxtConfig({})",
    "app.vue": "",
    "pages/index.vue": "",
    "pages/[...slug].vue": "",
    "middleware/auth.ts": "",
}
SVELTEKIT = {  # npx sv create --template demo (0.17: no svelte.config.js; the kit in package.json)
    "package.json": '{"devDependencies": {"@sveltejs/kit": "^2.63.0", "svelte": "^5.56.1"}}',
    "vite.config.ts": "",
    "src/app.html": "",
    "src/routes/+layout.svelte": "",
    "src/routes/+page.svelte": "",
    "src/routes/+page.ts": "",
    "src/routes/Header.svelte": "",
    "src/routes/about/+page.svelte": "",
    "src/routes/sverdle/+page.server.ts": "",
    "src/routes/sverdle/how-to-play/+page.svelte": "",
    "src/routes/(marketing)/blog/[slug=word]/+page.svelte": "",
    "src/routes/[[lang]]/pricing/+page.svelte": "",
    "src/routes/api/+server.ts": "",
    "src/lib/images/logo.svg": "",
}
ASTRO = {  # npm create astro -- --template blog
    "package.json": '{"dependencies": {"astro": "^5.16.0"}}',
    "astro.config.mjs": "",
    "src/pages/index.astro": "",
    "src/pages/about.astro": "",
    "src/pages/blog/index.astro": "",
    "src/pages/blog/[...slug].astro": "",
    "src/pages/guide.md": "",
    "src/pages/legal.html": "",
    "src/pages/rss.xml.js": "",
    "src/pages/_draft.astro": "",
    "src/layouts/BlogPost.astro": "",
    "src/components/Header.astro": "",
}
ROUTES_TS = """import { type RouteConfig, index, layout, prefix, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx"),
  route("about", "./routes/about.tsx"),
  route("posts/:postId", "routes/post.tsx"),
  layout("routes/shop-layout.tsx", [
    ...prefix("products", [index("routes/products.tsx"), route(":productId", "routes/product.tsx")]),
  ]),
  route("dashboard", "routes/dashboard.tsx", [index("routes/dash-home.tsx"), route("settings", "routes/settings.tsx")]),
] satisfies RouteConfig;
"""
REACT_ROUTER = {  # npx create-react-router (the default template), with a few routes added
    "package.json": '{"dependencies": {"react-router": "^7.9.2"}, "devDependencies": {"@react-router/dev": "^7.9.2"}}',
    "react-router.config.ts": "export default { ssr: true } satisfies Config;",
    "app/root.tsx": "",
    "app/routes.ts": ROUTES_TS,
    "app/routes/home.tsx": "",
    "app/welcome/welcome.tsx": "",
}
REMIX = {  # Remix 2 on Vite: flat routes in app/routes/
    "package.json": '{"devDependencies": {"@remix-run/dev": "^2.16.0"}}',
    "vite.config.ts": "",
    "app/root.tsx": "",
    "app/routes/_index.tsx": "",
    "app/routes/about.tsx": "",
    "app/routes/concerts.tsx": "",
    "app/routes/concerts.$city.tsx": "",
    "app/routes/_auth.login.tsx": "",
    "app/routes/files.$.tsx": "",
    "app/routes/sitemap[.]xml.tsx": "",
    "app/routes/($lang).docs.tsx": "",
    "app/routes/settings.profile/route.tsx": "",
}


def mapped(tree: dict[str, str], *files: str, given: dict[str, list[str]] | None = None) -> RouteMap:
    return map_files(list(files), given or {}, MemoryRepository(tree))


def labels(tree: dict[str, str], *files: str) -> list[str]:
    return [r.label for r in mapped(tree, *files).routes]


def in_root(tree: dict[str, str], root: str) -> dict[str, str]:
    return {f"{root}/{name}": text for name, text in tree.items()}


@pytest.mark.parametrize(
    ("file", "routes"),
    [
        ("app/page.tsx", ["/"]),
        ("app/blog/[slug]/page.tsx", ["/blog/[slug]"]),
        ("app/(shop)/cart/page.tsx", ["/cart"]),
        ("app/settings/@modal/page.tsx", ["/settings"]),
        ("app/docs/[[...path]]/page.mdx", ["/docs/[[...path]]"]),
        ("app/layout.tsx", ["/**"]),
        ("app/dashboard/layout.tsx", ["/dashboard/**"]),
        ("app/api/hello/route.ts", []),
        ("app/_lib/page.tsx", []),
        ("app/globals.css", []),
    ],
)
def test_next_app_router(file: str, routes: list[str]) -> None:
    assert labels(NEXT_APP, file) == routes
    with_src = {("src/" + name if name.startswith("app/") else name): text for name, text in NEXT_APP.items()}
    assert labels(with_src, "src/" + file) == routes  # create-next-app --src-dir


@pytest.mark.parametrize(
    ("file", "routes"),
    [
        ("src/pages/index.tsx", ["/"]),
        ("src/pages/posts/[id].tsx", ["/posts/[id]"]),
        ("src/pages/_app.tsx", ["/**"]),
        ("src/pages/_document.tsx", ["/**"]),
        ("src/middleware.ts", ["/**"]),
        ("src/pages/api/hello.ts", []),
    ],
)
def test_next_pages_router(file: str, routes: list[str]) -> None:
    assert labels(NEXT_PAGES, file) == routes


@pytest.mark.parametrize(
    ("file", "routes"),
    [
        ("app/pages/index.vue", ["/"]),
        ("app/pages/about.vue", ["/about"]),
        ("app/pages/products/[id].vue", ["/products/[id]"]),
        ("app/pages/docs/[[section]].vue", ["/docs/[[section]]"]),
        ("app/pages/users.vue", ["/users/**"]),  # the parent of users/[id].vue
        ("app/app.vue", ["/**"]),
        ("app/layouts/default.vue", ["/**"]),
        ("app/components/Header.vue", []),
        ("server/api/hello.ts", []),
        ("pages/about.vue", []),  # Nuxt 4 reads pages from app/ only
    ],
)
def test_nuxt_4_reads_its_pages_from_app(file: str, routes: list[str]) -> None:
    assert labels(NUXT_4, file) == routes


def test_nuxt_3_reads_the_root_and_a_custom_src_dir_is_followed() -> None:
    assert labels(NUXT_3, "pages/index.vue", "pages/[...slug].vue", "middleware/auth.ts") == ["/", "/[...slug]", "/**"]
    custom = {**NUXT_4, "nuxt.config.ts": "export default defineNuxtConfig({ srcDir: 'src/' })", "src/pages/help.vue": ""}
    assert labels(custom, "src/pages/help.vue") == ["/help"]
    assert mapped(custom, "app/pages/about.vue").unmapped == ["app/pages/about.vue"]
    v4_flag = {**NUXT_3, "nuxt.config.ts": "export default defineNuxtConfig({ future: { compatibilityVersion: 4 } })"}
    assert labels({**v4_flag, "app/pages/x.vue": ""}, "app/pages/x.vue") == ["/x"]


@pytest.mark.parametrize(
    ("file", "routes"),
    [
        ("src/routes/+page.svelte", ["/"]),
        ("src/routes/+page.ts", ["/"]),
        ("src/routes/about/+page.svelte", ["/about"]),
        ("src/routes/sverdle/+page.server.ts", ["/sverdle"]),
        ("src/routes/sverdle/how-to-play/+page.svelte", ["/sverdle/how-to-play"]),
        ("src/routes/(marketing)/blog/[slug=word]/+page.svelte", ["/blog/[slug]"]),
        ("src/routes/[[lang]]/pricing/+page.svelte", ["/[[lang]]/pricing"]),
        ("src/routes/+layout.svelte", ["/**"]),
        ("src/app.html", ["/**"]),
        ("src/routes/Header.svelte", []),
        ("src/routes/api/+server.ts", []),
        ("src/lib/images/logo.svg", []),
    ],
)
def test_sveltekit(file: str, routes: list[str]) -> None:
    assert labels(SVELTEKIT, file) == routes


@pytest.mark.parametrize(
    ("file", "routes"),
    [
        ("src/pages/index.astro", ["/"]),
        ("src/pages/blog/index.astro", ["/blog"]),
        ("src/pages/blog/[...slug].astro", ["/blog/[[...slug]]"]),  # Astro's rest parameter matches /blog too
        ("src/pages/guide.md", ["/guide"]),
        ("src/pages/legal.html", ["/legal"]),
        ("src/layouts/BlogPost.astro", ["/**"]),
        ("src/pages/rss.xml.js", []),
        ("src/pages/_draft.astro", []),
        ("src/components/Header.astro", []),
    ],
)
def test_astro(file: str, routes: list[str]) -> None:
    assert labels(ASTRO, file) == routes


@pytest.mark.parametrize(
    ("file", "routes"),
    [
        ("app/routes/home.tsx", ["/"]),
        ("app/routes/about.tsx", ["/about"]),
        ("app/routes/post.tsx", ["/posts/[postId]"]),
        ("app/routes/products.tsx", ["/products"]),
        ("app/routes/product.tsx", ["/products/[productId]"]),
        ("app/routes/shop-layout.tsx", ["/products", "/products/[productId]"]),  # a layout: its children's routes
        ("app/routes/dashboard.tsx", ["/dashboard/**"]),  # a route with children: every route under it
        ("app/routes/settings.tsx", ["/dashboard/settings"]),
        ("app/root.tsx", ["/**"]),
        ("app/routes.ts", ["/**"]),
        ("app/welcome/welcome.tsx", []),
    ],
)
def test_react_router_7_reads_app_routes_ts(file: str, routes: list[str]) -> None:
    assert labels(REACT_ROUTER, file) == routes


def test_react_router_routes_ts_parts_it_cannot_read_leave_their_files_unmapped_with_a_note() -> None:
    config = """import { type RouteConfig, route } from "@react-router/dev/routes";
import { flatRoutes } from "@react-router/fs-routes";
import { adminRoutes } from "./admin/routes";
const help = route("help", "routes/help.tsx"); // a constant of the file is read
export default [
  ...(await flatRoutes({ rootDirectory: "pages" })),
  ...adminRoutes,
  help,
  route("files/*", "routes/files.tsx"),
  route(":lang?/docs", "routes/docs.tsx"),
] satisfies RouteConfig;
"""
    tree = {**REACT_ROUTER, "app/routes.ts": config, "app/pages/_index.tsx": "", "app/pages/blog.$slug.tsx": ""}
    found = mapped(tree, "app/routes/help.tsx", "app/routes/files.tsx", "app/routes/docs.tsx", "app/pages/blog.$slug.tsx",
                   "app/pages/_index.tsx", "app/admin/users.tsx")  # fmt: skip
    assert [r.label for r in found.routes] == ["/help", "/files/[...rest]", "/[[lang]]/docs", "/blog/[slug]", "/"]
    assert found.unmapped == ["app/admin/users.tsx"]
    assert found.notes == [
        "app/routes.ts: line 7: `adminRoutes` (imported from './admin/routes') cannot be read without running it: "
        "the routes it adds are not known (give them with the manifest's routes:)"
    ]
    assert not mapped(tree, "app/routes/help.tsx").notes  # said only for a file that it may concern


def test_an_unreadable_routes_ts_maps_nothing_and_says_why() -> None:
    tree = {**REACT_ROUTER, "app/routes.ts": "export default makeRoutes();"}
    found = mapped(tree, "app/routes/home.tsx")
    assert found.unmapped == ["app/routes/home.tsx"]
    assert found.notes == [
        "app/routes.ts: line 1: a call of `makeRoutes` cannot be read without running it: the routes it adds are not "
        "known (give them with the manifest's routes:)"
    ]


@pytest.mark.parametrize(
    ("file", "routes"),
    [
        ("app/routes/_index.tsx", ["/"]),
        ("app/routes/about.tsx", ["/about"]),
        ("app/routes/concerts.tsx", ["/concerts/**"]),  # concerts.$city.tsx nests in it
        ("app/routes/concerts.$city.tsx", ["/concerts/[city]"]),
        ("app/routes/_auth.login.tsx", ["/login"]),
        ("app/routes/files.$.tsx", ["/files/[...rest]"]),
        ("app/routes/sitemap[.]xml.tsx", ["/sitemap.xml"]),
        ("app/routes/($lang).docs.tsx", ["/[[lang]]/docs"]),
        ("app/routes/settings.profile/route.tsx", ["/settings/profile"]),
        ("app/root.tsx", ["/**"]),
    ],
)
def test_remix_flat_routes(file: str, routes: list[str]) -> None:
    assert labels(REMIX, file) == routes


def test_only_the_app_s_own_framework_applies_and_a_react_router_app_is_never_guessed_from_file_names() -> None:
    assert labels(REACT_ROUTER, "app/routes/home.tsx") == ["/"]  # not /home: routes.ts says it is the index
    assert labels(NUXT_4, "app/page.tsx", "pages/index.tsx") == []  # Next.js' files mean nothing in a Nuxt app
    assert mapped({"src/routes/+page.svelte": ""}, "src/routes/+page.svelte").unmapped == ["src/routes/+page.svelte"]


def test_a_monorepo_s_apps_are_found_by_their_config_and_paths_resolve_from_the_repository_root() -> None:
    tree = {
        "package.json": '{"private": true, "workspaces": ["apps/*", "packages/*"]}',
        **in_root(NUXT_4, "apps/web"),
        **in_root(SVELTEKIT, "apps/shop"),
        **in_root({"astro.config.mjs": "", "src/pages/index.astro": ""}, "apps/docs"),  # config file, no package.json
        "packages/ui/package.json": '{"name": "ui"}',
        "packages/ui/src/pages/index.vue": "",
    }
    found = mapped(tree, "apps/web/app/pages/about.vue", "apps/shop/src/routes/about/+page.svelte",
                   "apps/docs/src/pages/index.astro", "packages/ui/src/pages/index.vue")  # fmt: skip
    assert [(r.app, r.label, r.files) for r in found.routes] == [  # each app's /about is a route of its own (#65, 6)
        ("apps/web", "/about", ("apps/web/app/pages/about.vue",)),
        ("apps/shop", "/about", ("apps/shop/src/routes/about/+page.svelte",)),
        ("apps/docs", "/", ("apps/docs/src/pages/index.astro",)),
    ]
    assert found.unmapped == ["packages/ui/src/pages/index.vue"]  # a package, not an app


def test_django_urls_are_read_for_their_paths() -> None:
    text = 'urlpatterns = [path("", home), path("blog/<slug:slug>/", post), re_path(r"^x$", x), path(\'about/\', a)]'
    assert labels({"shop/urls.py": text}, "shop/urls.py") == ["/", "/blog/[slug]", "/about"]
    assert mapped({}, "shop/urls.py").unmapped == ["shop/urls.py"]


def test_manifest_routes_win_over_conventions_gather_files_and_an_empty_list_touches_no_page() -> None:
    given = {"src/checkout/**": ["/checkout", "/cart/"], "app/page.tsx": ["/landing"], "docs/**": []}
    found = mapped(NEXT_APP, "src/checkout/pay.ts", "src/checkout/ui.ts", "app/page.tsx", "docs/a.md", "README.md",
                   given=given)  # fmt: skip
    assert [(r.path, r.files) for r in found.routes] == [
        ("/checkout", ("src/checkout/pay.ts", "src/checkout/ui.ts")),
        ("/cart", ("src/checkout/pay.ts", "src/checkout/ui.ts")),
        ("/landing", ("app/page.tsx",)),
    ]
    assert found.no_page == ["docs/a.md"] and found.unmapped == ["README.md"]
    literal = mapped(NEXT_APP, "app/blog/[slug]/page.tsx", given={r"app/blog/\[slug\]/**": ["/blog/[slug]", "/blog"]})
    assert [r.path for r in literal.routes] == ["/blog/[slug]", "/blog"]  # brackets escaped: a literal folder name


def test_dynamic_optional_and_layout_routes_match_the_pages_they_serve() -> None:
    route = Route("/blog/[slug]")
    assert route.dynamic and route.static_prefix == "/blog"
    assert route.matches("/blog/hello") and not route.matches("/blog/hello/more") and not route.matches("/blog")
    assert Route("/docs/[...path]").matches("/docs/a/b") and not Route("/docs/[...path]").matches("/docs")
    assert Route("/docs/[[...path]]").matches("/docs") and Route("/docs/[[...path]]").matches("/docs/a/b")
    optional = Route("/[[lang]]/pricing")
    assert not optional.dynamic and optional.plain == "/pricing"
    assert optional.matches("/pricing") and optional.matches("/fr/pricing") and not optional.matches("/fr/de/pricing")
    assert Route("/p/[a]-[b]").matches("/p/x-y") and not Route("/p/[a]-[b]").matches("/p/xy")
    layout = Route("/dashboard", under=True)
    assert layout.matches("/dashboard") and layout.matches("/dashboard/a/b") and not layout.matches("/dashboards")
    assert Route("/", under=True).matches("/anything") and Route("/").matches("/") and not Route("/").matches("/a")
    assert not Route("/about").dynamic and Route("/about").matches("/about/")


def test_a_routes_url_keeps_its_trailing_slash() -> None:
    """`--route /admin/password_change/` is read and drafted there, not at a URL Django redirects (#65, 9)."""
    assert Route("/admin/password_change/").plain == "/admin/password_change/"
    assert Route("/[[lang]]/about/").plain == "/about/"
    assert Route("/settings").plain == "/settings" and Route("/").plain == "/" and Route("/[[lang]]/").plain == "/"


def test_a_layout_in_a_route_group_maps_to_the_pages_of_its_group_only() -> None:
    """`src/app/(marketing)/layout.tsx` wraps /pricing, not the whole app (#65, 3), in every reader with groups."""
    group = ["app/(marketing)/layout.tsx", "app/(marketing)/pricing/page.tsx", "app/(marketing)/about/team/page.tsx",
             "app/(marketing)/error.tsx", "app/(empty)/layout.tsx"]  # fmt: skip
    next_app = {**NEXT_APP, **dict.fromkeys(group, "")}
    assert labels(next_app, "app/(marketing)/layout.tsx") == ["/about/team", "/pricing"]
    assert labels(next_app, "app/(marketing)/error.tsx") == ["/about/team", "/pricing"]
    assert labels(next_app, "app/(shop)/cart/page.tsx") == ["/cart"] and labels(next_app, "app/layout.tsx") == ["/**"]
    assert labels(next_app, "app/(empty)/layout.tsx") == ["/**"]  # a group with no page keeps its folder's reach
    src = {("src/" + k if k.startswith("app/") else k): v for k, v in next_app.items()}
    assert labels(src, "src/app/(marketing)/layout.tsx") == ["/about/team", "/pricing"]
    svelte = {**SVELTEKIT, "src/routes/(marketing)/+layout.svelte": "", "src/routes/(marketing)/+error.svelte": ""}
    assert labels(svelte, "src/routes/(marketing)/+layout.svelte") == ["/blog/[slug]"]
    assert labels(svelte, "src/routes/(marketing)/+error.svelte") == ["/blog/[slug]"]
    remix = {**REMIX, "app/routes/_auth.tsx": "", "app/routes/_auth.signup/route.tsx": ""}
    assert labels(remix, "app/routes/_auth.tsx") == ["/login", "/signup"]  # a pathless layout: the routes it wraps


@pytest.mark.parametrize(
    ("tree", "file"),
    [
        (ASTRO, "src/pages/404.astro"),
        (ASTRO, "src/pages/500.md"),
        (NEXT_APP, "app/not-found.tsx"),
        (NEXT_APP, "app/error.tsx"),
        (NEXT_APP, "app/global-error.tsx"),
        (NEXT_PAGES, "src/pages/404.tsx"),
        (SVELTEKIT, "src/routes/+error.svelte"),
        (NUXT_4, "app/error.vue"),
    ],
)
def test_not_found_and_error_pages_are_no_routes_of_their_own(tree: dict[str, str], file: str) -> None:
    """Astro's 404.astro is not a route /404 (#65, 7): an error page is shown for the routes under it."""
    assert labels({**tree, file: ""}, file) == ["/**"]


def test_a_dynamic_route_knows_the_app_s_routes_that_serve_a_page_before_it() -> None:
    """Nuxt's [...slug].vue does not serve /about when about.vue does (#65, 5): the example value a draft starts on is
    a page the catch-all renders."""
    nuxt = {**NUXT_4, "app/pages/[...slug].vue": ""}
    (slug,) = mapped(nuxt, "app/pages/[...slug].vue").routes
    assert slug.matches("/about") and not slug.serves("/about") and not slug.serves("/products/1")
    assert slug.serves("/anvils/heavy") and slug.serves("/docs/a/b")  # /docs/[[section]] takes one segment only
    (product,) = mapped(nuxt, "app/pages/products/[id].vue").routes
    assert product.serves("/products/1")
    next_app = {**NEXT_APP, "app/[...rest]/page.tsx": "", "app/about/page.tsx": ""}
    (rest,) = mapped(next_app, "app/[...rest]/page.tsx").routes
    assert not rest.serves("/about") and not rest.serves("/blog/hi") and rest.serves("/contact")
    rr = {**REACT_ROUTER, "app/routes.ts": ROUTES_TS.replace("] satisfies", '  route("*", "routes/all.tsx"),\n] satisfies')}
    (every,) = mapped(rr, "app/routes/all.tsx").routes
    assert not every.serves("/about") and not every.serves("/products/7") and every.serves("/nowhere")
