"""FOREIGN KEY and CHECK constraints in the catalog: how statements define them, how MySQL
and MariaDB name them, and what ALTER TABLE and RENAME TABLE do to them.

The replica keeps them to show them (SHOW CREATE TABLE, information_schema); it does not
enforce them: the source checked every row it logged. The rules followed:

* a foreign key without a CONSTRAINT name is ``<table>_ibfk_<n>``, ``n`` one more than the
  highest number such a name of the table has (MySQL; MariaDB takes the FOREIGN KEY's index
  name when there is one);
* an unnamed check is ``<table>_chk_<n>`` on MySQL, numbered the same way; MariaDB names a
  column's check after the column and a table-level one ``CONSTRAINT_<n>``, the first
  number no check of the table has;
* a foreign key needs a key whose first columns are its columns, in order: when no key of
  the table has them, one is created, named after the FOREIGN KEY's index name, else the
  constraint's name, else its first column (``indexes``); a key added later that has
  them replaces that generated key;
* CHANGE/RENAME COLUMN renames the column in the constraints (also in the foreign keys of
  other tables that reference it); a dropped column drops the constraints on it; MariaDB
  drops a column's own check when CHANGE or MODIFY redefines the column;
* RENAME TABLE renames ``<old>_ibfk_<n>`` and ``<old>_chk_<n>`` names to the new table's
  and the references of other tables' foreign keys; CREATE TABLE ... LIKE copies checks
  but no foreign keys.
https://dev.mysql.com/doc/refman/8.4/en/create-table-foreign-keys.html
https://mariadb.com/kb/en/constraint/
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from spark_replica.applier_core.storage.indexes import (
    IndexSpec,
    KeyPart,
    build_index,
    column_position,
)
from spark_replica.applier_core.storage.interface import (
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    IndexKind,
    ReferenceRule,
    TableDef,
    TableRef,
)


@dataclass(frozen=True, slots=True)
class ForeignKeySpec:
    """A FOREIGN KEY clause: ``name`` its CONSTRAINT symbol, ``index_name`` the name after
    FOREIGN KEY, the rules None when the clause has none."""

    name: str | None
    index_name: str | None
    columns: tuple[str, ...]
    referenced: TableRef
    referenced_columns: tuple[str, ...]
    on_delete: ReferenceRule | None = None
    on_update: ReferenceRule | None = None
    #: In CREATE TABLE: how many column and key definitions come before it (its key, when
    #: one is created, comes after theirs, as in MySQL's key order).
    position: int = -1


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A CHECK clause: ``clause`` as the source shows it (``ddl_constraints``); ``column``:
    the column whose definition holds it, for a MariaDB source (else empty)."""

    name: str | None
    clause: str
    enforced: bool = True
    column: str = ""


@dataclass(frozen=True, slots=True)
class AddForeignKey:
    """ALTER TABLE ADD [CONSTRAINT [name]] FOREIGN KEY."""

    spec: ForeignKeySpec
    mariadb: bool = False


@dataclass(frozen=True, slots=True)
class DropForeignKey:
    """ALTER TABLE DROP FOREIGN KEY ``name`` (its key stays, as in MySQL)."""

    name: str
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class AddCheck:
    """ALTER TABLE ADD [CONSTRAINT [name]] CHECK, or a check in a column definition of ADD
    COLUMN, MODIFY or CHANGE; ``mariadb``: named the MariaDB way."""

    spec: CheckSpec
    mariadb: bool = False


@dataclass(frozen=True, slots=True)
class DropCheck:
    """ALTER TABLE DROP CHECK ``name``."""

    name: str


@dataclass(frozen=True, slots=True)
class AlterCheck:
    """ALTER TABLE ALTER CHECK|CONSTRAINT ``name`` [NOT] ENFORCED."""

    name: str
    enforced: bool


ConstraintAction = AddForeignKey | DropForeignKey | AddCheck | DropCheck | AlterCheck


