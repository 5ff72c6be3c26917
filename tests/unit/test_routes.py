"""Changed files -> routes: the manifest's globs first, then each framework's convention; unmapped files named."""

from __future__ import annotations

import pytest

from preview_qa.selection.routes import Route, map_files


def routes(*files: str, given: dict[str, list[str]] | None = None, text: str | None = None) -> list[str]:
    return [r.path for r in map_files(list(files), given or {}, lambda _f: text).routes]


@pytest.mark.parametrize(
    ("file", "route"),
    [
        ("app/page.tsx", "/"),
        ("app/blog/[slug]/page.tsx", "/blog/[slug]"),
        ("src/app/(shop)/cart/page.jsx", "/cart"),
        ("app/settings/@modal/layout.tsx", "/settings"),
        ("app/docs/[...path]/page.mdx", "/docs/[...path]"),
    ],
)
def test_next_app_router(file: str, route: str) -> None:
    assert routes(file) == [route]


@pytest.mark.parametrize(
    ("file", "route"),
    [("pages/index.tsx", "/"), ("src/pages/about.js", "/about"), ("pages/posts/[id].tsx", "/posts/[id]")],
)
def test_next_pages_router(file: str, route: str) -> None:
    assert routes(file) == [route]


def test_next_pages_api_and_special_files_are_no_routes() -> None:
    mapped = map_files(["pages/api/users.ts", "pages/_app.tsx", "app/api/route.ts"], {})
    assert mapped.routes == []
    assert mapped.unmapped == ["pages/api/users.ts", "pages/_app.tsx", "app/api/route.ts"]


@pytest.mark.parametrize(
    ("file", "route"),
    [
        ("src/routes/+page.svelte", "/"),
        ("src/routes/about/+page.svelte", "/about"),
        ("src/routes/(marketing)/blog/[slug]/+page.server.ts", "/blog/[slug]"),
    ],
)
def test_sveltekit(file: str, route: str) -> None:
    assert routes(file) == [route]


@pytest.mark.parametrize(
    ("file", "route"),
    [
        ("app/routes/_index.tsx", "/"),
        ("app/routes/about.tsx", "/about"),
        ("app/routes/concerts.$city.tsx", "/concerts/[city]"),
        ("app/routes/_auth.login.tsx", "/login"),
        ("app/routes/files.$.tsx", "/files/[...rest]"),
        ("app/routes/settings.profile/route.tsx", "/settings/profile"),
    ],
)
def test_remix_flat_routes(file: str, route: str) -> None:
    assert routes(file) == [route]


@pytest.mark.parametrize(
    ("file", "route"), [("pages/index.vue", "/"), ("pages/users/[id].vue", "/users/[id]"), ("pages/about.vue", "/about")]
)
def test_nuxt(file: str, route: str) -> None:
    assert routes(file) == [route]


def test_django_urls_are_read_for_their_paths() -> None:
    text = 'urlpatterns = [path("", home), path("blog/<slug:slug>/", post), re_path(r"^x$", x), path(\'about/\', a)]'
    assert routes("shop/urls.py", text=text) == ["/", "/blog/[slug]", "/about"]


def test_django_urls_unreadable_maps_nothing() -> None:
    assert map_files(["shop/urls.py"], {}, lambda _f: None).unmapped == ["shop/urls.py"]


def test_manifest_routes_win_over_conventions_and_gather_files() -> None:
    given = {"src/checkout/**": ["/checkout", "/cart/"], "app/page.tsx": ["/landing"]}
    mapped = map_files(["src/checkout/pay.ts", "src/checkout/ui.ts", "app/page.tsx", "README.md"], given, lambda _f: None)
    assert [(r.path, r.files) for r in mapped.routes] == [
        ("/checkout", ("src/checkout/pay.ts", "src/checkout/ui.ts")),
        ("/cart", ("src/checkout/pay.ts", "src/checkout/ui.ts")),
        ("/landing", ("app/page.tsx",)),
    ]
    assert mapped.unmapped == ["README.md"]


def test_dynamic_segments_match_any_value_and_name_where_links_are_looked_for() -> None:
    route = Route("/blog/[slug]")
    assert route.dynamic and route.static_prefix == "/blog"
    assert route.matches("/blog/hello") and not route.matches("/blog/hello/more") and not route.matches("/blog")
    assert Route("/docs/[...path]").matches("/docs/a/b")
    assert not Route("/about").dynamic and Route("/about").matches("/about/")
