"""The values existing rows hold after ALTER TABLE changes a column's type or adds a column.

The binlog carries no row events for an ALTER TABLE: the source converts its rows itself, and
a replica must hold what the source holds afterwards. This module gives, for one column, a
*converter*: a function from the column's old value to its new value, both in the binlog
decoder's value model (``binlog.rows.values``: ``int``, ``Decimal``, ``float``, ``str``,
``bytes``, ``date``, ``datetime`` ...; ``None`` is NULL). Converters follow MySQL 8.4's rules
for copying a value into a column of another type (``ALTER TABLE`` with the COPY algorithm):
https://dev.mysql.com/doc/refman/8.4/en/alter-table.html and
https://dev.mysql.com/doc/refman/8.4/en/type-conversion.html.

Implemented (anything else raises for the first non-NULL value, so an empty column or table
changes type freely):

* integers ↔ integers, DECIMAL, FLOAT/DOUBLE, YEAR; DECIMAL ↔ DECIMAL (rounded half away
  from zero to the new scale); FLOAT/DOUBLE → integers (half to even, as C's ``rint``),
  DECIMAL (from the shortest text of the double), FLOAT/DOUBLE;
* numbers, YEAR, DATE, DATETIME, ENUM and SET → CHAR/VARCHAR/TEXT, in MySQL's text form
  (a FLOAT keeps 6 significant digits, a DOUBLE its shortest round-trip digits; exponent form
  below 1e-14 and from 1e15);
* CHAR/VARCHAR/TEXT → numbers (a valid number, surrounding spaces allowed), ENUM/SET (by
  member name, case-insensitively, or an ENUM's index), DATE/DATETIME (``YYYY-MM-DD[
  hh:mm:ss[.ffffff]]``), and to other string types (length checked: characters for
  CHAR/VARCHAR, bytes of UTF-8 for TEXT); BINARY/VARBINARY/BLOB among themselves;
* ENUM/SET member lists changed (values kept by name), DATE ↔ DATETIME, fractional seconds
  of DATETIME/TIMESTAMP/TIME changed (rounded half up).

A value MySQL's strict mode refuses (out of range, too long, not a number, NULL into NOT
NULL) raises ``ValueFault`` with MySQL's error number and text; so does a conversion this
module does not implement (``code`` 0). The source ran the ALTER, so such a fault means the
source was not in strict mode or the replica's data differ.

Also here: where a new column's value in existing rows comes from (``Default``,
``fill_converter``), and how a key prefix survives a type change (``key_prefix_after``).
"""

from __future__ import annotations

import enum
import functools
import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Context, Decimal

from spark_replica.applier_core.storage.column_types import (
    BLOB_LIMITS,
    REALS,
    TEXT_LIMITS,
    MySqlType,
    parse_type,
)

#: Old value → new value (NULL included). Raises ``ValueFault``.
Converter = Callable[[object], object]


class ValueFault(Exception):
    """A value that cannot be converted.

    ``code`` is the error MySQL's strict mode gives for it (1138, 1264, 1265, 1366, 1406),
    0 when the conversion is not implemented here; ``text`` the message, with ``{column}``
    and ``{row}`` to fill (``message``).
    """

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text

    def message(self, column: str, row: int) -> str:
        return self.text.replace("{column}", column).replace("{row}", str(row))


def out_of_range() -> ValueFault:
    return ValueFault(1264, "Out of range value for column '{column}' at row {row}")


def truncated() -> ValueFault:
    return ValueFault(1265, "Data truncated for column '{column}' at row {row}")


def too_long() -> ValueFault:
    return ValueFault(1406, "Data too long for column '{column}' at row {row}")


def wrong_value(kind: str, value: str) -> ValueFault:
    text = f"Incorrect {kind} value: '{value[:128]}' for column '{{column}}' at row {{row}}"
    return ValueFault(1366, text)


def not_implemented(what: str) -> ValueFault:
    return ValueFault(0, what)


# -- column types --------------------------------------------------------------------------------


