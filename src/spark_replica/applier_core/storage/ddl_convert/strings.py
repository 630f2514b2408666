"""Storing text into CHAR/VARCHAR/TEXT columns (length checked) and bytes into
BINARY/VARBINARY/BLOB columns; reading a value as text."""

from __future__ import annotations

import functools
from collections.abc import Callable

from spark_replica.applier_core.storage.ddl_convert.faults import not_implemented, too_long
from spark_replica.applier_core.storage.ddl_convert.kinds import BINARIES, Kind, SqlType

#: The spaces MySQL skips around a number or a date read from text.
SPACES = " \t\n\r\v\f"


def text_value(value: object) -> str:
    """A string column's value as ``str`` (``bytes`` of a character set the decoder does
    not read only when ASCII)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes) and value.isascii():
        return value.decode("ascii")
    raise not_implemented(f"reading the value {value!r} of column '{{column}}' as text")


def text_store(target: SqlType) -> Callable[[object], object] | None:
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


def binary_store(target: SqlType) -> Callable[[object], object] | None:
    if target.kind not in BINARIES:
        return None

    def store(value: object) -> object:
        if not isinstance(value, bytes):
            raise not_implemented(f"storing {value!r} as bytes in column '{{column}}'")
        if len(value) > target.length:
            raise too_long()
        return value.ljust(target.length, b"\0") if target.kind is Kind.BINARY else value

    return store
