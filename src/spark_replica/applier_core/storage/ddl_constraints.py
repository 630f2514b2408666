"""FOREIGN KEY and CHECK clauses of CREATE TABLE and ALTER TABLE, read from the statement's
tokens (sqlglot reads neither ``[NOT] ENFORCED`` nor ``ADD CHECK``, and drops the rules of a
foreign key in some forms).

``strip_create`` and ``strip_alter`` take the clauses out of a statement and return what is
left for sqlglot, with the clauses as ``constraints`` specs and actions:

* ``[CONSTRAINT [symbol]] FOREIGN KEY [index_name] (col, ...) REFERENCES [db.]tbl (col, ...)
  [MATCH ...] [ON DELETE rule] [ON UPDATE rule]``; a table without a database is the
  constrained table's database;
* ``[CONSTRAINT [symbol]] CHECK (expr) [[NOT] ENFORCED]``, at table level or in a column
  definition (also of ADD COLUMN, MODIFY and CHANGE);
* ALTER TABLE's ``DROP FOREIGN KEY [IF EXISTS] name``, ``DROP CHECK name`` and
  ``ALTER CHECK|CONSTRAINT name [NOT] ENFORCED`` (DROP CONSTRAINT, which names a key of any
  kind, stays with sqlglot).

A check's expression is kept as the source's information_schema.CHECK_CONSTRAINTS shows it
(``check_clause``): MySQL 8.4 wraps every operation in parentheses and marks strings with
their character set (``(`a` > 0)``), MariaDB prints the expression with the parentheses its
precedence needs (`` `a` > 0 ``).
https://dev.mysql.com/doc/refman/8.4/en/create-table-foreign-keys.html
https://dev.mysql.com/doc/refman/8.4/en/create-table-check-constraints.html
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from sqlglot import expressions as exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokenizer_core import Token, TokenType

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.constraints import (
    AddCheck,
    AddForeignKey,
    AlterCheck,
    CheckSpec,
    DropCheck,
    DropForeignKey,
    ForeignKeySpec,
)
from spark_replica.applier_core.storage.interface import EngineError, ReferenceRule, TableRef

_MYSQL = Dialect.get_or_raise("mysql")
#: Words that open a key or constraint item of CREATE TABLE rather than a column definition.
_KEY_WORDS = frozenset({"PRIMARY", "KEY", "INDEX", "UNIQUE", "FULLTEXT", "SPATIAL",
                        "CONSTRAINT", "FOREIGN", "FOREIGN KEY", "CHECK", "PERIOD"})  # fmt: skip
_RULES = {
    ("RESTRICT",): ReferenceRule.RESTRICT,
    ("CASCADE",): ReferenceRule.CASCADE,
    ("SET", "NULL"): ReferenceRule.SET_NULL,
    ("NO", "ACTION"): ReferenceRule.NO_ACTION,
    ("SET", "DEFAULT"): ReferenceRule.SET_DEFAULT,
}


class Stripped(NamedTuple):
    """A statement without its FOREIGN KEY and CHECK clauses, and those clauses."""

    statement: str
    foreign_keys: list[ForeignKeySpec]
    checks: list[CheckSpec]
    actions: list[AddForeignKey | AddCheck | DropForeignKey | DropCheck | AlterCheck]


def strip_create(
    statement: str, tokens: Sequence[Token], schema: str | None, mariadb: bool
) -> Stripped | None:
    """CREATE TABLE without its foreign keys and checks; None when the statement is no
    CREATE TABLE with a column list."""
    words = [t.text.upper() for t in tokens[:3]]
    if words[:2] != ["CREATE", "TABLE"] and words != ["CREATE", "TEMPORARY", "TABLE"]:
        return None
    open_at = next((i for i, t in enumerate(tokens) if t.token_type is TokenType.L_PAREN), None)
    if open_at is None:
        return None
    items, close_at = _items(tokens, open_at)
    if close_at is None or not items:
        return None
    if open_at >= 3 and tokens[open_at - 2].token_type is TokenType.DOT:
        schema = tokens[open_at - 3].text  # the table's database, which REFERENCES defaults to
    reader = _Reader(statement, schema, mariadb)
    kept: list[str] = []
    for item in items:
        head = _head(item)
        if head in ("FOREIGN KEY", "CHECK"):
            reader.constraint(item, len(kept))
            continue
        if head not in _KEY_WORDS:
            item = reader.column_checks(item)
        if item:
            kept.append(_text(statement, item))
    if not reader.foreign_keys and not reader.checks:
        return Stripped(statement, [], [], [])
    text = (
        statement[: tokens[open_at].end + 1] + ", ".join(kept) + statement[tokens[close_at].start :]
    )
    return Stripped(text, reader.foreign_keys, reader.checks, [])


def strip_alter(
    statement: str, tokens: Sequence[Token], schema: str | None, mariadb: bool
) -> Stripped | None:
    """ALTER TABLE without its foreign key and check clauses (as actions, in statement
    order); None when the statement is no ALTER TABLE or has none of them."""
    if len(tokens) < 3 or [t.text.upper() for t in tokens[:2]] != ["ALTER", "TABLE"]:
        return None
    name_end = 5 if len(tokens) >= 5 and tokens[3].token_type is TokenType.DOT else 3
    if name_end >= len(tokens):
        return None
    table_schema = tokens[2].text if name_end == 5 else schema
    clauses = _split(tokens[name_end:])
    reader = _Reader(statement, table_schema, mariadb)
    kept: list[str] = []
    for clause in clauses:
        words = [t.text.upper() for t in clause]
        if reader.alter_clause(clause, words):
            continue
        if words[:1] in (["ADD"], ["MODIFY"], ["CHANGE"]) and _head(clause[1:]) not in _KEY_WORDS:
            before = len(reader.checks)
            clause = reader.column_checks(clause)
            reader.actions += [AddCheck(s, mariadb) for s in reader.checks[before:]]
        kept.append(_text(statement, clause))
    if not reader.actions:
        return None
    head = statement[: tokens[name_end - 1].end + 1]
    rest = ", ".join(kept) or "FORCE"  # FORCE: a clause that changes nothing
    return Stripped(f"{head} {rest}", [], [], reader.actions)


def _text(statement: str, tokens: Sequence[Token]) -> str:
    """The statement's text of ``tokens``, with one space where tokens were taken out."""
    pieces: list[str] = []
    for index, token in enumerate(tokens):
        if index:
            gap = statement[tokens[index - 1].end + 1 : token.start]
            pieces.append(gap if not gap.strip() else " ")
        pieces.append(statement[token.start : token.end + 1])
    return "".join(pieces)


