"""MySQL DDL statements parsed with sqlglot's MySQL dialect into ``ddl`` operations.

Supported: CREATE DATABASE/SCHEMA, DROP DATABASE/SCHEMA, CREATE/DROP INDEX (``ddl_index``),
views, triggers, routines and events (``objects``), account statements (``accounts``),
MariaDB's CREATE/DROP SEQUENCE and CREATE TABLE ... SEQUENCE=1 (``ddl_sequence``),
CREATE TABLE (columns, PRIMARY KEY, secondary keys, foreign keys and checks; ``LIKE other``),
DROP TABLE, TRUNCATE TABLE, RENAME TABLE, and ALTER TABLE with ADD/DROP/MODIFY/CHANGE/RENAME/
ALTER COLUMN, ADD/DROP PRIMARY KEY, ADD/DROP/RENAME/ALTER INDEX (KEY, UNIQUE, FULLTEXT,
SPATIAL, CONSTRAINT ... UNIQUE), ADD/DROP FOREIGN KEY, ADD/DROP/ALTER CHECK, DROP CONSTRAINT,
CONVERT TO CHARACTER SET and RENAME TO. Foreign keys and checks are read from the tokens
(``ddl_constraints``) before sqlglot reads the rest. ALTER TABLE clauses that change neither
columns, keys nor data (table options such as ENGINE=, ALGORITHM=, LOCK=) are accepted and
do nothing.
Anything else raises ``EngineError`` 1235 naming the statement: an engine never skips DDL
silently.
(sqlglot's DDL transpilation is not used: the statements are read, not translated.)
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple

from sqlglot import expressions as exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokenizer_core import Token, TokenType

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.accounts import (
    is_account_statement,
    parse_account_statement,
)
from spark_replica.applier_core.storage.collations import (
    BIN_OF_CHARSET,
    SERVER_DEFAULTS,
    CharsetDefaults,
    charset_of,
    is_text_type,
)
from spark_replica.applier_core.storage.constraints import (
    DropCheck,
    DropForeignKey,
    ForeignKeySpec,
    check,
    foreign_key,
    foreign_key_indexes,
)
from spark_replica.applier_core.storage.ddl_constraints import (
    Stripped,
    strip_alter,
    strip_create,
)
from spark_replica.applier_core.storage.ddl_convert import Default
from spark_replica.applier_core.storage.ddl_index import (
    column_unique,
    index_spec,
    parse_index_statement,
)
from spark_replica.applier_core.storage.ddl_operations import (
    AddColumn,
    AddIndex,
    AddPrimaryKey,
    AlterAction,
    AlterColumn,
    AlterDatabase,
    AlterIndex,
    AlterTable,
    ChangeColumn,
    ConvertCharset,
    CreateDatabase,
    CreateTable,
    DdlOperation,
    DropColumn,
    DropDatabase,
    DropIndex,
    DropPrimaryKey,
    DropTable,
    RenameColumn,
    RenameIndex,
    RenameTable,
    TableCollation,
    TruncateTable,
    unsupported,
)
from spark_replica.applier_core.storage.ddl_sequence_parser import (
    parse_sequence_statement,
    sequence_table,
)
from spark_replica.applier_core.storage.ddl_synonyms import type_synonyms
from spark_replica.applier_core.storage.indexes import (
    IndexSpec,
    build_index,
    mysql_order,
)
from spark_replica.applier_core.storage.interface import (
    CheckConstraint,
    Column,
    EngineError,
    ForeignKey,
    Index,
    TableDef,
    TableRef,
)
from spark_replica.applier_core.storage.objects import parse_object_statement

_MYSQL = Dialect.get_or_raise("mysql")


def parse_ddl(
    statement: str, database: str | None, defaults: CharsetDefaults = SERVER_DEFAULTS
) -> tuple[DdlOperation, ...]:
    """The operations of one DDL statement; ``database`` resolves unqualified table names,
    ``defaults`` are the source's where the statement names no character set or collation.

    Raises:
        EngineError: 1064 when the statement does not parse, 1046 when a table name needs a
            database and there is none, 1235 for a statement the engines do not support.
    """
    if is_account_statement(statement):
        return parse_account_statement(statement, database)
    altered = _parse_alter_database(statement, database, defaults)
    if altered is not None:
        return altered
    kept = parse_object_statement(statement, database)
    if kept is not None:
        return (kept,)
    sequence = parse_sequence_statement(statement, database)
    if sequence is not None:
        return sequence
    indexes = parse_index_statement(statement, database)
    if indexes is not None:
        return indexes
    tokens: list[Token] = []
    constraints: Stripped | None = None
    text = statement
    try:
        tokens = type_synonyms(_MYSQL.tokenize(statement))
        if tokens and tokens[0].token_type is TokenType.RENAME:
            return _parse_rename(statement, tokens, database)
        constraints = strip_create(statement, tokens, database, defaults.mariadb) or strip_alter(
            statement, tokens, database, defaults.mariadb
        )
        if constraints is not None and constraints.statement != statement:
            text = constraints.statement
            tokens = type_synonyms(_MYSQL.tokenize(text))
        trees = _MYSQL.parser().parse(tokens, text)
    except (ParseError, TokenError) as error:
        if _partition_clauses(tokens):  # sqlglot reads no partition maintenance
            return _parse_alter_command(text, tokens, database, defaults, constraints)
        raise _syntax_error(statement, error) from error
    found = [tree for tree in trees if tree is not None]
    if not found:
        raise EngineError.of(ErrorCode.EMPTY_QUERY)
    if len(found) > 1:
        raise unsupported("several statements in one DDL event", statement)
    if isinstance(found[0], exp.Command) and str(found[0].this).upper() == "ALTER":
        return _parse_alter_command(text, tokens, database, defaults, constraints)
    return _Translator(statement, database, defaults, constraints).translate(found[0])


_ALTER_DATABASE = re.compile(r"\s*ALTER\s+(?:DATABASE|SCHEMA)\b(.*)", re.IGNORECASE | re.DOTALL)
#: ALTER DATABASE's options (the name, when given, comes first).
_DATABASE_OPTIONS = frozenset({"DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "ENCRYPTION",
                               "READ", "COMMENT", "UPGRADE"})  # fmt: skip
_DATABASE_OPTION = re.compile(
    r"(?:DEFAULT\s+)?(CHARACTER\s+SET|CHARSET|COLLATE)\s*=?\s*(`[^`]+`|'[^']+'|\w+)",
    re.IGNORECASE,
)


def _parse_alter_database(
    statement: str, database: str | None, defaults: CharsetDefaults
) -> tuple[DdlOperation, ...] | None:
    """ALTER DATABASE|SCHEMA [name] options: the new default collation when the options name
    a character set or collation (other options, such as READ ONLY or ENCRYPTION, change
    nothing the replica keeps); None for another statement."""
    found = _ALTER_DATABASE.match(statement)
    if found is None:
        return None
    rest = found.group(1).strip()
    first = re.match(r"(`(?:[^`]|``)+`|\w+)", rest)
    name = database
    if first is not None and first.group(1).upper() not in _DATABASE_OPTIONS:
        name = first.group(1).strip("`").replace("``", "`")
        rest = rest[first.end() :]
    options = {
        ("COLLATE" if kind.upper() == "COLLATE" else "CHARSET"): value.strip("`'")
        for kind, value in _DATABASE_OPTION.findall(rest)
    }
    if not name:
        raise EngineError.of(ErrorCode.NO_DB_ERROR)
    collation = defaults.resolve(options.get("CHARSET"), options.get("COLLATE"))
    return (AlterDatabase(name, collation),) if collation else ()


def _syntax_error(statement: str, error: ParseError | TokenError) -> EngineError:
    details = error.errors[0] if isinstance(error, ParseError) and error.errors else {}
    near = f"{details.get('highlight', '')}{details.get('end_context', '')}" or statement
    line = details.get("line", 1)
    return EngineError.of(ErrorCode.PARSE_ERROR, near, line if isinstance(line, int) else 1)


class _Translator:
    """sqlglot trees of one statement → operations."""

    def __init__(
        self,
        statement: str,
        database: str | None,
        defaults: CharsetDefaults = SERVER_DEFAULTS,
        constraints: Stripped | None = None,
    ) -> None:
        self.statement = statement
        self.database = database or None
        self.defaults = defaults
        #: The statement's FOREIGN KEY and CHECK clauses, which sqlglot does not see.
        self.constraints = constraints or Stripped(statement, [], [], [])
        #: CREATE TABLE: the definition each secondary key of ``_definition`` comes from.
        self.key_origins: list[int] = []

    def translate(self, tree: exp.Expr) -> tuple[DdlOperation, ...]:
        if isinstance(tree, exp.Create):
            return (self._create(tree),)
        if isinstance(tree, exp.Drop):
            return self._drop(tree)
        if isinstance(tree, exp.TruncateTable) and not tree.args.get("is_database"):
            return tuple(TruncateTable(self._table(t)) for t in tree.expressions)
        if isinstance(tree, exp.Alter) and str(tree.args.get("kind", "")).upper() == "TABLE":
            return self._alter(tree)
        raise self._unsupported("this statement as replicated DDL")

    def _unsupported(self, what: str) -> EngineError:
        return unsupported(what, self.statement)

    def _table(self, table: exp.Expression) -> TableRef:
        if not isinstance(table, exp.Table) or not table.name:
            raise self._unsupported(f"the table name {table.sql('mysql')!r}")
        schema = table.db or self.database
        if not schema:
            raise EngineError.of(ErrorCode.NO_DB_ERROR)
        return TableRef(schema, table.name)

    def _create(self, tree: exp.Create) -> DdlOperation:
        kind = str(tree.args.get("kind", "")).upper()
        exists = bool(tree.args.get("exists"))
        target = tree.this
        properties = tree.args.get("properties")
        found = properties.expressions if properties else []
        if kind in ("DATABASE", "SCHEMA") and isinstance(target, exp.Table):
            collation = self._options_collation(found) or self.defaults.server
            return CreateDatabase(target.name or target.db, exists, collation)
        if tree.args.get("replace"):
            raise self._unsupported(f"CREATE OR REPLACE {kind}")
        if kind != "TABLE":
            raise self._unsupported(f"CREATE {kind}")
        if tree.args.get("expression") is not None:
            raise self._unsupported("CREATE TABLE ... SELECT")
        if any(isinstance(p, exp.TemporaryProperty) for p in found):
            raise self._unsupported("CREATE TEMPORARY TABLE")
        like = next((p for p in found if isinstance(p, exp.LikeProperty)), None)
        if like is not None:
            return CreateTable(self._table(target), None, exists, like=self._table(like.this))
        if not isinstance(target, exp.Schema):
            raise self._unsupported("CREATE TABLE without columns")
        table = self._table(target.this)
        definition = replace(self._definition(target), collation=self._options_collation(found))
        created = CreateTable(table, self._with_constraints(table, definition), exists)
        return sequence_table(created, found, self.statement)  # SEQUENCE=1: a sequence

    def _with_constraints(self, table: TableRef, definition: TableDef) -> TableDef:
        """``definition`` with the statement's foreign keys (and the keys they need) and
        checks."""
        mariadb = self.defaults.mariadb
        keys: list[ForeignKey] = []
        added: list[tuple[ForeignKey, ForeignKeySpec]] = []
        for spec in self.constraints.foreign_keys:
            built = foreign_key(spec, table.table, definition.columns, keys, mariadb)
            if built is not None:
                keys.append(built)
                added.append((built, spec))
        checks: list[CheckConstraint] = []
        for check_spec in self.constraints.checks:
            checks.append(check(check_spec, table.table, checks, mariadb))
        found = foreign_key_indexes(definition, added)
        # MySQL's key list holds a foreign key's key where the foreign key is defined.
        origin = {
            id(index): at for index, at in zip(definition.indexes, self.key_origins, strict=True)
        }
        placed = sorted(
            found,
            key=lambda pair: origin[id(pair[0])] if pair[1] is None else pair[1].position - 0.5,
        )
        indexes = [index for index, _ in placed]
        return replace(
            definition,
            indexes=mysql_order(indexes, definition.columns),
            foreign_keys=tuple(keys),
            checks=tuple(checks),
        )

    def _options_collation(self, options: list[exp.Expression]) -> str:
        """The collation that CHARACTER SET and COLLATE options name ("" for none)."""
        charset = next((o.name for o in options if isinstance(o, exp.CharacterSetProperty)), None)
        collation = next((o.name for o in options if isinstance(o, exp.CollateProperty)), None)
        return self.defaults.resolve(charset, collation) or ""

    def _definition(self, schema: exp.Schema) -> TableDef:
        columns: list[Column] = []
        key: list[tuple[str, int]] = []
        secondary: list[IndexSpec] = []
        origins: list[int] = []  # the definition each secondary key comes from
        for number, item in enumerate(schema.expressions):
            if isinstance(item, exp.ColumnDef):
                spec = self._column_spec(item)
                column = spec.column
                if any(c.name.casefold() == column.name.casefold() for c in columns):
                    raise EngineError.of(ErrorCode.DUP_FIELDNAME, column.name)
                columns.append(column)
                if spec.primary:
                    key = self._set_key(key, [(column.name, 0)])
                if spec.unique:
                    secondary.append(column_unique(column.name))
                    origins.append(number)
            else:
                primary_key = self._primary_key(item)
                if primary_key is not None:
                    key = self._set_key(key, primary_key)
                found = index_spec(item)
                if found is not None:
                    secondary.append(found)
                    origins.append(number)
        definition = TableDef(tuple(columns))
        indexes = []
        for name, _prefix in key:
            index = definition.index_of(name)
            if index is None:
                raise EngineError.of(ErrorCode.KEY_COLUMN_DOES_NOT_EXITS, name)
            indexes.append(index)
        # Key columns are NOT NULL (MySQL makes them so).
        not_null = tuple(
            replace(c, nullable=False) if i in indexes else c for i, c in enumerate(columns)
        )
        built: list[Index] = []
        for key_spec in secondary:
            built.append(build_index(key_spec, not_null, built))
        prefixes = tuple(prefix for _, prefix in key)
        self.key_origins = origins
        return TableDef(not_null, tuple(indexes), prefixes, tuple(built))

    @staticmethod
    def _set_key(
        current: list[tuple[str, int]], new: list[tuple[str, int]]
    ) -> list[tuple[str, int]]:
        if current:
            raise EngineError.of(ErrorCode.MULTIPLE_PRI_KEY)
        return new

    def _column_spec(self, item: exp.ColumnDef) -> _ColumnSpec:
        kind = item.args.get("kind")
        if kind is None:
            raise self._unsupported(f"the column {item.name!r} without a type")
        nullable, primary, unique = True, False, False
        default: Default | None = None
        generated: str | None = None
        charset: str | None = None
        collate: str | None = None
        binary = zerofill = False
        for constraint in item.args.get("constraints") or ():
            found = constraint.args.get("kind")
            if isinstance(found, exp.NotNullColumnConstraint):
                nullable = bool(found.args.get("allow_null"))
            elif isinstance(found, exp.PrimaryKeyColumnConstraint):
                primary, nullable = True, False
            elif isinstance(found, exp.UniqueColumnConstraint):
                unique = True
            elif isinstance(found, exp.DefaultColumnConstraint):
                default = _default(found.this)
            elif isinstance(found, exp.AutoIncrementColumnConstraint):
                generated = "AUTO_INCREMENT"
            elif isinstance(found, exp.ComputedColumnConstraint):
                expression = found.this.sql("mysql")
                paren = isinstance(found.this, exp.Paren)
                generated = f"AS {expression}" if paren else f"AS ({expression})"
            elif isinstance(found, exp.CharacterSetColumnConstraint):
                charset = found.this.name.lower()
            elif isinstance(found, exp.CollateColumnConstraint):
                collate = found.this.name
            elif isinstance(found, exp.BinaryColumnConstraint):
                binary = True
            elif isinstance(found, exp.ZeroFillColumnConstraint):
                zerofill = True
        # sqlglot keeps ZEROFILL apart from the type; MySQL shows it in the type.
        type_text = kind.sql(dialect="mysql") + (" ZEROFILL" if zerofill else "")
        collation = ""
        if is_text_type(type_text):
            collation = self.defaults.resolve(charset, collate) or ""
            if kind.this in _NATIONAL and not collation:  # NCHAR, NATIONAL VARCHAR
                collation = self.defaults.default_of("utf8mb3")
            if binary and collate is None:
                collation = f"{charset_of(collation)}_bin" if collation else BIN_OF_CHARSET
        column = Column(item.name, type_text, nullable, collation)
        return _ColumnSpec(column, primary, default, generated, charset, unique)

    def _primary_key(self, item: exp.Expression) -> list[tuple[str, int]] | None:
        if isinstance(item, exp.Constraint):
            keys = [self._primary_key(inner) for inner in item.expressions]
            return next((k for k in keys if k is not None), None)
        if not isinstance(item, exp.PrimaryKey):
            return None  # secondary keys, foreign keys, checks: nothing to store
        parts: list[tuple[str, int]] = []
        for part in item.expressions:
            if isinstance(part, exp.ColumnPrefix):
                parts.append((part.this.name, int(part.expression.name)))
            else:
                parts.append((part.name, 0))
        return parts

    def _drop(self, tree: exp.Drop) -> tuple[DdlOperation, ...]:
        kind = str(tree.args.get("kind", "")).upper()
        exists = bool(tree.args.get("exists"))
        if tree.args.get("temporary"):
            raise self._unsupported("DROP TEMPORARY TABLE")
        if kind in ("DATABASE", "SCHEMA"):
            return tuple(DropDatabase(t.name or t.db, exists) for t in tree.args["tables"])
        if kind != "TABLE":
            raise self._unsupported(f"DROP {kind}")
        return tuple(DropTable(self._table(t), exists) for t in tree.args["tables"])

    def _alter(
        self, tree: exp.Alter, extra: tuple[AlterAction, ...] = ()
    ) -> tuple[DdlOperation, ...]:
        table = self._table(tree.this)
        actions: list[AlterAction] = []
        renamed: TableRef | None = None
        for action in tree.args.get("actions") or ():
            if isinstance(action, exp.AlterRename):
                renamed = self._table(action.this)
            else:
                actions += self._alter_action(action)
        actions += extra
        actions += self.constraints.actions
        options = list(tree.args.get("options") or ())
        collation = self._options_collation(options)
        if collation:
            actions.append(TableCollation(collation))
        copy = self._alter_options(options)
        operations: list[DdlOperation] = []
        if actions or renamed is None:  # no actions: checks the table exists (1146)
            operations.append(AlterTable(table, tuple(actions), copy, self.statement))
        if renamed is not None:
            operations.append(RenameTable(table, renamed))
        return tuple(operations)

    def _alter_action(self, action: exp.Expression) -> list[AlterAction]:
        """One clause of ALTER TABLE as actions (none: a clause without effect here)."""
        if isinstance(action, exp.ColumnDef):
            return self._add_column(action)
        if isinstance(action, exp.ModifyColumn):
            return self._change_column(action)
        if isinstance(action, exp.Drop):
            return self._alter_drop(action)
        if isinstance(action, exp.DropPrimaryKey):
            return [DropPrimaryKey()]
        if isinstance(action, exp.RenameColumn) and not action.args.get("exists"):
            return [RenameColumn(action.this.name, action.args["to"].name)]
        if isinstance(action, exp.AlterColumn) and _set_args(action) <= _ALTER_COLUMN_ARGS:
            return [AlterColumn(action.name)]
        if isinstance(action, exp.AddConstraint):
            return [key for item in action.expressions for key in self._add_constraint(item)]
        if isinstance(action, exp.RenameIndex):
            return [RenameIndex(action.this.name, action.args["to"].name)]
        if isinstance(action, exp.AlterIndex):
            return [AlterIndex(action.this.name, bool(action.args.get("visible")))]
        if isinstance(action, exp.ForceProperty):
            return []  # FORCE rebuilds the same rows
        raise self._unsupported(f"ALTER TABLE ... {action.sql('mysql')}")

    def _add_column(self, action: exp.ColumnDef) -> list[AlterAction]:
        spec = self._column_spec(action)
        first, after = _position(action)
        default = spec.default
        if spec.generated is not None:
            default = Default(expression=spec.generated)
        added = AddColumn(spec.column, first, after, bool(action.args.get("exists")), default)
        return [added, *self._column_keys(spec)]

    def _change_column(self, action: exp.ModifyColumn) -> list[AlterAction]:
        definition = action.this
        if not isinstance(definition, exp.ColumnDef):
            raise self._unsupported(f"ALTER TABLE ... {action.sql('mysql')}")
        spec = self._column_spec(definition)
        old_name = action.args.get("rename_from")
        name = old_name.name if old_name is not None else spec.column.name
        first, after = _position(definition)
        change = ChangeColumn(name, spec.column, first, after, spec.generated, spec.charset)
        return [change, *self._column_keys(spec)]

    @staticmethod
    def _column_keys(spec: _ColumnSpec) -> list[AlterAction]:
        """The keys a column definition's PRIMARY KEY and UNIQUE attributes add."""
        keys: list[AlterAction] = []
        if spec.primary:
            keys.append(AddPrimaryKey((spec.column.name,)))
        if spec.unique:
            keys.append(AddIndex(column_unique(spec.column.name)))
        return keys

    def _alter_drop(self, action: exp.Drop) -> list[AlterAction]:
        kind = str(action.args.get("kind") or "").upper()
        names = [item.name for item in action.args.get("tables") or ()]
        if kind == "COLUMN":
            return [DropColumn(name, bool(action.args.get("exists"))) for name in names]
        if kind in ("INDEX", "KEY", "CONSTRAINT") and any(n.upper() == "PRIMARY" for n in names):
            return [DropPrimaryKey()]  # the primary key is the index named PRIMARY
        exists = bool(action.args.get("exists"))
        if kind in ("INDEX", "KEY", "CONSTRAINT"):
            return [DropIndex(name, exists, constraint=kind == "CONSTRAINT") for name in names]
        if kind == "FOREIGN KEY":
            return [DropForeignKey(name, exists) for name in names]
        if kind == "CHECK":
            return [DropCheck(name) for name in names]
        raise self._unsupported(f"ALTER TABLE ... {action.sql('mysql')}")

    def _add_constraint(self, item: exp.Expression) -> list[AlterAction]:
        key = self._primary_key(item)
        if key is not None:
            return [AddPrimaryKey(tuple(n for n, _ in key), tuple(p for _, p in key))]
        spec = index_spec(item)
        if spec is not None:
            return [AddIndex(spec)]
        inner = item.expressions if isinstance(item, exp.Constraint) else [item]
        if all(isinstance(part, _SECONDARY_KEYS) for part in inner):
            return []  # foreign keys, checks and keys on expressions are not kept
        raise self._unsupported(f"ALTER TABLE ... ADD {item.sql('mysql')}")

    def _alter_options(self, options: list[exp.Expression]) -> bool:
        """Table options of ALTER TABLE change no data; True for ALGORITHM=COPY."""
        copy = False
        for option in options:
            if isinstance(option, exp.AlgorithmProperty):
                copy = copy or option.name.upper() == "COPY"
            elif isinstance(option, exp.EngineProperty):
                if option.name.upper() not in _ENGINES:
                    raise self._unsupported(f"ALTER TABLE ... ENGINE={option.name}")
            elif not isinstance(option, _NO_OP_OPTIONS) and not _generic_option(option):
                raise self._unsupported(f"ALTER TABLE ... {option.sql('mysql')}")
        return copy


