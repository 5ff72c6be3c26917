"""Which Chromium a run drives, on each system, read through a fake machine: the one the user names (--browser-path,
then PREVIEW_QA_CHROMIUM), refused when it is not there; then Playwright's own when its folder has one, else the
system's (Debian's and Ubuntu's names, macOS's apps, Windows' Chrome) before asking Playwright; and when none is there,
an error naming what was tried and the one command that installs one, for that system's Python."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from preview_qa.agent.browsers.chromium import Machine, find_chromium
from preview_qa.errors import SetupError

PLAYWRIGHT_LINUX = "/home/ada/.cache/ms-playwright/chromium-1187/chrome-linux/chrome"


def machine(
    system: str = "Linux",
    files: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    on_path: Mapping[str, str] | None = None,
    folders: Mapping[str, list[str]] | None = None,
    playwright: str | None = PLAYWRIGHT_LINUX,
    python: str = "/home/ada/.local/pipx/venvs/preview-qa/bin/python",
) -> tuple[Machine, list[str]]:
    """A fake machine, and the list of the Playwright questions it was asked (each starts a driver on a real one)."""
    asked: list[str] = []

    def ask() -> str | None:
        asked.append("playwright")
        return playwright

    machine = Machine(
        system,
        env if env is not None else {"HOME": "/home/ada"},
        lambda p: p in files,
        lambda name: (on_path or {}).get(name),
        lambda folder: (folders or {}).get(folder, []),
        ask,
        python,
    )
    return machine, asked


def test_the_path_the_user_names_wins_and_one_that_is_not_there_is_refused() -> None:
    m, asked = machine(files=("/opt/chrome", "/usr/bin/chromium"), env={"PREVIEW_QA_CHROMIUM": "/srv/chromium"})
    assert find_chromium("/opt/chrome", {}, m) == "/opt/chrome"
    with pytest.raises(SetupError, match=r"^PREVIEW_QA_CHROMIUM /srv/chromium: no such file"):
        find_chromium(None, {}, m)  # never passed over for the system's, which is there
    with pytest.raises(SetupError, match=r"^--browser-path /nowhere/chrome: no such file"):
        find_chromium("/nowhere/chrome", {}, m)
    assert asked == []


def test_playwright_s_own_chromium_comes_first_when_its_folder_has_one() -> None:
    folders = {"/home/ada/.cache/ms-playwright": ["chromium-1187", "ffmpeg-1011"]}
    m, asked = machine(files=(PLAYWRIGHT_LINUX, "/usr/bin/chromium"), folders=folders)
    assert find_chromium(None, {}, m) == PLAYWRIGHT_LINUX
    assert asked == ["playwright"]


def test_playwright_s_folder_is_where_playwright_browsers_path_says() -> None:
    folders = {"/srv/browsers": ["chromium_headless_shell-1187", "chromium-1187"]}
    env = {"HOME": "/home/ada", "PLAYWRIGHT_BROWSERS_PATH": "/srv/browsers"}
    m, _ = machine(
        files=("/srv/browsers/chromium-1187/chrome-linux/chrome",),
        env=env,
        folders=folders,
        playwright="/srv/browsers/chromium-1187/chrome-linux/chrome",
    )
    assert find_chromium(None, {}, m) == "/srv/browsers/chromium-1187/chrome-linux/chrome"


def test_on_debian_and_ubuntu_the_system_s_chromium_is_found_without_asking_playwright() -> None:
    m, asked = machine(files=("/usr/bin/chromium",))
    assert find_chromium(None, {}, m) == "/usr/bin/chromium"
    m, asked = machine(files=("/snap/bin/chromium-browser",), on_path={"chromium-browser": "/snap/bin/chromium-browser"})
    assert find_chromium(None, {}, m) == "/snap/bin/chromium-browser"
    assert asked == []


def test_on_macos_chrome_and_chromium_apps_are_found_in_both_applications_folders() -> None:
    chrome = "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"
    m, _ = machine("Darwin", files=(chrome,), env={"HOME": "/Users/ada"})
    assert find_chromium(None, {}, m) == chrome
    mine = "/Users/ada/Applications/Chromium.app/Contents/MacOS/Chromium"
    m, _ = machine("Darwin", files=(mine,), env={"HOME": "/Users/ada"})
    assert find_chromium(None, {}, m) == mine


def test_on_windows_chrome_is_found_under_program_files_or_the_user_s_local_app_data() -> None:
    env = {"PROGRAMFILES": r"C:\Program Files", "LOCALAPPDATA": r"C:\Users\ada\AppData\Local"}
    chrome = r"C:\Users\ada\AppData\Local\Google\Chrome\Application\chrome.exe"
    m, _ = machine("Windows", files=(chrome,), env=env)
    assert find_chromium(None, {}, m) == chrome


@pytest.mark.parametrize(
    ("system", "python", "command"),
    [
        (
            "Linux",
            "/home/ada/.local/pipx/venvs/preview-qa/bin/python",
            "/home/ada/.local/pipx/venvs/preview-qa/bin/python -m playwright install --with-deps chromium",
        ),
        ("Darwin", "/Users/ada/.venv/bin/python", "/Users/ada/.venv/bin/python -m playwright install chromium"),
        (
            "Windows",
            r"C:\Program Files\Python312\python.exe",
            r'"C:\Program Files\Python312\python.exe" -m playwright install chromium',
        ),
    ],
)
def test_none_found_names_what_was_tried_and_the_one_command_that_installs_one(system: str, python: str, command: str) -> None:
    m, asked = machine(system, env={"HOME": "/home/ada", "PROGRAMFILES": r"C:\Program Files"}, python=python)
    with pytest.raises(SetupError) as raised:
        find_chromium(None, {}, m)
    said = str(raised.value)
    assert said.startswith("no Chromium found (tried ") and f"install Playwright's: {command} (or give" in said, said
    assert "Playwright's own Chromium" in said and asked == ["playwright"]  # asked last: its folder had none
    assert "apt-get" not in said
    expected_place = {
        "Linux": "/usr/bin/chromium",
        "Darwin": "/Applications/Google Chrome.app",
        "Windows": r"C:\Program Files\Google\Chrome",
    }
    assert expected_place[system] in said
