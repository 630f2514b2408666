"""Temporal column values (mysql-reference §7.9; ``my_time.cc`` packed formats).

Value model:

* DATE → ``datetime.date``; DATETIME → naive ``datetime.datetime``; TIMESTAMP → aware
  ``datetime.datetime`` in UTC; TIME → ``datetime.timedelta`` (negative allowed).
* Dates MySQL accepts but Python cannot hold — the zero date, zero month or day, 31 April,
  year 0 — become the text MySQL prints: ``'0000-00-00'``, ``'2021-04-31 10:00:00.500'``
  (DATETIME/TIMESTAMP with as many fraction digits as the column's fsp). A TIMESTAMP of 0 is
  MySQL's zero timestamp, ``'0000-00-00 00:00:00'``. The encoders accept that text back, so
  every value round-trips.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from spark_replica.applier_core.binlog.errors import BinlogError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
DATETIMEF_INT_OFS = 0x8000000000
TIMEF_INT_OFS = 0x800000
TIMEF_OFS = 0x800000000000
#: Fraction storage per fsp: (bytes, unit in microseconds).
FRAC = {0: (0, 1), 1: (1, 10000), 2: (1, 10000), 3: (2, 100), 4: (2, 100), 5: (3, 1), 6: (3, 1)}

DateValue = date | str
DateTimeValue = datetime | str

_DATE_TEXT = re.compile(r"(\d{4,5})-(\d{2})-(\d{2})\Z")
_DATETIME_TEXT = re.compile(r"(\d{4,5})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?\Z")


def _frac_text(micro: int, fsp: int) -> str:
    return f".{micro:06d}"[: fsp + 1] if fsp else ""


def make_date(year: int, month: int, day: int) -> DateValue:
    try:
        return date(year, month, day)
    except ValueError:
        return f"{year:04d}-{month:02d}-{day:02d}"


def make_datetime(
    year: int, month: int, day: int, hour: int, minute: int, second: int, micro: int, fsp: int
) -> DateTimeValue:
    try:
        return datetime(year, month, day, hour, minute, second, micro)
    except ValueError:
        return (
            f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
            + _frac_text(micro, fsp)
        )


def date_fields(value: object) -> tuple[int, int, int]:
    if isinstance(value, datetime):
        raise BinlogError(f"a DATE column needs a date, not a datetime: {value!r}")
    if isinstance(value, date):
        return value.year, value.month, value.day
    if isinstance(value, str) and (match := _DATE_TEXT.match(value)):
        return int(match[1]), int(match[2]), int(match[3])
    raise BinlogError(f"not a DATE value: {value!r}")


def datetime_fields(value: object) -> tuple[int, int, int, int, int, int, int]:
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            raise BinlogError(f"a DATETIME column needs a naive datetime: {value!r}")
        return (value.year, value.month, value.day, value.hour, value.minute, value.second,
                value.microsecond)  # fmt: skip
    if isinstance(value, str) and (match := _DATETIME_TEXT.match(value)):
        micro = int((match[7] or "").ljust(6, "0"))
        return (int(match[1]), int(match[2]), int(match[3]), int(match[4]), int(match[5]),
                int(match[6]), micro)  # fmt: skip
    raise BinlogError(f"not a DATETIME value: {value!r}")


# -- DATE (3 bytes) ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=1 << 16)
def decode_date(raw: bytes) -> DateValue:
    """Cached: a column's dates repeat (birth days, hire days), and a date is immutable."""
    v = int.from_bytes(raw, "little")
    return make_date(v >> 9, (v >> 5) & 15, v & 31)


def encode_date(value: object) -> bytes:
    year, month, day = date_fields(value)
    if year >= 1 << 15 or month > 15 or day > 31:
        raise BinlogError(f"DATE value out of range: {value!r}")
    return ((year << 9) | (month << 5) | day).to_bytes(3, "little")


# -- old DATETIME (8 bytes, YYYYMMDDhhmmss) and TIMESTAMP (4 bytes, seconds) --------------------


def decode_datetime_old(v: int) -> DateTimeValue:
    ymd, hms = divmod(v, 1000000)
    return make_datetime(
        ymd // 10000, ymd // 100 % 100, ymd % 100, hms // 10000, hms // 100 % 100, hms % 100, 0, 0
    )