class _ColumnSpec(NamedTuple):
    """A column definition: the catalog's column and what else the clause says."""

    column: Column
    primary: bool
    default: Default | None
    generated: str | None
    charset: str | None
    unique: bool = False


_NATIONAL = (exp.DataType.Type.NCHAR, exp.DataType.Type.NVARCHAR)
#: The arguments of ALTER COLUMN SET/DROP DEFAULT and SET VISIBLE/INVISIBLE.
_ALTER_COLUMN_ARGS = frozenset({"this", "default", "drop", "visible"})
_SECONDARY_KEYS = (
    exp.IndexColumnConstraint,
    exp.UniqueColumnConstraint,
    exp.ForeignKey,
    exp.CheckColumnConstraint,
)
#: Storage engines that keep a table's rows (BLACKHOLE, for one, would discard them).
_ENGINES = frozenset({"INNODB", "MYISAM", "MEMORY", "HEAP"})
_NO_OP_OPTIONS = (
    exp.SchemaCommentProperty,
    exp.LockProperty,
    exp.CharacterSetProperty,
    exp.CollateProperty,
    exp.AutoIncrementProperty,
    exp.RowFormatProperty,
    exp.Order,
)
#: Table options sqlglot keeps as plain ``Property``: none changes the rows.
_GENERIC_OPTIONS = frozenset(
    {
        "AUTOEXTEND_SIZE",
        "AVG_ROW_LENGTH",
        "CHECKSUM",
        "COMPRESSION",
        "DELAY_KEY_WRITE",
        "ENCRYPTION",
        "ENGINE_ATTRIBUTE",
        "KEY_BLOCK_SIZE",
        "MAX_ROWS",
        "MIN_ROWS",
        "PACK_KEYS",
        "SECONDARY_ENGINE",
        "SECONDARY_ENGINE_ATTRIBUTE",
        "STATS_AUTO_RECALC",
        "STATS_PERSISTENT",
        "STATS_SAMPLE_PAGES",
    }
)


