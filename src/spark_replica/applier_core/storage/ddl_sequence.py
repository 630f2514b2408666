"""MariaDB sequences on the replica: a sequence is a table of eight columns holding one row.

A MariaDB source logs sequences this way in a row-based binary log (mariadb-binlog shows it):

* ``CREATE [OR REPLACE] SEQUENCE [IF NOT EXISTS] s [options]`` and ``CREATE TABLE s (...)
  SEQUENCE=1`` as the statement alone: the row the sequence starts with is not logged, so the
  replica computes it from the options (``initial_row``). ``CREATE TABLE t LIKE s`` of a
  sequence makes a sequence with the default options' row, as MariaDB does.
* ``NEXTVAL`` (when its cache runs out), ``SETVAL`` and an ``INSERT`` into the sequence as a
  ``Write_rows`` event carrying the whole new row, which *replaces* the row
  (``SequenceRow.replace``): the table never holds more than one.
* ``ALTER SEQUENCE s [options] [RESTART [WITH n]]`` as the statement alone: the replica
  changes the row as MariaDB does (``altered_row``; without RESTART the next value stays).
* ``DROP SEQUENCE [IF EXISTS] s[, ...]`` as the statement; ``DROP TABLE`` drops a sequence
  too, ``RENAME TABLE`` renames it.

The catalog marks a sequence with a kept object of kind ``SEQUENCE`` (``storage.objects``)
beside its table, whose statement is the CREATE the source logged (its ENGINE and COMMENT are
shown by SHOW CREATE SEQUENCE). CREATE TEMPORARY SEQUENCE is refused (1235) like CREATE
TEMPORARY TABLE, and so is MariaDB 11.5's ``AS <type>`` other than BIGINT.
https://mariadb.com/kb/en/create-sequence/, https://mariadb.com/kb/en/alter-sequence/
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import NamedTuple, cast

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.ddl import (
    Catalog,
    CreateTable,
    DdlOperation,
    DropTable,
    apply_operation,
    unsupported,
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
    marker = StoredObject(sequence_ref(op.table), op.statement or _CREATE_DEFAULT)
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


# -- statements ---------------------------------------------------------------------------

_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_QUALIFIED = rf"(?P<first>{_NAME})(?:\s*\.\s*(?P<second>{_NAME}))?"
_CREATE = re.compile(
    r"\s*CREATE\s+(?P<replace>OR\s+REPLACE\s+)?(?P<temporary>TEMPORARY\s+)?SEQUENCE\s+"
    rf"(?P<exists>IF\s+NOT\s+EXISTS\s+)?{_QUALIFIED}",
    re.IGNORECASE,
)
_ALTER = re.compile(rf"\s*ALTER\s+SEQUENCE\s+(?P<exists>IF\s+EXISTS\s+)?{_QUALIFIED}",
                    re.IGNORECASE)  # fmt: skip
_DROP = re.compile(
    r"\s*DROP\s+(?P<temporary>TEMPORARY\s+)?SEQUENCE\s+(?P<exists>IF\s+EXISTS\s+)?(?P<names>.*)",
    re.IGNORECASE | re.DOTALL,
)
_TOKEN = re.compile(
    r"\s*(?:(?P<number>[-+]?\s*\d+)|(?P<string>'(?:[^'\\]|\\.|'')*')|(?P<word>[\w$]+)"
    r"|(?P<mark>=|,)|(?P<other>\S))",
    re.DOTALL,
)
_CREATE_DEFAULT = "CREATE SEQUENCE"


def parse_sequence_statement(
    statement: str, database: str | None
) -> tuple[DdlOperation, ...] | None:
    """The operations of CREATE SEQUENCE / DROP SEQUENCE; None for any other statement
    (ALTER SEQUENCE: ``parse_alter_sequence``).

    Raises:
        EngineError: 1064 for options that do not parse, 1046 for a name without a database
            and none current, 1235 for CREATE TEMPORARY SEQUENCE and ``AS <type>``.
    """
    found = _DROP.match(statement)
    if found is not None:
        if found.group("temporary"):
            raise unsupported("DROP TEMPORARY SEQUENCE", statement)
        names = _names(found.group("names"), statement, database)
        exists = bool(found.group("exists"))
        return tuple(DropSequence(name, exists) for name in names)
    found = _CREATE.match(statement)
    if found is None:
        return None
    if found.group("temporary"):
        raise unsupported("CREATE TEMPORARY SEQUENCE", statement)
    table = _table(found, database)
    options = _options(statement, statement[found.end() :], alter=False)
    create = CreateSequence(table, SEQUENCE_DEFINITION, bool(found.group("exists")),
                            row=initial_row(options), statement=statement.strip())  # fmt: skip
    if found.group("replace"):
        return (DropTable(table, if_exists=True), create)
    return (create,)


def parse_alter_sequence(statement: str, database: str | None) -> AlterSequence | None:
    """ALTER SEQUENCE's table and options; None for any other statement."""
    found = _ALTER.match(statement)
    if found is None:
        return None
    options = _options(statement, statement[found.end() :], alter=True)
    return AlterSequence(_table(found, database), options, bool(found.group("exists")))