def implicit_rule(mariadb: bool) -> ReferenceRule:
    """The rule a foreign key without ON DELETE/ON UPDATE has on the source."""
    return ReferenceRule.RESTRICT if mariadb else ReferenceRule.NO_ACTION


def foreign_key(
    spec: ForeignKeySpec, table: str, columns: Sequence[Column], taken: Iterable[ForeignKey],
    mariadb: bool,
) -> ForeignKey | None:  # fmt: skip
    """``spec`` as a foreign key of ``table`` beside ``taken``; None when a column is not
    in the table (the source would have refused it)."""
    positions = [column_position(columns, name) for name in spec.columns]
    if not positions or any(p is None for p in positions):
        return None
    name = spec.name or (spec.index_name if mariadb else None)
    name = name or f"{table}_ibfk_{_next_number(f'{table}_ibfk_', taken)}"
    implicit = implicit_rule(mariadb)
    return ForeignKey(
        name,
        tuple(p for p in positions if p is not None),
        spec.referenced,
        spec.referenced_columns,
        spec.on_delete or implicit,
        spec.on_update or implicit,
        implicit,
    )


def check(
    spec: CheckSpec, table: str, taken: Sequence[CheckConstraint], mariadb: bool
) -> CheckConstraint:
    """``spec`` as a check of ``table`` beside ``taken``, named as the source names it."""
    name = spec.name
    if name is None and mariadb:
        name = spec.column or _first_free("CONSTRAINT_", taken)
    if name is None:
        name = f"{table}_chk_{_next_number(f'{table}_chk_', taken)}"
    return CheckConstraint(name, spec.clause, spec.enforced, spec.column)


def _next_number(prefix: str, taken: Iterable[ForeignKey | CheckConstraint]) -> int:
    numbers = [0]
    for found in taken:
        head, tail = found.name[: len(prefix)], found.name[len(prefix) :]
        if head.casefold() == prefix.casefold() and tail.isdigit():
            numbers.append(int(tail))
    return max(numbers) + 1


def _first_free(prefix: str, taken: Iterable[CheckConstraint]) -> str:
    names = {found.name.casefold() for found in taken}
    number = 1
    while f"{prefix}{number}".casefold() in names:
        number += 1
    return f"{prefix}{number}"


def covers(index_columns: Sequence[int], columns: Sequence[int]) -> bool:
    """Whether a key on ``index_columns`` serves a foreign key on ``columns``."""
    return tuple(index_columns[: len(columns)]) == tuple(columns)


def with_foreign_key_indexes(
    definition: TableDef, added: Sequence[tuple[ForeignKey, ForeignKeySpec]]
) -> tuple[Index, ...]:
    """The table's keys and a generated key for each of the ``added`` foreign keys that no
    key serves (the primary key counts)."""
    return tuple(index for index, _ in foreign_key_indexes(definition, added))


def foreign_key_indexes(
    definition: TableDef, added: Sequence[tuple[ForeignKey, ForeignKeySpec]]
) -> list[tuple[Index, ForeignKeySpec | None]]:
    """``with_foreign_key_indexes`` with each generated key's foreign key (None for the
    table's own keys)."""
    found: list[tuple[Index, ForeignKeySpec | None]] = [(i, None) for i in definition.indexes]
    indexes = list(definition.indexes)
    for key, spec in added:
        served = covers(definition.primary_key, key.columns) or any(
            covers([p.column for p in index.parts], key.columns) for index in indexes
        )
        if served:
            continue
        name = spec.index_name or spec.name
        parts = tuple(KeyPart(definition.columns[c].name) for c in key.columns)
        built = build_index(IndexSpec(name, IndexKind.INDEX, parts), definition.columns, indexes)
        indexes.append(replace(built, generated=True))
        found.append((indexes[-1], spec))
    return found


