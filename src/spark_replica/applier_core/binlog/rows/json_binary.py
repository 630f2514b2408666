"""MySQL's binary JSON format (``sql-common/json_binary.cc``): decode and encode.

A document decodes to a tree of Python values: ``None``, ``bool``, ``int`` (``JsonUInt`` for
values MySQL stores as unsigned), ``float``, ``str``, ``list``, ``dict`` (keys in MySQL's order:
shorter first, then bytewise) and ``JsonOpaque`` for MySQL-typed scalars (DECIMAL, DATE,
TIME, DATETIME, ... inside JSON). Encoding makes the same choices as MySQL's serializer
(smallest integer type, inlined scalars, the small storage format unless a container needs
the large one), so a tree decoded from MySQL's bytes encodes back to them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Union

from spark_replica.applier_core.binlog.errors import BinlogError

SMALL_OBJECT, LARGE_OBJECT, SMALL_ARRAY, LARGE_ARRAY = 0x00, 0x01, 0x02, 0x03
LITERAL, INT16, UINT16, INT32, UINT32, INT64, UINT64, DOUBLE, STRING = range(0x04, 0x0D)
OPAQUE = 0x0F
NULL_LITERAL, TRUE_LITERAL, FALSE_LITERAL = 0, 1, 2
MAX_DEPTH = 100


class JsonUInt(int):
    """An integer MySQL stores with an unsigned JSON type (UINT16/UINT32/UINT64)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class JsonOpaque:
    """A MySQL-typed scalar in a JSON document: ``field_type`` is an enum_field_types code."""

    field_type: int
    data: bytes


JsonValue = Union[  # noqa: UP007 (a recursive alias needs the string forms)
    None, bool, int, float, str, "list[JsonValue]", "dict[str, JsonValue]", JsonOpaque
]

_FIXED = {
    INT16: struct.Struct("<h"), UINT16: struct.Struct("<H"), INT32: struct.Struct("<i"),
    UINT32: struct.Struct("<I"), INT64: struct.Struct("<q"), UINT64: struct.Struct("<Q"),
    DOUBLE: struct.Struct("<d"),
}  # fmt: skip
_UNSIGNED = frozenset({UINT16, UINT32, UINT64})


def _bad(why: str) -> BinlogError:
    return BinlogError(f"invalid binary JSON: {why}")


