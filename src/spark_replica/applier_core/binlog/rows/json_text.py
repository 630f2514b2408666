"""JSON text as MySQL prints it (``Json_wrapper::to_string``), and JSON text parsed as MySQL
parses it (``Json_dom::parse``).

Printing: ``, `` between elements, ``: `` after keys, strings escaped with ``\\b \\t \\n \\f \\r
\\" \\\\`` and ``\\u00XX`` for other control characters, doubles by ``my_gcvt`` with a ``.0``
added to integral values, DECIMAL/DATE/TIME/DATETIME scalars as MySQL formats them, other
opaque scalars as ``"base64:typeNN:..."``.

>>> to_text({"a": 1, "b": [True, None, 1.5, 1e20, "x\\ny"]})
'{"a": 1, "b": [true, null, 1.5, 1e20, "x\\\\ny"]}'
"""

from __future__ import annotations

import base64
import json
import math
from decimal import Decimal

from spark_replica.applier_core.binlog.constants import ColumnType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.rows.decimal import decode_decimal
from spark_replica.applier_core.binlog.rows.json_binary import (
    LARGE_ARRAY,
    MAX_DEPTH,
    NOT_INLINED,
    JsonOpaque,
    JsonUInt,
    JsonValue,
    container_entries,
    encode_json,
    key_order,
    scalar,
)
from spark_replica.applier_core.binlog.rows.temporal import packed_datetime_text, packed_time_text

_ESCAPES = {i: f"\\u{i:04x}" for i in range(0x20)}
_ESCAPES.update({0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"})
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\"})

#: ``MY_GCVT_MAX_FIELD_WIDTH`` = DBL_DIG + 4 + max(5, MAX_DECPT_FOR_F_FORMAT)
GCVT_WIDTH = 15 + 4 + 15
MAX_DECPT_FOR_F_FORMAT = 15


def quote(text: str) -> str:
    return '"' + text.translate(_ESCAPES) + '"'


def _shortest_digits(x: float) -> tuple[str, int]:
    """The shortest round-trip digits of ``abs(x)`` and the decimal point position."""
    if x == 0:
        return "0", 1
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    decpt = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    decpt -= len(digits) - len(stripped)
    return stripped.rstrip("0") or "0", decpt


def gcvt(x: float) -> str:
    """``my_gcvt(x, MY_GCVT_ARG_DOUBLE, MY_GCVT_MAX_FIELD_WIDTH)``."""
    width = GCVT_WIDTH - (1 if x < 0 else 0)
    digits, decpt = _shortest_digits(x)
    length = len(digits)
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    exp_len = 1 + (decpt >= 101 or decpt <= -99) + (decpt >= 11 or decpt <= -9)
    if decpt <= 0:
        f_len = length - decpt + 2
    elif decpt < length:
        f_len = length + 1
    else:
        f_len = decpt
    have_space = f_len <= width
    force_e = decpt <= 0 and width <= 2 - decpt and width >= 3 + exp_len
    fits = decpt <= width and (decpt >= -1 or (decpt == -2 and (length > 1 or not force_e)))
    limit = MAX_DECPT_FOR_F_FORMAT
    f_format = have_space or (fits and not force_e)
    if f_format and (not have_space or (decpt > -limit and (decpt <= limit or length > decpt))):
        if decpt <= 0:
            return f"{sign}0.{'0' * -decpt}{digits}"
        if decpt < length:
            return f"{sign}{digits[:decpt]}.{digits[decpt:]}"
        return f"{sign}{digits}{'0' * (decpt - length)}"
    exponent = decpt - 1
    mantissa = digits[0] + ("." + digits[1:] if length > 1 else "")
    return f"{sign}{mantissa}e{exponent}"


def double_text(x: float) -> str:
    text = gcvt(x)
    if "." not in text and "e" not in text:
        text += ".0"
    return text


def _base64(data: bytes) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))


