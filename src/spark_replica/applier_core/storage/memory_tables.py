"""The in-memory engine's tables: committed content, a transaction's staged changes, the row
helpers of the key checks, and DDL applied to the data.

Rows are compared by value (``==``): keys are not folded by collation.
"""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime

from spark_replica.applier_core.binlog.rows import ABSENT, PartialJson, apply_diffs
from spark_replica.applier_core.binlog.rows.json_binary import decode_json
from spark_replica.applier_core.binlog.rows.json_text import JsonText, parse_json, to_text
from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.accounts import AccountOperation
from spark_replica.applier_core.storage.ddl import Catalog
from spark_replica.applier_core.storage.ddl_alter import AlteredTable, alter_columns
from spark_replica.applier_core.storage.ddl_operations import (
    AlterDatabase,
    AlterTable,
    CreateDatabase,
    CreateTable,
    DdlOperation,
    DropDatabase,
    DropTable,
    RenameTable,
    TruncateTable,
)
from spark_replica.applier_core.storage.enum_names import name_normalizer
from spark_replica.applier_core.storage.interface import (
    EngineError,
    HandlerError,
    Key,
    Row,
    TableDef,
    TableRef,
)
from spark_replica.applier_core.storage.objects import (
    AlterObject,
    CreateObject,
    DropObject,
    ObjectOperation,
)


class CommittedTable:
    """A table's committed content, as the engines read and change it: what the key checks
    look up, the rare scans, and the commit of a transaction's stage. Written only under
    the engine's mutex; ``get`` and ``count`` may be called without it by a thread holding
    the row's lock (no other transaction writes that row meanwhile).

    ``Table`` keeps the content in Python dicts (the in-memory engine); the Spark engine's
    tables keep it in its key index on disk under an overlay of changes not yet flushed
    (``spark.indexed_tables``)."""

    __slots__ = ("ref", "definition", "width", "key_of", "normalize", "vectors")

    def __init__(self, ref: TableRef, definition: TableDef) -> None:
        self.ref = ref
        self.definition = definition
        self.width = len(definition.columns)
        self.key_of = _key_function(definition)
        #: Turns ENUM indexes / SET bitmaps of an incoming row into names (None: no such column).
        self.normalize = name_normalizer(definition)
        #: VECTOR columns: a keyless table's rows hold them as tuples (``hashable``).
        self.vectors = tuple(
            i for i, c in enumerate(definition.columns) if c.type.upper().startswith("VECTOR")
        )

    # -- reading ----------------------------------------------------------------------------

    def get(self, key: Key) -> Row | None:
        """A keyed table's row with ``key`` (None: none)."""
        raise NotImplementedError

    def present(self, keys: Sequence[Key]) -> list[bool]:
        """Whether a keyed table holds a row with each of ``keys`` (the duplicate checks of
        a run of inserts; the same contract as ``get``)."""
        get = self.get
        return [get(key) is not None for key in keys]

    def count(self, row: Row) -> int:
        """How often a keyless table holds ``row`` (a ``hashable`` row)."""
        raise NotImplementedError

    def items(self) -> list[tuple[Key, Row]]:
        """A keyed table's keys and rows (a scan: before images without their key)."""
        raise NotImplementedError

    def counts(self) -> Counter[Row]:
        """A keyless table's rows and how often it holds each (a scan)."""
        raise NotImplementedError

    def stored_rows(self) -> Iterable[Row]:
        """Every row as stored (a keyless row as often as it occurs)."""
        if self.key_of is not None:
            return (row for _, row in self.items())
        return self.counts().elements()

    def snapshot(self) -> list[Row]:
        """Every row (VECTOR values of a keyless table as lists again)."""
        rows = self.stored_rows()
        if self.key_of is not None or not self.vectors:
            return list(rows)
        return [self.plain(row) for row in rows]

    def plain(self, row: Row) -> Row:
        """A row as stored, its VECTOR values as lists again (a keyless table stores them
        as tuples: ``hashable``)."""
        vectors = self.vectors
        if self.key_of is not None or not vectors:
            return row
        return tuple(
            list(v) if i in vectors and isinstance(v, tuple) else v for i, v in enumerate(row)
        )

    def altered(self, altered: AlteredTable, new: NewTable) -> CommittedTable:
        """The table after ALTER TABLE: a new table of its engine (``new``) holding the rows
        converted to ``altered``'s definition (``AlteredTable.convert_row``) in the order
        MySQL copies them (key order), re-keyed: a key twice raises 1062. ``self`` is not
        changed."""
        table = new(self.ref, altered.definition)
        rows = _scan_order(self)
        if not altered.keeps_rows:
            rows = [altered.convert_row(row, number) for number, row in enumerate(rows, 1)]
        table.load(rows)
        return table

    # -- writing (under the engine's mutex) ------------------------------------------------

    def commit(self, stage: Stage, number: int) -> None:
        """Make ``stage``'s changes committed content; ``number``: the commit's number in
        an engine that counts them (0 otherwise)."""
        raise NotImplementedError

    def load(self, rows: Iterable[Row]) -> None:
        """Fill a new, empty table (ALTER TABLE's copy); a key twice raises 1062."""
        raise NotImplementedError

    def renamed(self, ref: TableRef) -> CommittedTable:
        """The same content under another name (RENAME TABLE); ``self`` is not changed."""
        raise NotImplementedError

    def discard(self) -> None:
        """A table a failed DDL made (``run_ddl``) is thrown away: free what it holds
        outside the process (nothing here; the Spark engine's staged rows)."""


