"""Secondary keys in the catalog: how statements name them and how MySQL keeps them.

A statement names a key's columns (``IndexSpec``); the catalog keeps them by position
(``interface.Index``), so a column rename needs no change in its keys. What MySQL does with
keys, and this module does too (sql/sql_table.cc, ``mysql_prepare_create_table``):

* a key without a name is named after its first column (``functional_index`` when that is
  an expression), or ``<column>_2``, ``_3`` ... when that name is taken
  (``make_unique_key_name``); names compare case-insensitively and no secondary key may be
  named PRIMARY (1280);
* two keys with one name are refused (1061), a key on an unknown column too (1072);
* keys are kept sorted (``sort_keys``): UNIQUE keys first (those on NOT NULL columns before
  those with a nullable column, then those without a prefix part before those with one),
  then the other keys, FULLTEXT keys last; otherwise in the order they were defined.

SHOW INDEX and SHOW CREATE TABLE list keys in that order, after the PRIMARY KEY.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.interface import (
    Column,
    EngineError,
    Index,
    IndexKind,
    IndexPart,
)


@dataclass(frozen=True, slots=True)
class KeyPart:
    """A key part as a statement writes it: ``column(prefix) [DESC]``."""

    column: str
    prefix: int = 0
    descending: bool = False
    #: A functional key part's expression (``column`` is then empty).
    expression: str = ""


@dataclass(frozen=True, slots=True)
class IndexSpec:
    """A secondary key as a statement defines it (``name`` None: MySQL names it)."""

    name: str | None
    kind: IndexKind
    parts: tuple[KeyPart, ...]
    comment: str = ""
    visible: bool = True


def build_index(spec: IndexSpec, columns: Sequence[Column], taken: Iterable[Index]) -> Index:
    """``spec`` as a key of a table with ``columns`` beside the keys ``taken``.

    Raises:
        EngineError: 1072 for an unknown column, 1280 for a key named PRIMARY, 1061 when
            the name is taken.
    """
    parts: list[IndexPart] = []
    for part in spec.parts:
        if part.expression:
            parts.append(IndexPart(-1, 0, part.descending, part.expression))
            continue
        position = column_position(columns, part.column)
        if position is None:
            raise EngineError.of(ErrorCode.KEY_COLUMN_DOES_NOT_EXITS, part.column)
        parts.append(IndexPart(position, part.prefix, part.descending))
    names = {index.name.casefold() for index in taken}
    if spec.name is None:
        first = parts[0].column
        name = _unique_name(columns[first].name if first >= 0 else "functional_index", names)
    else:
        name = spec.name
        if name.casefold() == "primary":
            raise EngineError.of(ErrorCode.WRONG_NAME_FOR_INDEX, name)
        if name.casefold() in names:
            raise EngineError.of(ErrorCode.DUP_KEYNAME, name)
    return Index(name, spec.kind, tuple(parts), spec.comment, spec.visible)


def _unique_name(column: str, taken: set[str]) -> str:
    """MySQL's ``make_unique_key_name``: the column's name, else ``<name>_2`` ... ``_99``."""
    if column.casefold() not in taken and column.casefold() != "primary":
        return column
    for number in range(2, 100):
        candidate = f"{column}_{number}"
        if candidate.casefold() not in taken:
            return candidate
    return "not_specified"  # MySQL's name when 98 are taken


def check_names(indexes: Sequence[Index]) -> None:
    """1061 for the first key whose name an earlier key has (a rename onto a taken name)."""
    seen: set[str] = set()
    for index in indexes:
        folded = index.name.casefold()
        if folded in seen:
            raise EngineError.of(ErrorCode.DUP_KEYNAME, index.name)
        seen.add(folded)


def find_index(indexes: Sequence[Index], name: str) -> int | None:
    """The position of the key ``name`` (compared case-insensitively)."""
    folded = name.casefold()
    return next((i for i, index in enumerate(indexes) if index.name.casefold() == folded), None)


def column_position(columns: Sequence[Column], name: str) -> int | None:
    folded = name.casefold()
    return next((i for i, c in enumerate(columns) if c.name.casefold() == folded), None)


def mysql_order(indexes: Iterable[Index], columns: Sequence[Column]) -> tuple[Index, ...]:
    """``indexes`` in the order MySQL keeps them (``sort_keys``; Python's sort is stable, so
    keys of one rank keep the order they were defined in)."""

    def rank(index: Index) -> tuple[int, int, int]:
        if index.unique:
            nullable = any(p.column < 0 or columns[p.column].nullable for p in index.parts)
            prefixed = any(p.prefix for p in index.parts)
            return (0, int(nullable), int(prefixed))
        return (1, int(index.kind is IndexKind.FULLTEXT), 0)

    return tuple(sorted(indexes, key=rank))


def column_keys(
    columns: Sequence[Column], primary_key: Sequence[int], indexes: Iterable[Index]
) -> list[str]:
    """COLUMNS.COLUMN_KEY (SHOW COLUMNS' Key) of each column, as sql_show.cc sets it: PRI for
    a primary key column, UNI for the column of a one-column UNIQUE key, MUL for the first
    column of any other key."""
    keys = ["PRI" if i in primary_key else "" for i in range(len(columns))]
    for index in indexes:
        first = index.parts[0].column
        if first < 0 or keys[first] == "PRI":
            continue
        if index.unique and len(index.parts) == 1:
            keys[first] = "UNI"
        elif not keys[first]:
            keys[first] = "MUL"
    return keys
