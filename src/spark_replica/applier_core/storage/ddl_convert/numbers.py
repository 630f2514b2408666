"""Numbers stored into integer, DECIMAL, FLOAT/DOUBLE and YEAR columns (range checked,
rounded as MySQL rounds), read from text, and printed as MySQL prints them."""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Context, Decimal

from spark_replica.applier_core.storage.ddl_convert.faults import (
    not_implemented,
    out_of_range,
    truncated,
    wrong_value,
)
from spark_replica.applier_core.storage.ddl_convert.kinds import Kind, SqlType
from spark_replica.applier_core.storage.ddl_convert.strings import SPACES, text_value

#: Decimal arithmetic wide enough for DECIMAL(65, 30) and MySQL's number syntax.
_CONTEXT = Context(prec=200, Emax=999_999, Emin=-999_999)
_FLT_MAX = 3.4028234663852886e38


def exact(value: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise not_implemented(f"the value {value!r} of column '{{column}}' (not an exact number)")
    return Decimal(value)


def as_float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, float | int):
        raise not_implemented(f"the value {value!r} of column '{{column}}' (not a float)")
    return float(value)


def rint(value: float) -> Decimal:
    """A double rounded half to even (C's ``rint``), as MySQL stores a double in an integer."""
    if not math.isfinite(value):
        raise out_of_range()
    return Decimal(round(value))


def number_store(target: SqlType) -> Callable[[Decimal], object] | None:
    """Stores an exact number into a numeric column (None: ``target`` is not numeric)."""
    if target.kind is Kind.INTEGER:
        return integer_store(target)
    if target.kind is Kind.DECIMAL:
        return decimal_store(target)
    if target.kind is Kind.REAL:
        store_real = real_store(target)
        if store_real is None:
            return None
        return lambda number: store_real(_decimal_to_float(number))
    if target.kind is Kind.YEAR:
        return lambda number: to_year(int(_round_half_up(number)))
    return None


def _round_half_up(number: Decimal) -> Decimal:
    if not number.is_finite() or number.adjusted() > 40:
        raise out_of_range()
    return number.to_integral_value(rounding=ROUND_HALF_UP, context=_CONTEXT)


def integer_store(target: SqlType) -> Callable[[Decimal], int]:
    low, high = (0, (1 << target.bits) - 1)
    if not target.unsigned:
        low, high = -(1 << (target.bits - 1)), (1 << (target.bits - 1)) - 1

    def store(number: Decimal) -> int:
        rounded = int(_round_half_up(number))
        if not low <= rounded <= high:
            raise out_of_range()
        return rounded

    return store


def decimal_store(target: SqlType) -> Callable[[Decimal], Decimal]:
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


def real_store(target: SqlType) -> Callable[[float], float] | None:
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


def to_year(value: object) -> int:
    """An integer stored in a YEAR column: 1-69 are 2001-2069, 70-99 are 1970-1999."""
    number = int(exact(value))
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


def text_to_number(target: SqlType) -> Callable[[object], object] | None:
    store = number_store(target)
    if store is None:
        return None
    name = {Kind.INTEGER: "integer", Kind.DECIMAL: "decimal"}.get(target.kind, "")

    def convert(value: object) -> object:
        text = text_value(value)
        number, rest = scan_number(text)
        if number is None:
            raise wrong_value(name, text) if name else truncated()
        if rest.strip(SPACES):
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
