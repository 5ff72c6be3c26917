"""The wheel and the image ship no test fixtures (issue #46): what setuptools would package from pyproject.toml holds
only the demo's own modules under preview_qa/demo/ (at most 12 besides __init__.py), the demo shop serves none of the
fixture site's pages, and the image's build context leaves tests/ and bench/ out."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from setuptools.config.pyprojecttoml import apply_configuration
from setuptools.dist import Distribution

from preview_qa.demo.shop import DemoShop
from tests.site import late, moving, server_errors, states, twins, visual

ROOT = Path(__file__).resolve().parents[2]
# What `preview-qa demo` and `demo --plan` need; a fixture page only the tests serve goes to tests/site/ instead.
DEMO = {"__init__", "blog", "exploring", "mail", "pages", "runner", "scripted_llm", "serve", "server", "settings", "shop", "wire"}
FIXTURE_PAGES = [m.PREFIX for m in (late, moving, server_errors, states, twins, visual)] + [
    "/todos",
    "/basket",
    "/hostile",
    "/leaky",
    "/app/login",
    "/2fa",
    "/viewport",
    "/search",
]


def packaged() -> list[str]:
    """The files the wheel would hold, relative to its root (setuptools' build_py, as `pip install .` runs it)."""
    cwd = os.getcwd()
    os.chdir(ROOT)  # setuptools reads pyproject.toml's relative paths from the project's root
    try:
        dist = Distribution({"script_name": "setup.py"})
        apply_configuration(dist, "pyproject.toml")
        build = dist.get_command_obj("build_py")
        build.ensure_finalized()
        return sorted({Path(out).relative_to(build.build_lib).as_posix() for out in build.get_outputs(include_bytecode=False)})
    finally:
        os.chdir(cwd)


def test_the_wheel_holds_only_the_demos_own_modules() -> None:
    files = packaged()
    assert "preview_qa/cli/__init__.py" in files and "preview_qa/demo/qa.yml" in files  # the probe sees the wheel
    demo = {Path(f).stem for f in files if f.startswith("preview_qa/demo/") and f.endswith(".py")}
    assert demo == DEMO and len(demo - {"__init__"}) <= 12
    assert not [f for f in files if not f.startswith("preview_qa/")]  # no tests/ or bench/ module


@pytest.mark.parametrize("path", FIXTURE_PAGES)
def test_the_demo_shop_serves_no_fixture_page(path: str) -> None:
    with DemoShop() as shop, pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(shop.url + path, timeout=10)
    assert answer.value.code == 404


def test_the_demo_shop_serves_its_own_pages() -> None:
    """The check above can fail: the shop answers at the pages the demo's manifest and plan start from."""
    with DemoShop() as shop:
        for path in ("/", "/login", "/signup", "/product", "/settings", "/broken", "/help", "/blog"):
            with urllib.request.urlopen(shop.url + path, timeout=10) as page:
                assert page.status == 200, path


def test_the_image_build_leaves_the_tests_out() -> None:
    """The Dockerfile copies the checkout into the image and installs it: .dockerignore keeps tests/ and bench/ out."""
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {"tests", "bench"} <= set(ignored)
    assert "COPY . /opt/preview-qa" in (ROOT / "Dockerfile").read_text(encoding="utf-8")
