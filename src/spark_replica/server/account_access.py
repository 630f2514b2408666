"""What a client logged in with a replicated account may read, as MySQL decides it.

A session whose user is not one of the replica's local accounts (``auth``) runs as the
replicated account its name and address match (``storage.accounts.match_account``), with the
privileges of that account and its default roles, read again for every statement: a GRANT or
REVOKE the replica applies takes effect on the next statement, as in MySQL for table and
database privileges. An account dropped meanwhile keeps its session but may read nothing.

* A SELECT over replicated tables needs SELECT on each table it names (globally, on the
  database, or on the table): 1142 names the first one that is not allowed. With SELECT on
  some columns of a table only, the query may name only those (1143 names another; a ``*``
  over the table is refused with 1142).
* SHOW DATABASES/TABLES and information_schema list only the databases and tables the
  account holds some privilege on (``visible``).
* USE of a database it holds no privilege in: 1044.
* performance_schema and the ``mysql`` tables are read like any other database.
https://dev.mysql.com/doc/refman/8.4/en/privilege-checks.html
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import expressions as exp

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage import StorageEngine, TableDef, TableRef
from spark_replica.applier_core.storage.accounts import Grants, match_account
from spark_replica.applier_core.storage.objects import ObjectKind, StoredObject
from spark_replica.sql_handlers.query.interfaces import TableCatalog

#: The column names of a table (database, table); empty when it has none or is unknown.
ColumnsOf = Callable[[str, str], list[str]]
#: information_schema is open to every account; its rows are filtered instead.
_OPEN_SCHEMAS = frozenset({"information_schema"})


@dataclass(frozen=True, slots=True)
class Access:
    """A replicated account's session: who (for error texts) and what it may do."""

    user: str
    host: str
    grants: Grants

    @classmethod
    def of(cls, engine: StorageEngine | None, user: str, host: str) -> Access:
        accounts = engine.accounts() if engine is not None else {}
        account = match_account(accounts, user, host)
        grants = Grants.of(accounts, account) if account is not None else Grants({})
        return cls(user, host, grants)

    def check_select(
        self, expression: exp.Expression, database: str | None, columns: ColumnsOf
    ) -> None:
        """Raise 1142 for the first table ``expression`` reads without SELECT on it, or
        1143 for a column of a table it may read only some columns of (``columns`` gives a
        table's column names, to resolve ``*`` and unqualified names)."""
        named = {cte.alias_or_name for cte in expression.find_all(exp.CTE)}
        tables = [t for t in expression.find_all(exp.Table) if t.name]
        for table in tables:
            name = table.name
            if not table.db and name in named:
                continue
            schema = table.db or database or ""
            if schema.lower() in _OPEN_SCHEMAS or self.grants.may_select(schema, name):
                continue
            allowed = self.grants.selectable_columns(schema, name)
            if not allowed:
                raise ReplicaError.from_code(
                    ErrorCode.TABLEACCESS_DENIED_ERROR, "SELECT", self.user, self.host, name
                )
            read = _columns_read(expression, table, tables, columns(schema, name))
            if read is None:  # a * over the table: refused for the table, as MySQL does
                raise ReplicaError.from_code(
                    ErrorCode.TABLEACCESS_DENIED_ERROR, "SELECT", self.user, self.host, name
                )
            for column in read:
                if column.lower() not in allowed:
                    raise ReplicaError.from_code(
                        ErrorCode.COLUMNACCESS_DENIED_ERROR,
                        *("SELECT", self.user, self.host, column, name),
                    )

    def check_use(self, database: str) -> None:
        """Raise 1044 for a database the account holds no privilege in."""
        if database.lower() in _OPEN_SCHEMAS or self.grants.sees_database(database):
            return
        raise ReplicaError.from_code(
            ErrorCode.DBACCESS_DENIED_ERROR, self.user, self.host, database
        )

    def visible(self, catalog: TableCatalog | None) -> TableCatalog | None:
        """``catalog`` as this account sees it in SHOW and information_schema."""
        return None if catalog is None else VisibleCatalog(catalog, self.grants)


def _columns_read(
    expression: exp.Expression, table: exp.Table, tables: list[exp.Table], own: list[str]
) -> list[str] | None:
    """The columns of ``table`` that ``expression`` names (``alias.c`` is c; an unqualified
    name is the table's when it has such a column); None for a ``*`` that covers it (of a
    query over it alone, or ``alias.*``)."""
    alias = table.alias_or_name
    folded = {c.lower(): c for c in own}
    found: list[str] = []
    for star in expression.find_all(exp.Star):
        parent = star.parent
        if isinstance(parent, exp.Column):  # alias.*
            if parent.table == alias:
                return None
        elif isinstance(parent, exp.Select) and len(tables) == 1:  # not COUNT(*)
            return None
    for column in expression.find_all(exp.Column):
        if column.table == alias or (not column.table and column.name.lower() in folded):
            found.append(folded.get(column.name.lower(), column.name))
    return found


@dataclass(frozen=True, slots=True)
class VisibleCatalog:
    """The databases, tables and kept objects of ``catalog`` that ``grants`` give some
    privilege on (a ``TableCatalog``, so every SHOW and information_schema builder can take
    it in place of the engine)."""

    catalog: TableCatalog
    grants: Grants

    def databases(self) -> list[str]:
        return [name for name in self.catalog.databases() if self.grants.sees_database(name)]

    def database_collation(self, name: str) -> str:
        return self.catalog.database_collation(name)

    def tables(self) -> list[TableRef]:
        return [ref for ref in self.catalog.tables() if self.grants.sees_table(*ref)]

    def definition(self, table: TableRef) -> TableDef:
        return self.catalog.definition(table)

    def objects(self) -> list[StoredObject]:
        return [o for o in self.catalog.objects() if self._sees(o)]

    def rows(self, table: TableRef) -> list[tuple[object, ...]]:
        return self.catalog.rows(table)

    def _sees(self, stored: StoredObject) -> bool:
        ref = stored.ref
        if ref.kind in (ObjectKind.VIEW, ObjectKind.SEQUENCE):
            return self.grants.sees_table(ref.schema, ref.name)
        if ref.kind is ObjectKind.TRIGGER:
            return self.grants.sees_table(ref.schema, stored.table)
        return self.grants.sees_database(ref.schema)