def _set_args(node: exp.Expression) -> set[str]:
    return {name for name, value in node.args.items() if value is not None}


def _generic_option(option: exp.Expression) -> bool:
    return type(option) is exp.Property and option.name.upper() in _GENERIC_OPTIONS


def _position(definition: exp.ColumnDef) -> tuple[bool, str | None]:
    """FIRST / AFTER of a column definition: (first, the column to follow)."""
    place = definition.args.get("position")
    if place is None:
        return False, None
    if str(place.args.get("position")).upper() == "FIRST":
        return True, None
    return False, place.this.name if place.this else None


def _default(value: exp.Expression) -> Default:
    """A DEFAULT clause: a literal's text, or the expression MySQL would evaluate."""
    if isinstance(value, exp.Null):
        return Default()
    if isinstance(value, exp.Boolean):
        return Default("1" if value.this else "0", number=True)
    if isinstance(value, exp.Introducer):  # _utf8mb4'text'
        value = value.expression
    if isinstance(value, exp.Literal):
        return Default(value.this, number=not value.is_string)
    if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
        if not value.this.is_string:
            return Default(f"-{value.this.this}", number=True)
    return Default(expression=value.sql("mysql"))


def _parse_alter_command(
    statement: str,
    tokens: list[Token],
    database: str | None,
    defaults: CharsetDefaults,
    constraints: Stripped | None = None,
) -> tuple[DdlOperation, ...]:
    """ALTER TABLE that sqlglot keeps as text: its clauses sqlglot cannot read but that are
    understood here (CONVERT TO CHARACTER SET, ENABLE/DISABLE KEYS) are taken out, and the
    rest is parsed again."""
    translator = _Translator(statement, database, defaults, constraints)
    split = _alter_clauses(tokens)
    if split is None:
        raise translator._unsupported("this statement as replicated DDL")
    name_end, clauses = split
    kept: list[list[Token]] = []
    extra: list[AlterAction] = []
    for clause in clauses:
        words = [token.text.upper() for token in clause]
        if words[1:2] == ["PARTITION"] and words[0] not in _PARTITION_NO_OPS:
            text = statement[clause[0].start : clause[-1].end + 1]
            raise translator._unsupported(f"ALTER TABLE ... {text}")  # rows change unlogged
        if _is_convert(words):
            extra.append(_convert(clause, words, defaults))
        elif not _is_no_op_clause(words):
            kept.append(clause)
    head = statement[: tokens[name_end - 1].end + 1]
    rest = ", ".join(statement[c[0].start : c[-1].end + 1] for c in kept)
    try:
        trees = _MYSQL.parse(f"{head} {rest}" if rest else f"{head} FORCE")
    except (ParseError, TokenError) as error:
        raise _syntax_error(statement, error) from error
    tree = trees[0] if len(trees) == 1 else None
    if not isinstance(tree, exp.Alter) or (clauses and len(kept) == len(clauses)):
        raise translator._unsupported(f"ALTER TABLE ... {rest or statement}")
    return translator._alter(tree, tuple(extra))


