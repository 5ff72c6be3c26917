"""The lock files the image and CI install from: they meet pyproject.toml's ranges, pin exactly, with hashes, alike."""

from __future__ import annotations

import re
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.repo import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# What the lock serves: CI's and the stand-in base's Python 3.11, the image's 3.12, on Linux.
ENVIRONMENTS = [
    {
        "python_version": v,
        "python_full_version": f"{v}.0",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }
    for v in ("3.11", "3.12")
]


def pins(name: str) -> dict[str, tuple[str, list[str]]]:
    """requirements/<name>.txt as {package: (version, hashes)}."""
    found: dict[str, tuple[str, list[str]]] = {}
    for block in re.split(r"\n(?=[a-z0-9])", (ROOT / "requirements" / f"{name}.txt").read_text(encoding="utf-8")):
        match = re.match(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==([^\s;\\]+)", block)
        if match:
            found[canonicalize_name(match.group(1))] = (match.group(2), re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return found


def wanted(name: str) -> list[Requirement]:
    requirements = [*PROJECT["project"]["dependencies"], *PROJECT["build-system"]["requires"]]
    if name == "test":
        requirements += PROJECT["project"]["optional-dependencies"]["test"]
    return [Requirement(r) for r in requirements]


@pytest.mark.parametrize("name", ["runtime", "test"])
def test_the_lock_meets_every_range_in_pyproject(name: str) -> None:
    locked = pins(name)
    for requirement in wanted(name):
        if requirement.marker and not any(requirement.marker.evaluate(env) for env in ENVIRONMENTS):
            continue
        version = locked.get(canonicalize_name(requirement.name), ("missing", []))[0]
        assert version in requirement.specifier, f"{name}.txt pins {requirement.name} {version}: run scripts/lock.sh"


@pytest.mark.parametrize("name", ["runtime", "test"])
def test_every_pin_is_exact_and_has_hashes(name: str) -> None:
    locked = pins(name)
    assert len(locked) > 50 and "playwright" in locked  # a new Playwright arrives only through the lock
    assert [package for package, (_, hashes) in locked.items() if not hashes] == []


def test_ci_tests_the_versions_the_image_ships() -> None:
    runtime, test = pins("runtime"), pins("test")
    assert {p: test.get(p, ("missing",))[0] for p in runtime} == {p: v for p, (v, _) in runtime.items()}