def sequence_table(created: CreateTable, properties: list[object], statement: str) -> DdlOperation:
    """CREATE TABLE ``created`` as a sequence when its table options say SEQUENCE=1 (sqlglot
    keeps the option as a property named SEQUENCE); otherwise ``created`` itself."""
    for found in properties:
        name = getattr(getattr(found, "this", None), "name", "")
        value = getattr(found, "args", {}).get("value")
        if str(name).upper() == "SEQUENCE" and getattr(value, "name", "") not in ("", "0"):
            assert created.definition is not None
            return CreateSequence(created.table, created.definition, created.if_not_exists,
                                  statement=statement.strip())  # fmt: skip
    return created


def _table(found: re.Match[str], database: str | None) -> TableRef:
    first, second = _unquote(found.group("first")), found.group("second")
    if second is not None:
        return TableRef(first, _unquote(second))
    if not database:
        raise EngineError.of(ErrorCode.NO_DB_ERROR)
    return TableRef(database, first)


def _names(text: str, statement: str, database: str | None) -> list[TableRef]:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL).strip().rstrip(";").strip()
    text = re.sub(r"\s+(RESTRICT|CASCADE)$", "", text, flags=re.IGNORECASE)
    names = []
    for part in re.split(r",(?=(?:[^`]|`[^`]*`)*$)", text):
        found = re.fullmatch(rf"\s*{_QUALIFIED}\s*", part)
        if found is None:
            raise _syntax(statement)
        names.append(_table(found, database))
    return names


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == name[-1] == "`":
        return name[1:-1].replace("``", "`")
    return name


def _syntax(statement: str) -> EngineError:
    return EngineError.of(ErrorCode.PARSE_ERROR, statement[:80], 1)


class _Tokens:
    """The words, numbers, strings and marks after the sequence's name."""

    def __init__(self, statement: str, text: str) -> None:
        self.statement = statement
        self.items: list[tuple[str, str]] = []
        position = 0
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL).rstrip().rstrip(";")
        while position < len(text) and text[position:].strip():
            found = _TOKEN.match(text, position)
            if found is None or found.lastgroup == "other":
                raise _syntax(statement)
            kind = found.lastgroup or ""
            value = found.group(kind)
            self.items.append((kind, value))
            position = found.end()
        self.at = 0

    def peek(self, offset: int = 0) -> str:
        index = self.at + offset
        return self.items[index][1].upper() if index < len(self.items) else ""

    def take(self, *words: str) -> bool:
        if self.peek() in words:
            self.at += 1
            return True
        return False

    def number(self) -> int:
        self.take("=")
        if self.at >= len(self.items) or self.items[self.at][0] != "number":
            raise _syntax(self.statement)
        value = int(self.items[self.at][1].replace(" ", ""))
        self.at += 1
        return value

    def value(self) -> str:
        self.take("=")
        if self.at >= len(self.items):
            raise _syntax(self.statement)
        kind, value = self.items[self.at]
        self.at += 1
        if kind == "string":
            return value[1:-1].replace("''", "'").replace("\\'", "'")
        return value

    def done(self) -> bool:
        while self.take(","):
            pass
        return self.at >= len(self.items)