def opaque_text(value: JsonOpaque) -> str:
    kind, data = value.field_type, value.data
    if kind == ColumnType.NEWDECIMAL and len(data) >= 2:
        return format(decode_decimal(data[2:], data[0], data[1]), "f")
    if kind in (ColumnType.DATE, ColumnType.DATETIME, ColumnType.TIMESTAMP, ColumnType.TIME):
        if len(data) != 8:
            raise BinlogError(f"invalid binary JSON: {len(data)}-byte temporal value")
        packed = int.from_bytes(data, "little", signed=True)
        if kind == ColumnType.TIME:
            return quote(packed_time_text(packed))
        return quote(packed_datetime_text(packed, kind != ColumnType.DATE))
    if kind == ColumnType.VAR_STRING:
        return quote(data.decode("utf-8", "replace"))
    return quote(f"base64:type{kind}:{_base64(data)}")


def to_text(value: JsonValue) -> str:
    """The JSON text MySQL prints for a tree."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return double_text(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list):
        return "[" + ", ".join(to_text(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(k)}: {to_text(v)}" for k, v in value.items()) + "}"
    return opaque_text(value)


class JsonText(str):
    """JSON text as MySQL prints it, keeping the binary document it was decoded from.

    Text cannot say everything the binary form does (DECIMAL and temporal scalars print as
    numbers and strings, unsigned integer types print as plain numbers), so the encoder writes
    ``binary`` back instead of re-parsing the text: decode/encode round trips are exact.
    """

    binary: bytes

    def __new__(cls, text: str, binary: bytes) -> JsonText:
        self = super().__new__(cls, text)
        self.binary = binary
        return self

    def __reduce__(self) -> tuple[type[JsonText], tuple[str, bytes]]:
        return JsonText, (str(self), self.binary)


def binary_to_text(data: bytes) -> JsonText:
    """The text of a binary JSON document; an empty value is JSON null, as in MySQL.

    Walks the binary form directly (no intermediate tree): this is the row decoder's path.
    """
    if not data:
        return JsonText("null", data)
    out: list[str] = []
    _emit(data[0], data, 1, len(data), 0, out)
    return JsonText("".join(out), data)


def _emit(kind: int, data: bytes, pos: int, end: int, depth: int, out: list[str]) -> None:
    if kind > LARGE_ARRAY:
        out.append(to_text(scalar(kind, data, pos, end)))
        return
    if depth >= MAX_DEPTH:
        raise BinlogError(f"invalid binary JSON: document nested deeper than {MAX_DEPTH}")
    keys, children, end = container_entries(kind, data, pos, end)
    out.append("[" if keys is None else "{")
    for i, (child, child_pos, inlined) in enumerate(children):
        if i:
            out.append(", ")
        if keys is not None:
            out.append(quote(keys[i]))
            out.append(": ")
        if inlined is NOT_INLINED:
            _emit(child, data, child_pos, end, depth + 1, out)
        else:
            out.append(to_text(inlined))
    out.append("]" if keys is None else "}")


# -- parsing --------------------------------------------------------------------------------


def _pairs(pairs: list[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    members = dict(pairs)  # a repeated key keeps its last value, as in MySQL
    return {k: members[k] for k in sorted(members, key=key_order)}


def _integer(text: str) -> JsonValue:
    value = int(text)
    if value < -(1 << 63) or value >= 1 << 64:
        return _double(text)
    return JsonUInt(value) if value > 0xFFFFFFFF else value


def _double(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number {text} is too big for a JSON double")
    return value


def _constant(text: str) -> JsonValue:
    raise ValueError(f"{text} is not valid JSON")


def parse_json(text: str) -> JsonValue:
    """The tree of a JSON text, typed as MySQL types it (integers above 2**32-1 unsigned)."""
    try:
        value: JsonValue = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_integer,
            parse_float=_double,
            parse_constant=_constant,
        )
    except (ValueError, RecursionError) as exc:
        raise BinlogError(f"invalid JSON text: {exc}") from None
    return value


def text_to_binary(text: str) -> bytes:
    return encode_json(parse_json(text))


def normalize_json(text: str) -> str:
    """The text MySQL would print for a JSON text after storing it."""
    return to_text(parse_json(text))


def decimal_opaque(value: Decimal, precision: int, scale: int) -> JsonOpaque:
    """A DECIMAL scalar for a JSON tree (as JSON_OBJECT('d', CAST(... AS DECIMAL)) stores)."""
    from spark_replica.applier_core.binlog.rows.decimal import encode_decimal

    return JsonOpaque(
        ColumnType.NEWDECIMAL, bytes((precision, scale)) + encode_decimal(value, precision, scale)
    )