#: Makes a new, empty table of an engine (CREATE, TRUNCATE and ALTER TABLE).
NewTable = Callable[[TableRef, TableDef], CommittedTable]


class Table(CommittedTable):
    """Committed content in Python dicts: key → row for a keyed table, row → count for a
    keyless one."""

    __slots__ = ("rows", "bag")

    def __init__(self, ref: TableRef, definition: TableDef) -> None:
        super().__init__(ref, definition)
        self.rows: dict[Key, Row] = {}
        self.bag: Counter[Row] = Counter()

    def get(self, key: Key) -> Row | None:
        return self.rows.get(key)

    def count(self, row: Row) -> int:
        return self.bag.get(row, 0)

    def items(self) -> list[tuple[Key, Row]]:
        return list(self.rows.items())

    def counts(self) -> Counter[Row]:
        return Counter(self.bag)

    def stored_rows(self) -> Iterable[Row]:
        return self.rows.values() if self.key_of is not None else self.bag.elements()

    def commit(self, stage: Stage, number: int) -> None:
        if self.key_of is not None:
            rows = self.rows
            for key, row in stage.changes.items():
                if row is None:
                    rows.pop(key, None)
                else:
                    rows[key] = row
            return
        bag = self.bag
        for row, delta in stage.deltas.items():
            count = bag[row] + delta
            if count > 0:
                bag[row] = count
            else:
                bag.pop(row, None)

    def load(self, rows: Iterable[Row]) -> None:
        if self.key_of is None:
            for row in rows:
                self.bag[hashable(row)] += 1
            return
        key_of, found = self.key_of, self.rows
        for row in rows:
            key = key_of(row)
            if key in found:
                raise duplicate_key(self, key)
            found[key] = row

    def renamed(self, ref: TableRef) -> Table:
        new = Table(ref, self.definition)
        new.rows, new.bag = dict(self.rows), Counter(self.bag)
        return new


class Stage:
    """A transaction's changes to one table: key → row (None: deleted) for a keyed table,
    row → count delta for a keyless one. ``fresh``: keys of ``changes`` the table did not
    hold when the transaction first touched them (a durable engine writes their rows as
    plain inserts). ``created``: the transaction's DDL created the table; ``sequence``: the
    table is a sequence (``ddl_sequence``), whose inserts replace its row."""

    __slots__ = ("table", "changes", "fresh", "deltas", "created", "sequence")

    def __init__(
        self, table: CommittedTable, *, created: bool = False, sequence: bool = False
    ) -> None:
        self.table = table
        self.changes: dict[Key, Row | None] = {}
        self.fresh: set[Key] = set()
        self.deltas: dict[Row, int] = {}
        self.created = created
        self.sequence = sequence


def _key_function(definition: TableDef) -> Callable[[Row], Key] | None:
    columns = definition.primary_key
    if not columns:
        return None
    if any(definition.key_prefix):
        parts = tuple(zip(columns, definition.key_prefix, strict=True))
        return lambda row: tuple(_prefix(row[i], n) for i, n in parts)
    if len(columns) == 1:
        (index,) = columns
        return lambda row: (row[index],)
    return operator.itemgetter(*columns)


def _prefix(value: object, length: int) -> object:
    if length and isinstance(value, str | bytes):
        return value[:length]
    return value


def fit(image: Row, width: int, fill: object = None) -> Row:
    """``image`` cut or padded to ``width`` columns (extra source columns are dropped, missing
    ones filled, as MySQL's replica does); for a new row, ABSENT becomes NULL."""
    if len(image) > width:
        image = image[:width]
    elif len(image) < width:
        image = image + (fill,) * (width - len(image))
    if fill is None and ABSENT in image:
        image = tuple(None if value is ABSENT else value for value in image)
    return image


