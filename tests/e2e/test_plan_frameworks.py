"""`preview-qa plan` on the frameworks' own layouts (issue #48), run once on a monorepo laid out in a temp folder: a Nuxt
4 app (apps/web, pages in app/pages/) and a React Router 7 app (apps/shop, routes declared in app/routes.ts), each with
a preview of its own (#65, 6: the one small app, as 127.0.0.1 for web and as localhost for shop), and an Astro app
(apps/docs) given none. And its ends: a preview that does not answer, or an LLM that does not, exit 1 with one clean
line; --write makes its folder."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import run_in_process
from tests.site.acme_app import AcmeApp

pytestmark = pytest.mark.e2e

ROUTES_TS = """import { type RouteConfig, index, route } from "@react-router/dev/routes";

export default [index("routes/home.tsx"), route("posts/:postId", "routes/post.tsx")] satisfies RouteConfig;
"""
TREE = {  # the apps as their starters lay them out (nuxi init -t minimal; create-react-router's default template)
    "package.json": json.dumps({"private": True, "workspaces": ["apps/*"]}),
    "apps/web/package.json": json.dumps({"dependencies": {"nuxt": "^4.2.0", "vue": "^3.5.0"}}),
    "apps/web/nuxt.config.ts": "export default defineNuxtConfig({ compatibilityDate: '2025-07-15' })\n",
    "apps/web/app/app.vue": "<template><NuxtPage /></template>\n",
    "apps/web/app/pages/about.vue": "<template><h1>About Acme</h1></template>\n",
    "apps/web/app/pages/products/[id].vue": "<template><h1>Product</h1></template>\n",
    "apps/web/app/components/Header.vue": "<template><header /></template>\n",
    "apps/shop/package.json": json.dumps({"devDependencies": {"@react-router/dev": "^7.9.2"}}),
    "apps/shop/react-router.config.ts": "export default { ssr: true } satisfies Config;\n",
    "apps/shop/app/root.tsx": "",
    "apps/shop/app/routes.ts": ROUTES_TS,
    "apps/shop/app/routes/home.tsx": "",
    "apps/shop/app/routes/post.tsx": "",
    "apps/docs/astro.config.mjs": "export default {};\n",
    "apps/docs/src/pages/guide.md": "# Guide\n",
}
CHANGED = [
    "apps/web/app/pages/about.vue",
    "apps/web/app/pages/products/[id].vue",
    "apps/web/app/components/Header.vue",
    "apps/shop/app/routes/home.tsx",
    "apps/shop/app/routes/post.tsx",
    "apps/docs/src/pages/guide.md",
    "docs/intro.md",
]
MANIFEST = """version: 1
tests:
  - {name: Home, app: shop, start: /, task: Look at the home page.}
routes:
  "docs/**": []
