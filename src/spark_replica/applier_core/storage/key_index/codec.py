"""Rows and keys as bytes, for the disk-backed key index.

Two encodings, because the index needs two different things:

* **Rows** (``encode_row``) must come back exactly: same types, same values, a ``JsonText``
  with its binary document, a ``Geometry`` as a ``Geometry``. ``marshal`` (format 4) does
  that fastest for rows of plain values (None, bool, int, float, str, bytes, list, tuple).
  A row that also holds dates, naive datetimes and times, timedeltas or Decimals is
  marshalled as a list ``[values, {position: (tag, parts)}]``: those values as plain parts
  (a date as its ordinal, a Decimal as its text), None in their place, a third of
  pickle's cost for such a row. Anything else (an aware datetime, ``JsonText``,
  ``Geometry``) goes through pickle protocol 5. Pickle output starts with the PROTO opcode
  (0x80), which no marshal output starts with, so the first byte tells them apart without
  a tag. Measured in ``docs/decisions/0018-disk-key-index.md``.
* **Keys** (``encode_key``) must be deterministic: values equal as the engine compares them
  (``==``) give equal bytes, whatever object identity or representation they have. Neither
  pickle nor marshal promises that (both memoise repeated objects; -0.0 and 0.0, Decimal
  ``1.5`` and ``1.50`` differ in them), so keys have their own tagged encoding. Integers are
  big-endian with negative numbers first, so ascending ids are appended at the end of the
  B-tree. Normalised in keys: -0.0 as 0.0, a Decimal without trailing zeros, ``bool`` as
  ``int``, ``JsonText`` as its text, ``Geometry`` as a tuple, an aware datetime as its UTC
  instant, a datetime's ``fold`` dropped. ``key_bytes`` says whether the encoding lost
  anything of that kind, so a keyless table stores the exact row only when it has to.

Both encodings are written by the native core (``spark_replica_native``, Rust, built by
``make install``) for the values it knows; it leaves the rest (a subclass of a plain type,
an aware datetime, a Decimal in a key, a string with lone surrogates) to the Python forms
here, ``encode_row_in_python`` and ``key_bytes_in_python``, which write the same format:
the tests check each against the other.

``CODEC_VERSION`` is stored in the index: an index written by another codec (or another
marshal format) is rebuilt, not misread; one of ``READABLE_CODECS`` is read as it is and
marked as this codec's.
"""

from __future__ import annotations

import marshal
import math
import pickle
import struct
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from types import ModuleType
from typing import Any, cast

from spark_replica.applier_core.binlog.rows.json_text import JsonText
from spark_replica.applier_core.storage.interface import Key, Row

CODEC_VERSION = b"2:marshal%d:pickle5" % marshal.version
#: Codecs whose rows and keys this one reads alike (version 1 marshalled no parts).
READABLE_CODECS = frozenset({b"1:marshal%d:pickle5" % marshal.version})
_MARSHAL_VERSION = 4
_PICKLE_PROTOCOL = 5
_PICKLE_FIRST_BYTE = 0x80

_NONE = b"\x00"
_NEG_INT = 0x01
_INT = 0x02
_BIG_INT = 0x03
_FLOAT = 0x04
_DECIMAL = 0x05
_STR = 0x06
_BYTES = 0x07
_DATE = 0x08
_DATETIME = 0x09
_DATETIME_UTC = 0x0A
_TIME = 0x0B
_TIMEDELTA = 0x0C
_TUPLE = 0x0D
_LIST = 0x0E

_U64 = 1 << 64
_LENGTH = struct.Struct(">I")
_DOUBLE = struct.Struct(">d")
_DATE_PARTS = struct.Struct(">HBB")
_DATETIME_PARTS = struct.Struct(">HBBBBBI")
_TIME_PARTS = struct.Struct(">BBBI")
_TIMEDELTA_PARTS = struct.Struct(">iII")


_native: ModuleType | None
try:
    import spark_replica_native as _native
except ImportError:  # not built (``make install`` builds it): the Python codec alone
    _native = None
#: The native core, for the index's entries (``entries``); None when it is not built.
NATIVE = _native


class KeyTypeError(TypeError):
    """A key holds a value of a type the key encoding does not know."""