def _items(tokens: Sequence[Token], open_at: int) -> tuple[list[list[Token]], int | None]:
    """The comma-separated items inside the parenthesis at ``open_at``, and where it
    closes."""
    items: list[list[Token]] = [[]]
    depth = 0
    for index in range(open_at + 1, len(tokens)):
        token = tokens[index]
        if token.token_type is TokenType.R_PAREN and depth == 0:
            return [item for item in items if item], index
        if token.token_type is TokenType.COMMA and depth == 0:
            items.append([])
            continue
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        items[-1].append(token)
    return [], None


def _split(tokens: Sequence[Token]) -> list[list[Token]]:
    clauses: list[list[Token]] = [[]]
    depth = 0
    for token in tokens:
        if token.token_type is TokenType.COMMA and depth == 0:
            clauses.append([])
            continue
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        clauses[-1].append(token)
    return [clause for clause in clauses if clause]


def _head(item: Sequence[Token]) -> str:
    """FOREIGN KEY or CHECK for a constraint item (after its CONSTRAINT [symbol]), else the
    item's first word."""
    words = [t.text.upper() for t in item[:4]]
    if not words:
        return ""
    at = 0
    if words[0] == "CONSTRAINT":
        at = 1 if len(words) > 1 and words[1] in ("FOREIGN KEY", "FOREIGN", "CHECK") else 2
    found = words[at] if at < len(words) else ""
    if found in ("FOREIGN KEY", "FOREIGN"):
        return "FOREIGN KEY"
    if found == "CHECK" and (at > 0 or item[0].token_type is not TokenType.IDENTIFIER):
        return "CHECK"
    return words[0]