class Kind(enum.Enum):
    INTEGER = "integer"
    DECIMAL = "decimal"
    REAL = "real"
    CHAR = "char"
    VARCHAR = "varchar"
    TEXT = "text"
    BINARY = "binary"
    VARBINARY = "varbinary"
    BLOB = "blob"
    ENUM = "enum"
    SET = "set"
    DATE = "date"
    DATETIME = "datetime"
    TIMESTAMP = "timestamp"
    TIME = "time"
    YEAR = "year"
    OTHER = "other"  # BIT, JSON, spatial types, VECTOR, ...


STRINGS = frozenset({Kind.CHAR, Kind.VARCHAR, Kind.TEXT})
BINARIES = frozenset({Kind.BINARY, Kind.VARBINARY, Kind.BLOB})


@dataclass(frozen=True, slots=True)
class SqlType:
    """A column type as far as values care.

    ``bits``: storage bits of an integer (8..64) or a real (32, 64); ``length``: characters of
    CHAR/VARCHAR, bytes of BINARY/VARBINARY, the byte limit of TEXT/BLOB; ``precision`` and
    ``scale``: DECIMAL's (a FLOAT(M,D)/DOUBLE(M,D) has ``scale`` D, a plain one -1);
    ``members``: ENUM/SET names; ``fsp``: fractional seconds digits; ``other``: the type of an
    OTHER kind, upper case. ``text`` is the type as written and takes no part in comparisons.
    """

    kind: Kind
    unsigned: bool = False
    bits: int = 0
    length: int = 0
    precision: int = 0
    scale: int = 0
    members: tuple[str, ...] = ()
    fsp: int = 0
    other: str = ""
    text: str = field(default="", compare=False)


_INTEGER_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
_TEMPORAL = {
    "date": Kind.DATE,
    "datetime": Kind.DATETIME,
    "timestamp": Kind.TIMESTAMP,
    "time": Kind.TIME,
    "year": Kind.YEAR,
}


@functools.lru_cache(maxsize=1024)
def sql_type(text: str) -> SqlType:
    """The ``SqlType`` of a column type as the catalog writes it (``Column.type``), read by
    ``column_types.parse_type``; a text that is no MySQL type is of kind OTHER."""
    try:
        mysql = parse_type(text)
    except ValueError:
        return SqlType(Kind.OTHER, other=text.upper(), text=text)
    name = mysql.name
    if name in _INTEGER_BITS:
        return SqlType(Kind.INTEGER, mysql.unsigned, _INTEGER_BITS[name], text=text)
    if name == "decimal":
        precision, scale = mysql.precision or 10, mysql.scale or 0
        return SqlType(Kind.DECIMAL, mysql.unsigned, precision=precision, scale=scale, text=text)
    if name in REALS:
        # FLOAT(M,D)/DOUBLE(M,D) have ``scale`` D, a plain one -1.
        precision, scale = mysql.precision or 0, -1 if mysql.scale is None else mysql.scale
        bits = 32 if name == "float" else 64
        return SqlType(Kind.REAL, mysql.unsigned, bits, precision=precision, scale=scale, text=text)
    if name in _TEMPORAL:
        return SqlType(_TEMPORAL[name], fsp=mysql.fsp, text=text)
    return _string_type(mysql, text)


def _string_type(mysql: MySqlType, text: str) -> SqlType:
    name, length = mysql.name, mysql.length
    if name in _STRING_KINDS and length is not None:
        return SqlType(_STRING_KINDS[name], text=text, length=length)
    if name in TEXT_LIMITS:
        return SqlType(Kind.TEXT, text=text, length=TEXT_LIMITS[name])
    if name in BLOB_LIMITS:
        return SqlType(Kind.BLOB, text=text, length=BLOB_LIMITS[name])
    if name in ("enum", "set"):
        kind = Kind.ENUM if name == "enum" else Kind.SET
        return SqlType(kind, text=text, members=mysql.values)
    # BIT, JSON, spatial types, VECTOR; and VARCHAR/VARBINARY without a length.
    other = mysql.column_type().upper() + (f" SRID {mysql.srid}" if mysql.srid is not None else "")
    return SqlType(Kind.OTHER, other=other, text=text)


_STRING_KINDS = {
    "char": Kind.CHAR,
    "varchar": Kind.VARCHAR,
    "binary": Kind.BINARY,
    "varbinary": Kind.VARBINARY,
}


