"""DATE, DATETIME, TIMESTAMP and TIME values: DATE ↔ DATETIME, fractional seconds
changed (rounded half up), printed as text and read from text."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta

from spark_replica.applier_core.storage.ddl_convert.faults import not_implemented, out_of_range
from spark_replica.applier_core.storage.ddl_convert.kinds import Kind, SqlType
from spark_replica.applier_core.storage.ddl_convert.strings import SPACES, text_value

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


def date_to_datetime(fsp: int) -> Callable[[object], object]:
    def convert(value: object) -> object:
        if isinstance(value, datetime):
            return value
        if isinstance(value, date):
            return datetime.combine(value, time())
        if isinstance(value, str):
            return value + " 00:00:00" + ("." + "0" * fsp if fsp else "")
        raise not_implemented(f"the value {value!r} of column '{{column}}'")

    return convert


def datetime_to_date(value: object) -> object:
    """The date part (MySQL drops the time with a note, not an error)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, str):
        return value[:10]
    raise not_implemented(f"the value {value!r} of column '{{column}}'")


def fsp_change(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
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


def text_to_temporal(target: SqlType) -> Callable[[object], object]:
    def convert(value: object) -> object:
        text = text_value(value).strip(SPACES)
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
