"""ENUM and SET values: member names of the decoder's indexes and bitmaps, values kept
by name when the member list changes, text read as members."""

from __future__ import annotations

from collections.abc import Callable

from spark_replica.applier_core.storage.ddl_convert.faults import not_implemented, truncated
from spark_replica.applier_core.storage.ddl_convert.kinds import Kind, SqlType
from spark_replica.applier_core.storage.ddl_convert.strings import SPACES, text_value


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


def enum_to_enum(old: SqlType, new: SqlType) -> Callable[[object], object]:
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


def set_to_set(old: SqlType, new: SqlType) -> Callable[[object], object]:
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


def text_to_enum(target: SqlType) -> Callable[[object], object]:
    index = _lookup(target.members)
    names = ("", *target.members)

    def convert(value: object) -> object:
        text = text_value(value)
        number = index.get(text.rstrip(" ").casefold())
        if number is None and text.strip(SPACES).isdigit():
            number = int(text.strip(SPACES))  # a number names the member by its index
            number = number if 1 <= number <= len(target.members) else None
        if number is None:
            raise truncated()
        return names[number]

    return convert


def text_to_set(target: SqlType) -> Callable[[object], object]:
    index = _lookup(target.members)

    def convert(value: object) -> object:
        bitmap = _set_bitmap(text_value(value), index)
        return ",".join(name for i, name in enumerate(target.members) if bitmap >> i & 1)

    return convert