def updated(current: Row, before: Row, after: Row, width: int) -> Row:
    """The row after an update: ``after`` over ``current`` for partial images."""
    if len(after) == width and ABSENT not in after and ABSENT not in before:
        return after
    merged = list(current)
    for index, value in enumerate(after[:width]):
        if value is ABSENT:
            continue
        if isinstance(value, PartialJson):
            value = _apply_json_diffs(current[index], value)
        merged[index] = value
    return tuple(merged)


def _apply_json_diffs(document: object, partial: PartialJson) -> str:
    if isinstance(document, JsonText):
        tree = decode_json(document.binary)
    elif isinstance(document, str):
        tree = parse_json(document)
    else:
        raise EngineError.of(ErrorCode.UNKNOWN_ERROR, "a partial JSON update of a non-JSON value")
    return to_text(apply_diffs(tree, partial.diffs))


def matches(image: Row, row: Row) -> bool:
    return all(value is ABSENT or value == row[i] for i, value in enumerate(image))


def hashable(row: Row) -> Row:
    """``row`` itself, or (VECTOR values are lists) a copy with lists made tuples."""
    try:
        hash(row)
    except TypeError:
        return tuple(tuple(v) if isinstance(v, list) else v for v in row)
    return row


def _key_text(key: Key) -> str:
    """A key value as MySQL prints it in ER_DUP_ENTRY: key parts joined by '-'."""
    return "-".join(_value_text(value) for value in key)


def _value_text(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):  # printable ASCII as is, other bytes as \xNN
        return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02X}" for b in value)
    if isinstance(value, datetime):
        return value.isoformat(" ")
    return str(value)


def duplicate_key(table: CommittedTable, key: Key) -> EngineError:
    return EngineError.of(
        ErrorCode.DUP_ENTRY,
        _key_text(key),
        f"{table.ref.table}.PRIMARY",
        handler_error=HandlerError.FOUND_DUPP_KEY,
    )


def missing_row(table: CommittedTable) -> EngineError:
    return EngineError.of(
        ErrorCode.KEY_NOT_FOUND, table.ref.table, handler_error=HandlerError.KEY_NOT_FOUND
    )


# -- DDL on the data --------------------------------------------------------------------------

Tables = dict[TableRef, CommittedTable]


def run_ddl(
    operations: Sequence[DdlOperation],
    catalog: Catalog,
    tables: Mapping[TableRef, CommittedTable],
    new_table: NewTable = Table,
) -> tuple[Catalog, Tables]:
    """The catalog and tables after ``operations`` (tables they create made by
    ``new_table``); the inputs are left as they were, and when an operation fails the
    tables the ones before it made are discarded."""
    changed = dict(tables)
    try:
        for operation in operations:
            catalog = catalog.apply(operation)
            _change_data(operation, catalog, changed, new_table)
    except BaseException:
        kept = {id(table) for table in tables.values()}
        for table in changed.values():
            if id(table) not in kept:
                table.discard()
        raise
    return catalog, changed


@functools.singledispatch
def _change_data(operation: object, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    raise TypeError(f"not a DDL operation: {operation!r}")


@_change_data.register(CreateDatabase)
@_change_data.register(AlterDatabase)
def _(op: CreateDatabase | AlterDatabase, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    pass  # a database holds no data of its own


@_change_data.register(CreateObject)
@_change_data.register(DropObject)
@_change_data.register(AlterObject)
def _(op: ObjectOperation, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    pass  # views, triggers, routines and events live in the catalog alone


@_change_data.register
def _(op: AccountOperation, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    pass  # replicated accounts live in the catalog alone


@_change_data.register
def _(op: DropDatabase, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    for ref in [ref for ref in tables if ref.schema == op.name]:
        del tables[ref]


@_change_data.register
def _(op: CreateTable, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    if op.table not in tables:
        tables[op.table] = new(op.table, catalog.definition(op.table))


@_change_data.register
def _(op: DropTable, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    tables.pop(op.table, None)


@_change_data.register
def _(op: TruncateTable, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    tables[op.table] = new(op.table, catalog.definition(op.table))


@_change_data.register
def _(op: RenameTable, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    tables[op.new] = tables.pop(op.old).renamed(op.new)


@_change_data.register
def _(op: AlterTable, catalog: Catalog, tables: Tables, new: NewTable) -> None:
    old = tables[op.table]
    tables[op.table] = old.altered(alter_columns(op, old.definition), new)


def _scan_order(table: CommittedTable) -> list[Row]:
    """The rows in key order where the keys compare (InnoDB's clustered index order, which
    numbers rows in MySQL's conversion errors), else as stored."""
    rows = table.snapshot()
    key_of = table.key_of
    if key_of is None:
        return rows
    try:
        return sorted(rows, key=key_of)
    except TypeError:  # NULL or mixed-type key parts: keep the stored order
        return rows
