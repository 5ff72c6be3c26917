#!/usr/bin/env python3
"""pip's settings on this machine, translated for the image build (scripts/test-image.sh): stdlib only.

The build runs in a container that sees none of the host's files, so every setting that names a local file or folder
is either mounted read-only inside the build's HOME (and the setting rewritten to point there), or deliberately left
out. Prints one tab-separated line per instruction:

    conf    <a line of the pip.conf to write in the build's HOME>
    mount   <host path>  <path inside the build's HOME>
    cert    <host CA bundle, mounted over the base's for apt and pip>

    python3 scripts/pip_build_settings.py HOME [LISTED]   # LISTED: a file with `pip config list`'s output (tests)
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlparse

# Where packages come from: a local folder or file:// index is mounted (its whole top folder: an index's pages link
# to ../../files/...), a remote URL is kept as it is.
INDEX_SETTINGS = ("index-url", "extra-index-url", "find-links")
# Files pip reads to reach the index (TLS): mounted one by one.
FILE_SETTINGS = ("cert", "client-cert")
# Left out on purpose. `constraint` and `requirement` narrow or widen what the host itself installs (this machine's
# site-wide config caps torch, which our lock does not use); the image installs exactly the lock, as the release
# build on GitHub does, so a host's policy has no say in it. The others name where the host writes (its cache, log,
# install target): in the build they would leave host paths or files behind in the image's layers. `config-file`
# (PIP_CONFIG_FILE) names the file the host's pip read; the build reads the pip.conf written from these lines.
HOST_ONLY_SETTINGS = ("constraint", "requirement", "cache-dir", "log", "target", "prefix", "root", "src", "report",
                      "config-file")
ENV_SECTIONS = (":env:", "env_var")  # PIP_* variables: pip reads them as global settings


@dataclass
class Plan:
    """What the build gets: pip.conf lines, read-only mounts (host path -> path in HOME), the CA bundle, and what was
    left out (setting names, for the log)."""

    conf: list[str] = field(default_factory=list)
    mounts: dict[str, str] = field(default_factory=dict)
    cert: str = ""
    left_out: list[str] = field(default_factory=list)


def parse_listed(listed: str) -> dict[str, dict[str, str]]:
    """`pip config list` output (`section.name='value'`, the value a Python repr) as {section: {name: value}}."""
    sections: dict[str, dict[str, str]] = {}
    for line in listed.splitlines():
        key, sep, raw = line.partition("=")
        if not sep:
            continue
        section, _, name = key.rpartition(".")
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw.strip("'\"")
        section = "global" if section in ENV_SECTIONS else section
        sections.setdefault(section, {})[name] = str(value)
    return sections


def translate(sections: dict[str, dict[str, str]], home: str, exists: Callable[[str], bool] = os.path.exists,
              default_cert: str = "/etc/ssl/certs/ca-certificates.crt") -> Plan:
    """The build's settings: local paths moved under HOME (mounted read-only there), host-only settings left out."""
    plan = Plan()

    def index_entry(entry: str) -> str:
        path = urlparse(entry).path if entry.startswith("file:") else entry
        if not path.startswith("/") or not exists(path):
            return entry  # a remote index, or nothing the build could see anyway
        top = "/" + path.strip("/").split("/")[0]
        plan.mounts[top] = f"{home}/.build-index{top}"
        return f"file://{home}/.build-index{path}" if entry.startswith("file:") else f"{home}/.build-index{path}"

    def file_entry(path: str) -> str:
        if not path.startswith("/") or not exists(path):
            return path
        real = os.path.realpath(path)
        plan.mounts[real] = f"{home}/.build-files{real}"
        return f"{home}/.build-files{real}"

    for section, values in sections.items():
        plan.conf.append(f"[{section}]")
        for name, value in values.items():
            if name in HOST_ONLY_SETTINGS:
                plan.left_out.append(f"{section}.{name}")
                continue
            if name in INDEX_SETTINGS:
                value = " ".join(index_entry(v) for v in value.split())
            elif name in FILE_SETTINGS:
                value = file_entry(value)
            plan.conf.append(f"{name} = {value}")
    cert = sections.get("global", {}).get("cert") or os.environ.get("SSL_CERT_FILE") or default_cert
    plan.cert = os.path.realpath(cert)
    return plan


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    home = argv[1]
    if len(argv) == 3:
        with open(argv[2], encoding="utf-8") as f:
            listed = f.read()
    else:
        listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                                check=True).stdout
    plan = translate(parse_listed(listed), home)
    lines = [f"conf\t{line}" for line in plan.conf]
    lines += [f"mount\t{host}\t{inside}" for host, inside in plan.mounts.items()]
    lines += [f"left-out\t{name}" for name in plan.left_out]
    lines.append(f"cert\t{plan.cert}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
