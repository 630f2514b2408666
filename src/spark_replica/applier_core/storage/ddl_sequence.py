"""MariaDB sequences on the replica: a sequence is a table of eight columns holding one row.

A MariaDB source logs sequences this way in a row-based binary log (mariadb-binlog shows it):

* ``CREATE [OR REPLACE] SEQUENCE [IF NOT EXISTS] s [options]`` and ``CREATE TABLE s (...)
  SEQUENCE=1`` as the statement alone: the row the sequence starts with is not logged, so the
  replica computes it from the options (``initial_row``). ``CREATE TABLE t LIKE s`` of a
  sequence makes a sequence with the default options' row, as MariaDB does.
* ``NEXTVAL`` (when its cache runs out), ``SETVAL`` and an ``INSERT`` into the sequence as a
  ``Write_rows`` event carrying the whole new row, which *replaces* the row
  (``replace_row``, under the sequence's one lock ``SEQUENCE_LOCK``): the table never holds
  more than one.
* ``ALTER SEQUENCE s [options] [RESTART [WITH n]]`` as the statement alone: the replica
  changes the row as MariaDB does (``altered_row``; without RESTART the next value stays).
* ``DROP SEQUENCE [IF EXISTS] s[, ...]`` as the statement; ``DROP TABLE`` drops a sequence
  too, ``RENAME TABLE`` renames it.

The catalog marks a sequence with a kept object of kind ``SEQUENCE`` (``storage.objects``)
beside its table, whose statement is the CREATE the source logged (its ENGINE and COMMENT are
shown by SHOW CREATE SEQUENCE); DROP TABLE, RENAME TABLE and DROP DATABASE take it along
(``ddl``). CREATE and DROP SEQUENCE are CREATE and DROP TABLE to the engines' data
(``CreateSequence``, ``DropSequence``); the session stages a new sequence's first row
(``created_rows``) and applies ALTER SEQUENCE as a row change (``AlterSequence``). The
statements are read by ``ddl_sequence_parser``.
https://mariadb.com/kb/en/create-sequence/, https://mariadb.com/kb/en/alter-sequence/
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple, cast

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.ddl import (
    Catalog,
    apply_operation,
)
from spark_replica.applier_core.storage.ddl_operations import (
    CreateTable,
    DdlOperation,
    DropTable,
)
from spark_replica.applier_core.storage.interface import (
    Column,
    EngineError,
    Key,
    Row,
    TableDef,
    TableRef,
)
from spark_replica.applier_core.storage.objects import (
    CreateObject,
    ObjectKind,
    ObjectRef,
    StoredObject,
)

#: The columns of a sequence table, as MariaDB's SHOW CREATE TABLE has them.
SEQUENCE_DEFINITION = TableDef(
    tuple(
        Column(name, type_, nullable=False)
        for name, type_ in (
            ("next_not_cached_value", "BIGINT(21)"),
            ("minimum_value", "BIGINT(21)"),
            ("maximum_value", "BIGINT(21)"),
            ("start_value", "BIGINT(21)"),
            ("increment", "BIGINT(21)"),
            ("cache_size", "BIGINT(21) UNSIGNED"),
            ("cycle_option", "TINYINT(1) UNSIGNED"),
            ("cycle_count", "BIGINT(21)"),
        )
    )
)
_LONGLONG_MAX = 2**63 - 1
#: MariaDB's defaults for MINVALUE/MAXVALUE: one inside BIGINT's range at each end.
_ASCENDING = (1, _LONGLONG_MAX - 1)
_DESCENDING = (-_LONGLONG_MAX, -1)
_DEFAULT_CACHE = 1000
#: The lock every change of a sequence takes (a row lock's key: no row has zero columns).
SEQUENCE_LOCK: Key = ()


class SequenceRow(NamedTuple):
    """The one row of a sequence table, in column order."""

    next_not_cached_value: int
    minimum_value: int
    maximum_value: int
    start_value: int
    increment: int
    cache_size: int
    cycle_option: int
    cycle_count: int


@dataclass(frozen=True, slots=True)
class SequenceOptions:
    """The options a CREATE or ALTER SEQUENCE gives (None: not given). ``minimum`` and
    ``maximum`` are ``NO_VALUE`` for NO MINVALUE / NO MAXVALUE (the default for the
    increment's direction); ``restart`` is ``RESTART_AT_START`` for RESTART without WITH."""

    increment: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    start: int | None = None
    cache: int | None = None
    cycle: bool | None = None
    restart: int | None = None
    engine: str = ""
    comment: str | None = None


#: ``SequenceOptions.minimum``/``maximum`` for NO MINVALUE / NO MAXVALUE.
NO_VALUE = -(2**64)
#: ``SequenceOptions.restart`` for RESTART without a value: the start value.
RESTART_AT_START = -(2**64) - 1


def initial_row(options: SequenceOptions) -> SequenceRow:
    """The row CREATE SEQUENCE makes: an increment of 0 counts as ascending, START defaults
    to MINVALUE (ascending) or MAXVALUE (descending), CACHE to 1000.

    >>> initial_row(SequenceOptions(increment=-2))
    SequenceRow(next_not_cached_value=-1, minimum_value=-9223372036854775807, \
maximum_value=-1, start_value=-1, increment=-2, cache_size=1000, cycle_option=0, cycle_count=0)
    """
    increment = 1 if options.increment is None else options.increment
    low, high = _ASCENDING if increment >= 0 else _DESCENDING
    minimum = _given(options.minimum, low)
    maximum = _given(options.maximum, high)
    start = options.start
    if start is None:
        start = minimum if increment >= 0 else maximum
    cache = _DEFAULT_CACHE if options.cache is None else options.cache
    return SequenceRow(start, minimum, maximum, start, increment, cache, int(bool(options.cycle)),
                       0)  # fmt: skip


def altered_row(row: SequenceRow, options: SequenceOptions) -> SequenceRow:
    """The row after ALTER SEQUENCE: the options given replace their columns (NO MINVALUE /
    NO MAXVALUE: the default for the new increment's direction); RESTART sets the next value
    (to the start value without WITH) and clears the cycle count; without RESTART the next
    value stays.

    >>> altered_row(initial_row(SequenceOptions()), SequenceOptions(start=5, restart=7))[:4]
    (7, 1, 9223372036854775806, 5)
    """
    increment = row.increment if options.increment is None else options.increment
    low, high = _ASCENDING if increment >= 0 else _DESCENDING
    changed = row._replace(
        increment=increment,
        minimum_value=_given(options.minimum, low, row.minimum_value),
        maximum_value=_given(options.maximum, high, row.maximum_value),
        start_value=row.start_value if options.start is None else options.start,
        cache_size=row.cache_size if options.cache is None else options.cache,
        cycle_option=row.cycle_option if options.cycle is None else int(options.cycle),
    )
    if options.restart is None:
        return changed
    restart = changed.start_value if options.restart == RESTART_AT_START else options.restart
    return changed._replace(next_not_cached_value=restart, cycle_count=0)


def _given(value: int | None, default: int, unchanged: int | None = None) -> int:
    if value is None:
        return default if unchanged is None else unchanged
    return default if value == NO_VALUE else value


# -- operations ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateSequence(CreateTable):
    """CREATE SEQUENCE, CREATE TABLE ... SEQUENCE=1: a table (``definition``) marked as a
    sequence, whose first row is ``row``. The engines create the table as for CREATE TABLE;
    the session stages ``row`` into it (``created_rows``)."""

    row: SequenceRow = initial_row(SequenceOptions())
    statement: str = ""


@dataclass(frozen=True, slots=True)
class DropSequence(DropTable):
    """DROP SEQUENCE: DROP TABLE of a table that must be a sequence (1347 otherwise)."""


@dataclass(frozen=True, slots=True)
class AlterSequence:
    """ALTER SEQUENCE: changes the row only (``altered_row``), so it is applied as a row
    change, not as DDL."""

    table: TableRef
    options: SequenceOptions
    if_exists: bool = False


def sequence_ref(table: TableRef) -> ObjectRef:
    return ObjectRef(ObjectKind.SEQUENCE, table.schema, table.table)


def is_sequence(catalog: Catalog, table: TableRef) -> bool:
    """Whether ``table`` is a sequence in ``catalog``."""
    return sequence_ref(table).key in catalog.objects


@apply_operation.register
def _(op: CreateSequence, catalog: Catalog) -> Catalog:
    before = catalog
    catalog = apply_operation.dispatch(CreateTable)(op, catalog)
    if catalog is before:  # IF NOT EXISTS, and the table is there: nothing changes
        return catalog
    marker = StoredObject(sequence_ref(op.table), op.statement or "CREATE SEQUENCE")
    return catalog.apply(CreateObject(marker, replace=True))


@apply_operation.register
def _(op: DropSequence, catalog: Catalog) -> Catalog:
    if op.table in catalog.tables and not is_sequence(catalog, op.table):
        raise EngineError.of(ErrorCode.WRONG_OBJECT, op.table.schema, op.table.table,
                             "SEQUENCE", table=op.table)  # fmt: skip
    return apply_operation.dispatch(DropTable)(op, catalog)


def check_alter(op: AlterSequence, catalog: Catalog) -> bool:
    """Whether ALTER SEQUENCE ``op`` has a sequence to change (False: IF EXISTS, and there
    is no such table). Raises 1146 for a missing table, 1347 for a table that is not a
    sequence."""
    if op.table not in catalog.tables:
        if op.if_exists:
            return False
        raise EngineError.of(ErrorCode.NO_SUCH_TABLE, op.table.schema, op.table.table,
                             table=op.table)  # fmt: skip
    if not is_sequence(catalog, op.table):
        raise EngineError.of(ErrorCode.WRONG_OBJECT, op.table.schema, op.table.table,
                             "SEQUENCE", table=op.table)  # fmt: skip
    return True


def created_rows(
    operations: tuple[DdlOperation, ...], before: Catalog, after: Catalog
) -> list[tuple[TableRef, Row]]:
    """The first rows of the sequences ``operations`` created (``before`` → ``after``): a
    CREATE SEQUENCE's own row, the default row for a CREATE TABLE ... LIKE a sequence."""
    rows: list[tuple[TableRef, Row]] = []
    for op in operations:
        if not isinstance(op, CreateTable) or not is_sequence(after, op.table):
            continue
        if op.if_not_exists and op.table in before.tables:
            continue  # IF NOT EXISTS on an existing table: nothing was created
        row = op.row if isinstance(op, CreateSequence) else initial_row(SequenceOptions())
        rows.append((op.table, tuple(row)))
    return rows


# -- rows ---------------------------------------------------------------------------------


def replace_row(current: Counter[Row], deltas: dict[Row, int], row: Row) -> None:
    """Stage ``row`` as a sequence's only row: ``current`` is the committed content,
    ``deltas`` the transaction's staged changes (row → count), changed in place."""
    for held in {*current, *deltas, row}:
        delta = (1 if held == row else 0) - current.get(held, 0)
        if delta:
            deltas[held] = delta
        else:
            deltas.pop(held, None)


def current_row(current: Counter[Row], deltas: dict[Row, int]) -> SequenceRow | None:
    """The sequence's row a transaction sees (None: it holds none)."""
    counts = Counter(current)
    counts.update(deltas)
    found = next((row for row, count in counts.items() if count > 0), None)
    return None if found is None else SequenceRow._make(cast(int, v) for v in found)