def encode_datetime_old(value: object) -> int:
    year, month, day, hour, minute, second, micro = datetime_fields(value)
    if micro:
        raise BinlogError(f"DATETIME without fsp cannot hold fractions: {value!r}")
    return ((year * 100 + month) * 100 + day) * 1000000 + (hour * 100 + minute) * 100 + second


def zero_timestamp(fsp: int) -> str:
    return "0000-00-00 00:00:00" + _frac_text(0, fsp)


def timestamp_value(seconds: int, micro: int, fsp: int) -> DateTimeValue:
    if seconds == 0 and micro == 0:
        return zero_timestamp(fsp)
    return EPOCH + timedelta(seconds=seconds, microseconds=micro)


def timestamp_parts(value: object, fsp: int) -> tuple[int, int]:
    """(seconds since the epoch, microseconds) of a TIMESTAMP value."""
    if isinstance(value, str) and value == zero_timestamp(fsp):
        return 0, 0
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise BinlogError(f"a TIMESTAMP column needs an aware datetime: {value!r}")
    delta = value - EPOCH
    total = delta // _MICRO
    seconds, micro = divmod(total, 1000000)
    if not 0 <= seconds < 1 << 32:
        raise BinlogError(f"TIMESTAMP value out of range: {value!r}")
    return seconds, micro


def decode_timestamp_old(v: int) -> DateTimeValue:
    return timestamp_value(v, 0, 0)


def encode_timestamp_old(value: object) -> int:
    seconds, micro = timestamp_parts(value, 0)
    if micro:
        raise BinlogError(f"TIMESTAMP without fsp cannot hold fractions: {value!r}")
    return seconds


# -- fractional parts -----------------------------------------------------------------------


def _check_fraction(micro: int, fsp: int, value: object) -> int:
    size, unit = FRAC[fsp]
    if micro % unit or (size == 0 and micro):
        raise BinlogError(f"{value!r} has more fractional digits than fsp {fsp} holds")
    return micro // unit


def _frac_bytes(count: int, fsp: int) -> bytes:
    size, _ = FRAC[fsp]
    return count.to_bytes(size, "big", signed=True) if size else b""


# -- TIMESTAMP2 -------------------------------------------------------------------------------


def timestamp2_decoder(fsp: int) -> Callable[[bytes], DateTimeValue]:
    size, unit = FRAC[fsp]

    def decode(raw: bytes) -> DateTimeValue:
        seconds = int.from_bytes(raw[:4], "big")
        if size == 1:
            micro = raw[4] * unit
        else:
            micro = int.from_bytes(raw[4:], "big", signed=True) * unit if size else 0
        return timestamp_value(seconds, micro, fsp)

    return decode


def timestamp2_encoder(fsp: int) -> Callable[[object], bytes]:
    size, _ = FRAC[fsp]

    def encode(value: object) -> bytes:
        seconds, micro = timestamp_parts(value, fsp)
        count = _check_fraction(micro, fsp, value)
        tail = count.to_bytes(1, "big") if size == 1 else _frac_bytes(count, fsp)
        return seconds.to_bytes(4, "big") + tail

    return encode


# -- DATETIME2 ------------------------------------------------------------------------------


def datetime2_decoder(fsp: int) -> Callable[[bytes], DateTimeValue]:
    size, unit = FRAC[fsp]

    def decode(raw: bytes) -> DateTimeValue:
        intpart = int.from_bytes(raw[:5], "big") - DATETIMEF_INT_OFS
        frac = int.from_bytes(raw[5:], "big", signed=True) * unit if size else 0
        return make_datetime(*packed_datetime_fields((intpart << 24) + frac), fsp)

    return decode


def datetime2_encoder(fsp: int) -> Callable[[object], bytes]:
    def encode(value: object) -> bytes:
        year, month, day, hour, minute, second, micro = datetime_fields(value)
        if year * 13 + month >= 1 << 17 or day > 31 or hour > 31 or minute > 63 or second > 63:
            raise BinlogError(f"DATETIME value out of range: {value!r}")
        count = _check_fraction(micro, fsp, value)
        ymd = ((year * 13 + month) << 5) | day
        intpart = (ymd << 17) | (hour << 12) | (minute << 6) | second
        return (intpart + DATETIMEF_INT_OFS).to_bytes(5, "big") + _frac_bytes(count, fsp)

    return encode


# -- TIME2 and old TIME ---------------------------------------------------------------------