def needs_copy(old: SqlType, new: SqlType) -> bool:
    """Whether MySQL rebuilds the table by copying rows for this type change (the in-place
    changes: none, a longer VARCHAR, ENUM/SET members added at the end). It decides the
    error MySQL gives for a NULL left in a column made NOT NULL."""
    if old == new:
        return False
    if old.kind is new.kind and old.kind in (Kind.VARCHAR, Kind.ENUM, Kind.SET):
        return not keeps_values(old, new)
    return True


def keeps_values(old: SqlType, new: SqlType) -> bool:
    """Whether every value of type ``old`` is the same value of type ``new`` (the same type,
    or a wider one of its kind), so rows need no conversion."""
    if old == new:
        return True
    if old.kind is Kind.INTEGER and new.kind is Kind.INTEGER:
        if old.unsigned == new.unsigned:
            return new.bits >= old.bits
        return old.unsigned and new.bits > old.bits
    if old.kind is Kind.DECIMAL and new.kind is Kind.DECIMAL:
        wider = new.precision - new.scale >= old.precision - old.scale
        return wider and new.scale == old.scale and old.unsigned >= new.unsigned
    if old.kind is Kind.REAL and new.kind is Kind.REAL:
        plain = old.scale < 0 and new.scale < 0 and old.unsigned >= new.unsigned
        return plain and new.bits >= old.bits
    if (old.kind, new.kind) in _WIDENING:
        return new.length >= old.length
    if old.kind is new.kind and old.kind in (Kind.ENUM, Kind.SET):
        return new.members[: len(old.members)] == old.members
    return old.kind is Kind.TIME and new.kind is Kind.TIME and new.fsp >= old.fsp


#: Kind changes where a value stays the same when it fits (``length`` compared).
_WIDENING = frozenset(
    {
        (Kind.CHAR, Kind.CHAR),
        (Kind.CHAR, Kind.VARCHAR),
        (Kind.VARCHAR, Kind.VARCHAR),
        (Kind.TEXT, Kind.TEXT),
        (Kind.VARBINARY, Kind.VARBINARY),
        (Kind.BLOB, Kind.BLOB),
    }
)


def key_prefix_after(prefix: int, new_type: str) -> int:
    """A key part's prefix length after its column's type changed: MySQL keys the whole
    value when the new type takes no prefix or is shorter than the prefix."""
    target = sql_type(new_type)
    if prefix == 0 or target.kind not in STRINGS | BINARIES:
        return 0
    if target.kind in (Kind.TEXT, Kind.BLOB):
        return prefix
    return 0 if target.length < prefix else prefix


# -- converters ---------------------------------------------------------------------------------

#: Decimal arithmetic wide enough for DECIMAL(65, 30) and MySQL's number syntax.
_CONTEXT = Context(prec=200, Emax=999_999, Emin=-999_999)
_SPACES = " \t\n\r\v\f"
_FLT_MAX = 3.4028234663852886e38


def type_converter(old_type: str, new_type: str) -> Converter | None:
    """Old value → new value for a column whose type changes from ``old_type`` to
    ``new_type`` (NULL stays NULL); None when the values stay as they are."""
    old, new = sql_type(old_type), sql_type(new_type)
    if keeps_values(old, new):
        return None
    convert = _converter(old, new)

    def converted(value: object) -> object:
        return None if value is None else convert(value)

    return converted


def _converter(old: SqlType, new: SqlType) -> Callable[[object], object]:
    maker = _BY_SOURCE.get(old.kind)
    found = maker(old, new) if maker is not None else None
    if found is not None:
        return found
    return _refusing(f"converting values of column '{{column}}' from {old.text} to {new.text}")


def _refusing(what: str) -> Callable[[object], object]:
    def refuse(value: object) -> object:
        raise not_implemented(what)

    return refuse