def read_varlen(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """A length stored 7 bits per byte, low bits first (at most 5 bytes)."""
    value = 0
    for i in range(5):
        if pos + i >= end:
            raise _bad("truncated length")
        byte = data[pos + i]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            if value > 0xFFFFFFFF:
                raise _bad("length exceeds 32 bits")
            return value, pos + i + 1
    raise _bad("length is longer than 5 bytes")


def write_varlen(length: int) -> bytes:
    out = bytearray()
    while True:
        byte = length & 0x7F
        length >>= 7
        if length:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def decode_json(data: bytes) -> JsonValue:
    """The tree of a binary JSON document (type byte, then the value)."""
    if not data:
        raise _bad("empty document")
    return _value(data[0], data, 1, len(data), 0)


def scalar(kind: int, data: bytes, pos: int, end: int) -> JsonValue:
    fixed = _FIXED.get(kind)
    if fixed is not None:
        if pos + fixed.size > end:
            raise _bad("truncated number")
        number = fixed.unpack_from(data, pos)[0]
        return JsonUInt(number) if kind in _UNSIGNED else number
    if kind == LITERAL:
        if pos >= end:
            raise _bad("truncated literal")
        return _literal(data[pos])
    if kind == STRING:
        length, start = read_varlen(data, pos, end)
        if start + length > end:
            raise _bad("truncated string")
        try:
            return data[start : start + length].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _bad(f"string is not utf8mb4: {exc}") from None
    if kind == OPAQUE:
        if pos >= end:
            raise _bad("truncated opaque value")
        length, start = read_varlen(data, pos + 1, end)
        if start + length > end:
            raise _bad("truncated opaque value")
        return JsonOpaque(data[pos], data[start : start + length])
    raise _bad(f"unknown value type 0x{kind:02x}")


def _literal(code: int) -> JsonValue:
    if code == NULL_LITERAL:
        return None
    if code == TRUE_LITERAL:
        return True
    if code == FALSE_LITERAL:
        return False
    raise _bad(f"unknown literal {code}")


def _value(kind: int, data: bytes, pos: int, end: int, depth: int) -> JsonValue:
    if kind > LARGE_ARRAY:
        return scalar(kind, data, pos, end)
    if depth >= MAX_DEPTH:
        raise _bad(f"document nested deeper than {MAX_DEPTH}")
    keys, children, end = container_entries(kind, data, pos, end)
    values = [_value(k, data, p, end, depth + 1) if v is NOT_INLINED else v for k, p, v in children]
    return values if keys is None else dict(zip(keys, values, strict=True))


#: Marks a container child stored at an offset rather than inlined in its entry.
NOT_INLINED: Any = object()
Child = tuple[int, int, Any]


_HEAD = (struct.Struct("<HH"), struct.Struct("<II"))
_VALUE_ENTRY = (struct.Struct("<BH"), struct.Struct("<BI"))
_KEY_ENTRY = (struct.Struct("<HH"), struct.Struct("<IH"))
_SMALL_INLINE = frozenset({LITERAL, INT16, UINT16})
_LARGE_INLINE = frozenset({LITERAL, INT16, UINT16, INT32, UINT32})


def container_entries(
    kind: int, data: bytes, base: int, end: int
) -> tuple[list[str] | None, list[Child], int]:
    """Validate a container's header: (keys, or None for an array; per child (type, position,
    inlined value or ``NOT_INLINED``); the container's end)."""
    large = kind in (LARGE_OBJECT, LARGE_ARRAY)
    size = 4 if large else 2
    if base + 2 * size > end:
        raise _bad("truncated container header")
    count, total = _HEAD[large].unpack_from(data, base)
    if total > end - base or total < 2 * size:
        raise _bad("container size exceeds the document")
    is_object = kind in (SMALL_OBJECT, LARGE_OBJECT)
    key_entry = size + 2 if is_object else 0
    header = 2 * size + count * (key_entry + 1 + size)
    if header > total:
        raise _bad("container entries exceed its size")
    entries = base + 2 * size + count * key_entry
    inline_types = _LARGE_INLINE if large else _SMALL_INLINE
    children: list[Child] = []
    append = children.append
    for child, offset in _VALUE_ENTRY[large].iter_unpack(data[entries : base + header]):
        if child in inline_types:
            append((child, 0, _inline(child, offset)))
        elif header <= offset < total:
            append((child, base + offset, NOT_INLINED))
        else:
            raise _bad("value offset outside its container")
    if not is_object:
        return None, children, base + total
    keys: list[str] = []
    for offset, length in _KEY_ENTRY[large].iter_unpack(data[base + 2 * size : entries]):
        if offset < header or offset + length > total:
            raise _bad("key outside its container")
        try:
            keys.append(data[base + offset : base + offset + length].decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise _bad(f"key is not utf8mb4: {exc}") from None
    return keys, children, base + total


def _inline(kind: int, raw: int) -> JsonValue:
    """A value inlined in its entry's offset field (read as an unsigned number)."""
    if kind == LITERAL:
        return _literal(raw & 0xFF)
    if kind == INT16:
        raw &= 0xFFFF
        return raw - 0x10000 if raw & 0x8000 else raw
    if kind == UINT16:
        return JsonUInt(raw & 0xFFFF)
    if kind == INT32:
        return raw - 0x100000000 if raw & 0x80000000 else raw
    return JsonUInt(raw)


# -- encoding -----------------------------------------------------------------------------------


class _TooBig(Exception):
    pass


def key_order(key: str) -> tuple[int, bytes]:
    """MySQL's member order: shorter keys first, then bytewise."""
    raw = key.encode("utf-8")
    return len(raw), raw


def encode_json(value: JsonValue) -> bytes:
    """The binary form of a tree, as MySQL's ``json_binary::serialize`` writes it."""
    try:
        kind, payload = _encode(value, 0, small_parent=False)
    except _TooBig:
        raise BinlogError("JSON document is too large for the binary format") from None
    except UnicodeEncodeError as exc:
        raise BinlogError(f"JSON text is not valid Unicode: {exc}") from None
    return bytes((kind,)) + payload


def _int_kind(value: int) -> tuple[int, bytes]:
    if isinstance(value, JsonUInt) or value > 0x7FFFFFFFFFFFFFFF:
        if not 0 <= value <= 0xFFFFFFFFFFFFFFFF:
            raise BinlogError(f"JSON integer {value} does not fit 64 bits")
        if value <= 0xFFFF:
            return UINT16, _FIXED[UINT16].pack(value)
        if value <= 0xFFFFFFFF:
            return UINT32, _FIXED[UINT32].pack(value)
        return UINT64, _FIXED[UINT64].pack(value)
    if -0x8000 <= value <= 0x7FFF:
        return INT16, _FIXED[INT16].pack(value)
    if -0x80000000 <= value <= 0x7FFFFFFF:
        return INT32, _FIXED[INT32].pack(value)
    if value < -0x8000000000000000:
        raise BinlogError(f"JSON integer {value} does not fit 64 bits")
    return INT64, _FIXED[INT64].pack(value)


def _encode(value: JsonValue, depth: int, small_parent: bool) -> tuple[int, bytes]:
    if value is None:
        return LITERAL, bytes((NULL_LITERAL,))
    if value is True or value is False:
        return LITERAL, bytes((TRUE_LITERAL if value else FALSE_LITERAL,))
    if isinstance(value, int):
        return _int_kind(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise BinlogError("JSON cannot hold NaN or infinity")
        return DOUBLE, _FIXED[DOUBLE].pack(value)
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return STRING, write_varlen(len(raw)) + raw
    if isinstance(value, JsonOpaque):
        return OPAQUE, bytes((value.field_type,)) + write_varlen(len(value.data)) + value.data
    if isinstance(value, list | dict):
        if depth >= MAX_DEPTH:
            raise BinlogError(f"JSON document nested deeper than {MAX_DEPTH}")
        is_object = isinstance(value, dict)
        small = SMALL_OBJECT if is_object else SMALL_ARRAY
        large = LARGE_OBJECT if is_object else LARGE_ARRAY
        try:
            return small, _container_bytes(value, depth, False)
        except _TooBig:
            if small_parent:
                raise
        return large, _container_bytes(value, depth, True)
    raise BinlogError(f"not a JSON value: {value!r}")


def _inlined(value: JsonValue, large: bool) -> tuple[int, int] | None:
    if value is None:
        return LITERAL, NULL_LITERAL
    if value is True or value is False:
        return LITERAL, TRUE_LITERAL if value else FALSE_LITERAL
    if isinstance(value, int):
        unsigned = isinstance(value, JsonUInt) or value > 0x7FFFFFFFFFFFFFFF
        if unsigned:
            if value <= 0xFFFF:
                return UINT16, value
            if large and value <= 0xFFFFFFFF:
                return UINT32, value
        elif -0x8000 <= value <= 0x7FFF:
            return INT16, value
        elif large and -0x80000000 <= value <= 0x7FFFFFFF:
            return INT32, value
    return None


Container = list[JsonValue] | dict[str, JsonValue]


def _container_bytes(value: Container, depth: int, large: bool) -> bytes:
    size = 4 if large else 2
    limit = 0xFFFFFFFF if large else 0xFFFF
    mask = limit
    if isinstance(value, dict):
        members = sorted(value.items(), key=lambda item: key_order(item[0]))
        keys = [k.encode("utf-8") for k, _ in members]
        items = [v for _, v in members]
    else:
        keys, items = [], list(value)
    count = len(items)
    if count > limit:
        raise _TooBig
    key_entry = size + 2 if isinstance(value, dict) else 0
    header = 2 * size + count * (key_entry + 1 + size)
    offset = header
    key_entries = bytearray()
    for key in keys:
        if len(key) > 0xFFFF:
            raise BinlogError("JSON object key is longer than 65535 bytes")
        if offset > limit:
            raise _TooBig
        key_entries += offset.to_bytes(size, "little") + len(key).to_bytes(2, "little")
        offset += len(key)
    body = bytearray(b"".join(keys))
    value_entries = bytearray()
    for item in items:
        inline = _inlined(item, large)
        if inline is not None:
            kind, number = inline
            value_entries += bytes((kind,)) + (number & mask).to_bytes(size, "little")
            continue
        position = header + len(body)
        if position > limit:
            raise _TooBig
        kind, payload = _encode(item, depth + 1, small_parent=not large)
        value_entries += bytes((kind,)) + position.to_bytes(size, "little")
        body += payload
    total = header + len(body)
    if total > limit:
        raise _TooBig
    head = count.to_bytes(size, "little") + total.to_bytes(size, "little")
    return head + bytes(key_entries) + bytes(value_entries) + bytes(body)
