"""Replicated DDL as operations: what a statement stands for, as ``ddl_parser`` reads it
(checked against the catalog by ``ddl.Catalog.apply``).
https://dev.mysql.com/doc/refman/8.4/en/sql-data-definition-statements.html
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.accounts import AccountOperation
from spark_replica.applier_core.storage.constraints import ConstraintAction
from spark_replica.applier_core.storage.ddl_convert import Default
from spark_replica.applier_core.storage.indexes import IndexSpec
from spark_replica.applier_core.storage.interface import (
    Column,
    EngineError,
    TableDef,
    TableRef,
)
from spark_replica.applier_core.storage.objects import (
    AlterObject,
    CreateObject,
    DropObject,
    ObjectKind,
    StoredObject,
)

# -- operations -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateDatabase:
    """CREATE DATABASE; ``collation``: its default (``storage.collations``), empty when not
    known."""

    name: str
    if_not_exists: bool = False
    collation: str = ""


@dataclass(frozen=True, slots=True)
class AlterDatabase:
    """ALTER DATABASE ... CHARACTER SET/COLLATE: the database's new default ``collation``
    (tables keep theirs)."""

    name: str
    collation: str


@dataclass(frozen=True, slots=True)
class DropDatabase:
    name: str
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class CreateTable:
    """``definition`` is None for ``CREATE TABLE t LIKE other`` (``like`` names the other)."""

    table: TableRef
    definition: TableDef | None
    if_not_exists: bool = False
    like: TableRef | None = None


@dataclass(frozen=True, slots=True)
class DropTable:
    table: TableRef
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class TruncateTable:
    table: TableRef


@dataclass(frozen=True, slots=True)
class RenameTable:
    old: TableRef
    new: TableRef


# -- ALTER TABLE actions ------------------------------------------------------------------------
# Names in actions are resolved as MySQL does (``alter_columns``): DROP, CHANGE/MODIFY, RENAME
# COLUMN and ALTER COLUMN name columns of the table before the statement; FIRST/AFTER and
# ADD PRIMARY KEY name columns of the table being built.


@dataclass(frozen=True, slots=True)
class AddColumn:
    """ADD [COLUMN]. ``after``: the column to follow; neither it nor ``first``: the new column
    goes last. ``default``: where its value in existing rows comes from (None: no DEFAULT
    clause, so NULL, or MySQL's implicit default for a NOT NULL column)."""

    column: Column
    first: bool = False
    after: str | None = None
    if_not_exists: bool = False
    default: Default | None = None


@dataclass(frozen=True, slots=True)
class DropColumn:
    name: str
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class ChangeColumn:
    """MODIFY [COLUMN] (``column.name == name``) or CHANGE [COLUMN] ``name`` to ``column``:
    the column's new name, type and nullability, and with ``first``/``after`` its new place.
    Existing values are converted to the new type. ``generated``: ``AUTO_INCREMENT`` or a
    generated column's ``AS (...)`` when the new definition has one; ``charset``: its
    CHARACTER SET clause, lower case."""

    name: str
    column: Column
    first: bool = False
    after: str | None = None
    generated: str | None = None
    charset: str | None = None


@dataclass(frozen=True, slots=True)
class RenameColumn:
    """RENAME COLUMN ``name`` TO ``new_name`` (definition and values unchanged)."""

    name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class AlterColumn:
    """ALTER [COLUMN] ``name`` SET/DROP DEFAULT or SET VISIBLE/INVISIBLE: nothing changes for
    the data, but the column must exist."""

    name: str


@dataclass(frozen=True, slots=True)
class AddPrimaryKey:
    """ADD PRIMARY KEY (``columns``), ``prefixes`` as in ``TableDef.key_prefix``."""

    columns: tuple[str, ...]
    prefixes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class DropPrimaryKey:
    """DROP PRIMARY KEY (also DROP INDEX `PRIMARY`)."""


@dataclass(frozen=True, slots=True)
class AddIndex:
    """ADD INDEX/KEY/UNIQUE/FULLTEXT/SPATIAL, ADD CONSTRAINT ... UNIQUE, a column's UNIQUE
    and CREATE INDEX: a secondary key on columns of the table being built. ``if_not_exists``
    (MariaDB's CREATE INDEX IF NOT EXISTS): nothing happens when the name is taken."""

    spec: IndexSpec
    if_not_exists: bool = False


@dataclass(frozen=True, slots=True)
class DropIndex:
    """DROP INDEX/KEY ``name`` (1091 when missing). ``constraint``: DROP CONSTRAINT, which
    may name a foreign key or CHECK constraint the catalog does not keep, so a missing name
    is not an error."""

    name: str
    if_exists: bool = False
    constraint: bool = False


@dataclass(frozen=True, slots=True)
class RenameIndex:
    """RENAME INDEX/KEY ``name`` TO ``new_name`` (1176 when missing)."""

    name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class AlterIndex:
    """ALTER INDEX ``name`` VISIBLE/INVISIBLE (1176 when missing)."""

    name: str
    visible: bool


@dataclass(frozen=True, slots=True)
class ConvertCharset:
    """CONVERT TO CHARACTER SET ``charset`` (lower case) [COLLATE]: text keeps its
    characters; the table and every text column take ``collation``."""

    charset: str
    collation: str = ""


@dataclass(frozen=True, slots=True)
class TableCollation:
    """[DEFAULT] CHARACTER SET/COLLATE of ALTER TABLE: the table's default ``collation``,
    which columns added or redefined later without one take."""

    collation: str


AlterAction = (
    AddColumn
    | DropColumn
    | ChangeColumn
    | RenameColumn
    | AlterColumn
    | AddPrimaryKey
    | DropPrimaryKey
    | AddIndex
    | DropIndex
    | RenameIndex
    | AlterIndex
    | ConvertCharset
    | TableCollation
    | ConstraintAction
)


@dataclass(frozen=True, slots=True)
class AlterTable:
    """ALTER TABLE: ``actions`` in statement order (none: only clauses without effect on
    columns, keys or data, such as ENGINE=). ``copy``: ALGORITHM=COPY was given.
    ``statement`` is the text that 1235 errors name."""

    table: TableRef
    actions: tuple[AlterAction, ...]
    copy: bool = False
    statement: str = field(default="", compare=False)


DdlOperation = (
    CreateDatabase
    | AlterDatabase
    | DropDatabase
    | CreateTable
    | DropTable
    | TruncateTable
    | RenameTable
    | AlterTable
    | CreateObject
    | DropObject
    | AlterObject
    | AccountOperation
)

#: Kept objects by ``ObjectRef.key``.
Objects = Mapping[tuple[ObjectKind, str, str], StoredObject]


def unsupported(what: str, statement: str) -> EngineError:
    """ER_NOT_SUPPORTED_YET (1235) for ``what``, naming the statement."""
    text = " ".join(statement.split())
    if len(text) > 200:
        text = text[:197] + "..."
    error = EngineError.of(ErrorCode.NOT_SUPPORTED_YET, what)
    error.message = f"{error.message} (statement: {text})"
    error.args = (error.message,)
    return error