def encode_row(row: Row) -> bytes:
    """``row`` as bytes that ``decode_row`` turns back into an identical row."""
    if _native is not None:
        encoded = _native.encode_row(row)
        if encoded is not None:
            return encoded
    return encode_row_in_python(row)


def encode_row_in_python(row: Row) -> bytes:
    """``encode_row`` without the native core (which writes the same format)."""
    global _parts_first
    if type(row) is tuple:
        # Rows come in runs of one table: the way the last row took is tried first (both
        # give the same bytes).
        if not _parts_first:
            try:
                return marshal.dumps(cast(Any, row), _MARSHAL_VERSION)
            except ValueError:
                pass
        encoded = _with_parts(row)
        _parts_first = encoded is not None
        if encoded is not None:
            return encoded
    return pickle.dumps(row, _PICKLE_PROTOCOL)


#: The last row marshalled needed ``_with_parts`` (a hint shared by the threads: a race
#: only costs a try).
_parts_first = False


def _with_parts(row: tuple[object, ...]) -> bytes | None:
    """The marshalled row, its temporal and decimal values as parts (None: a value neither
    marshal nor the parts hold)."""
    values: list[object] | None = None
    parts: dict[int, tuple[int, object]] = {}
    for position, value in enumerate(row):
        kind = type(value)
        if kind in _MARSHALLED:
            continue
        to_parts = _TO_PARTS.get(kind)
        if to_parts is None:
            return None
        part = to_parts(value)
        if part is None:
            return None
        if values is None:
            values = list(row)
        values[position] = None
        parts[position] = part
    try:
        marshalled = row if values is None else [values, parts]
        return marshal.dumps(cast(Any, marshalled), _MARSHAL_VERSION)
    except ValueError:  # a list or tuple holding what marshal does not
        return None


def decode_row(data: bytes) -> Row:
    if data[0] == _PICKLE_FIRST_BYTE:
        row: Row = pickle.loads(data)
        return row
    loaded = marshal.loads(data)
    if type(loaded) is tuple:
        return cast(Row, loaded)
    values, parts = loaded
    for position, (tag, part) in parts.items():
        values[position] = _FROM_PARTS[tag](part)
    return tuple(values)


_MARSHALLED = frozenset({int, str, bytes, float, bool, type(None), list, tuple, frozenset, set})
_DATE_PART, _DATETIME_PART, _TIME_PART, _TIMEDELTA_PART, _DECIMAL_PART = range(5)


def _datetime_parts(value: datetime) -> tuple[int, object] | None:
    if value.tzinfo is not None:
        return None
    return _DATETIME_PART, (
        value.year, value.month, value.day, value.hour, value.minute, value.second,
        value.microsecond, value.fold,
    )  # fmt: skip


def _time_parts(value: time) -> tuple[int, object] | None:
    if value.tzinfo is not None:
        return None
    return _TIME_PART, (value.hour, value.minute, value.second, value.microsecond, value.fold)


def _datetime_from(parts: tuple[int, ...]) -> datetime:
    year, month, day, hour, minute, second, micro, fold = parts
    return datetime(year, month, day, hour, minute, second, micro, fold=fold)


def _time_from(parts: tuple[int, ...]) -> time:
    hour, minute, second, micro, fold = parts
    return time(hour, minute, second, micro, fold=fold)


_TO_PARTS: dict[type, Callable[[Any], tuple[int, object] | None]] = {
    date: lambda value: (_DATE_PART, value.toordinal()),
    datetime: _datetime_parts,
    time: _time_parts,
    timedelta: lambda value: (_TIMEDELTA_PART, (value.days, value.seconds, value.microseconds)),
    Decimal: lambda value: (_DECIMAL_PART, str(value)),
}
_FROM_PARTS: dict[int, Callable[[Any], object]] = {
    _DATE_PART: date.fromordinal,
    _DATETIME_PART: _datetime_from,
    _TIME_PART: _time_from,
    _TIMEDELTA_PART: lambda parts: timedelta(*parts),
    _DECIMAL_PART: Decimal,
}


def encode_key(key: Key) -> bytes:
    """The key's bytes: equal keys (``==``), equal bytes."""
    if _native is not None:
        encoded = _native.encode_key(key)
        if encoded is not None:
            return encoded
    if len(key) == 1:
        value = key[0]
        if type(value) is int and 0 <= value < _U64:
            return b"\x02" + value.to_bytes(8, "big")
    return key_bytes(key)[0]