def without_served(indexes: Sequence[Index], added: Sequence[Index]) -> list[Index]:
    """``indexes`` without the generated keys that a key in ``added`` serves as well."""
    return [
        index
        for index in indexes
        if not index.generated
        or not any(covers([p.column for p in a.parts], [p.column for p in index.parts])
                   for a in added)
    ]  # fmt: skip


def rename_in_clause(clause: str, renamed: Mapping[str, str]) -> str:
    """``clause`` with its backticked column names renamed (strings left alone)."""
    if not renamed:
        return clause
    folded = {old.casefold(): new for old, new in renamed.items()}

    def swap(found: re.Match[str]) -> str:
        text = found.group(0)
        if not text.startswith("`"):
            return text
        name = text[1:-1].replace("``", "`")
        new = folded.get(name.casefold())
        return text if new is None else "`" + new.replace("`", "``") + "`"

    return _TOKENS.sub(swap, clause)


def mentions(clause: str, columns: Iterable[str]) -> bool:
    """Whether ``clause`` names one of ``columns``."""
    wanted = {c.casefold() for c in columns}
    return any(
        found.group(0).startswith("`") and found.group(0)[1:-1].replace("``", "`").casefold()
        in wanted
        for found in _TOKENS.finditer(clause)
    )  # fmt: skip


#: Backticked names and string literals (whose text is left alone) of a clause.
_TOKENS = re.compile(r"`(?:[^`]|``)*`|'(?:[^'\\]|\\.|'')*'")


def referencing_renamed(
    tables: Mapping[TableRef, TableDef], parent: TableRef, renamed: Mapping[str, str]
) -> dict[TableRef, TableDef]:
    """The tables whose foreign keys reference columns of ``parent`` that were renamed,
    with the new names."""
    if not renamed:
        return {}
    folded = {old.casefold(): new for old, new in renamed.items()}
    changed: dict[TableRef, TableDef] = {}
    for ref, definition in tables.items():
        keys = tuple(
            replace(key, referenced_columns=tuple(
                folded.get(c.casefold(), c) for c in key.referenced_columns))
            if key.referenced == parent else key
            for key in definition.foreign_keys
        )  # fmt: skip
        if keys != definition.foreign_keys:
            changed[ref] = replace(definition, foreign_keys=keys)
    return changed


def after_rename(
    tables: Mapping[TableRef, TableDef], old: TableRef, new: TableRef
) -> dict[TableRef, TableDef]:
    """RENAME TABLE ``old`` TO ``new``: the renamed table's definition (generated names
    follow the table) and every other table whose foreign keys reference it."""
    changed: dict[TableRef, TableDef] = {}
    for ref, definition in tables.items():
        keys = tuple(
            replace(key, referenced=new) if key.referenced == old else key
            for key in definition.foreign_keys
        )
        if keys != definition.foreign_keys:
            changed[ref] = replace(definition, foreign_keys=keys)
    moved = changed.pop(old, None) or tables[old]
    changed[new] = renamed_constraints(moved, old.table, new.table)
    return changed


def renamed_constraints(definition: TableDef, old: str, new: str) -> TableDef:
    """``definition`` with ``<old>_ibfk_<n>`` and ``<old>_chk_<n>`` names made ``<new>_...``."""

    def name(found: str, infix: str) -> str:
        prefix = f"{old}{infix}"
        tail = found[len(prefix) :]
        if found[: len(prefix)].casefold() == prefix.casefold() and tail.isdigit():
            return f"{new}{infix}{tail}"
        return found

    keys = tuple(replace(k, name=name(k.name, "_ibfk_")) for k in definition.foreign_keys)
    checks = tuple(replace(c, name=name(c.name, "_chk_")) for c in definition.checks)
    return replace(definition, foreign_keys=keys, checks=checks)


def find_named(items: Iterable[ForeignKey | CheckConstraint], name: str) -> bool:
    folded = name.casefold()
    return any(item.name.casefold() == folded for item in items)
