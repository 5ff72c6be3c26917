"""Which Chromium a run drives, found as a user has one, on Linux, macOS or Windows: the one they name (--browser-path,
else PREVIEW_QA_CHROMIUM), then Playwright's own (`python -m playwright install chromium`), then the system's. The
machine is read through `Machine`, so that each system's lookup is tested with a fake one."""

from __future__ import annotations

import functools
import os
import platform
import shlex
import shutil
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

from preview_qa.errors import SetupError

ENV = "PREVIEW_QA_CHROMIUM"
FLAG = "--browser-path"
PLAYWRIGHT = "Playwright's own Chromium"
LINUX_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")  # Debian's, Ubuntu's, Google's
MAC_APPS = ("Google Chrome.app/Contents/MacOS/Google Chrome", "Chromium.app/Contents/MacOS/Chromium")
WINDOWS_EXES = (r"Google\Chrome\Application\chrome.exe", r"Chromium\Application\chrome.exe")


@dataclass(frozen=True)
class Machine:
    """What the lookup reads of the machine it runs on."""

    system: str  # platform.system(): "Linux", "Darwin", "Windows"
    env: Mapping[str, str]
    exists: Callable[[str], bool]
    which: Callable[[str], str | None]
    listdir: Callable[[str], list[str]]  # a folder's names; none when it is not there
    playwright: Callable[[], str | None]  # where Playwright's own Chromium is (or would be: installed or not)
    python: str = field(default=sys.executable)  # the Python preview-qa runs in, whose Playwright installs the browser

    @classmethod
    def this(cls, env: Mapping[str, str]) -> Machine:
        return cls(platform.system(), env, lambda p: Path(p).is_file(), shutil.which, _names, _ask_playwright)


def find_chromium(given: str | None, env: Mapping[str, str], machine: Machine | None = None) -> str:
    """The Chromium to launch (`given`: --browser-path; `env`: the process's environment, read by the caller), or
    SetupError saying what was tried and the one command that installs one here. A path the user named that is not
    there is refused, never passed over for another browser."""
    machine = machine or Machine.this(env)
    named = [(FLAG, given), (ENV, machine.env.get(ENV) or None)]
    for where, path in named:
        if path:
            if machine.exists(path):
                return path
            raise SetupError(f"{where} {path}: no such file; give the path of a Chromium or Chrome executable.")
    tried: list[str] = []
    for where, path in _candidates(machine):
        if path and machine.exists(path):
            return path
        tried.append(f"{where} ({path})" if path and path != where else where)
    raise SetupError(
        f"no Chromium found (tried {'; '.join(tried)}); install Playwright's: {install_command(machine)} "
        f"(or give {FLAG} / {ENV} the path of a Chromium or Chrome)."
    )


def install_command(machine: Machine) -> str:
    """The one command that installs a Chromium for preview-qa on this machine: Playwright's, by the Python preview-qa
    runs in (a pipx install's `python` is not it); on Linux with the system libraries it needs."""
    quote = (lambda s: f'"{s}"' if " " in s else s) if machine.system == "Windows" else shlex.quote
    deps = " --with-deps" if machine.system == "Linux" else ""
    return f"{quote(machine.python)} -m playwright install{deps} chromium"


def _candidates(machine: Machine) -> Iterator[tuple[str, str | None]]:
    """(what, its path) in the order they are tried, each looked at only when the ones before are not there. Playwright
    is asked first when its browsers' folder has a Chromium (asking starts its driver, about a second), else last."""
    first = _playwright_has_chromium(machine)
    if first:
        yield PLAYWRIGHT, machine.playwright()
    yield from _system(machine)
    if not first:
        yield PLAYWRIGHT, machine.playwright()


def _system(machine: Machine) -> list[tuple[str, str | None]]:
    """The system's Chrome or Chromium where each system's installer puts it."""
    if machine.system == "Darwin":
        homes = ["/Applications", str(PurePosixPath(machine.env.get("HOME", "~"), "Applications"))]
        return [(path, path) for home in homes for app in MAC_APPS for path in [str(PurePosixPath(home, app))]]
    if machine.system == "Windows":
        roots = [machine.env.get(v) for v in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")]
        return [(path, path) for root in roots if root for exe in WINDOWS_EXES for path in [str(PureWindowsPath(root, exe))]]
    on_path = next((found for name in LINUX_NAMES if (found := machine.which(name))), None)
    return [("/usr/bin/chromium", "/usr/bin/chromium"), (f"{', '.join(LINUX_NAMES)} on PATH", on_path)]


def _playwright_has_chromium(machine: Machine) -> bool:
    """Whether Playwright's browsers' folder (PLAYWRIGHT_BROWSERS_PATH, else its per-system default) holds a Chromium."""
    folder = machine.env.get("PLAYWRIGHT_BROWSERS_PATH") or {
        "Darwin": str(PurePosixPath(machine.env.get("HOME", "~"), "Library", "Caches", "ms-playwright")),
        "Windows": str(PureWindowsPath(machine.env.get("LOCALAPPDATA", ""), "ms-playwright")),
    }.get(machine.system, str(PurePosixPath(machine.env.get("HOME", "~"), ".cache", "ms-playwright")))
    return any(name.startswith("chromium-") for name in machine.listdir(folder))


def _names(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


@functools.cache
def _ask_playwright() -> str | None:
    """Playwright's own Chromium's path, as Playwright says (its driver is started, no browser); on a thread of its
    own, since Playwright's sync API refuses to start inside a running event loop."""
    found: list[str | None] = [None]

    def ask() -> None:
        try:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                found[0] = p.chromium.executable_path
        except Exception:  # no Playwright driver to ask (or it failed): the other places are still tried
            found[0] = None

    thread = threading.Thread(target=ask, name="playwright-chromium-path", daemon=True)
    thread.start()
    thread.join()
    return found[0]