def key_bytes(values: tuple[object, ...]) -> tuple[bytes, bool]:
    """The deterministic encoding of ``values`` and whether ``decode_key`` gives them back
    exactly (False when a normalisation changed something)."""
    if _native is not None:
        encoded = _native.key_bytes(values)
        if encoded is not None:
            return encoded
    return key_bytes_in_python(values)


def key_bytes_in_python(values: tuple[object, ...]) -> tuple[bytes, bool]:
    """``key_bytes`` without the native core (which writes the same bytes)."""
    out = bytearray()
    exact = _encode_values(values, out)
    return bytes(out), exact


def decode_key(data: bytes) -> Key:
    """The values ``key_bytes`` encoded (in their normalised form)."""
    values, position = _decode_values(data, 0, len(data))
    if position != len(data):
        raise ValueError("trailing bytes after a key")
    return values


def _encode_values(values: tuple[object, ...] | list[object], out: bytearray) -> bool:
    exact = True
    for value in values:
        encoder = _ENCODERS.get(type(value))
        if encoder is None:
            encoder = _subclass_encoder(value)
        if not encoder(value, out):
            exact = False
    return exact


def _subclass_encoder(value: object) -> Callable[[object, bytearray], bool]:
    if isinstance(value, JsonText):
        return _inexact(_encode_str)
    if isinstance(value, bool):
        return _encode_bool
    if isinstance(value, tuple):  # Geometry and other named tuples compare as tuples
        return _inexact(_encode_tuple)
    for kind, encoder in _ENCODERS.items():
        if isinstance(value, kind) and kind is not object:
            return _inexact(encoder)
    raise KeyTypeError(f"a key value of type {type(value).__name__}: {value!r}")


def _inexact(
    encoder: Callable[[object, bytearray], bool],
) -> Callable[[object, bytearray], bool]:
    def encode(value: object, out: bytearray) -> bool:
        encoder(value, out)
        return False

    return encode


def _encode_none(value: object, out: bytearray) -> bool:
    out += _NONE
    return True


def _encode_int(value: object, out: bytearray) -> bool:
    assert isinstance(value, int)
    if 0 <= value < _U64:
        out.append(_INT)
        out += value.to_bytes(8, "big")
    elif -_U64 <= value < 0:
        out.append(_NEG_INT)
        out += (value + _U64).to_bytes(8, "big")
    else:
        _tagged_text(_BIG_INT, str(value).encode("ascii"), out)
    return True


def _encode_bool(value: object, out: bytearray) -> bool:
    _encode_int(int(bool(value)), out)
    return False


def _encode_float(value: object, out: bytearray) -> bool:
    assert isinstance(value, float)
    exact = True
    if value == 0.0 and math.copysign(1.0, value) < 0:
        value, exact = 0.0, False
    out.append(_FLOAT)
    out += _DOUBLE.pack(value)
    return exact


def _encode_decimal(value: object, out: bytearray) -> bool:
    assert isinstance(value, Decimal)
    text = _canonical_decimal(value)
    _tagged_text(_DECIMAL, text.encode("ascii"), out)
    return text == str(value)


def _canonical_decimal(value: Decimal) -> str:
    """One text per numeric value, exact at any precision (``normalize`` rounds to the
    context's 28 digits)."""
    if not value.is_finite():
        return str(value)
    if not value:
        return "0"
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    while digits[-1] == 0:
        digits = digits[:-1]
        exponent += 1
    return str(Decimal((sign, digits, exponent)))


def _encode_str(value: object, out: bytearray) -> bool:
    assert isinstance(value, str)
    _tagged_text(_STR, value.encode("utf-8", "surrogatepass"), out)
    return True


def _encode_bytes(value: object, out: bytearray) -> bool:
    assert isinstance(value, bytes)
    _tagged_text(_BYTES, value, out)
    return True


def _encode_date(value: object, out: bytearray) -> bool:
    assert isinstance(value, date)
    out.append(_DATE)
    out += _DATE_PARTS.pack(value.year, value.month, value.day)
    return True


