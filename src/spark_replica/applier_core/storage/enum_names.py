"""ENUM and SET values by name.

With ``binlog_row_metadata=MINIMAL`` (MySQL's default) the binlog carries no member names, so
the row decoder gives an ENUM as its 1-based index and a SET as its bitmap. The table's
definition (from the replicated CREATE TABLE) has the members: engines store the names, as
MySQL shows them, whichever way the binlog carried the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from spark_replica.applier_core.storage.interface import Row, TableDef

_KIND = re.compile(r"\s*(ENUM|SET)\s*\(", re.IGNORECASE)
_MEMBER = re.compile(r"'((?:[^']|'')*)'")


def members(type_text: str) -> tuple[str, tuple[str, ...]] | None:
    """("ENUM" or "SET", the member names) of an ENUM/SET type text; None otherwise."""
    found = _KIND.match(type_text)
    if found is None:
        return None
    names = tuple(m.replace("''", "'") for m in _MEMBER.findall(type_text[found.end() :]))
    return found.group(1).upper(), names


def name_normalizer(definition: TableDef) -> Callable[[Row], Row] | None:
    """A function turning ENUM indexes and SET bitmaps of a row into names; None when the
    table has no ENUM or SET column."""
    converters: list[tuple[int, Callable[[int], str]]] = []
    for index, column in enumerate(definition.columns):
        found = members(column.type)
        if found is None:
            continue
        kind, names = found
        converters.append((index, _enum(names) if kind == "ENUM" else _set(names)))
    if not converters:
        return None

    def normalize(row: Row) -> Row:
        # Names pass through unchanged; only the decoder's integers need converting.
        if not any(i < len(row) and type(row[i]) is int for i, _ in converters):
            return row
        values = list(row)
        for i, convert in converters:
            value = values[i] if i < len(values) else None
            if type(value) is int:
                values[i] = convert(value)
        return tuple(values)

    return normalize


def _enum(names: tuple[str, ...]) -> Callable[[int], str]:
    def convert(number: int) -> str:
        return names[number - 1] if 1 <= number <= len(names) else ""

    return convert


def _set(names: tuple[str, ...]) -> Callable[[int], str]:
    def convert(bits: int) -> str:
        return ",".join(name for i, name in enumerate(names) if bits >> i & 1)

    return convert
