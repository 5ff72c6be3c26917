"""--shard I/N: every test runs in exactly one shard, shards differ by at most one test, manifest order does not matter."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preview_qa.selection.shard import assign, in_shard, parse_shard

NAMES = st.lists(st.text(min_size=1, max_size=30), unique=True, max_size=60)


@given(names=NAMES, count=st.integers(1, 9))
def test_every_test_runs_in_exactly_one_shard_and_shards_are_balanced(names: list[str], count: int) -> None:
    shards = [in_shard(names, i, count) for i in range(1, count + 1)]
    assert sorted(n for shard in shards for n in shard) == sorted(names)
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1


@given(names=NAMES, count=st.integers(1, 9), data=st.data())
def test_the_manifest_order_does_not_move_a_test(names: list[str], count: int, data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(names))
    assert assign(shuffled, count) == assign(names, count)


def test_adding_a_test_moves_few_others() -> None:
    names = [f"test {i}" for i in range(200)]
    before, after = assign(names, 4), assign([*names, "a new test"], 4)
    moved = sum(1 for n in names if before[n] != after[n])
    assert moved <= 10  # round-robin over a sorted list would move about half of them


def test_each_shard_keeps_the_manifest_order() -> None:
    names = [f"t{i}" for i in range(10)]
    for i in (1, 2, 3):
        shard = in_shard(names, i, 3)
        assert shard == sorted(shard, key=names.index)


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "2", "a/b", "1/3/4", ""])
def test_a_malformed_shard_is_refused_with_the_expected_form(text: str) -> None:
    with pytest.raises(ValueError, match=r"--shard must look like I/N"):
        parse_shard(text)


def test_a_shard_parses() -> None:
    assert parse_shard("2/4") == (2, 4) and parse_shard(" 1 / 1 ") == (1, 1)
