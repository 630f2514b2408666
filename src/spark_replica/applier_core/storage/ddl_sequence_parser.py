"""MariaDB's sequence statements read into ``ddl_sequence`` operations, and SHOW CREATE
SEQUENCE's text.

CREATE [OR REPLACE] [TEMPORARY] SEQUENCE [IF NOT EXISTS] name, ALTER SEQUENCE [IF EXISTS]
name and DROP [TEMPORARY] SEQUENCE [IF EXISTS] name[, ...] are matched with patterns; the
options are read word by word in any order: INCREMENT [BY|=] n, MINVALUE [=] n, NO MINVALUE,
NOMINVALUE (and MAXVALUE alike), START [WITH|=] n, CACHE [=] n, NOCACHE, CYCLE, NOCYCLE,
RESTART [[WITH|=] n] (ALTER), AS BIGINT, and the table options ENGINE and COMMENT (kept for
SHOW CREATE SEQUENCE) and others that change nothing kept. ``CREATE TABLE ... SEQUENCE=1`` is
read by ``ddl_parser``, which hands the table to ``sequence_table``.
https://mariadb.com/kb/en/create-sequence/, https://mariadb.com/kb/en/alter-sequence/
"""

from __future__ import annotations

import re
from dataclasses import replace

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.ddl_operations import (
    CreateTable,
    DdlOperation,
    DropTable,
    unsupported,
)
from spark_replica.applier_core.storage.ddl_sequence import (
    NO_VALUE,
    RESTART_AT_START,
    SEQUENCE_DEFINITION,
    AlterSequence,
    CreateSequence,
    DropSequence,
    SequenceOptions,
    SequenceRow,
    initial_row,
)
from spark_replica.applier_core.storage.interface import EngineError, TableRef

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
        elif word == "DEFAULT" and tokens.peek() in _TABLE_OPTIONS:
            continue  # DEFAULT CHARSET=...: the option follows
        elif word in _TABLE_OPTIONS:
            if word == "CHARACTER":
                tokens.take("SET")
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
