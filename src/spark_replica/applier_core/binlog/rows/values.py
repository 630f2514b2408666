"""The value model: how each column type's bytes become a Python value, and back.

=====================  ====================================================================
MySQL type             Python value
=====================  ====================================================================
TINYINT..BIGINT        ``int`` (unsigned when the SIGNEDNESS metadata says so)
YEAR                   ``int`` (0 for the zero year)
FLOAT / DOUBLE         ``float`` (FLOAT: the exact float32 value)
DECIMAL                ``decimal.Decimal`` with the column's scale
BIT                    ``int`` (``bit_bytes`` gives the big-endian bytes)
DATE                   ``datetime.date``, or text such as ``'0000-00-00'`` (see temporal)
TIME                   ``datetime.timedelta`` (negative allowed)
DATETIME               naive ``datetime.datetime``, or text for zero/invalid dates
TIMESTAMP              aware UTC ``datetime.datetime``; ``'0000-00-00 00:00:00'`` for 0
CHAR/VARCHAR/TEXT      ``str`` for utf8mb4, utf8mb3, latin1 and ascii; ``bytes`` otherwise
BINARY/VARBINARY/BLOB  ``bytes``
ENUM                   member name (``''`` for index 0), or the 1-based index without names
SET                    comma-joined member names, or the bitmap ``int`` without names
JSON                   JSON text as MySQL prints it (an empty value is ``'null'``)
GEOMETRY               ``Geometry(srid, wkb)``
VECTOR                 ``list[float]`` of float32 values
=====================  ====================================================================

A ``Codec`` describes one column for the row decoder compiler: a fixed-size value is a
``struct`` field plus an optional conversion, a variable one a little-endian length prefix of
``prefix`` bytes followed by the payload. ``encode`` writes a value back (prefix included).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.rows.charsets import BINARY, TEXT_CODECS
from spark_replica.applier_core.binlog.rows.columns import ColumnSpec, T
from spark_replica.applier_core.binlog.rows.decimal import (
    decimal_decoder,
    decimal_size,
    encode_decimal,
)
from spark_replica.applier_core.binlog.rows.json_text import (
    JsonText,
    binary_to_text,
    text_to_binary,
)
from spark_replica.applier_core.binlog.rows.temporal import (
    FRAC,
    datetime2_decoder,
    datetime2_encoder,
    decode_date,
    decode_datetime_old,
    decode_time_old,
    decode_timestamp_old,
    encode_date,
    encode_datetime_old,
    encode_time_old,
    encode_timestamp_old,
    time2_decoder,
    time2_encoder,
    timestamp2_decoder,
    timestamp2_encoder,
)


class Geometry(NamedTuple):
    """A GEOMETRY value: the spatial reference id and the WKB bytes after it."""

    srid: int
    wkb: bytes


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"


#: Marks a column that the row image does not include (its bit in columns_present is 0).
ABSENT: Any = _Absent()


@dataclass(frozen=True, slots=True)
class Codec:
    spec: ColumnSpec
    #: Fixed value size in bytes (0 for variable-length values and for the NULL type).
    size: int
    #: ``struct`` format of a fixed-size value (little-endian); '' for variable values.
    fmt: str
    #: Length-prefix size of a variable-length value; 0 for fixed-size values.
    prefix: int
    #: Raw value (struct field or payload bytes) -> value; None keeps the raw value.
    convert: Callable[[Any], Any] | None
    #: The conversion as an expression over ``{v}`` for generated code (None: call convert).
    inline: str | None
    encode: Callable[[Any], bytes]


def bit_bytes(value: int, bits: int) -> bytes:
    """The big-endian bytes of a BIT(bits) value."""
    return value.to_bytes((bits + 7) // 8, "big")


def _fail(spec: ColumnSpec, what: str) -> BinlogError:
    return BinlogError(f"{spec.describe()}: {what}")


def _packer(spec: ColumnSpec, fmt: str) -> Callable[[Any], bytes]:
    packer = struct.Struct("<" + fmt).pack

    def encode(value: Any) -> bytes:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise _fail(spec, f"{value!r} is not a number")
        try:
            return packer(value)
        except struct.error as exc:
            raise _fail(spec, f"{value!r} out of range ({exc})") from None

    return encode


def _fixed(spec: ColumnSpec, fmt: str, convert: Callable[[Any], Any] | None,
           encode: Callable[[Any], bytes], inline: str | None = None) -> Codec:  # fmt: skip
    return Codec(spec, struct.calcsize("<" + fmt), fmt, 0, convert, inline, encode)


def _raw(spec: ColumnSpec, size: int, unconvert: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    def encode(value: Any) -> bytes:
        raw = unconvert(value)
        if len(raw) != size:
            raise _fail(spec, f"{value!r} encodes to {len(raw)} bytes, not {size}")
        return raw

    return encode


def _checked(spec: ColumnSpec, function: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    def encode(value: Any) -> bytes:
        try:
            return function(value)
        except BinlogError as exc:
            raise _fail(spec, exc.cause) from None
        except (ValueError, TypeError, OverflowError, AttributeError) as exc:
            raise _fail(spec, f"cannot encode {value!r}: {exc}") from None

    return encode


_INTS: dict[int, str] = {T.TINY: "b", T.SHORT: "h", T.LONG: "i", T.LONGLONG: "q"}


def _integer(spec: ColumnSpec) -> Codec:
    if spec.type == T.INT24:
        signed = not spec.unsigned

        def encode24(value: Any) -> bytes:
            if not isinstance(value, int) or isinstance(value, bool):
                raise _fail(spec, f"{value!r} is not an integer")
            return value.to_bytes(3, "little", signed=signed)

        inline = f"int.from_bytes({{v}}, 'little', signed={signed})"
        return _fixed(spec, "3s", lambda v: int.from_bytes(v, "little", signed=signed),
                      _checked(spec, encode24), inline)  # fmt: skip
    fmt = _INTS[spec.type]
    fmt = fmt.upper() if spec.unsigned else fmt
    return _fixed(spec, fmt, None, _packer(spec, fmt))


def _year(spec: ColumnSpec) -> Codec:
    def encode(value: Any) -> bytes:
        if value == 0:
            return b"\x00"
        if not isinstance(value, int) or not 1901 <= value <= 2155:
            raise _fail(spec, f"{value!r} is not a YEAR")
        return bytes((value - 1900,))

    return _fixed(spec, "B", lambda v: v + 1900 if v else 0, encode, "({v} + 1900 if {v} else 0)")


def _enum(spec: ColumnSpec) -> Codec:
    size = spec.pack_length or 1
    fmt = "B" if size == 1 else "H"
    names = spec.members
    if names is None:
        return _fixed(spec, fmt, None, _packer(spec, fmt))
    index = {name: i + 1 for i, name in enumerate(names)}
    index.setdefault("", 0)
    table = ("", *names)

    def convert(number: int) -> str:
        if number > len(names):
            raise _fail(spec, f"ENUM index {number} beyond its {len(names)} members")
        return table[number]

    def encode(value: Any) -> bytes:
        number = value if isinstance(value, int) else index.get(value)
        if number is None or not 0 <= number <= len(names):
            raise _fail(spec, f"{value!r} is not a member")
        return number.to_bytes(size, "little")

    return _fixed(spec, fmt, convert, encode)


def _set(spec: ColumnSpec) -> Codec:
    size = spec.pack_length or 1
    names = spec.members
    fmt = {1: "B", 2: "H", 4: "I", 8: "Q"}.get(size, f"{size}s")
    to_int: Callable[[Any], int] | None = (
        None if fmt[-1] != "s" else (lambda raw: int.from_bytes(raw, "little"))
    )
    if names is None:
        return _fixed(spec, fmt, to_int, _raw(spec, size, lambda v: v.to_bytes(size, "little")))
    bits = {name: 1 << i for i, name in enumerate(names)}
    limit = 1 << len(names)

    def convert(raw: Any) -> str:
        number = to_int(raw) if to_int else raw
        if number >= limit:
            raise _fail(spec, f"SET bitmap {number:#x} beyond its {len(names)} members")
        return ",".join(name for i, name in enumerate(names) if number >> i & 1)

    def unconvert(value: Any) -> bytes:
        if isinstance(value, int):
            number = value
        else:
            number = 0
            for name in value.split(",") if value else ():
                if name not in bits:
                    raise _fail(spec, f"{name!r} is not a member")
                number |= bits[name]
        return number.to_bytes(size, "little")

    return _fixed(spec, fmt, convert, _raw(spec, size, unconvert))


def _text_codec(spec: ColumnSpec, prefix: int, max_length: int | None = None) -> Codec:
    charset = spec.charset
    limit = 1 << (8 * prefix)
    if max_length:
        limit = min(limit, max_length + 1)
    codecs = TEXT_CODECS.get(charset or "")
    if charset == BINARY or codecs is None:
        decode, to_bytes, inline = None, None, None
    else:
        decode, to_bytes, suffix = codecs
        inline = "{v}" + suffix if suffix else None

    def encode(value: Any) -> bytes:
        if isinstance(value, str):
            if to_bytes is None:
                raise _fail(spec, "text given for a binary or unknown character set")
            try:
                raw = to_bytes(value)
            except UnicodeEncodeError as exc:
                raise _fail(spec, f"not encodable in {charset}: {exc}") from None
        elif isinstance(value, bytes | bytearray):
            raw = bytes(value)
        else:
            raise _fail(spec, f"{value!r} is neither str nor bytes")
        if len(raw) >= limit:
            raise _fail(spec, f"{len(raw)} bytes do not fit")
        return len(raw).to_bytes(prefix, "little") + raw

    return Codec(spec, 0, "", prefix, decode, inline, encode)


def _blob_like(spec: ColumnSpec, convert: Callable[[bytes], Any],
               unconvert: Callable[[Any], bytes]) -> Codec:  # fmt: skip
    prefix = spec.pack_length or 4
    limit = 1 << (8 * prefix)

    def encode(value: Any) -> bytes:
        raw = unconvert(value)
        if len(raw) >= limit:
            raise _fail(spec, f"{len(raw)} bytes do not fit a {prefix}-byte length")
        return len(raw).to_bytes(prefix, "little") + raw

    return Codec(spec, 0, "", prefix, convert, None, _checked(spec, encode))


def _geometry(raw: bytes) -> Geometry:
    if len(raw) < 4:
        raise BinlogError(f"GEOMETRY value of {len(raw)} bytes has no SRID")
    return Geometry(int.from_bytes(raw[:4], "little"), raw[4:])


def _geometry_bytes(value: Any) -> bytes:
    if not isinstance(value, Geometry):
        raise BinlogError(f"{value!r} is not a Geometry")
    return value.srid.to_bytes(4, "little") + bytes(value.wkb)


def _vector(raw: bytes) -> list[float]:
    if len(raw) % 4:
        raise BinlogError(f"VECTOR value of {len(raw)} bytes is not float32 values")
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def _vector_bytes(value: Any) -> bytes:
    return struct.pack(f"<{len(value)}f", *value)


def _json_bytes(value: Any) -> bytes:
    if isinstance(value, JsonText):
        return value.binary
    if not isinstance(value, str):
        raise BinlogError(f"a JSON column needs JSON text, not {value!r}")
    return text_to_binary(value)


def codec_for(spec: ColumnSpec) -> Codec:
    """The codec of a column (raises BinlogError for types rows cannot carry)."""
    try:
        return _codec_for(spec)
    except BinlogError as exc:
        raise _fail(spec, exc.cause) from None


def _codec_for(spec: ColumnSpec) -> Codec:
    kind = spec.real_type
    if kind in (T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG):
        return _integer(spec)
    if kind == T.YEAR:
        return _year(spec)
    if kind == T.FLOAT:
        fmt = "d" if spec.pack_length == 8 else "f"
        return _fixed(spec, fmt, None, _packer(spec, fmt))
    if kind == T.DOUBLE:
        return _fixed(spec, "d", None, _packer(spec, "d"))
    if kind == T.NEWDECIMAL:
        precision, scale = spec.precision or 0, spec.scale or 0
        size = decimal_size(precision, scale)
        return _fixed(spec, f"{size}s", decimal_decoder(precision, scale),
                      _checked(spec, lambda v: encode_decimal(v, precision, scale)))  # fmt: skip
    if kind == T.BIT:
        bits = spec.bits or 0
        size = (bits + 7) // 8

        def bit_encode(value: Any) -> bytes:
            if isinstance(value, bytes | bytearray):
                value = int.from_bytes(value, "big")
            if not isinstance(value, int) or not 0 <= value < 1 << bits:
                raise BinlogError(f"{value!r} does not fit BIT({bits})")
            return value.to_bytes(size, "big")

        return _fixed(spec, f"{size}s", lambda v: int.from_bytes(v, "big"),
                      _checked(spec, bit_encode), "int.from_bytes({v}, 'big')")  # fmt: skip
    if kind == T.ENUM:
        return _enum(spec)
    if kind == T.SET:
        return _set(spec)
    if kind == T.NULL:
        return Codec(spec, 0, "", 0, lambda _: None, "None", lambda _: b"")
    return _temporal_or_string(spec, kind)


def _temporal_or_string(spec: ColumnSpec, kind: int) -> Codec:
    fsp = spec.fsp or 0
    if fsp > 6:
        raise BinlogError(f"fractional seconds precision {fsp} is above 6")
    frac = FRAC[fsp][0]
    chk = _checked
    if kind == T.DATE:
        return _fixed(spec, "3s", decode_date, chk(spec, encode_date))
    if kind == T.TIME:
        return _fixed(spec, "3s", decode_time_old, chk(spec, encode_time_old))
    if kind == T.DATETIME:
        encode_datetime = encode_datetime_old
        return _fixed(spec, "Q", decode_datetime_old,
                      chk(spec, lambda v: struct.pack("<Q", encode_datetime(v))))  # fmt: skip
    if kind == T.TIMESTAMP:
        encode_timestamp = encode_timestamp_old
        return _fixed(spec, "I", decode_timestamp_old,
                      chk(spec, lambda v: struct.pack("<I", encode_timestamp(v))))  # fmt: skip
    if kind == T.TIMESTAMP2:
        return _fixed(spec, f"{4 + frac}s", timestamp2_decoder(fsp),
                      chk(spec, timestamp2_encoder(fsp)))  # fmt: skip
    if kind == T.DATETIME2:
        return _fixed(spec, f"{5 + frac}s", datetime2_decoder(fsp),
                      chk(spec, datetime2_encoder(fsp)))  # fmt: skip
    if kind == T.TIME2:
        return _fixed(spec, f"{3 + frac}s", time2_decoder(fsp),
                      chk(spec, time2_encoder(fsp)))  # fmt: skip
    if kind in (T.VARCHAR, T.VAR_STRING, T.STRING):
        length = spec.max_length or 0
        return _text_codec(spec, 2 if length > 255 else 1, length)
    if kind in (T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB):
        prefix = spec.pack_length or 0
        if not 1 <= prefix <= 4:
            raise BinlogError(f"BLOB length prefix of {prefix} bytes")
        return _text_codec(spec, prefix)
    if kind == T.JSON:
        return _blob_like(spec, binary_to_text, _json_bytes)
    if kind == T.GEOMETRY:
        return _blob_like(spec, _geometry, _geometry_bytes)
    if kind == T.VECTOR:
        return _blob_like(spec, _vector, _vector_bytes)
    raise BinlogError("rows events cannot carry this column type")