def _from_integer(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    if new.kind is Kind.YEAR:
        return _to_year
    to_text = _text_store(new)
    if to_text is not None:
        return lambda value: to_text(str(value))
    store = _number_store(new)
    return None if store is None else lambda value: store(_exact(value))


def _from_year(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    to_text = _text_store(new)
    if to_text is not None:
        return lambda value: to_text(f"{int(_exact(value)):04d}")
    return _from_integer(old, new) if new.kind is not Kind.YEAR else None


def _from_decimal(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    to_text = _text_store(new)
    if to_text is not None:
        return lambda value: to_text(decimal_text(_exact(value)))
    store = _number_store(new)
    return None if store is None else lambda value: store(_exact(value))


def _from_real(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    to_text = _text_store(new)
    if to_text is not None:
        return lambda value: to_text(real_text(_float(value), old.bits == 32, old.scale))
    if new.kind is Kind.INTEGER:
        store_int = _integer_store(new)
        return lambda value: store_int(_rint(_float(value)))
    if new.kind is Kind.DECIMAL:
        store_decimal = _decimal_store(new)
        return lambda value: store_decimal(Decimal(repr(_float(value))))
    if new.kind is Kind.REAL:
        store_real = _real_store(new)
        return None if store_real is None else lambda value: store_real(_float(value))
    return None


def _from_string(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    maker = _FROM_TEXT.get(new.kind)
    if maker is not None:
        return maker(new)
    return _text_store(new)


def _from_binary(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    return _binary_store(new)


def _from_members(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    names = member_names(old)
    if new.kind is old.kind:
        return _enum_to_enum(old, new) if old.kind is Kind.ENUM else _set_to_set(old, new)
    to_text = _text_store(new)
    return None if to_text is None else lambda value: to_text(names(value))


def _from_temporal(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    if new.kind is old.kind:
        return _fsp_change(old, new)
    if {old.kind, new.kind} == {Kind.DATE, Kind.DATETIME}:
        return _date_to_datetime(new.fsp) if new.kind is Kind.DATETIME else _datetime_to_date
    to_text = _text_store(new)
    if to_text is not None and old.kind in (Kind.DATE, Kind.DATETIME):
        return lambda value: to_text(temporal_text(value, old.fsp))
    return None


_Maker = Callable[[SqlType, SqlType], Callable[[object], object] | None]
_BY_SOURCE: dict[Kind, _Maker] = {
    Kind.INTEGER: _from_integer,
    Kind.YEAR: _from_year,
    Kind.DECIMAL: _from_decimal,
    Kind.REAL: _from_real,
    Kind.CHAR: _from_string,
    Kind.VARCHAR: _from_string,
    Kind.TEXT: _from_string,
    Kind.BINARY: _from_binary,
    Kind.VARBINARY: _from_binary,
    Kind.BLOB: _from_binary,
    Kind.ENUM: _from_members,
    Kind.SET: _from_members,
    Kind.DATE: _from_temporal,
    Kind.DATETIME: _from_temporal,
    Kind.TIMESTAMP: _from_temporal,
    Kind.TIME: _from_temporal,
}


# -- numbers -----------------------------------------------------------------------------------


def _exact(value: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise not_implemented(f"the value {value!r} of column '{{column}}' (not an exact number)")
    return Decimal(value)


def _float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, float | int):
        raise not_implemented(f"the value {value!r} of column '{{column}}' (not a float)")
    return float(value)


def _rint(value: float) -> Decimal:
    """A double rounded half to even (C's ``rint``), as MySQL stores a double in an integer."""
    if not math.isfinite(value):
        raise out_of_range()
    return Decimal(round(value))


def _number_store(target: SqlType) -> Callable[[Decimal], object] | None:
    """Stores an exact number into a numeric column (None: ``target`` is not numeric)."""
    if target.kind is Kind.INTEGER:
        return _integer_store(target)
    if target.kind is Kind.DECIMAL:
        return _decimal_store(target)
    if target.kind is Kind.REAL:
        store_real = _real_store(target)
        if store_real is None:
            return None
        return lambda number: store_real(_decimal_to_float(number))
    if target.kind is Kind.YEAR:
        return lambda number: _to_year(int(_round_half_up(number)))
    return None


def _round_half_up(number: Decimal) -> Decimal:
    if not number.is_finite() or number.adjusted() > 40:
        raise out_of_range()
    return number.to_integral_value(rounding=ROUND_HALF_UP, context=_CONTEXT)


def _integer_store(target: SqlType) -> Callable[[Decimal], int]:
    low, high = (0, (1 << target.bits) - 1)
    if not target.unsigned:
        low, high = -(1 << (target.bits - 1)), (1 << (target.bits - 1)) - 1

    def store(number: Decimal) -> int:
        rounded = int(_round_half_up(number))
        if not low <= rounded <= high:
            raise out_of_range()
        return rounded

    return store


def _decimal_store(target: SqlType) -> Callable[[Decimal], Decimal]:
    quantum = Decimal(1).scaleb(-target.scale)
    digits = target.precision - target.scale
    limit = Decimal(10) ** digits

    def store(number: Decimal) -> Decimal:
        if not number.is_finite() or number.adjusted() > digits:
            raise out_of_range()
        rounded = number.quantize(quantum, rounding=ROUND_HALF_UP, context=_CONTEXT)
        if abs(rounded) >= limit or (target.unsigned and rounded < 0):
            raise out_of_range()
        return rounded.copy_abs() if rounded.is_zero() else rounded

    return store


def _decimal_to_float(number: Decimal) -> float:
    try:
        return float(number)
    except (OverflowError, ValueError):
        raise out_of_range() from None


def _real_store(target: SqlType) -> Callable[[float], float] | None:
    if target.scale >= 0:
        return None  # FLOAT(M,D)/DOUBLE(M,D): rounded to D digits; not implemented

    def store(number: float) -> float:
        if not math.isfinite(number) or (target.unsigned and number < 0):
            raise out_of_range()
        if target.bits == 64:
            return number
        if abs(number) > _FLT_MAX:
            raise out_of_range()
        try:
            single: float = struct.unpack("<f", struct.pack("<f", number))[0]
        except OverflowError:
            raise out_of_range() from None
        return single

    return store


def _to_year(value: object) -> int:
    """An integer stored in a YEAR column: 1-69 are 2001-2069, 70-99 are 1970-1999."""
    number = int(_exact(value))
    if number == 0 or 1901 <= number <= 2155:
        return number
    if 1 <= number <= 99:
        return number + (2000 if number < 70 else 1900)
    raise out_of_range()


_NUMBER = re.compile(r"[ \t\n\r\v\f]*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,9}))?")


def scan_number(text: str) -> tuple[Decimal | None, str]:
    """The number at the start of ``text`` (leading spaces skipped; None when there is no
    digit) and the text after it, as MySQL reads a string stored in a numeric column."""
    match = _NUMBER.match(text)
    assert match is not None  # every part of the pattern is optional
    sign, whole, fraction, exponent = match.groups()
    if not whole and not fraction:
        return None, text
    number = Decimal(f"{sign}{whole or '0'}.{fraction or '0'}e{exponent or '0'}")
    return number, text[match.end() :]


def _text_value(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes) and value.isascii():
        return value.decode("ascii")
    raise not_implemented(f"reading the value {value!r} of column '{{column}}' as text")


def _text_to_number(target: SqlType) -> Callable[[object], object] | None:
    store = _number_store(target)
    if store is None:
        return None
    name = {Kind.INTEGER: "integer", Kind.DECIMAL: "decimal"}.get(target.kind, "")

    def convert(value: object) -> object:
        text = _text_value(value)
        number, rest = scan_number(text)
        if number is None:
            raise wrong_value(name, text) if name else truncated()
        if rest.strip(_SPACES):
            raise truncated()
        return store(number)

    return convert


def decimal_text(number: Decimal) -> str:
    """A DECIMAL value as MySQL prints it: all its scale's digits, no exponent."""
    text = format(number, "f")
    return text[1:] if number.is_zero() and text.startswith("-") else text


def real_text(number: float, single: bool, scale: int = -1) -> str:
    """A FLOAT (``single``) or DOUBLE value as MySQL prints it.

    With ``scale`` (FLOAT(M,D)) the value has exactly that many decimals. Otherwise the digits
    are the shortest that read back as the value (a FLOAT: at most 6 significant ones), in
    positional form from 1e-14 to below 1e15 (and any value with a fraction below 1e17),
    else in MySQL's exponent form (``1e15``, ``1.5e-20``)."""
    if scale >= 0:
        return f"{number:.{scale}f}"
    sign = "-" if math.copysign(1.0, number) < 0 else ""
    if number == 0:
        return sign + "0"
    shortest = format(abs(number), ".5e") if single else repr(abs(number))
    parts = Decimal(shortest).normalize().as_tuple()
    digits = "".join(map(str, parts.digits))
    assert isinstance(parts.exponent, int)
    point = len(digits) + parts.exponent  # the value is 0.<digits> * 10**point
    if -14 <= point and (point <= 15 or len(digits) > point):
        return sign + _positional(digits, point)
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{point - 1}"


def _positional(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits
    if point < len(digits):
        return digits[:point] + "." + digits[point:]
    return digits + "0" * (point - len(digits))


# -- strings -------------------------------------------------------------------------------------


def _text_store(target: SqlType) -> Callable[[object], object] | None:
    """Stores text into a CHAR/VARCHAR/TEXT column (None: ``target`` is no such column)."""
    if target.kind in (Kind.CHAR, Kind.VARCHAR):
        return functools.partial(_store_chars, target.length, target.kind is Kind.CHAR)
    if target.kind is Kind.TEXT:
        return functools.partial(_store_text_bytes, target.length)
    return None


def _store_chars(length: int, pad: bool, value: object) -> object:
    """Text into CHAR/VARCHAR(length): extra trailing spaces are cut (MySQL notes it), any
    other excess is too long; CHAR values read back without trailing spaces."""
    if isinstance(value, bytes):  # a character set the decoder does not read
        if len(value) > length:
            raise not_implemented("measuring a value of unknown character set in '{column}'")
        return value.rstrip(b" ") if pad else value
    if not isinstance(value, str):
        raise not_implemented(f"storing {value!r} as text in column '{{column}}'")
    if len(value) > length:
        if value[length:].strip(" "):
            raise too_long()
        value = value[:length]
    return value.rstrip(" ") if pad else value


def _store_text_bytes(limit: int, value: object) -> object:
    """Text into a TEXT column of ``limit`` bytes, counted in UTF-8 (utf8mb4, MySQL 8.4's
    default); a value whose size depends on a character set not known here is refused."""
    if isinstance(value, bytes):
        size = len(value)
    elif isinstance(value, str):
        size = len(value.encode("utf-8", "surrogatepass"))
        if len(value) <= limit < size:
            raise not_implemented("measuring a value of unknown character set in '{column}'")
    else:
        raise not_implemented(f"storing {value!r} as text in column '{{column}}'")
    if size > limit:
        raise too_long()
    return value


def _binary_store(target: SqlType) -> Callable[[object], object] | None:
    if target.kind not in BINARIES:
        return None

    def store(value: object) -> object:
        if not isinstance(value, bytes):
            raise not_implemented(f"storing {value!r} as bytes in column '{{column}}'")
        if len(value) > target.length:
            raise too_long()
        return value.ljust(target.length, b"\0") if target.kind is Kind.BINARY else value

    return store


# -- ENUM and SET ------------------------------------------------------------------------------


def member_names(old: SqlType) -> Callable[[object], str]:
    """ENUM/SET value → its text (the decoder gives indexes/bitmaps without member names)."""

    def names(value: object) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, int) and old.kind is Kind.ENUM and 0 <= value <= len(old.members):
            return ("", *old.members)[value]
        if isinstance(value, int) and old.kind is Kind.SET and 0 <= value < 1 << len(old.members):
            return ",".join(name for i, name in enumerate(old.members) if value >> i & 1)
        raise not_implemented(f"the value {value!r} of column '{{column}}'")

    return names


def _lookup(members: tuple[str, ...]) -> dict[str, int]:
    """Member name (compared case-insensitively, trailing spaces ignored) → 1-based index."""
    found: dict[str, int] = {}
    for index, name in enumerate(members, 1):
        found.setdefault(name.rstrip(" ").casefold(), index)
    return found


def _enum_to_enum(old: SqlType, new: SqlType) -> Callable[[object], object]:
    names, index = member_names(old), _lookup(new.members)

    def convert(value: object) -> object:
        name = names(value)
        number = 0 if name == "" else index.get(name.rstrip(" ").casefold())
        if number is None:
            raise truncated()
        if isinstance(value, int):
            return number
        return ("", *new.members)[number]

    return convert


def _set_to_set(old: SqlType, new: SqlType) -> Callable[[object], object]:
    names, index = member_names(old), _lookup(new.members)

    def convert(value: object) -> object:
        bitmap = _set_bitmap(names(value), index)
        if isinstance(value, int):
            return bitmap
        return ",".join(name for i, name in enumerate(new.members) if bitmap >> i & 1)

    return convert


def _set_bitmap(text: str, index: dict[str, int]) -> int:
    bitmap = 0
    for name in text.split(",") if text else ():
        number = index.get(name.rstrip(" ").casefold())
        if number is None:
            raise truncated()
        bitmap |= 1 << (number - 1)
    return bitmap


def _text_to_enum(target: SqlType) -> Callable[[object], object]:
    index = _lookup(target.members)
    names = ("", *target.members)

    def convert(value: object) -> object:
        text = _text_value(value)
        number = index.get(text.rstrip(" ").casefold())
        if number is None and text.strip(_SPACES).isdigit():
            number = int(text.strip(_SPACES))  # a number names the member by its index
            number = number if 1 <= number <= len(target.members) else None
        if number is None:
            raise truncated()
        return names[number]

    return convert


def _text_to_set(target: SqlType) -> Callable[[object], object]:
    index = _lookup(target.members)

    def convert(value: object) -> object:
        bitmap = _set_bitmap(_text_value(value), index)
        return ",".join(name for i, name in enumerate(target.members) if bitmap >> i & 1)

    return convert


# -- dates and times ---------------------------------------------------------------------------

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?")


def temporal_text(value: object, fsp: int) -> str:
    """A DATE or DATETIME value as MySQL prints it (``fsp`` fraction digits)."""
    if isinstance(value, str):  # zero and invalid dates are text already
        return value
    if isinstance(value, datetime):
        text = f"{_date_text(value)} {value:%H:%M:%S}"
        return text + (f".{value.microsecond:06d}"[: fsp + 1] if fsp else "")
    if isinstance(value, date):
        return _date_text(value)
    raise not_implemented(f"the value {value!r} of column '{{column}}'")


def _date_text(value: date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _date_to_datetime(fsp: int) -> Callable[[object], object]:
    def convert(value: object) -> object:
        if isinstance(value, datetime):
            return value
        if isinstance(value, date):
            return datetime.combine(value, time())
        if isinstance(value, str):
            return value + " 00:00:00" + ("." + "0" * fsp if fsp else "")
        raise not_implemented(f"the value {value!r} of column '{{column}}'")

    return convert


def _datetime_to_date(value: object) -> object:
    """The date part (MySQL drops the time with a note, not an error)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, str):
        return value[:10]
    raise not_implemented(f"the value {value!r} of column '{{column}}'")


def _fsp_change(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    """Fewer fractional-second digits round half away from zero (MySQL's default, without
    TIME_TRUNCATE_FRACTIONAL); more keep the value (text values get the digits shown)."""
    if new.fsp >= old.fsp:
        return _more_digits(new.fsp) if old.kind is not Kind.TIME else _same

    def convert(value: object) -> object:
        if isinstance(value, datetime):
            return _rounded(value, new.fsp)
        if isinstance(value, timedelta):
            return _rounded_time(value, new.fsp)
        raise not_implemented(f"rounding the value {value!r} of column '{{column}}'")

    return convert


def _same(value: object) -> object:
    return value


def _more_digits(fsp: int) -> Callable[[object], object]:
    """Text values (zero and invalid dates) show as many fraction digits as the column."""

    def convert(value: object) -> object:
        if not isinstance(value, str) or value.startswith("0000-00-00 00:00:00"):
            return value
        whole, _, fraction = value.partition(".")
        return whole + ("." + fraction.ljust(fsp, "0") if fsp else "")

    return convert


def _rounded(moment: datetime, fsp: int) -> datetime:
    unit = 10 ** (6 - fsp)
    kept = (moment.microsecond + unit // 2) // unit * unit
    try:
        return moment + timedelta(microseconds=kept - moment.microsecond)
    except OverflowError:
        raise out_of_range() from None


def _rounded_time(value: timedelta, fsp: int) -> timedelta:
    unit = 10 ** (6 - fsp)
    micro = abs(value) // timedelta(microseconds=1)
    kept = timedelta(microseconds=(micro + unit // 2) // unit * unit)
    return -kept if value < timedelta(0) else kept


def _text_to_temporal(target: SqlType) -> Callable[[object], object]:
    def convert(value: object) -> object:
        text = _text_value(value).strip(_SPACES)
        found = _parse_date_time(text, target)
        if found is None:
            raise not_implemented(f"reading {text!r} as {target.text} in column '{{column}}'")
        return found

    return convert


def _parse_date_time(text: str, target: SqlType) -> date | None:
    """``YYYY-MM-DD`` or ``YYYY-MM-DD hh:mm:ss[.ffffff]`` as a DATE/DATETIME value (None for
    other forms and for dates Python cannot hold, which MySQL reads but this module does
    not). A DATE keeps the date part (MySQL notes the loss, no error)."""
    short = _DATE.fullmatch(text)
    full = _DATETIME.fullmatch(text)
    try:
        if short is not None:
            year, month, day = (int(part) for part in short.groups())
            moment = datetime(year, month, day)
        elif full is not None:
            year, month, day, hour, minute, second = (int(part) for part in full.groups()[:6])
            micro = int((full.group(7) or "").ljust(6, "0"))
            moment = datetime(year, month, day, hour, minute, second, micro)
        else:
            return None
    except ValueError:
        return None
    return moment.date() if target.kind is Kind.DATE else _rounded(moment, target.fsp)


_TextMaker = Callable[[SqlType], Callable[[object], object] | None]
_FROM_TEXT: dict[Kind, _TextMaker] = {
    Kind.INTEGER: _text_to_number,
    Kind.DECIMAL: _text_to_number,
    Kind.REAL: _text_to_number,
    Kind.ENUM: _text_to_enum,
    Kind.SET: _text_to_set,
    Kind.DATE: _text_to_temporal,
    Kind.DATETIME: _text_to_temporal,
}


# -- new columns ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Default:
    """Where a new column's value in existing rows comes from.

    A DEFAULT literal: ``literal`` is a string's text or a number as written (``number``);
    neither (``Default()``) is DEFAULT NULL. ``expression`` is what MySQL computes instead:
    ``CURRENT_TIMESTAMP``, ``(expr)``, ``AUTO_INCREMENT``, a generated column's ``AS (...)``;
    existing rows cannot be filled from it here.
    """

    literal: str | None = None
    number: bool = False
    expression: str | None = None


def fill_converter(name: str, type_text: str, nullable: bool, default: Default | None) -> Converter:
    """The value of new column ``name`` in each existing row (the converter ignores its
    argument): its DEFAULT, NULL without one, or for NOT NULL without one MySQL's implicit
    default (0, '', the first ENUM member ...)."""
    target = sql_type(type_text)
    try:
        value = _fill_value(name, target, nullable, default)
    except ValueFault as fault:
        failure = fault

        def fail(_: object) -> object:
            raise failure

        return fail
    return lambda _: value


def _fill_value(name: str, target: SqlType, nullable: bool, default: Default | None) -> object:
    if default is not None and default.expression is not None:
        raise not_implemented(f"filling existing rows of column '{name}' from {default.expression}")
    if default is not None and default.literal is not None:
        return _literal_value(target, default)
    if default is not None or nullable:
        return None
    return _implicit_default(name, target)


def _literal_value(target: SqlType, default: Default) -> object:
    literal = default.literal
    assert literal is not None
    if default.number and target.kind in STRINGS and not re.search("[eE]", literal):
        convert = _text_store(target)
    else:
        convert = _converter(SqlType(Kind.VARCHAR, length=1 << 32, text="VARCHAR"), target)
    assert convert is not None
    return convert(literal)


def _implicit_default(name: str, target: SqlType) -> object:
    """MySQL's implicit default of a NOT NULL column, which existing rows get."""
    if target.kind in (Kind.INTEGER, Kind.YEAR):
        return 0
    if target.kind is Kind.DECIMAL:
        return Decimal(0).scaleb(-target.scale)
    if target.kind is Kind.REAL:
        return 0.0
    if target.kind in STRINGS or target.kind is Kind.SET:
        return ""
    if target.kind in BINARIES:
        return b"\0" * target.length if target.kind is Kind.BINARY else b""
    if target.kind is Kind.ENUM and target.members:
        return target.members[0]
    if target.kind is Kind.TIME:
        return timedelta(0)
    raise not_implemented(f"filling existing rows of NOT NULL column '{name}' {target.text}")