def _partition_clauses(tokens: list[Token]) -> bool:
    """Whether ``tokens`` are an ALTER TABLE with a clause on partitions."""
    if not tokens or tokens[0].token_type is not TokenType.ALTER:
        return False
    split = _alter_clauses(tokens)
    return split is not None and any(
        [t.text.upper() for t in clause[1:2]] == ["PARTITION"] for clause in split[1]
    )


def _alter_clauses(tokens: list[Token]) -> tuple[int, list[list[Token]]] | None:
    """ALTER TABLE name clause, clause, ...: where the name ends and the clauses' tokens."""
    if len(tokens) < 3 or tokens[1].token_type is not TokenType.TABLE:
        return None
    name_end = 5 if len(tokens) >= 5 and tokens[3].token_type is TokenType.DOT else 3
    if name_end == len(tokens):
        return name_end, []  # ALTER TABLE t: nothing to change
    clauses: list[list[Token]] = [[]]
    depth = 0
    for token in tokens[name_end:]:
        if token.token_type is TokenType.COMMA and depth == 0:
            clauses.append([])
            continue
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        clauses[-1].append(token)
    return (name_end, clauses) if all(clauses) else None


def _is_convert(words: list[str]) -> bool:
    return words[:2] == ["CONVERT", "TO"] and _charset_at(words) < len(words)