class _Reader:
    """Reads the clauses of one statement into specs and actions."""

    def __init__(self, statement: str, schema: str | None, mariadb: bool) -> None:
        self.statement = statement
        self.schema = schema
        self.mariadb = mariadb
        self.foreign_keys: list[ForeignKeySpec] = []
        self.checks: list[CheckSpec] = []
        self.actions: list[AddForeignKey | AddCheck | DropForeignKey | DropCheck | AlterCheck] = []

    def alter_clause(self, clause: list[Token], words: list[str]) -> bool:
        """Read one ALTER TABLE clause if it is about a foreign key or check."""
        if words[:1] == ["ADD"] and _head(clause[1:]) in ("FOREIGN KEY", "CHECK"):
            before = len(self.foreign_keys), len(self.checks)
            self.constraint(clause[1:])
            self.actions += [AddForeignKey(s, self.mariadb) for s in self.foreign_keys[before[0] :]]
            self.actions += [AddCheck(s, self.mariadb) for s in self.checks[before[1] :]]
            return True
        if words[:2] == ["DROP", "FOREIGN KEY"] or words[:3] == ["DROP", "FOREIGN", "KEY"]:
            at = 2 if words[1] == "FOREIGN KEY" else 3
            exists = words[at : at + 2] == ["IF", "EXISTS"]
            name = clause[at + 2 if exists else at]
            self.actions.append(DropForeignKey(name.text, exists))
            return True
        if words[:2] == ["DROP", "CHECK"] and len(clause) == 3:
            self.actions.append(DropCheck(clause[2].text))
            return True
        if words[:1] == ["ALTER"] and words[1:2] in (["CHECK"], ["CONSTRAINT"]):
            enforced = words[-2:] != ["NOT", "ENFORCED"]
            self.actions.append(AlterCheck(clause[2].text, enforced))
            return True
        return False

    def constraint(self, item: list[Token], position: int = -1) -> None:
        """``[CONSTRAINT [symbol]] FOREIGN KEY ...`` or ``... CHECK (...)``; ``position``:
        how many definitions of CREATE TABLE come before it."""
        name: str | None = None
        at = 0
        if item[0].text.upper() == "CONSTRAINT":
            at = 1
            if item[1].text.upper() not in ("FOREIGN KEY", "FOREIGN", "CHECK"):
                name, at = item[1].text, 2
        if item[at].text.upper() == "CHECK":
            self.checks.append(self._check(item, at + 1, name, ""))
        else:
            self.foreign_keys.append(replace(self._foreign_key(item, at, name), position=position))

    def column_checks(self, item: list[Token]) -> list[Token]:
        """A column definition without its CHECK clauses (kept as checks of the column)."""
        column = item[0].text
        if column.upper() in ("ADD", "MODIFY", "CHANGE"):
            rest = item[1:]
            if rest and rest[0].text.upper() == "COLUMN":
                rest = rest[1:]
            if rest and rest[0].text.upper() in ("IF",):  # ADD COLUMN IF NOT EXISTS
                rest = rest[3:]
            if item[0].text.upper() == "CHANGE" and len(rest) > 1:
                rest = rest[1:]  # CHANGE old new: the check belongs to the new name
            column = rest[0].text if rest else column
        kept: list[Token] = []
        index = 0
        while index < len(item):
            token = item[index]
            upper = token.text.upper()
            named = upper == "CONSTRAINT" and index + 2 < len(item)
            if named and item[index + 2].text.upper() == "CHECK":
                check = self._check(item, index + 3, item[index + 1].text, column)
                self.checks.append(check)
                index = self._after_check(item, index + 3)
            elif upper == "CHECK" and token.token_type is not TokenType.IDENTIFIER and kept:
                self.checks.append(self._check(item, index + 1, None, column))
                index = self._after_check(item, index + 1)
            else:
                kept.append(token)
                index += 1
        return kept

    def _after_check(self, item: list[Token], at: int) -> int:
        end = _closing(item, at) + 1
        if end < len(item) and item[end].text.upper() == "ENFORCED":
            return end + 1
        if item[end : end + 2] and [t.text.upper() for t in item[end : end + 2]] == [
            "NOT",
            "ENFORCED",
        ]:
            return end + 2
        return end

    def _check(self, item: list[Token], at: int, name: str | None, column: str) -> CheckSpec:
        close = _closing(item, at)
        text = self.statement[item[at].end + 1 : item[close].start]
        after = [t.text.upper() for t in item[close + 1 : close + 3]]
        enforced = after[:2] != ["NOT", "ENFORCED"]
        owner = column if self.mariadb else ""
        return CheckSpec(name, check_clause(text, mariadb=self.mariadb), enforced, owner)

    def _foreign_key(self, item: list[Token], at: int, name: str | None) -> ForeignKeySpec:
        at += 1 if item[at].text.upper() == "FOREIGN KEY" else 2
        index_name: str | None = None
        if item[at].token_type is not TokenType.L_PAREN:
            index_name, at = item[at].text, at + 1
        columns, at = _names(item, at)
        if at >= len(item) or item[at].text.upper() != "REFERENCES":
            raise _syntax(self.statement)
        parts = [item[at + 1].text]
        at += 2
        if at < len(item) and item[at].token_type is TokenType.DOT:
            parts.append(item[at + 1].text)
            at += 2
        schema = parts[0] if len(parts) == 2 else self.schema
        if not schema:
            raise EngineError.of(ErrorCode.NO_DB_ERROR)
        referenced, at = _names(item, at)
        rules: dict[str, ReferenceRule] = {}
        while at < len(item):
            word = item[at].text.upper()
            if word == "ON" and at + 1 < len(item):
                event = item[at + 1].text.upper()
                for words, rule in _RULES.items():
                    found = tuple(t.text.upper() for t in item[at + 2 : at + 2 + len(words)])
                    if found == words:
                        rules[event] = rule
                        at += 2 + len(words)
                        break
                else:
                    raise _syntax(self.statement)
            else:
                at += 1  # MATCH FULL|PARTIAL|SIMPLE: read and ignored, as by InnoDB
        return ForeignKeySpec(
            name,
            index_name,
            tuple(columns),
            TableRef(schema, parts[-1]),
            tuple(referenced),
            rules.get("DELETE"),
            rules.get("UPDATE"),
        )


