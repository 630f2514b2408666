"""GTID sets: text form, 1772 on malformed input, set algebra against a reference model."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.gtid import MAX_GNO, GtidSet, canonical_uuid

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
U2 = "4e11fa47-71ca-11e1-9e33-c80aa9429562"
U3 = "00000000-0000-0000-0000-000000000001"


def gtids(text: str) -> GtidSet:
    return GtidSet.parse(text)


# -- parse and format -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "formatted"),
    [
        ("", ""),
        (f"{U1}:1", f"{U1}:1"),
        (f"{U1}:1-5", f"{U1}:1-5"),
        (f"{U1}:1-5:7", f"{U1}:1-5:7"),
        (f"{U1.upper()}:1-5:7", f"{U1}:1-5:7"),
        (U1.replace("-", "") + ":3", f"{U1}:3"),
        (f"{U1}:1-3:4-6", f"{U1}:1-6"),
        (f"{U1}:4-6:1-3", f"{U1}:1-6"),
        (f"{U1}:1-3,{U1}:4", f"{U1}:1-4"),
        (f"{U1}:1-10:3-4", f"{U1}:1-10"),
        (f"{U1}:5:1:3", f"{U1}:1:3:5"),
        (f"{U1}:1:2:3", f"{U1}:1-3"),
        (f"{U1}:1:1", f"{U1}:1"),
        (f"{U1}:01-003", f"{U1}:1-3"),
        (f" {U1} : 1-2 , {U1}:9 ", f"{U1}:1-2:9"),
        (f"{U2}:1,{U1}:2", f"{U1}:2,\n{U2}:1"),
        (f"{U1}:tag:1-3", f"{U1}:tag:1-3"),
        (f"{U1}:TAG_1:1:2", f"{U1}:tag_1:1-2"),
        (f"{U1}:_t:4", f"{U1}:_t:4"),
        (f"{U1}:1-3:tag:5", f"{U1}:1-3:tag:5"),
        (f"{U1}:b:1:a:2", f"{U1}:a:2:b:1"),
        (f"{U1}:tag:1,{U1}:2", f"{U1}:2:tag:1"),
        (f"{U1}:1-3:t:1-3,{U2}:t:5", f"{U1}:1-3:t:1-3,\n{U2}:t:5"),
        (f"{U1}:{MAX_GNO}", f"{U1}:{MAX_GNO}"),
        (",", ""),
    ],
)
def test_parse_and_format(text: str, formatted: str) -> None:
    parsed = gtids(text)
    assert parsed.format() == formatted
    assert str(parsed) == formatted.replace(",\n", ",")
    assert gtids(parsed.format()) == parsed


def test_format_separates_uuids_with_comma_newline() -> None:
    gtid_set = gtids(f"{U2}:1,{U1}:1,{U3}:1")
    assert gtid_set.format() == f"{U3}:1,\n{U1}:1,\n{U2}:1"
    assert gtid_set.format(", ") == f"{U3}:1, {U1}:1, {U2}:1"
    assert str(gtid_set) == f"{U3}:1,{U1}:1,{U2}:1"
    assert repr(gtid_set) == f"GtidSet('{U3}:1,{U1}:1,{U2}:1')"


def test_canonical_uuid() -> None:
    assert canonical_uuid(U1.upper()) == U1
    assert canonical_uuid(" " + U1.replace("-", "") + " ") == U1
    assert canonical_uuid(U1[:-1]) is None
    assert canonical_uuid(U1 + "0") is None
    assert canonical_uuid("g" + U1[1:]) is None


@pytest.mark.parametrize(
    "text",
    [
        "garbage",
        "1-5",
        ":1",
        f"{U1[:-1]}:1",
        f"{U1}0:1",
        f"x{U1[1:]}:1",
        f"{U1}:0",
        f"{U1}:0-3",
        f"{U1}:3-1",
        f"{U1}:1-",
        f"{U1}:-1",
        f"{U1}:",
        f"{U1}:1:",
        f"{U1}::1",
        f"{U1}:1-2-3",
        f"{U1}:x-1",
        f"{U1}:1a",
        f"{U1}:1 - 3",
        f"{U1}:1.5",
        f"{U1}:+1",
        f"{U1}:{MAX_GNO + 1}",
        f"{U1}:{'a' * 33}:1",
        f"{U1}:ta-g:1",
        f"{U1}:1,garbage",
        f"{U1}:1;{U2}:1",
    ],
)
def test_malformed_input_is_1772(text: str) -> None:
    with pytest.raises(ReplicaError) as caught:
        gtids(text)
    assert (caught.value.code, caught.value.sqlstate) == (1772, "HY000")
    assert caught.value.message == f"Malformed GTID set specification '{text}'."


def test_1772_quotes_at_most_200_characters() -> None:
    text = f"{U1}:" + "1:" * 150 + "0"
    with pytest.raises(ReplicaError) as caught:
        gtids(text)
    assert caught.value.message == f"Malformed GTID set specification '{text[:200]}'."


@pytest.mark.parametrize("digit", ["²", "१"])
def test_non_ascii_digits_are_1772(digit: str) -> None:
    with pytest.raises(ReplicaError) as caught:
        gtids(f"{U1}:{digit}")
    assert caught.value.code == 1772


# -- set operations ---------------------------------------------------------------------------


def test_contains() -> None:
    gtid_set = gtids(f"{U1}:1-5:7,{U1}:tag:9")
    assert [gtid_set.contains(U1, "", n) for n in range(9)] == [
        False,
        True,
        True,
        True,
        True,
        True,
        False,
        True,
        False,
    ]
    assert gtid_set.contains(U1, "tag", 9)
    assert not gtid_set.contains(U1, "tag", 1)
    assert not gtid_set.contains(U2, "", 1)


def test_add_and_add_interval_merge_neighbours() -> None:
    gtid_set = GtidSet()
    gtid_set.add(U1, "", 3)
    gtid_set.add(U1, "", 1)
    assert str(gtid_set) == f"{U1}:1:3"
    gtid_set.add(U1, "", 2)
    assert str(gtid_set) == f"{U1}:1-3"
    gtid_set.add_interval(U1, "", 10, 20)
    gtid_set.add_interval(U1, "", 4, 9)
    assert str(gtid_set) == f"{U1}:1-20"
    gtid_set.add_interval(U1, "", 30, 40)
    gtid_set.add_interval(U1, "", 25, 35)
    assert str(gtid_set) == f"{U1}:1-20:25-40"
    assert list(gtid_set.intervals()) == [(U1, "", 1, 20), (U1, "", 25, 40)]


def test_union_and_update() -> None:
    a = gtids(f"{U1}:1-3,{U2}:5")
    b = gtids(f"{U1}:4-6,{U1}:t:1")
    union = a.union(b)
    assert str(union) == f"{U1}:1-6:t:1,{U2}:5"
    assert str(a) == f"{U1}:1-3,{U2}:5"
    a.update(b)
    assert a == union


def test_subtract() -> None:
    a = gtids(f"{U1}:1-10,{U2}:1-3,{U1}:t:1-2")
    b = gtids(f"{U1}:3-4:8,{U2}:1-3,{U3}:1")
    assert str(a.subtract(b)) == f"{U1}:1-2:5-7:9-10:t:1-2"
    assert str(b.subtract(a)) == f"{U3}:1"
    assert not a.subtract(a)


def test_is_subset() -> None:
    small = gtids(f"{U1}:2-3")
    big = gtids(f"{U1}:1-5,{U2}:1")
    assert small.is_subset(big)
    assert not big.is_subset(small)
    assert GtidSet().is_subset(small)
    assert not gtids(f"{U1}:t:2").is_subset(big)


def test_equality_ignores_construction_and_empty_sids() -> None:
    assert gtids(f"{U1}:1-3") == gtids(f"{U1}:1,{U1}:2-3")
    assert gtids("") == GtidSet()
    assert gtids(U1) == GtidSet()
    assert gtids(f"{U1}:1") != gtids(f"{U2}:1")
    assert gtids(f"{U1}:1") != gtids(f"{U1}:t:1")
    assert GtidSet().__eq__("x") is NotImplemented
    assert not bool(GtidSet())
    assert bool(gtids(f"{U1}:1"))


def test_copy_is_independent() -> None:
    original = gtids(f"{U1}:1-3")
    copy = original.copy()
    copy.add(U1, "", 4)
    assert str(original) == f"{U1}:1-3"
    assert str(copy) == f"{U1}:1-4"


def test_from_intervals_round_trip() -> None:
    original = gtids(f"{U1}:1-3:9:t:4,{U2}:7-8")
    assert GtidSet.from_intervals(original.intervals()) == original


def test_gtid_set_is_unhashable() -> None:
    with pytest.raises(TypeError):
        hash(GtidSet())


# -- property tests against a reference model -------------------------------------------------

Gtid = tuple[str, str, int]
_SIDS = [(U1, ""), (U1, "t"), (U2, ""), (U3, "x_y")]

_gtid = st.tuples(st.sampled_from(_SIDS), st.integers(1, 40)).map(
    lambda p: (p[0][0], p[0][1], p[1])
)
_model = st.frozensets(_gtid, max_size=30)


def _build(model: frozenset[Gtid]) -> GtidSet:
    gtid_set = GtidSet()
    for uuid, tag, gno in sorted(model, key=lambda g: (g[2] * 7919) % 97):
        gtid_set.add(uuid, tag, gno)
    return gtid_set


def _members(gtid_set: GtidSet) -> frozenset[Gtid]:
    return frozenset(
        (uuid, tag, gno)
        for uuid, tag, first, last in gtid_set.intervals()
        for gno in range(first, last + 1)
    )


def _well_formed(gtid_set: GtidSet) -> bool:
    """Intervals are sorted, disjoint and not adjacent within each (uuid, tag)."""
    previous: dict[tuple[str, str], int] = {}
    for uuid, tag, first, last in gtid_set.intervals():
        if first > last or first < previous.get((uuid, tag), -1) + 2:
            return False
        previous[(uuid, tag)] = last
    return True


@settings(max_examples=200, deadline=None, database=None)
@given(_model)
def test_model_round_trip_through_text(model: frozenset[Gtid]) -> None:
    gtid_set = _build(model)
    assert _members(gtid_set) == model
    assert _well_formed(gtid_set)
    parsed = gtids(gtid_set.format())
    assert parsed == gtid_set
    assert _members(gtids(str(gtid_set))) == model
    assert gtids(parsed.format().upper()) == parsed


@settings(max_examples=200, deadline=None, database=None)
@given(_model, _model)
def test_model_union(a: frozenset[Gtid], b: frozenset[Gtid]) -> None:
    union = _build(a).union(_build(b))
    assert _members(union) == a | b
    assert _well_formed(union)


@settings(max_examples=200, deadline=None, database=None)
@given(_model, _model)
def test_model_subtract(a: frozenset[Gtid], b: frozenset[Gtid]) -> None:
    difference = _build(a).subtract(_build(b))
    assert _members(difference) == a - b
    assert _well_formed(difference)


@settings(max_examples=200, deadline=None, database=None)
@given(_model, _model)
def test_model_subset(a: frozenset[Gtid], b: frozenset[Gtid]) -> None:
    assert _build(a).is_subset(_build(b)) == (a <= b)
    assert _build(a).is_subset(_build(a | b))


@settings(max_examples=200, deadline=None, database=None)
@given(_model, st.lists(_gtid, max_size=10))
def test_model_contains(model: frozenset[Gtid], probes: list[Gtid]) -> None:
    gtid_set = _build(model)
    for uuid, tag, gno in list(model) + probes:
        assert gtid_set.contains(uuid, tag, gno) == ((uuid, tag, gno) in model)


# -- speed ------------------------------------------------------------------------------------


def test_ten_thousand_intervals_parse_and_union_quickly() -> None:
    odd = f"{U1}:" + ":".join(f"{3 * i + 1}-{3 * i + 2}" for i in range(10_000))
    rest = f"{U1}:" + ":".join(str(3 * i + 3) for i in range(10_000))
    begin = time.perf_counter()
    a = gtids(odd)
    b = gtids(rest)
    union = a.union(b)
    elapsed = time.perf_counter() - begin
    assert len(list(a.intervals())) == 10_000
    assert str(union) == f"{U1}:1-30000"
    assert elapsed < 2.0