def _options(statement: str, text: str, *, alter: bool) -> SequenceOptions:
    tokens = _Tokens(statement, text)
    options = SequenceOptions()
    while not tokens.done():
        word = tokens.peek()
        tokens.at += 1
        if word == "INCREMENT":
            tokens.take("BY")
            options = replace(options, increment=tokens.number())
        elif word in ("MINVALUE", "MAXVALUE"):
            options = _bound(options, word, tokens.number())
        elif word in ("NOMINVALUE", "NOMAXVALUE"):
            options = _bound(options, word[2:], NO_VALUE)
        elif word == "NO" and tokens.peek() in ("MINVALUE", "MAXVALUE"):
            options = _bound(options, tokens.peek(), NO_VALUE)
            tokens.at += 1
        elif word == "START":
            tokens.take("WITH")
            options = replace(options, start=tokens.number())
        elif word == "CACHE":
            options = replace(options, cache=tokens.number())
        elif word == "NOCACHE" or (word == "NO" and tokens.take("CACHE")):
            options = replace(options, cache=0)
        elif word == "CYCLE" or word == "NOCYCLE" or (word == "NO" and tokens.take("CYCLE")):
            options = replace(options, cycle=word == "CYCLE")
        elif word == "RESTART" and alter:
            tokens.take("WITH")
            has_value = tokens.peek() == "=" or tokens.peek()[:1] in "+-0123456789"
            restart = tokens.number() if has_value and tokens.peek() else RESTART_AT_START
            options = replace(options, restart=restart)
        elif word == "AS" and not alter:
            kind = tokens.value().upper()
            if kind != "BIGINT" or tokens.take("UNSIGNED"):
                raise unsupported(f"a sequence AS {kind}", statement)
            tokens.take("SIGNED")
        elif word == "ENGINE":
            options = replace(options, engine=tokens.value())
        elif word == "COMMENT":
            options = replace(options, comment=tokens.value())
        elif word in _TABLE_OPTIONS:
            tokens.take("DEFAULT")
            tokens.value()  # a table option that changes nothing the replica keeps
        else:
            raise _syntax(statement)
    return options


def _bound(options: SequenceOptions, word: str, value: int) -> SequenceOptions:
    if word == "MINVALUE":
        return replace(options, minimum=value)
    return replace(options, maximum=value)


#: Table options CREATE SEQUENCE accepts besides ENGINE and COMMENT.
_TABLE_OPTIONS = frozenset({"CHARSET", "CHARACTER", "COLLATE", "ROW_FORMAT", "KEY_BLOCK_SIZE",
                            "ENCRYPTED", "ENCRYPTION_KEY_ID", "PAGE_COMPRESSED",
                            "PAGE_COMPRESSION_LEVEL", "STATS_PERSISTENT", "STATS_AUTO_RECALC",
                            "STATS_SAMPLE_PAGES"})  # fmt: skip


# -- SHOW CREATE SEQUENCE -----------------------------------------------------------------


def show_create_sequence(name: str, row: SequenceRow | None, statement: str) -> str:
    """The ``Create Table`` column of SHOW CREATE SEQUENCE, as MariaDB prints it: the row's
    values (a cache of 0 as ``nocache``), then ENGINE (InnoDB unless the CREATE named
    another) and COMMENT."""
    row = row or initial_row(SequenceOptions())
    options = _created_options(statement)
    quoted = "`" + name.replace("`", "``") + "`"
    cache = f"cache {row.cache_size}" if row.cache_size else "nocache"
    text = (
        f"CREATE SEQUENCE {quoted} start with {row.start_value} minvalue {row.minimum_value} "
        f"maxvalue {row.maximum_value} increment by {row.increment} {cache} "
        f"{'cycle' if row.cycle_option else 'nocycle'} ENGINE={options.engine or 'InnoDB'}"
    )
    if options.comment:
        text += " COMMENT='" + options.comment.replace("'", "''") + "'"
    return text


def _created_options(statement: str) -> SequenceOptions:
    """The ENGINE and COMMENT of the CREATE statement a sequence was made by."""
    found = _CREATE.match(statement)
    if found is None:
        engine = re.search(r"\bENGINE\s*=?\s*(\w+)", statement, re.IGNORECASE)
        comment = re.search(r"\)[^)]*\bCOMMENT\s*=?\s*'((?:[^'\\]|\\.|'')*)'", statement,
                            re.IGNORECASE | re.DOTALL)  # fmt: skip
        return SequenceOptions(
            engine=engine.group(1) if engine else "",
            comment=comment.group(1).replace("''", "'") if comment else None,
        )
    try:
        return _options(statement, statement[found.end() :], alter=False)
    except EngineError:
        return SequenceOptions()