def _time_value(packed: int) -> timedelta:
    negative = packed < 0
    if negative:
        packed = -packed
    hms, micro = packed >> 24, packed & 0xFFFFFF
    hour, minute, second = (hms >> 12) & 1023, (hms >> 6) & 63, hms & 63
    total = ((hour * 60 + minute) * 60 + second) * 1000000 + micro
    return timedelta(microseconds=-total if negative else total)


def _time_packed(value: object) -> int:
    if not isinstance(value, timedelta):
        raise BinlogError(f"a TIME column needs a timedelta: {value!r}")
    total = value // _MICRO
    negative = total < 0
    seconds, micro = divmod(-total if negative else total, 1000000)
    hour, rest = divmod(seconds, 3600)
    if hour > 1023:
        raise BinlogError(f"TIME value out of range: {value!r}")
    packed = ((hour << 12 | (rest // 60) << 6 | rest % 60) << 24) + micro
    return -packed if negative else packed


def time2_decoder(fsp: int) -> Callable[[bytes], timedelta]:
    size, unit = FRAC[fsp]
    wrap = 1 << (8 * size)

    def decode(raw: bytes) -> timedelta:
        if size == 3:
            return _time_value(int.from_bytes(raw, "big") - TIMEF_OFS)
        intpart = int.from_bytes(raw[:3], "big") - TIMEF_INT_OFS
        frac = int.from_bytes(raw[3:], "big") if size else 0
        if intpart < 0 and frac:
            intpart += 1
            frac -= wrap
        return _time_value((intpart << 24) + frac * unit)

    return decode


def _c_div(a: int, b: int) -> int:
    return -(-a // b) if a < 0 else a // b


def time2_encoder(fsp: int) -> Callable[[object], bytes]:
    size, unit = FRAC[fsp]

    def encode(value: object) -> bytes:
        packed = _time_packed(value)
        micro = abs(packed) & 0xFFFFFF
        _check_fraction(micro, fsp, value)
        if size == 3:
            return (packed + TIMEF_OFS).to_bytes(6, "big")
        intpart = packed >> 24
        head = (intpart + TIMEF_INT_OFS).to_bytes(3, "big")
        if not size:
            return head
        frac = packed - _c_div(packed, 1 << 24) * (1 << 24)  # C remainder: sign of packed
        return head + (_c_div(frac, unit) % (1 << (8 * size))).to_bytes(size, "big")

    return encode


def decode_time_old(raw: bytes) -> timedelta:
    v = int.from_bytes(raw, "little", signed=True)
    negative = v < 0
    v = -v if negative else v
    total = ((v // 10000 * 60 + v // 100 % 100) * 60 + v % 100) * 1000000
    return timedelta(microseconds=-total if negative else total)


def encode_time_old(value: object) -> bytes:
    packed = _time_packed(value)
    negative = packed < 0
    packed = -packed if negative else packed
    if packed & 0xFFFFFF:
        raise BinlogError(f"TIME without fsp cannot hold fractions: {value!r}")
    hms = packed >> 24
    number = (hms >> 12) * 10000 + ((hms >> 6) & 63) * 100 + (hms & 63)
    return (-number if negative else number).to_bytes(3, "little", signed=True)


# -- packed forms inside JSON opaque values (``TIME_to_longlong_*_packed``) -------------------


def packed_datetime_fields(packed: int) -> tuple[int, int, int, int, int, int, int]:
    """(year, month, day, hour, minute, second, microsecond) of a packed datetime."""
    if packed < 0:
        packed = -packed
    ymdhms, micro = packed >> 24, packed & 0xFFFFFF
    ymd, hms = ymdhms >> 17, ymdhms & 0x1FFFF
    ym = ymd >> 5
    return ym // 13, ym % 13, ymd & 31, hms >> 12, (hms >> 6) & 63, hms & 63, micro


def packed_datetime_text(packed: int, with_time: bool) -> str:
    """``my_TIME_to_str(t, 6)`` of a packed DATE or DATETIME."""
    year, month, day, hour, minute, second, micro = packed_datetime_fields(packed)
    text = f"{year:04d}-{month:02d}-{day:02d}"
    if with_time:
        text += f" {hour:02d}:{minute:02d}:{second:02d}.{micro:06d}"
    return text


def packed_time_text(packed: int) -> str:
    """``my_TIME_to_str(t, 6)`` of a packed TIME."""
    total = _time_value(packed) // _MICRO
    sign = "-" if total < 0 else ""
    seconds, micro = divmod(abs(total), 1000000)
    hours, rest = divmod(seconds, 3600)
    return f"{sign}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.{micro:06d}"