def _convert(clause: list[Token], words: list[str], defaults: CharsetDefaults) -> ConvertCharset:
    """CONVERT TO CHARACTER SET name [COLLATE [=] name]."""
    at = _charset_at(words)
    charset = clause[at].text.lower()
    rest = [token.text for token in clause[at + 1 :] if token.text != "="]
    collate = rest[1] if len(rest) > 1 and rest[0].upper() == "COLLATE" else None
    return ConvertCharset(charset, defaults.resolve(charset, collate) or "")


def _charset_at(words: list[str]) -> int:
    """The position of the character set's name in CONVERT TO CHARACTER SET|CHARSET name."""
    if words[2:4] == ["CHARACTER", "SET"]:
        return 4
    return 3 if words[2:3] == ["CHARSET"] else len(words)


#: Partition maintenance that keeps every row where it is, as far as the replica's tables
#: (which are not partitioned) can tell. DROP, TRUNCATE and EXCHANGE PARTITION change rows
#: without logging them, so they stay refused (1235).
_PARTITION_NO_OPS = frozenset(
    {"ADD", "COALESCE", "REORGANIZE", "ANALYZE", "CHECK", "OPTIMIZE", "REBUILD", "REPAIR"}
)


def _is_no_op_clause(words: list[str]) -> bool:
    """ENABLE/DISABLE KEYS (MyISAM index maintenance), table options sqlglot does not read
    (CHECKSUM=1, TABLESPACE ts), partitioning (PARTITION BY, REMOVE PARTITIONING, and the
    partition maintenance in ``_PARTITION_NO_OPS``)."""
    if words in (["ENABLE", "KEYS"], ["DISABLE", "KEYS"], ["REMOVE", "PARTITIONING"]):
        return True
    if words[0] == "PARTITION BY" or words[:2] == ["PARTITION", "BY"]:
        return True
    if words[0] in _PARTITION_NO_OPS and words[1:2] == ["PARTITION"]:
        return True
    if (words[0] in _GENERIC_OPTIONS or words[0] == "TABLESPACE") and len(words) <= 3:
        return True  # NAME [=] value, alone: options written one after another are not read
    return False


