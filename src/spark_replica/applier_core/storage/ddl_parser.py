"""MySQL DDL statements parsed with sqlglot's MySQL dialect into ``ddl`` operations.

Supported: CREATE DATABASE/SCHEMA, DROP DATABASE/SCHEMA, CREATE TABLE (columns, PRIMARY KEY;
secondary keys and other constraints are accepted and ignored; ``LIKE other``), DROP TABLE,
TRUNCATE TABLE, RENAME TABLE, ALTER TABLE ADD COLUMN / DROP COLUMN / RENAME TO. Anything else
raises ``EngineError`` 1235 naming the statement: an engine never skips DDL silently.
(sqlglot's DDL transpilation is not used: the statements are read, not translated.)
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import expressions as exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokenizer_core import Token, TokenType

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.ddl import (
    AddColumn,
    AlterTable,
    CreateDatabase,
    CreateTable,
    DdlOperation,
    DropColumn,
    DropDatabase,
    DropTable,
    RenameTable,
    TruncateTable,
    unsupported,
)
from spark_replica.applier_core.storage.interface import Column, EngineError, TableDef, TableRef

_MYSQL = Dialect.get_or_raise("mysql")


def parse_ddl(statement: str, database: str | None) -> tuple[DdlOperation, ...]:
    """The operations of one DDL statement; ``database`` resolves unqualified table names.

    Raises:
        EngineError: 1064 when the statement does not parse, 1046 when a table name needs a
            database and there is none, 1235 for a statement the engines do not support.
    """
    try:
        tokens = _MYSQL.tokenize(statement)
        if tokens and tokens[0].token_type is TokenType.RENAME:
            return _parse_rename(statement, tokens, database)
        trees = _MYSQL.parser().parse(tokens, statement)
    except (ParseError, TokenError) as error:
        raise _syntax_error(statement, error) from error
    found = [tree for tree in trees if tree is not None]
    if not found:
        raise EngineError.of(ErrorCode.EMPTY_QUERY)
    if len(found) > 1:
        raise unsupported("several statements in one DDL event", statement)
    return _Translator(statement, database).translate(found[0])


def _syntax_error(statement: str, error: ParseError | TokenError) -> EngineError:
    details = error.errors[0] if isinstance(error, ParseError) and error.errors else {}
    near = f"{details.get('highlight', '')}{details.get('end_context', '')}" or statement
    line = details.get("line", 1)
    return EngineError.of(ErrorCode.PARSE_ERROR, near, line if isinstance(line, int) else 1)


class _Translator:
    """sqlglot trees of one statement → operations."""

    def __init__(self, statement: str, database: str | None) -> None:
        self.statement = statement
        self.database = database or None

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
        if kind in ("DATABASE", "SCHEMA") and isinstance(target, exp.Table):
            return CreateDatabase(target.name or target.db, exists)
        if tree.args.get("replace"):
            raise self._unsupported(f"CREATE OR REPLACE {kind}")
        if kind != "TABLE":
            raise self._unsupported(f"CREATE {kind}")
        if tree.args.get("expression") is not None:
            raise self._unsupported("CREATE TABLE ... SELECT")
        properties = tree.args.get("properties")
        found = properties.expressions if properties else []
        if any(isinstance(p, exp.TemporaryProperty) for p in found):
            raise self._unsupported("CREATE TEMPORARY TABLE")
        like = next((p for p in found if isinstance(p, exp.LikeProperty)), None)
        if like is not None:
            return CreateTable(self._table(target), None, exists, like=self._table(like.this))
        if not isinstance(target, exp.Schema):
            raise self._unsupported("CREATE TABLE without columns")
        return CreateTable(self._table(target.this), self._definition(target), exists)

    def _definition(self, schema: exp.Schema) -> TableDef:
        columns: list[Column] = []
        key: list[tuple[str, int]] = []
        for item in schema.expressions:
            if isinstance(item, exp.ColumnDef):
                column, primary = self._column(item)
                if any(c.name.casefold() == column.name.casefold() for c in columns):
                    raise EngineError.of(ErrorCode.DUP_FIELDNAME, column.name)
                columns.append(column)
                if primary:
                    key = self._set_key(key, [(column.name, 0)])
            else:
                primary_key = self._primary_key(item)
                if primary_key is not None:
                    key = self._set_key(key, primary_key)
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
        return TableDef(not_null, tuple(indexes), tuple(prefix for _, prefix in key))

    @staticmethod
    def _set_key(
        current: list[tuple[str, int]], new: list[tuple[str, int]]
    ) -> list[tuple[str, int]]:
        if current:
            raise EngineError.of(ErrorCode.MULTIPLE_PRI_KEY)
        return new

    def _column(self, item: exp.ColumnDef) -> tuple[Column, bool]:
        kind = item.args.get("kind")
        if kind is None:
            raise self._unsupported(f"the column {item.name!r} without a type")
        nullable, primary = True, False
        for constraint in item.args.get("constraints") or ():
            found = constraint.args.get("kind")
            if isinstance(found, exp.NotNullColumnConstraint):
                nullable = bool(found.args.get("allow_null"))
            elif isinstance(found, exp.PrimaryKeyColumnConstraint):
                primary, nullable = True, False
        return Column(item.name, kind.sql(dialect="mysql"), nullable), primary

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

    def _alter(self, tree: exp.Alter) -> tuple[DdlOperation, ...]:
        table = self._table(tree.this)
        actions: list[AddColumn | DropColumn] = []
        renamed: TableRef | None = None
        for action in tree.args.get("actions") or ():
            if isinstance(action, exp.ColumnDef):
                actions.append(self._add_column(action))
            elif isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "COLUMN":
                exists = bool(action.args.get("exists"))
                actions += [DropColumn(c.name, exists) for c in action.args["tables"]]
            elif isinstance(action, exp.AlterRename):
                renamed = self._table(action.this)
            else:
                raise self._unsupported(f"ALTER TABLE ... {action.sql('mysql')}")
        operations: list[DdlOperation] = [AlterTable(table, tuple(actions))] if actions else []
        if renamed is not None:
            operations.append(RenameTable(table, renamed))
        if not operations:
            raise self._unsupported("ALTER TABLE without column changes")
        return tuple(operations)

    def _add_column(self, action: exp.ColumnDef) -> AddColumn:
        column, primary = self._column(action)
        if primary:
            raise self._unsupported("ADD COLUMN ... PRIMARY KEY")
        place = action.args.get("position")
        first = place is not None and str(place.args.get("position")).upper() == "FIRST"
        after = place.this.name if place is not None and not first and place.this else None
        return AddColumn(column, first, after, bool(action.args.get("exists")))


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
