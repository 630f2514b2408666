"""What the query path needs from the storage engine (the Spark engine, or the in-memory one).

``TableCatalog`` is the part of ``StorageEngine`` that SHOW statements and information_schema
read: every ``StorageEngine`` is one.
"""

from __future__ import annotations

from typing import Protocol

from spark_replica.applier_core.storage import TableDef, TableRef


class TableCatalog(Protocol):
    """The replicated databases and tables with their definitions."""

    def databases(self) -> list[str]:
        """The databases, sorted."""
        ...

    def tables(self) -> list[TableRef]:
        """The tables, sorted."""
        ...

    def definition(self, table: TableRef) -> TableDef:
        """The definition of ``table``; ``EngineError`` 1146 when there is none."""
        ...
