"""The replica's Iceberg catalog, as the Spark engine uses it (decision 0019).

Each replicated table is an Iceberg table named after it: MySQL database → namespace,
table → table, so any Spark session or Iceberg engine on the same catalog reads
``<catalog>.shop.orders``. Iceberg's JDBC catalog joins namespace levels with ``.``, so a
database name is stored with ``%`` and ``.`` escaped (``%25``, ``%2E``); table names are
kept as they are. ``DROPPED`` is a namespace no database maps to (a raw ``%`` not followed
by ``25`` or ``2E``): a dropped table waits there until no query reads it.

Every table carries its engine id as the table property ``replica.table-id``, so recovery
finds a table whatever name a crash left it under, and lives at ``<root>/t<id>``: a table
created under the name of a renamed one never shares its files.

The catalog operations go through Iceberg's Java API (``SparkCatalog.icebergCatalog()``):
no SQL parsing of odd names, and a few milliseconds each. Data goes through Spark SQL.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from spark_replica.applier_core.storage.interface import TableDef, TableRef
from spark_replica.applier_core.storage.spark.schema_evolution import SchemaChange
from spark_replica.applier_core.storage.spark.types import (
    quote_name,
    spark_columns_ddl,
    string_text,
)

#: The table property naming the engine's id of a table.
TABLE_ID = "replica.table-id"
#: The operation of a snapshot that rewrites files without changing the rows.
REPLACE = "replace"
#: The file format of a deletion vector (a blob in a Puffin file).
PUFFIN = "PUFFIN"
#: Where dropped tables wait for the queries that still read them.
DROPPED = "%replica_dropped"
#: Properties of every table the engine creates: format v3, row changes merge-on-read as
#: deletion vectors (decisions 0017, 0021: a flush into a big table and a read between
#: compactions are faster than with v2's position delete files), old metadata files
#: removed as commits go on, and Parquet row groups of
#: 16 MiB (Iceberg's default, 128 MiB, is what each writing task buffers: a compaction
#: with a small driver heap ran out of memory; smaller groups also let a lookup by key
#: skip more of a sorted file). Each commit merges the table's manifests (Iceberg's
#: default waits for 100 of them): a query plans over one data and one delete manifest,
#: not two more per flush (70 ms of a scan's planning after 16 flushes, measured). A file
#: weighs 1 MiB more than its bytes when a scan packs files into tasks (Iceberg's default,
#: 4 MiB, split a 1M-row table with 16 flushes' small files into 9 tasks where its compacted
#: form is one: reads between compactions 1.8-2.0x slower than compacted, 1.1-1.4x with
#: 1 MiB; decision 0021). Bloom filters of the primary key (``key_properties``) take at most
#: 64 KiB per row group (Iceberg's default, 1 MiB, tripled a small flush's file).
TABLE_PROPERTIES: Mapping[str, str] = {
    "format-version": "3",
    "commit.manifest.min-count-to-merge": "2",
    "write.parquet.row-group-size-bytes": str(16 * 1024 * 1024),
    "read.split.open-file-cost": str(1024 * 1024),
    "write.parquet.bloom-filter-max-bytes": str(64 * 1024),
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
    "write.metadata.delete-after-commit.enabled": "true",
    "write.metadata.previous-versions-max": "20",
}

#: Table identifiers and namespaces kept made in the JVM (``IcebergCatalog._identifier``,
#: ``_namespace``).
IDENTIFIERS_KEPT = 4096

#: Iceberg's table property prefix that gives the Parquet files of a table a bloom filter of
#: the column named after it.
BLOOM_FILTER_COLUMN = "write.parquet.bloom-filter-enabled.column."


def key_properties(definition: TableDef) -> dict[str, str]:
    """The table properties that give each data file of a table of ``definition`` a bloom
    filter of every primary key column: a lookup by key skips the files a flush wrote
    (their keys span the whole range, so their statistics exclude none) without reading
    their rows (decision 0021)."""
    columns = definition.columns
    return {BLOOM_FILTER_COLUMN + columns[i].name: "true" for i in definition.primary_key}


def namespace_name(database: str) -> str:
    """The Iceberg namespace of a MySQL database."""
    return database.replace("%", "%25").replace(".", "%2E")


def database_name(namespace: str) -> str | None:
    """The MySQL database of a namespace; None for one no database maps to."""
    if "%" in namespace.replace("%25", "").replace("%2E", ""):
        return None
    return namespace.replace("%2E", ".").replace("%25", "%")


class IcebergCatalog:
    """The engine's catalog ``name`` in ``spark``'s session (configured already)."""

    def __init__(self, spark: Any, name: str, root: str) -> None:
        self.spark = spark
        self.name = name
        self.root = root.rstrip("/")
        self._jvm = spark._jvm
        self._gateway = spark.sparkContext._gateway
        # Each name looked up in the JVM is a round trip through py4j (and a wait for the
        # GIL after it): the classes are looked up once, the identifiers made once a table.
        self._string = self._jvm.String
        self._namespace_class = self._jvm.org.apache.iceberg.catalog.Namespace
        self._identifier_class = self._jvm.org.apache.iceberg.catalog.TableIdentifier
        self._identifiers: dict[tuple[str, str], Any] = {}
        self._namespaces: dict[str, Any] = {}
        # Loaded through SQL first: Spark finds a catalog's settings in the session a
        # statement runs in, while a bare catalogManager lookup from Python sees the
        # thread's active session, which may be another one.
        spark.sql(f"SHOW NAMESPACES IN {quote_name(name)}").collect()
        manager = spark._jsparkSession.sessionState().catalogManager()
        self._catalog = manager.catalog(name).icebergCatalog()

    def __repr__(self) -> str:
        return f"IcebergCatalog({self.name!r}, {self.root!r})"

    # -- names ---------------------------------------------------------------------------------

    def sql_name(self, ref: TableRef) -> str:
        """``ref`` as Spark SQL names it: ```catalog`.`namespace`.`table```."""
        return ".".join(map(quote_name, (self.name, namespace_name(ref.schema), ref.table)))

    def sql_name_of(self, namespace: str, table: str) -> str:
        return ".".join(map(quote_name, (self.name, namespace, table)))

    def location(self, table_id: int) -> str:
        return f"{self.root}/t{table_id}"

    def _namespace(self, name: str) -> Any:
        found = self._namespaces.get(name)
        if found is None:
            if len(self._namespaces) >= IDENTIFIERS_KEPT:
                self._namespaces.clear()
            levels = self._gateway.new_array(self._string, 1)
            levels[0] = name
            found = self._namespaces[name] = self._namespace_class.of(levels)
        return found

    def _identifier(self, namespace: str, table: str) -> Any:
        found = self._identifiers.get((namespace, table))
        if found is None:
            if len(self._identifiers) >= IDENTIFIERS_KEPT:
                self._identifiers.clear()
            found = self._identifier_class.of(self._namespace(namespace), table)
            self._identifiers[namespace, table] = found
        return found

    # -- namespaces ----------------------------------------------------------------------------

    def namespaces(self) -> list[str]:
        root = self._jvm.org.apache.iceberg.catalog.Namespace.empty()
        return [str(n.level(0)) for n in _items(self._catalog.listNamespaces(root))]

    def create_namespace(self, namespace: str) -> None:
        if not self._catalog.namespaceExists(self._namespace(namespace)):
            self._catalog.createNamespace(self._namespace(namespace))

    def drop_namespace(self, namespace: str) -> bool:
        """Drop an empty namespace; False when it holds tables (or is gone)."""
        try:
            return bool(self._catalog.dropNamespace(self._namespace(namespace)))
        except Exception as error:  # NamespaceNotEmptyException
            if "NamespaceNotEmpty" in type(error).__name__ or "not empty" in str(error):
                return False
            raise

    # -- tables --------------------------------------------------------------------------------

    def tables(self) -> Iterator[tuple[str, str]]:
        """Every table of the catalog as (namespace, name)."""
        for namespace in self.namespaces():
            for name in self.tables_in(namespace):
                yield namespace, name

    def tables_in(self, namespace: str) -> list[str]:
        """The tables of ``namespace`` (none when it does not exist)."""
        if not self._catalog.namespaceExists(self._namespace(namespace)):
            return []
        return [str(i.name()) for i in _items(self._catalog.listTables(self._namespace(namespace)))]

    def load(self, namespace: str, table: str) -> Any:
        return self._catalog.loadTable(self._identifier(namespace, table))

    def exists(self, namespace: str, table: str) -> bool:
        return bool(self._catalog.tableExists(self._identifier(namespace, table)))

    def create(self, ref: TableRef, definition: TableDef, table_id: int) -> None:
        """Create ``ref`` for ``definition`` with a first, empty snapshot (so the table has a
        snapshot to go back to at any time)."""
        namespace = namespace_name(ref.schema)
        self.create_namespace(namespace)
        properties = {**TABLE_PROPERTIES, **key_properties(definition), TABLE_ID: str(table_id)}
        listed = ", ".join(f"'{string_text(k)}' = '{string_text(v)}'"
                           for k, v in properties.items())  # fmt: skip
        name = self.sql_name(ref)
        self.spark.sql(
            f"CREATE TABLE {name} ({spark_columns_ddl(definition.columns)}) USING iceberg "
            f"LOCATION '{self.location(table_id)}' TBLPROPERTIES ({listed})"
        )
        self.empty_commit(ref)

    def adopt_properties(self, ref: TableRef, definition: TableDef) -> list[str]:
        """Give ``ref`` the values of ``TABLE_PROPERTIES`` it lacks (a table an earlier
        version made) and the ``key_properties`` of ``definition`` (its key changed, or a
        key column's name), the format version left as it is (a change every reader would
        have to follow); the names of the properties set or removed. A commit of the
        table's metadata, not of its rows: its snapshots stay."""
        table = self.load(namespace_name(ref.schema), ref.table)
        have = table.properties()
        wanted = {**TABLE_PROPERTIES, **key_properties(definition)}
        missing = {key: value for key, value in wanted.items()
                   if key != "format-version" and have.get(key) != value}  # fmt: skip
        names = map(str, _items(self.spark._jvm.java.util.ArrayList(have.keySet())))
        stale = [key for key in names if key.startswith(BLOOM_FILTER_COLUMN) and key not in wanted]
        if missing or stale:
            update = table.updateProperties()
            for key, value in missing.items():
                update = update.set(key, value)
            for key in stale:
                update = update.remove(key)
            update.commit()
        return sorted([*missing, *stale])

    def empty_commit(self, ref: TableRef) -> None:
        """A new snapshot with the same rows (and the current schema, which a read ``VERSION
        AS OF`` it then uses)."""
        name = self.sql_name(ref)
        self.spark.sql(f"INSERT INTO {name} SELECT * FROM {name} WHERE 1 = 0")

    def evolve(self, ref: TableRef, change: SchemaChange) -> None:
        """Change ``ref``'s schema in one metadata commit (its data files stay)."""
        update = self.load(namespace_name(ref.schema), ref.table).updateSchema()
        for name in change.drops:
            update = update.deleteColumn(name)
        for old, new in change.renames:
            update = update.renameColumn(old, new)
        for name, spark_sql in change.widens:
            update = update.updateColumn(name, self._iceberg_type(spark_sql))
        for name in change.optional:
            update = update.makeColumnOptional(name)
        for name, spark_sql in change.adds:
            update = update.addColumn(name, self._iceberg_type(spark_sql))
        if change.order:
            update = update.moveFirst(change.order[0])
            for before, name in itertools.pairwise(change.order):
                update = update.moveAfter(name, before)
        update.commit()

    def _iceberg_type(self, spark_sql: str) -> Any:
        spark_type = self._jvm.org.apache.spark.sql.types.DataType.fromDDL(spark_sql)
        return self._jvm.org.apache.iceberg.spark.SparkSchemaUtil.convert(spark_type)

    def rename(self, old: tuple[str, str], new: tuple[str, str]) -> None:
        self.create_namespace(new[0])
        self._catalog.renameTable(self._identifier(*old), self._identifier(*new))

    def drop(self, namespace: str, table: str) -> None:
        """Drop a table and delete its files."""
        self._catalog.dropTable(self._identifier(namespace, table), True)

    # -- a table's state -----------------------------------------------------------------------

    def table_id(self, namespace: str, table: str) -> int | None:
        found = self.load(namespace, table).properties().get(TABLE_ID)
        return int(found) if found is not None and str(found).isdigit() else None

    def current_snapshot(self, ref: TableRef) -> int:
        """The id of ``ref``'s current snapshot (every table the engine made has one)."""
        return snapshot_id(self.load(namespace_name(ref.schema), ref.table))

    def committed_since(self, ref: TableRef, recorded: int) -> int:
        """The current snapshot of ``ref``, once checked that every snapshot after
        ``recorded`` is the current application's or a compaction's (``replace``: the same
        rows; Iceberg's rewrite actions name no application): a commit of another writer in
        between means two processes write the same tables.

        Raises:
            ForeignCommit: another application committed to the table after ``recorded``.
        """
        table = self.load(namespace_name(ref.schema), ref.table)
        app = self.spark.sparkContext.applicationId
        for snapshot in self._after(ref, table, recorded):
            ours = snapshot.summary().get("spark.app.id") == app
            if not ours and str(snapshot.operation()) != REPLACE:
                raise ForeignCommit(
                    f"Iceberg table {self.sql_name(ref)} has a commit of another writer "
                    f"(snapshot {snapshot.snapshotId()}) after the recorded snapshot {recorded}"
                )
        return snapshot_id(table)

    def rows_deleted_since(self, ref: TableRef, since: int) -> int:
        """How many rows the commits after snapshot ``since`` deleted by position (the rows
        a merge-on-read ``MERGE`` matched), compactions left out: they fold deletes into
        rewritten files, deleting no row."""
        table = self.load(namespace_name(ref.schema), ref.table)
        deleted = 0
        for snapshot in self._after(ref, table, since):
            if str(snapshot.operation()) != REPLACE:
                summary = snapshot.summary()
                deleted += int(summary.get("added-position-deletes") or 0)
                deleted -= int(summary.get("removed-position-deletes") or 0)
        return deleted

    def _after(self, ref: TableRef, table: Any, since: int) -> Iterator[Any]:
        """The snapshots of ``table`` after ``since`` up to its current one, newest first.

        Raises:
            ForeignCommit: the current snapshot does not descend from ``since``.
        """
        snapshot = table.currentSnapshot()
        while snapshot is not None and int(snapshot.snapshotId()) != since:
            yield snapshot
            parent = snapshot.parentId()
            snapshot = None if parent is None else table.snapshot(parent)
        if snapshot is None:
            raise ForeignCommit(f"Iceberg table {self.sql_name(ref)} does not descend from "
                                f"its recorded snapshot {since}")  # fmt: skip

    def records(self, ref: TableRef, snapshot: int) -> int | None:
        """About how many rows ``ref`` holds at ``snapshot`` (its summary's data records,
        deleted ones included); None when the summary does not say."""
        found = self.load(namespace_name(ref.schema), ref.table).snapshot(snapshot)
        return None if found is None else _count(found.summary(), "total-records")

    def live_rows(self, ref: TableRef, snapshot: int) -> int | None:
        """The rows ``ref`` holds at ``snapshot`` as its metadata counts them (what a scan
        would count, without reading a data file): in format 3 the summary's records less
        its deleted positions; else each data file's records less those its deletion vector
        deletes; None when a delete file is not a deletion vector (equality deletes, format
        2's position delete files: a file may be counted twice)."""
        table = self.load(namespace_name(ref.schema), ref.table)
        found = table.snapshot(snapshot)
        if found is None:
            return None
        summary = found.summary()
        records = _count(summary, "total-records")
        if summary.get("total-delete-files") == "0":
            return records
        # Format 3 deletes rows by position only with deletion vectors, one per data file at
        # most, each counting the rows it deletes: the summary's total is exact then.
        deleted = _count(summary, "total-position-deletes")
        if (records is not None and deleted is not None and _count(summary,
                "total-equality-deletes") == 0 and int(table.operations().current()
                .formatVersion()) >= 3):  # fmt: skip
            return records - deleted
        tasks = table.newScan().useSnapshot(snapshot).planFiles()
        try:
            rows, each = 0, tasks.iterator()
            while each.hasNext():
                task = each.next()
                rows += int(task.file().recordCount())
                deletes = task.deletes()
                for index in range(deletes.size()):
                    delete = deletes.get(index)
                    if str(delete.format()) != PUFFIN:
                        return None
                    rows -= int(delete.recordCount())
            return rows
        finally:
            tasks.close()

    def set_current_snapshot(self, namespace: str, table: str, snapshot: int) -> None:
        self.load(namespace, table).manageSnapshots().setCurrentSnapshot(snapshot).commit()

    def restore_schema(self, namespace: str, table: str, snapshot: int) -> bool:
        """Make the schema ``snapshot`` was written with the table's current one again (a
        schema change that never reached its commit point); whether it had to."""
        found = self.load(namespace, table)
        wanted = found.snapshot(snapshot).schemaId()
        if wanted is None or int(found.schema().schemaId()) == int(wanted):
            return False
        operations = found.operations()
        base = operations.refresh()
        metadata = self._jvm.org.apache.iceberg.TableMetadata
        operations.commit(base, metadata.buildFrom(base).setCurrentSchema(int(wanted)).build())
        found.refresh()
        return True


class ForeignCommit(RuntimeError):
    """A table holds a commit the engine did not make since its recorded snapshot."""


def snapshot_id(table: Any) -> int:
    current = table.currentSnapshot()
    if current is None:
        raise RuntimeError(f"Iceberg table {table.name()} has no snapshot")
    return int(current.snapshotId())


def _items(java_list: Any) -> list[Any]:
    """The elements of a Java list: by index (a call each, one for the size), not through
    Python's iteration of it, which costs py4j dozens of calls (its iterator's end is a
    Java exception looked up by reflection)."""
    return [java_list.get(index) for index in range(int(java_list.size()))]


def _count(summary: Any, key: str) -> int | None:
    """A snapshot summary's count ``key``; None when it does not say."""
    value = summary.get(key)
    return int(value) if value is not None and str(value).isdigit() else None
