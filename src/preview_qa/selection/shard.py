"""`--shard I/N`: a stable, balanced share of the tests for one CI job, so that N jobs run every test exactly once."""

from __future__ import annotations

import hashlib
import re

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """'2/4' -> (2, 4); ValueError with a message a user can act on."""
    found = _SHARD.match(text)
    if not found or not 1 <= int(found.group(1)) <= int(found.group(2)):
        raise ValueError(f"--shard must look like I/N with 1 <= I <= N, e.g. 2/4 (got {text!r}).")
    return int(found.group(1)), int(found.group(2))


def assign(names: list[str], count: int) -> dict[str, int]:
    """Each test's shard (0-based): consistent hashing with bounded loads.

    Tests are placed in the order of their name's hash, each on the shard its hash points to unless that shard already
    holds its share, then on the next one. The result depends only on the set of names, never on their order in the
    manifest; adding a test moves few others; and every shard holds n//N or n//N + 1 tests."""
    floor, extra = divmod(len(names), count)
    load = [0] * count
    at_ceiling = 0
    placed: dict[str, int] = {}
    for name in sorted(names, key=_hash):
        shard = _hash(name) % count
        while load[shard] > floor or (load[shard] == floor and at_ceiling >= extra):
            shard = (shard + 1) % count
        at_ceiling += load[shard] == floor
        load[shard] += 1
        placed[name] = shard
    return placed


def in_shard(names: list[str], index: int, count: int) -> list[str]:
    """The names that shard `index` of `count` (1-based, as on the command line) runs, in their original order."""
    placed = assign(names, count)
    return [n for n in names if placed[n] == index - 1]


def _hash(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest()[:8], "big")
