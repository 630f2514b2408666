"""Binary JSON, MySQL's JSON text, and partial JSON updates."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.rows import DiffOperation, JsonDiff, apply_diffs
from spark_replica.applier_core.binlog.rows.json_binary import (
    LARGE_ARRAY,
    LARGE_OBJECT,
    SMALL_OBJECT,
    JsonOpaque,
    JsonUInt,
    decode_json,
    encode_json,
    write_varlen,
)
from spark_replica.applier_core.binlog.rows.json_diff import (
    decode_diffs,
    encode_diffs,
    parse_path,
)
from spark_replica.applier_core.binlog.rows.json_text import (
    binary_to_text,
    double_text,
    normalize_json,
    parse_json,
    text_to_binary,
    to_text,
)
from tests.unit.binlog_rows.strategies import json_trees

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _types(value: Any) -> Any:
    """The tree with each number tagged by its exact Python type (JsonUInt vs int)."""
    if isinstance(value, list):
        return [_types(v) for v in value]
    if isinstance(value, dict):
        return [(k, _types(v)) for k, v in value.items()]
    return type(value).__name__, value


@SETTINGS
@given(tree=json_trees())
def test_trees_round_trip_through_the_binary_form(tree: Any) -> None:
    raw = encode_json(tree)
    back = decode_json(raw)
    expected = parse_json(to_text(tree)) if not _has_opaque(tree) else None
    assert encode_json(back) == raw
    assert to_text(back) == binary_to_text(raw)
    if expected is not None:
        assert to_text(back) == to_text(expected)
    assert _types(_sorted(tree)) == _types(back)


def _has_opaque(value: Any) -> bool:
    if isinstance(value, list):
        return any(_has_opaque(v) for v in value)
    if isinstance(value, dict):
        return any(_has_opaque(v) for v in value.values())
    return isinstance(value, JsonOpaque)


def _sorted(value: Any) -> Any:
    from spark_replica.applier_core.binlog.rows.json_binary import key_order

    if isinstance(value, list):
        return [_sorted(v) for v in value]
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value, key=key_order)}
    return value


@SETTINGS
@given(tree=json_trees(opaque=False))
def test_printed_text_parses_back_to_the_same_document(tree: Any) -> None:
    text = to_text(tree)
    assert normalize_json(text) == to_text(_sorted(tree))
    assert normalize_json(normalize_json(text)) == normalize_json(text)
    assert binary_to_text(text_to_binary(text)) == normalize_json(text)


def test_mysql_text_format() -> None:
    document = '{"b": [true, null, 1.5, -2, "x\\ny"], "a": 1, "ccc": {}, "dd": []}'
    assert (
        normalize_json(document)
        == '{"a": 1, "b": [true, null, 1.5, -2, "x\\ny"], "dd": [], "ccc": {}}'
    )
    assert (
        to_text('\x00\x08\x09\x0a\x0c\x0d\x1f"\\/\x7fé')
        == '"\\u0000\\b\\t\\n\\f\\r\\u001f\\"\\\\/\x7fé"'
    )


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1.0, "1.0"), (0.0, "0.0"), (-0.0, "-0.0"), (1.5, "1.5"), (-2.5, "-2.5"),
        (0.1, "0.1"), (1 / 3, "0.3333333333333333"), (100.0, "100.0"), (1e14, "100000000000000.0"),
        (1e15, "1e15"), (1e20, "1e20"), (1.2345678901234567e19, "1.2345678901234567e19"),
        (123456789.123, "123456789.123"), (1e-7, "0.0000001"), (1e-15, "0.000000000000001"),
        (1e-16, "1e-16"), (1.5e-300, "1.5e-300"), (5e-324, "5e-324"), (1e300, "1e300"),
        (2.2250738585072014e-308, "2.2250738585072014e-308"),
    ],
)  # fmt: skip
def test_doubles_print_like_my_gcvt(number: float, text: str) -> None:
    assert double_text(number) == text
    assert float(text) == number


def test_opaque_scalars_print_like_mysql() -> None:
    assert to_text(JsonOpaque(15, b"U")) == '"base64:type15:VQ=="'
    assert to_text(JsonOpaque(253, b"abc")) == '"abc"'
    long = to_text(JsonOpaque(252, bytes(60)))
    assert long.startswith('"base64:type252:') and "\\n" in long  # a line break every 76 chars


def test_integer_types_follow_mysql_parsing() -> None:
    parsed = parse_json(
        "[1, -1, 4294967295, 4294967296, 18446744073709551615, 1e2, 18446744073709551616]"
    )
    assert isinstance(parsed, list)
    assert [type(v).__name__ for v in parsed] == [
        "int",
        "int",
        "int",
        "JsonUInt",
        "JsonUInt",
        "float",
        "float",
    ]
    assert encode_json(JsonUInt(5))[0] == 0x06 and encode_json(5)[0] == 0x05
    assert parse_json('{"a": 1, "a": 2}') == {"a": 2}


@pytest.mark.parametrize("text", ["{", "[1,]", "NaN", '{"a": Infinity}', "1e400", "01", ""])
def test_invalid_json_text_is_refused(text: str) -> None:
    with pytest.raises(BinlogError, match="invalid JSON text"):
        parse_json(text)


def test_large_documents_use_the_large_storage_format() -> None:
    big: Any = {"a": ["x" * 100] * 700, "b": 1}
    raw = encode_json(big)
    assert raw[0] == LARGE_OBJECT
    assert decode_json(raw) == big
    nested: Any = {"small": {"k": 1}, "big": ["y" * 70000]}  # the outer object must grow too
    raw = encode_json(nested)
    assert raw[0] == LARGE_OBJECT and decode_json(raw) == nested
    assert encode_json([["z" * 70000]])[0] == LARGE_ARRAY
    assert encode_json({"k": 1})[0] == SMALL_OBJECT


def test_inlined_scalars_in_both_formats() -> None:
    values: list[Any] = [
        None,
        True,
        False,
        -32768,
        32767,
        JsonUInt(65535),
        -(2**31),
        2**31 - 1,
        JsonUInt(2**32 - 1),
    ]
    small = encode_json(values)
    large = encode_json([*values, "w" * 70000])
    assert decode_json(small) == values
    assert decode_json(large)[:-1] == values  # type: ignore[index]


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x0c\x05ab",  # string longer than the document
        b"\x00\x01\x00\x20\x00",  # object size beyond the document
        b"\x04\x07",  # unknown literal
        b"\x0e",  # unknown type
        b"\x0c\xff\xff\xff\xff\xff",  # length over five bytes
        b"\x02\x01\x00\x07\x00\x0c\x00\x00",  # child offset inside the header
    ],
)
def test_malformed_binary_json_is_refused(raw: bytes) -> None:
    with pytest.raises(BinlogError, match="binary JSON"):
        decode_json(raw)


def test_deep_nesting_is_refused_not_a_recursion_error() -> None:
    inner: Any = 1
    for _ in range(100):
        inner = [inner]
    assert decode_json(encode_json(inner)) == inner
    with pytest.raises(BinlogError):
        encode_json([inner])
    raw = b"\x02" + b"\x01\x00\x07\x00\x02\x05\x00" * 150  # each array's only child is an array
    with pytest.raises(BinlogError):
        binary_to_text(raw)


def test_empty_json_value_is_null() -> None:
    assert binary_to_text(b"") == "null"


def test_varlen() -> None:
    for length in (0, 127, 128, 16383, 16384, 2**32 - 1):
        from spark_replica.applier_core.binlog.rows.json_binary import read_varlen

        encoded = write_varlen(length)
        assert read_varlen(encoded, 0, len(encoded)) == (length, len(encoded))


# -- partial updates --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "legs"),
    [
        ("$", []),
        ("$.a", ["a"]),
        ('$."a b".c[3]', ["a b", "c", 3]),
        ('$."q\\"x"[last]', ['q"x', -1]),
        ("$[0][last-2]", [0, -3]),
    ],
)
def test_json_paths(path: str, legs: list[Any]) -> None:
    assert parse_path(path) == legs


@pytest.mark.parametrize("path", ["a", "$.", "$[x]", "$[1", "$*", '$."open'])
def test_bad_json_paths(path: str) -> None:
    with pytest.raises(BinlogError):
        parse_path(path)


def _diff(op: DiffOperation, path: str, value: Any = None) -> JsonDiff:
    return JsonDiff(op, path, value)


R, INS, REM = DiffOperation.REPLACE, DiffOperation.INSERT, DiffOperation.REMOVE
A: list[Any] = [1, 2, {"x": None}]


@pytest.mark.parametrize(
    ("diffs", "after"),
    [
        ((_diff(R, "$.age", 26),), {"a": A, "age": 26, "name": "Joe"}),
        ((_diff(INS, "$.b", True),), {"a": A, "b": True, "age": 25, "name": "Joe"}),
        ((_diff(REM, "$.name"),), {"a": A, "age": 25}),
        ((_diff(INS, "$.a[1]", "new"),), {"a": [1, "new", *A[1:]], "age": 25, "name": "Joe"}),
        ((_diff(INS, "$.a[9]", 3),), {"a": [*A, 3], "age": 25, "name": "Joe"}),
        ((_diff(REM, "$.a[0]"), _diff(R, "$.a[last].x", [])), {"a": [2, {"x": []}], "age": 25,
                                                               "name": "Joe"}),
        ((_diff(R, "$", {"z": 1}),), {"z": 1}),
    ],
)  # fmt: skip
def test_applying_diffs(diffs: tuple[JsonDiff, ...], after: Any) -> None:
    before: Any = {"a": [1, 2, {"x": None}], "age": 25, "name": "Joe"}
    result = apply_diffs(before, diffs)
    assert result == after and list(result) == list(after)  # type: ignore[arg-type]
    assert before == {"a": [1, 2, {"x": None}], "age": 25, "name": "Joe"}
    assert decode_diffs(encode_diffs(diffs)) == diffs


@pytest.mark.parametrize(
    "diff",
    [
        _diff(R, "$.missing", 1),
        _diff(REM, "$.a[7]"),
        _diff(INS, "$.age", 1),  # exists already
        _diff(INS, "$.age.x", 1),  # parent is no container
        _diff(REM, "$"),
        _diff(R, "$.a.b", 1),
    ],
)
def test_diffs_that_do_not_apply_are_refused(diff: JsonDiff) -> None:
    with pytest.raises(BinlogError):
        apply_diffs({"a": [1], "age": 25}, (diff,))


def test_malformed_diffs_are_refused() -> None:
    with pytest.raises(BinlogError, match="operation"):
        decode_diffs(b"\x07\x01$")
    with pytest.raises(BinlogError):
        decode_diffs(b"\x00\x05$.a")