def _names(item: list[Token], at: int) -> tuple[list[str], int]:
    """``(name, name ...)`` at ``at``: the names (a prefix length is ignored) and what
    follows."""
    if at >= len(item) or item[at].token_type is not TokenType.L_PAREN:
        return [], at
    close = _closing(item, at)
    names: list[str] = []
    depth = 0
    for token in item[at + 1 : close]:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.token_type is not TokenType.COMMA:
            if token.text.upper() not in ("ASC", "DESC"):
                names.append(token.text)
    return names, close + 1


def _closing(item: Sequence[Token], at: int) -> int:
    """The position of the parenthesis that closes the one at ``at``."""
    depth = 0
    for index in range(at, len(item)):
        kind = item[index].token_type
        if kind is TokenType.L_PAREN:
            depth += 1
        elif kind is TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return index
    return len(item) - 1


def _syntax(statement: str) -> EngineError:
    return EngineError.of(ErrorCode.PARSE_ERROR, statement, 1)


# -- check expressions ---------------------------------------------------------------------------

_BINARY: dict[type[exp.Expr], str] = {
    exp.EQ: "=", exp.NEQ: "<>", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=",
    exp.NullSafeEQ: "<=>", exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/",
    exp.Mod: "%", exp.IntDiv: "DIV", exp.And: "and", exp.Or: "or", exp.Like: "like",
    exp.BitwiseAnd: "&", exp.BitwiseOr: "|", exp.BitwiseXor: "^",
}  # fmt: skip
#: Binding strength for MariaDB's parentheses (higher binds tighter).
_PRECEDENCE: dict[type[exp.Expr], int] = {
    exp.Or: 1, exp.And: 2, exp.Not: 3, exp.EQ: 4, exp.NEQ: 4, exp.GT: 4, exp.GTE: 4,
    exp.LT: 4, exp.LTE: 4, exp.NullSafeEQ: 4, exp.Like: 4, exp.Is: 4, exp.In: 4,
    exp.Between: 4, exp.BitwiseOr: 5, exp.BitwiseAnd: 6, exp.Add: 7, exp.Sub: 7,
    exp.Mul: 8, exp.Div: 8, exp.Mod: 8, exp.IntDiv: 8, exp.BitwiseXor: 9,
}  # fmt: skip