"""
PASS = [{"done": {"status": "pass", "reason": "As drafted."}}]
SCENARIOS = [
    {"match": "<route>/about</route>", "drafts": [{"name": "About says hi", "task": "Read the about page.",
                                                  "expect_text": ["We make anvils since 1949."]}]},
    {"match": "<route>/products/[id]</route>", "drafts": [{"name": "A product's price", "task": "Read the price.",
                                                          "expect_text": ["Price: $42"]}]},
    {"match": "<route>/posts/[postId]</route>", "drafts": [{"name": "A post reads", "task": "Read the post.",
                                                           "expect_text": ["Anvils are heavy."]}]},
    {"match": "Read the about page.", "turns": PASS},
    {"match": "Read the price.", "turns": PASS},
    {"match": "Read the post.", "turns": PASS},
]  # fmt: skip


@dataclass
class Planned:
    exit_code: int
    stderr: str
    written: Path
    requests: list[str]


def plan_args(manifest: Path, base_url: str, llm_url: str, *extra: str) -> list[str]:
    return ["plan", str(manifest), "--base-url", base_url, "--llm-base-url", llm_url, "--api-key", "k", "--model", "scripted",
            "--max", "1", *extra]  # fmt: skip


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planned]:
    repo = tmp_path_factory.mktemp("monorepo")
    for name, text in TREE.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    (repo / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    (repo / "changed.txt").write_text("\n".join(CHANGED) + "\n", encoding="utf-8")
    written = repo / "new" / "folder" / "drafts.yml"
    with AcmeApp() as app, ScriptedLLM(SCENARIOS) as llm:
        shop = app.url.replace("127.0.0.1", "localhost")
        extra = ["--base-url", f"web={app.url}", "--base-url", f"shop={shop}", "--changed-files", "changed.txt"]
        extra += ["--write", str(written)]
        # the plain --base-url answers nothing: no route here is read on it (each app's is on its own preview), and
        # plan asked it alone before, so every route was "not drafted: the preview did not answer"
        dead = f"http://127.0.0.1:{_closed_port()}"
        done = run_in_process(plan_args(repo / "qa.yml", dead, llm.url, *extra), cwd=repo)
        yield Planned(done.returncode, done.stderr, written, [json.dumps(r) for r in llm.requests])


def test_each_app_s_framework_maps_its_files_and_only_its_own(planned: Planned) -> None:
    assert planned.exit_code == 0, planned.stderr
    lines = planned.stderr.splitlines()
    assert "plan: 7 changed file(s) from changed.txt." in lines
    assert "plan: changed files that map to no route: apps/web/app/components/Header.vue" in lines
    assert "plan: changed files the manifest's routes: says touch no page: docs/intro.md" in lines
    assert "plan: / (apps/shop) is covered: test 'Home' starts there" in lines  # home.tsx is the index in routes.ts
    drafted = [line.split(": ", 2)[1] for line in lines if line.endswith("draft(s) passed their trial run")]
    assert drafted == ["/about (apps/web)", "/products/[id] (apps/web)", "/posts/[postId] (apps/shop)"]
    # an app with no preview of its own is listed, never tried on another app's
    assert (
        "plan: /guide (apps/docs): not drafted: its app apps/docs has no preview URL of its own, and the change "
        "touches several apps: give --base-url docs=URL (or apps: {docs: URL} in the manifest)" in lines
    )
    assert not any(guess in planned.stderr for guess in ("/home", "/post:", "/app/pages"))  # no guess from file names


def test_the_drafts_start_where_the_preview_links_and_are_written_into_a_new_folder(planned: Planned) -> None:
    assert f"wrote {planned.written}" in planned.stderr
    text = planned.written.read_text(encoding="utf-8")
    assert "# route: /about (apps/web) (changed: apps/web/app/pages/about.vue)" in text
    tests = yaml.safe_load(text)["tests"]
    # /products/[id]'s value is linked from /products; /posts answers 404, and the start page links to a post
    assert [(t["name"], t["app"], t["start"]) for t in tests] == [
        ("About says hi", "web", "/about"),
        ("A product's price", "web", "/products/anvil"),
        ("A post reads", "shop", "/posts/hello-world"),
    ]
    asked = [r for r in planned.requests if "<route>" in r]
    assert len(asked) == 3 and "localhost" in asked[2] and "localhost" not in asked[0]  # each read on its own preview


def test_a_preview_that_does_not_answer_exits_1_with_one_clean_line(tmp_path: Path) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    with ScriptedLLM([]) as llm:
        done = run_in_process(plan_args(manifest, f"http://127.0.0.1:{_closed_port()}", llm.url, "--route", "/about"))
        assert not llm.requests  # nothing was paid for
    assert done.returncode == 1, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("plan: nothing could be planned: the preview did not answer (ConnectError for http://127.0.0.1:")
    assert "Call log" not in done.stderr and "Traceback" not in done.stderr


def test_an_llm_that_does_not_answer_exits_1(tmp_path: Path) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    with AcmeApp() as app:
        args = plan_args(manifest, app.url, f"http://127.0.0.1:{_closed_port()}", "--route", "/about", "--route", "/products")
        done = run_in_process(args)
    assert done.returncode == 1, done.stderr
    assert "plan: /products: not drafted: the LLM did not answer" in done.stderr  # no second call once it did not
    assert done.stderr.splitlines()[-1].startswith("plan: nothing could be planned: the LLM did not answer (")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
