"""scripts/pip_build_settings.py: the host's pip settings as the image build sees them. Every local file or folder a
setting names is mounted inside the build's HOME (and the setting points there), or left out on purpose."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pip_build_settings.py"
HOME = "/tmp"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pip_build_settings", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


settings = _script()


def _run(listed: str, tmp_path: Path) -> dict[str, list[tuple[str, ...]]]:
    """The script as test-image.sh runs it, on `pip config list` output saved to a file: its lines by kind."""
    (tmp_path / "listed.txt").write_text(listed, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(SCRIPT), HOME, str(tmp_path / "listed.txt")], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    lines: dict[str, list[tuple[str, ...]]] = {}
    for line in out.splitlines():
        kind, *rest = line.split("\t")
        lines.setdefault(kind, []).append(tuple(rest))
    return lines


def _conf(lines: dict[str, list[tuple[str, ...]]]) -> list[str]:
    return [line for (line,) in lines.get("conf", [])]


def test_a_constraints_file_is_left_out_and_not_mounted(tmp_path: Path) -> None:
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("torch<=2.14.1\n")
    lines = _run(f"global.constraint='{constraints}'\n", tmp_path)
    assert not any("constraint" in line for line in _conf(lines))
    assert lines.get("mount") is None
    assert lines["left-out"] == [("global.constraint",)]


def test_a_requirements_file_is_left_out_in_any_section(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("six\n")
    lines = _run(f"install.requirement='{requirements}'\n:env:.constraint='{requirements}'\n", tmp_path)
    assert not any(str(requirements) in line for line in _conf(lines))
    assert sorted(lines["left-out"]) == [("global.constraint",), ("install.requirement",)]


def test_find_links_folders_are_mounted_by_top_folder_and_rewritten(tmp_path: Path) -> None:
    wheels, more = tmp_path / "wheels", tmp_path / "more wheels"
    wheels.mkdir()
    more.mkdir()
    top = "/" + str(tmp_path).strip("/").split("/")[0]
    lines = _run(f":env:.find-links='{wheels} https://example.test/wheels'\n", tmp_path)
    assert f"find-links = {HOME}/.build-index{wheels} https://example.test/wheels" in _conf(lines)
    assert lines["mount"] == [(top, f"{HOME}/.build-index{top}")]


def test_file_indexes_are_mounted_and_remote_ones_kept(tmp_path: Path) -> None:
    index = tmp_path / "pypi" / "simple"
    index.mkdir(parents=True)
    top = "/" + str(tmp_path).strip("/").split("/")[0]
    listed = f"global.extra-index-url='file://{index} https://mirror.test/simple'\nglobal.index-url='https://pypi.test/simple'\n"
    lines = _run(listed, tmp_path)
    assert f"extra-index-url = file://{HOME}/.build-index{index} https://mirror.test/simple" in _conf(lines)
    assert "index-url = https://pypi.test/simple" in _conf(lines)
    assert lines["mount"] == [(top, f"{HOME}/.build-index{top}")]


def test_a_missing_local_folder_is_kept_as_it_is_and_not_mounted(tmp_path: Path) -> None:
    lines = _run(f"global.find-links='{tmp_path / 'gone'}'\n", tmp_path)
    assert f"find-links = {tmp_path / 'gone'}" in _conf(lines)
    assert lines.get("mount") is None


def test_a_cert_in_global_is_mounted_as_a_file_and_is_the_ca_bundle(tmp_path: Path) -> None:
    cert = tmp_path / "ca.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    lines = _run(f"global.cert='{cert}'\n", tmp_path)
    assert f"cert = {HOME}/.build-files{cert}" in _conf(lines)
    assert lines["mount"] == [(str(cert), f"{HOME}/.build-files{cert}")]
    assert lines["cert"] == [(str(cert),)]


def test_a_cert_in_install_is_mounted_too_and_sections_are_kept(tmp_path: Path) -> None:
    cert, client = tmp_path / "install-ca.pem", tmp_path / "client.pem"
    cert.write_text("ca\n")
    client.write_text("client\n")
    lines = _run(f"install.cert='{cert}'\ninstall.client-cert='{client}'\nglobal.timeout='60'\n", tmp_path)
    conf = _conf(lines)
    assert conf.index("[install]") < conf.index(f"cert = {HOME}/.build-files{cert}")
    assert f"client-cert = {HOME}/.build-files{client}" in conf
    assert sorted(lines["mount"]) == sorted(
        [(str(cert), f"{HOME}/.build-files{cert}"), (str(client), f"{HOME}/.build-files{client}")]
    )
    assert "[global]" in conf and "timeout = 60" in conf


def test_where_the_host_writes_is_left_out(tmp_path: Path) -> None:
    lines = _run("global.cache-dir='/var/cache/pip'\nglobal.log='/var/log/pip.log'\ninstall.target='/opt/t'\n", tmp_path)
    assert sorted(lines["left-out"]) == [("global.cache-dir",), ("global.log",), ("install.target",)]
    assert not any(path in " ".join(_conf(lines)) for path in ("/var/cache/pip", "/var/log/pip.log", "/opt/t"))


def test_values_are_read_as_pip_prints_them_escapes_and_all() -> None:
    sections = settings.parse_listed("global.find-links='/a\\n/b'\n:env:.timeout='60'\nnot a setting\n")
    assert sections == {"global": {"find-links": "/a\n/b", "timeout": "60"}}


def test_every_mount_target_is_inside_the_build_home(tmp_path: Path) -> None:
    """test-image.sh checks each target is absent from the image: that holds only for targets inside the HOME mount."""
    (tmp_path / "w").mkdir()
    cert = tmp_path / "c.pem"
    cert.write_text("c")
    plan = settings.translate({"global": {"find-links": str(tmp_path / "w"), "cert": str(cert)}}, HOME)
    assert plan.mounts and all(inside.startswith(f"{HOME}/.build-") for inside in plan.mounts.values())


def test_the_config_file_variable_itself_is_not_a_setting_for_the_build(tmp_path: Path) -> None:
    lines = _run(":env:.config-file='/dev/null'\n:env:.timeout='60'\n", tmp_path)
    assert _conf(lines) == ["[global]", "timeout = 60"]
    assert lines["left-out"] == [("global.config-file",)]