def _encode_datetime(value: object, out: bytearray) -> bool:
    assert isinstance(value, datetime)
    exact = not value.fold
    if value.tzinfo is None:
        out.append(_DATETIME)
    else:
        if value.tzinfo is not UTC:
            exact = False
        value = value.astimezone(UTC)
        out.append(_DATETIME_UTC)
    out += _DATETIME_PARTS.pack(
        value.year, value.month, value.day, value.hour, value.minute, value.second,
        value.microsecond,
    )  # fmt: skip
    return exact


def _encode_time(value: object, out: bytearray) -> bool:
    assert isinstance(value, time)
    out.append(_TIME)
    out += _TIME_PARTS.pack(value.hour, value.minute, value.second, value.microsecond)
    return value.tzinfo is None and not value.fold


def _encode_timedelta(value: object, out: bytearray) -> bool:
    assert isinstance(value, timedelta)
    out.append(_TIMEDELTA)
    out += _TIMEDELTA_PARTS.pack(value.days, value.seconds, value.microseconds)
    return True


def _encode_tuple(value: object, out: bytearray) -> bool:
    assert isinstance(value, tuple)
    out.append(_TUPLE)
    out += _LENGTH.pack(len(value))
    return _encode_values(value, out)


def _encode_list(value: object, out: bytearray) -> bool:
    assert isinstance(value, list)
    out.append(_LIST)
    out += _LENGTH.pack(len(value))
    return _encode_values(value, out)


def _tagged_text(tag: int, data: bytes, out: bytearray) -> None:
    out.append(tag)
    out += _LENGTH.pack(len(data))
    out += data


_ENCODERS: dict[type, Callable[[object, bytearray], bool]] = {
    type(None): _encode_none,
    int: _encode_int,
    float: _encode_float,
    Decimal: _encode_decimal,
    str: _encode_str,
    bytes: _encode_bytes,
    datetime: _encode_datetime,
    date: _encode_date,
    time: _encode_time,
    timedelta: _encode_timedelta,
    tuple: _encode_tuple,
    list: _encode_list,
}


def _decode_values(data: bytes, position: int, end: int, count: int = -1) -> tuple[Key, int]:
    values: list[object] = []
    while position < end and count != 0:
        value, position = _decode_value(data, position)
        values.append(value)
        count -= 1
    if count > 0:
        raise ValueError("a key ends inside a tuple")
    return tuple(values), position


def _decode_value(data: bytes, position: int) -> tuple[object, int]:
    tag = data[position]
    position += 1
    if tag == _INT:
        return int.from_bytes(data[position : position + 8], "big"), position + 8
    if tag == _NEG_INT:
        return int.from_bytes(data[position : position + 8], "big") - _U64, position + 8
    if tag == 0:
        return None, position
    if tag == _FLOAT:
        return _DOUBLE.unpack_from(data, position)[0], position + 8
    if tag in (_STR, _BYTES, _DECIMAL, _BIG_INT):
        (length,) = _LENGTH.unpack_from(data, position)
        start = position + 4
        raw = data[start : start + length]
        if len(raw) != length:
            raise ValueError("a key ends inside a value")
        position = start + length
        if tag == _STR:
            return raw.decode("utf-8", "surrogatepass"), position
        if tag == _BYTES:
            return raw, position
        if tag == _DECIMAL:
            return Decimal(raw.decode("ascii")), position
        return int(raw), position
    if tag == _DATE:
        return date(*_DATE_PARTS.unpack_from(data, position)), position + _DATE_PARTS.size
    if tag in (_DATETIME, _DATETIME_UTC):
        year, month, day, hour, minute, second, micro = _DATETIME_PARTS.unpack_from(data, position)
        zone = UTC if tag == _DATETIME_UTC else None
        value = datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
        return value, position + _DATETIME_PARTS.size
    if tag == _TIME:
        return time(*_TIME_PARTS.unpack_from(data, position)), position + _TIME_PARTS.size
    if tag == _TIMEDELTA:
        days, seconds, micro = _TIMEDELTA_PARTS.unpack_from(data, position)
        delta = timedelta(days=days, seconds=seconds, microseconds=micro)
        return delta, position + _TIMEDELTA_PARTS.size
    if tag in (_TUPLE, _LIST):
        (count,) = _LENGTH.unpack_from(data, position)
        items, position = _decode_values(data, position + 4, len(data), count)
        return (items if tag == _TUPLE else list(items)), position
    raise ValueError(f"unknown key tag {tag:#x}")