def check_clause(text: str, *, mariadb: bool) -> str:
    """A CHECK expression as the source shows it (the text itself when it does not
    parse)."""
    try:
        tree = _MYSQL.parse_into(exp.Condition, text)[0]
    except (SqlglotError, IndexError):
        tree = None
    if tree is None:
        return text.strip()
    try:
        if mariadb:
            return _Printer(mysql=False).text(tree)
        printed = _Printer(mysql=True).text(tree)
    except (SqlglotError, KeyError, AttributeError, TypeError, ValueError):
        return text.strip()  # a tree this printer does not know: the text as written
    return printed if printed.startswith("(") else f"({printed})"


def key_expression(tree: exp.Expr) -> str:
    """A functional key part as MySQL 8.4's SHOW INDEX ``Expression`` shows it
    (`` (`a` + `b`) ``, ``abs(`a`)``)."""
    return _Printer(mysql=True).text(tree)


class _Printer:
    def __init__(self, *, mysql: bool) -> None:
        self.mysql = mysql

    def text(self, node: exp.Expr, outer: int = 0) -> str:
        if isinstance(node, exp.Paren):
            return self.text(node.this, outer)
        if isinstance(node, exp.Column):
            return ".".join(_quote(part.name) for part in node.parts)
        if isinstance(node, exp.Literal):
            return _string(node.this, self.mysql) if node.is_string else str(node.this)
        if isinstance(node, exp.Null):
            return "NULL" if self.mysql else "NULL"
        if isinstance(node, exp.Boolean):
            return "true" if node.this else "false"
        if isinstance(node, exp.Neg):
            return f"-{self.text(node.this, 10)}"
        return self._operation(node, outer)

    def _operation(self, node: exp.Expr, outer: int) -> str:
        own = _PRECEDENCE.get(type(node), 10)
        if type(node) in _BINARY:
            left = self.text(node.this, own)
            right = self.text(node.expression, own + 1)
            body = f"{left} {_BINARY[type(node)]} {right}"
        elif isinstance(node, exp.Not) and isinstance(node.this, exp.Is):
            body = self._is(node.this, negated=True)
        elif isinstance(node, exp.Not) and isinstance(node.this, exp.In):
            body = self._in(node.this, negated=True)
        elif isinstance(node, exp.Not) and not self.mysql and isinstance(node.this, exp.Paren):
            inner = node.this.this
            if isinstance(inner, exp.EQ):  # MariaDB turns NOT (a = b) into a <> b
                return self.text(exp.NEQ(this=inner.this, expression=inner.expression), outer)
            body = f"!({self.text(inner)})"
        elif isinstance(node, exp.Not):
            body = f"not({self.text(node.this)})" if self.mysql else f"!{self.text(node.this, 10)}"
        elif isinstance(node, exp.Is):
            body = self._is(node, negated=False)
        elif isinstance(node, exp.In):
            body = self._in(node, negated=False)
        elif isinstance(node, exp.Between):
            low, high = self.text(node.args["low"], 5), self.text(node.args["high"], 5)
            body = f"{self.text(node.this, 5)} between {low} and {high}"
        elif isinstance(node, exp.Func):
            return self._function(node)
        else:
            return node.sql("mysql", identify=True)
        if self.mysql:
            return f"({body})"
        return f"({body})" if own < outer else body

    def _is(self, node: exp.Is, *, negated: bool) -> str:
        word = "is not" if negated else "is"
        target = node.expression
        value = "null" if isinstance(target, exp.Null) else self.text(target)
        return f"{self.text(node.this, 5)} {word} {value}"

    def _in(self, node: exp.In, *, negated: bool) -> str:
        values = ",".join(self.text(value) for value in node.expressions)
        return f"{self.text(node.this, 5)} {'not in' if negated else 'in'} ({values})"

    def _function(self, node: exp.Func) -> str:
        if isinstance(node, exp.Anonymous):
            name = str(node.this)
            arguments = list(node.expressions)
        else:
            name = node.sql("mysql").split("(", 1)[0]
            arguments = [v for v in node.args.values() if isinstance(v, exp.Expression)]
            arguments += [
                item
                for value in node.args.values()
                if isinstance(value, list)
                for item in value
                if isinstance(item, exp.Expression)
            ]
        return f"{name.lower()}({','.join(self.text(a) for a in arguments)})"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _string(value: str, mysql: bool) -> str:
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"_utf8mb4'{escaped}'" if mysql else f"'{escaped}'"
