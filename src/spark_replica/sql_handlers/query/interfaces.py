"""What the query path needs from the storage engine (the Spark engine, or the in-memory one).

``TableCatalog`` is the part of ``StorageEngine`` that SHOW statements and information_schema
read: every ``StorageEngine`` is one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from spark_replica.applier_core.storage import TableDef, TableRef
from spark_replica.applier_core.storage.objects import StoredObject


class TableCatalog(Protocol):
    """The replicated databases and tables with their definitions."""

    def databases(self) -> list[str]:
        """The databases, sorted."""
        ...

    def database_collation(self, name: str) -> str:
        """The default collation of database ``name`` ("" when not known)."""
        ...

    def tables(self) -> list[TableRef]:
        """The tables, sorted."""
        ...

    def definition(self, table: TableRef) -> TableDef:
        """The definition of ``table``; ``EngineError`` 1146 when there is none."""
        ...

    def objects(self) -> list[StoredObject]:
        """The views, triggers, routines and events kept, sorted by kind, database, name."""
        ...

    def rows(self, table: TableRef) -> list[tuple[object, ...]]:
        """The committed rows of ``table`` (SHOW CREATE SEQUENCE reads a sequence's row)."""
        ...


class ResultColumn(Protocol):
    """A result column: its name and MySQL type (a mysql-mimic ``ColumnType`` name), a
    DECIMAL's precision and scale, whether its values are bytes, and whether it may hold
    NULL."""

    @property
    def name(self) -> str: ...

    @property
    def mysql_type(self) -> str: ...

    @property
    def precision(self) -> int: ...

    @property
    def scale(self) -> int: ...

    @property
    def binary(self) -> bool: ...

    @property
    def nullable(self) -> bool: ...


class RunningQuery(Protocol):
    """A query started by a ``QueryEngine``: blocking calls, one thread at a time."""

    @property
    def fields(self) -> Sequence[ResultColumn]: ...

    def fetch(self, count: int) -> list[tuple[object, ...]]:
        """Up to ``count`` more rows; an empty list at the end."""
        ...

    def close(self) -> None:
        """End the query (its snapshot and its turn are released)."""
        ...


class PinnedTables(Protocol):
    """The replicated tables as one query reads them: at one recorded state."""

    def view(self, ref: TableRef) -> str | None:
        """The name to read ``ref`` under; None for an unknown table."""
        ...

    def row_count(self, ref: TableRef) -> int | None:
        """The rows ``ref`` holds, where the engine knows them without reading the table;
        None otherwise (and for an unknown table)."""
        ...


class QueryEngine(Protocol):
    """Runs users' SELECTs over the replicated tables (the Spark engine's ``SparkQueries``)."""

    def run(self, build: Callable[[PinnedTables], str], tag: str) -> RunningQuery:
        """Start the query ``build`` writes, given the tables it reads, as job ``tag``.
        Blocking; raises what ``build`` raises or the engine's error."""
        ...

    def cancel(self, tag: str) -> None:
        """Cancel the running query ``tag`` (KILL QUERY)."""
        ...