def _parse_rename(
    statement: str, tokens: list[Token], database: str | None
) -> tuple[DdlOperation, ...]:
    """RENAME TABLE a TO b[, c TO d ...] (sqlglot keeps the rest of the statement as text)."""
    rest = tokens[1].text if len(tokens) == 2 else ""
    words = _MYSQL.tokenize(rest) if rest else []
    if not words or words[0].token_type is not TokenType.TABLE:
        raise unsupported("this RENAME statement as replicated DDL", statement)
    translator = _Translator(statement, database)
    pairs: list[DdlOperation] = []
    position = 1
    while True:
        old, position = _name(words, position, statement)
        if position >= len(words) or words[position].text.upper() != "TO":
            raise _syntax_error(statement, ParseError("expected TO"))
        new, position = _name(words, position + 1, statement)
        pairs.append(RenameTable(translator._table(old), translator._table(new)))
        if position == len(words):
            return tuple(pairs)
        if words[position].token_type is not TokenType.COMMA:
            raise _syntax_error(statement, ParseError("expected ,"))
        position += 1


def _name(words: list[Token], position: int, statement: str) -> tuple[exp.Table, int]:
    parts: list[str] = []
    while position < len(words):
        word = words[position]
        if word.token_type in (TokenType.COMMA, TokenType.DOT):
            raise _syntax_error(statement, ParseError(f"unexpected {word.text!r}"))
        parts.append(word.text)
        position += 1
        if position < len(words) and words[position].token_type is TokenType.DOT:
            position += 1
            continue
        break
    if not 1 <= len(parts) <= 2:
        raise _syntax_error(statement, ParseError("expected a table name"))
    return exp.table_(parts[-1], db=parts[0] if len(parts) == 2 else None), position
