"""Hypothesis strategies: columns of every type and values of the codec's value model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from spark_replica.applier_core.binlog.constants import ColumnType as T
from spark_replica.applier_core.binlog.rows import ColumnSpec, Geometry, make_column
from spark_replica.applier_core.binlog.rows.charsets import decode_latin1
from spark_replica.applier_core.binlog.rows.json_binary import JsonOpaque, JsonUInt, JsonValue
from spark_replica.applier_core.binlog.rows.json_text import to_text

UTF8MB4, LATIN1, BINARY = 255, 8, 63
ENUM_NAMES = ("new", "paid", "shipped", "ça va")
SET_NAMES = ("a", "b", "c", "d", "e", "f", "g", "h", "i")

_FSP_UNIT = {0: 1000000, 1: 100000, 2: 10000, 3: 1000, 4: 100, 5: 10, 6: 1}


def all_types_columns(*, oracle: bool = False) -> tuple[ColumnSpec, ...]:
    """One column of (nearly) every type; ``oracle`` leaves out the types mysqlbinlog cannot
    print (JSON, VECTOR)."""
    c: list[tuple[int, dict[str, Any]]] = [
        (T.LONGLONG, {"nullable": False}),
        (T.TINY, {}), (T.TINY, {"unsigned": True}), (T.SHORT, {}), (T.SHORT, {"unsigned": True}),
        (T.INT24, {}), (T.INT24, {"unsigned": True}), (T.LONG, {}), (T.LONG, {"unsigned": True}),
        (T.LONGLONG, {"unsigned": True}), (T.YEAR, {}), (T.FLOAT, {}), (T.DOUBLE, {}),
        (T.NEWDECIMAL, {"precision": 10, "scale": 2}),
        (T.NEWDECIMAL, {"precision": 65, "scale": 30}),
        (T.NEWDECIMAL, {"precision": 18, "scale": 9}), (T.NEWDECIMAL, {"precision": 1, "scale": 0}),
        (T.NEWDECIMAL, {"precision": 5, "scale": 5}), (T.NEWDECIMAL, {"precision": 38, "scale": 0}),
        (T.BIT, {"bits": 1}), (T.BIT, {"bits": 12}), (T.BIT, {"bits": 64}),
        (T.DATE, {}), (T.TIME, {}), (T.DATETIME, {}), (T.TIMESTAMP, {}),
        *[(t, {"fsp": f}) for t in (T.TIME2, T.DATETIME2, T.TIMESTAMP2) for f in range(7)],
        (T.VARCHAR, {"length": 256, "collation": UTF8MB4}),
        (T.VARCHAR, {"length": 300, "collation": LATIN1}),
        (T.VARCHAR, {"length": 16, "collation": BINARY}),
        (T.STRING, {"length": 40, "collation": UTF8MB4}),
        (T.STRING, {"length": 1020, "collation": UTF8MB4}),
        (T.STRING, {"length": 4, "collation": BINARY}),
        (T.BLOB, {"pack_length": 1, "collation": BINARY}),
        (T.BLOB, {"pack_length": 2, "collation": UTF8MB4}),
        (T.BLOB, {"pack_length": 3, "collation": LATIN1}),
        (T.BLOB, {"pack_length": 4, "collation": BINARY}),
        (T.STRING, {"real_type": T.ENUM, "members": ENUM_NAMES, "collation": UTF8MB4}),
        (T.STRING, {"real_type": T.ENUM, "pack_length": 2}),
        (T.STRING, {"real_type": T.SET, "members": SET_NAMES, "collation": UTF8MB4}),
        (T.STRING, {"real_type": T.SET, "pack_length": 8}),
        (T.GEOMETRY, {}),
    ]  # fmt: skip
    if not oracle:
        c += [(T.JSON, {}), (T.VECTOR, {"collation": BINARY})]
    return tuple(make_column(i, t, name=f"c{i}", **kw) for i, (t, kw) in enumerate(c))


def _integers(bits: int, unsigned: bool) -> st.SearchStrategy[int]:
    if unsigned:
        return st.integers(0, (1 << bits) - 1)
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def decimals(precision: int, scale: int) -> st.SearchStrategy[Decimal]:
    limit = 10**precision - 1
    edges = st.sampled_from([0, limit, -limit, 1, -1, min(limit, 10**scale), min(limit, 999999999)])
    numbers = st.integers(-limit, limit) | edges
    return numbers.map(lambda n: Decimal((int(n < 0), tuple(int(d) for d in str(abs(n))), -scale)))


def _micro(fsp: int) -> st.SearchStrategy[int]:
    unit = _FSP_UNIT[fsp]
    return st.integers(0, 999999 // unit).map(lambda n: n * unit)


def times(fsp: int) -> st.SearchStrategy[timedelta]:
    limit = (838 * 3600 + 59 * 60 + 59) * 1000000 + (999999 // _FSP_UNIT[fsp]) * _FSP_UNIT[fsp]
    unit = _FSP_UNIT[fsp]
    return st.integers(-limit // unit, limit // unit).map(
        lambda n: timedelta(microseconds=n * unit)
    )


INVALID_DATES = ("0000-00-00", "2021-02-30", "2021-00-00", "0000-01-01", "2021-04-31")


def dates() -> st.SearchStrategy[Any]:
    return st.dates() | st.sampled_from(INVALID_DATES)


def datetimes(fsp: int) -> st.SearchStrategy[Any]:
    valid = st.builds(
        lambda d, m: d.replace(microsecond=m),
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
        _micro(fsp),
    )
    frac = f".{'0' * fsp}" if fsp else ""
    invalid = st.sampled_from([f"{d} 10:20:30{frac}" for d in INVALID_DATES])
    return valid | invalid


def timestamps(fsp: int) -> st.SearchStrategy[Any]:
    frac = f".{'0' * fsp}" if fsp else ""
    valid = st.builds(
        lambda s, m: datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=s, microseconds=m),
        st.integers(1, (1 << 32) - 1),
        _micro(fsp),
    )
    return valid | st.just(f"0000-00-00 00:00:00{frac}")


LATIN1_CHARS = decode_latin1(bytes(range(256)))


def _text(collation: int | None, limit: int) -> st.SearchStrategy[Any]:
    if collation == LATIN1:
        return st.text(alphabet=LATIN1_CHARS, max_size=min(limit, 80))
    if collation == UTF8MB4:
        return st.text(max_size=min(limit // 4, 80))
    return st.binary(max_size=min(limit, 80))


def json_trees(*, opaque: bool = True) -> st.SearchStrategy[JsonValue]:
    scalars: st.SearchStrategy[JsonValue] = (
        st.none()
        | st.booleans()
        | st.integers(-(1 << 63), (1 << 63) - 1)
        | st.integers(0, (1 << 64) - 1).map(JsonUInt)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20)
    )
    if opaque:
        scalars = scalars | st.builds(
            JsonOpaque, st.sampled_from([15, 252, 253, 254]), st.binary(max_size=90)
        )
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=5)
            | st.dictionaries(st.text(max_size=8), children, max_size=5)
        ),
        max_leaves=25,
    )


def json_texts() -> st.SearchStrategy[str]:
    """JSON texts as MySQL prints them (so decoding them back gives the same text)."""
    from spark_replica.applier_core.binlog.rows.json_text import normalize_json

    return json_trees(opaque=False).map(lambda tree: normalize_json(to_text(tree)))


def values_for(spec: ColumnSpec) -> st.SearchStrategy[Any]:
    """Non-NULL values of a column."""
    kind, fsp = spec.real_type, spec.fsp or 0
    bits: dict[int, int] = {T.TINY: 8, T.SHORT: 16, T.INT24: 24, T.LONG: 32, T.LONGLONG: 64}
    if kind in bits:
        return _integers(bits[kind], spec.unsigned)
    strategies: dict[int, st.SearchStrategy[Any]] = {
        T.YEAR: st.just(0) | st.integers(1901, 2155),
        T.FLOAT: st.floats(width=32, allow_nan=False, allow_infinity=False),
        T.DOUBLE: st.floats(allow_nan=False, allow_infinity=False),
        T.DATE: dates(),
        T.TIME: times(0),
        T.DATETIME: datetimes(0),
        T.TIMESTAMP: timestamps(0),
        T.GEOMETRY: st.builds(Geometry, st.integers(0, (1 << 32) - 1), st.binary(max_size=40)),
        T.VECTOR: st.lists(st.floats(width=32, allow_nan=False), max_size=8),
        T.JSON: json_texts(),
    }
    if kind in strategies:
        return strategies[kind]
    if kind == T.NEWDECIMAL:
        return decimals(spec.precision or 10, spec.scale or 0)
    if kind == T.BIT:
        return st.integers(0, (1 << (spec.bits or 1)) - 1)
    if kind == T.TIME2:
        return times(fsp)
    if kind == T.DATETIME2:
        return datetimes(fsp)
    if kind == T.TIMESTAMP2:
        return timestamps(fsp)
    if kind == T.ENUM:
        if spec.members is None:
            return st.integers(0, 65535)
        return st.sampled_from(("", *spec.members))
    if kind == T.SET:
        if spec.members is None:
            return st.integers(0, (1 << 64) - 1)
        names = spec.members
        return st.sets(st.sampled_from(names)).map(
            lambda chosen: ",".join(n for n in names if n in chosen)
        )
    if kind in (T.VARCHAR, T.STRING):
        return _text(spec.collation, spec.max_length or 0)
    if kind == T.BLOB:
        return _text(spec.collation, (1 << (8 * (spec.pack_length or 2))) - 1)
    raise AssertionError(f"no strategy for {spec.describe()}")


def rows_for(columns: tuple[ColumnSpec, ...]) -> st.SearchStrategy[tuple[Any, ...]]:
    parts = [values_for(c) | st.none() if c.nullable else values_for(c) for c in columns]
    return st.tuples(*parts)
