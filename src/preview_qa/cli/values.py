"""Flag values read into what a RunConfig holds: URLs, basic auth, headers, changed files, the budgets and the
shard, the tests that failed last time; a value the user can fix is a UsageError naming its flag."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from preview_qa.errors import PreviewQaError
from preview_qa.manifest.models import APP_NAME

if TYPE_CHECKING:
    from preview_qa.selection.changed_files import ChangedFiles


class UsageError(PreviewQaError):
    """A flag's value the user can fix."""


def parse_base_url(url: str, option: str = "--base-url") -> str:
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"{option} must start with http:// or https:// (got {url!r}).")
    return url.rstrip("/")


def parse_previews(values: tuple[str, ...], apps: dict[str, str]) -> tuple[str | None, dict[str, str]]:
    """--base-url, repeated: at most one plain URL (the preview of the tests without app:; None when only apps' were
    given, here or in the manifest's `apps:`: a test without app: is then refused, selection/select.py), and NAME=URL
    for each app of a monorepo with a preview of its own, over the manifest's `apps:`."""
    plain, named = [], dict(apps)
    for value in (v.strip() for v in values if v.strip()):  # the action's input: one per line
        name, sep, url = value.partition("=")
        if sep and "://" not in name:
            if not re.fullmatch(APP_NAME, name):
                raise UsageError(f"--base-url {value!r}: {name!r} is no app name (a folder, apps/web, or its name, web).")
            named[name] = parse_base_url(url, f"--base-url {name}=")
        else:
            plain.append(parse_base_url(value))
    if len(plain) > 1:
        raise UsageError(
            f"--base-url: give the preview's URL once (got {', '.join(plain)}); NAME=URL values add the previews of a "
            "monorepo's apps."
        )
    if not plain and not named:
        raise UsageError("--base-url: give the preview's URL (Missing option '--base-url').")
    return (plain[0] if plain else None), named


def read_last_failed(results: Path, names: list[str]) -> list[str]:
    """--last-failed: the tests that failed or errored in `results`/results.json, each one of the manifest's `names`."""
    path = results / "results.json"
    try:
        tests = json.loads(path.read_text(encoding="utf-8"))["tests"]
        failed = [str(t["name"]) for t in tests if t["status"] in ("failed", "errored")]
    except OSError as e:
        raise UsageError(
            f"--last-failed reads {path}, which could not be read ({e.strerror}): give --results DIR, the --out of that run."
        ) from None
    except (ValueError, KeyError, TypeError):
        raise UsageError(
            f"--last-failed: {path} is no results.json of a run; give --results DIR, the --out of that run."
        ) from None
    unknown = [n for n in failed if n not in names]
    if unknown:
        raise UsageError(f"--last-failed: {path} names no test of the manifest called {', '.join(map(repr, unknown))}.")
    if not failed:
        raise UsageError(f"--last-failed: no test failed or errored in {path}; there is nothing to run again.")
    return failed


def parse_credentials(value: str | None) -> tuple[str, str] | None:
    if not value or not value.strip():  # an action input left empty
        return None
    user, sep, password = value.strip().partition(":")
    if not sep or not user or not password:
        raise UsageError("--http-credentials must look like 'user:password' (the password itself may hold ':').")
    return user, password


def parse_headers(values: tuple[str, ...]) -> dict[str, str]:
    headers = {}
    for value in values:
        if not value.strip():  # blank lines of a multi-line INPUT_EXTRA-HEADERS
            continue
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--extra-header must look like 'Name: value' (got {value!r}).")
        headers[name.strip()] = content.strip()
    return headers


def read_changed_files(source: str | None, changed_only: bool) -> list[str] | None:
    """`run`'s changed files: None (every test runs) when none were given, or the list is empty or cannot be had."""
    found = _changed(source, changed_only)
    _say(found.said(": a test with paths runs only if one matches", "; running every test"))
    return found.files or None


def read_changed_files_to_plan(
    source: str | None, changed_only: bool, who: str = "plan", none: str = ": no changed route to plan for"
) -> list[str] | None:
    """`plan`'s (or `explore`'s: `who`) changed files: [] for an empty list (a change of nothing: nothing to plan from
    it), None for none."""
    found = _changed(source, changed_only)
    _say(found.said("", none), who)
    return found.files


def _changed(source: str | None, changed_only: bool) -> ChangedFiles:
    from preview_qa.selection.changed_files import changed_files

    return changed_files(source, changed_only, os.environ, sys.stdin)


def _say(note: str | None, who: str = "preview-qa") -> None:
    if note:
        click.echo(f"{who}: {note}", err=True)


def speed_config(
    cache: Path,
    no_cache: bool,
    max_tokens: int | None,
    max_cost_usd: float | None,
    run_max_tokens: int | None,
    run_max_cost_usd: float | None,
    price_per_mtok: str | None,
    shard: str | None,
) -> dict[str, Any]:
    from preview_qa.selection.shard import parse_shard

    try:
        parsed = parse_shard(shard) if shard else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    price = price_given(price_per_mtok)
    return {
        "cache": None if no_cache else cache,
        "max_tokens": max_tokens,
        "max_cost_usd": max_cost_usd,
        "run_max_tokens": run_max_tokens,
        "run_max_cost_usd": run_max_cost_usd,
        "price_per_mtok": price,
        "shard": parsed,
    }


def price_given(price_per_mtok: str | None) -> tuple[float, float] | None:
    """--price-per-mtok IN,OUT as numbers (None: not given)."""
    from preview_qa.engine.pricing import parse_override

    try:
        return parse_override(price_per_mtok) if price_per_mtok else None
    except ValueError as e:
        raise UsageError(str(e)) from None


def browser_access(
    browser_path: str | None, headed: bool, extra_headers: tuple[str, ...], http_credentials: str | None
) -> dict[str, Any]:
    """The RunConfig fields of how the browser starts and reaches a protected preview (`plan`, `explore`)."""
    return {
        "chromium": browser_path,
        "headless": not headed,
        "extra_headers": parse_headers(extra_headers),
        "http_credentials": parse_credentials(http_credentials),
    }
