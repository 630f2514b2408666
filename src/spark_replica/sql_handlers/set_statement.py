"""SET of system variables: ``SET [GLOBAL|SESSION|PERSIST] name = value [, ...]``.

https://dev.mysql.com/doc/refman/8.4/en/set-variable.html

Only assignments are parsed here; SET NAMES, SET CHARACTER SET and SET TRANSACTION go to the
generic path. A value that is not a plain literal is kept as expression text for the caller
to evaluate (``concat(@@sql_mode, ',X')`` from Connector/J, for one).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from spark_replica.applier_core.settings import DEFAULT
from spark_replica.sql_handlers.parser.tokens import (
    Kind,
    Token,
    TokenCursor,
    syntax_error,
    tokenize,
)

_NOT_ASSIGNMENTS = frozenset(
    {"NAMES", "CHARACTER", "CHARSET", "TRANSACTION", "PASSWORD", "ROLE", "RESOURCE"}
)
_SCOPES = {"GLOBAL": "GLOBAL", "SESSION": "SESSION", "LOCAL": "SESSION", "PERSIST": "PERSIST"}


class Scope(enum.Enum):
    SESSION = "SESSION"
    GLOBAL = "GLOBAL"
    PERSIST = "PERSIST"
    PERSIST_ONLY = "PERSIST_ONLY"
    USER = "USER"  # @name


@dataclass(frozen=True, slots=True)
class Expression:
    """A value that must be evaluated: its SQL text."""

    sql: str


@dataclass(frozen=True, slots=True)
class Assignment:
    scope: Scope
    explicit_scope: bool
    name: str
    value: object  # int, float, str, None, DEFAULT or Expression
    #: The scope came from a GLOBAL/SESSION/PERSIST keyword (it carries to later assignments).
    keyword_scope: bool = False


def parse_set(sql: str) -> list[Assignment] | None:
    """The assignments of a SET statement; ``None`` when ``sql`` is another statement.

    >>> [(a.scope.value, a.name, a.value) for a in parse_set("SET GLOBAL server_id = 8")]
    [('GLOBAL', 'server_id', 8)]
    """
    tokens = tokenize(sql)
    if not tokens[0].is_word("SET") or tokens[1].is_word(*_NOT_ASSIGNMENTS):
        return None
    if tokens[1].is_word(*_SCOPES) and tokens[2].is_word("TRANSACTION"):
        return None
    return _Parser(sql, tokens).assignments()


class _Parser(TokenCursor):
    def __init__(self, sql: str, tokens: list[Token]) -> None:
        super().__init__(sql, tokens, pos=1)

    def assignments(self) -> list[Assignment]:
        # A scope keyword carries over to later plain names: SET GLOBAL a=1, @u=2, b=3.
        result = [self.assignment(None)]
        while self.token.is_symbol(","):
            self.advance()
            carried = next((a for a in reversed(result) if a.keyword_scope), None)
            result.append(self.assignment(carried))
        if self.token.is_symbol(";"):
            self.advance()
        if self.token.kind is not Kind.END:
            raise syntax_error(self.sql, self.token)
        return result

    def assignment(self, carried: Assignment | None) -> Assignment:
        scope, explicit = Scope.SESSION, False
        keyword = False
        if carried is not None:
            scope, explicit, keyword = carried.scope, True, True
        if self.token.is_word("GLOBAL", "SESSION", "LOCAL", "PERSIST", "PERSIST_ONLY"):
            word = self.advance().value
            scope, explicit, keyword = Scope(_SCOPES.get(word, word)), True, True
        elif self.token.is_symbol("@"):
            self.advance()
            if self.token.is_symbol("@"):
                self.advance()
                scope, explicit = self.system_prefix()
                keyword = False
            else:
                scope, explicit, keyword = Scope.USER, True, False
        name = self.name()
        if self.token.is_symbol(":"):
            self.advance()
        if not self.token.is_symbol("="):
            raise syntax_error(self.sql, self.token)
        self.advance()
        return Assignment(scope, explicit, name, self.value(), keyword)

    def system_prefix(self) -> tuple[Scope, bool]:
        """After ``@@``: an optional ``global.``/``session.``/``persist.`` prefix."""
        token = self.token
        if token.kind is Kind.END:
            raise syntax_error(self.sql, token)
        nxt = self.tokens[self.pos + 1]
        if token.is_word("GLOBAL", "SESSION", "LOCAL", "PERSIST", "PERSIST_ONLY") and nxt.is_symbol(
            "."
        ):
            self.advance()
            self.advance()
            return Scope(_SCOPES.get(token.value, token.value)), True
        return Scope.SESSION, False

    def name(self) -> str:
        token = self.advance()
        if token.kind is Kind.WORD:
            return self.sql[token.offset : token.offset + len(token.value)].lower()
        if token.kind in (Kind.QUOTED_ID, Kind.STRING):
            return token.value.lower()
        raise syntax_error(self.sql, token)

    def value(self) -> object:
        start = self.pos
        depth = 0
        while self.token.kind is not Kind.END:
            if self.token.is_symbol("("):
                depth += 1
            elif self.token.is_symbol(")"):
                depth -= 1
            elif depth == 0 and (self.token.is_symbol(",") or self.token.is_symbol(";")):
                break
            self.advance()
        tokens = self.tokens[start : self.pos]
        if not tokens:
            raise syntax_error(self.sql, self.token)
        literal = _literal(tokens)
        if literal is not _NOT_LITERAL:
            return literal
        end = self.token.offset
        return Expression(self.sql[tokens[0].offset : end].strip())


_NOT_LITERAL = object()


def _literal(tokens: list[Token]) -> object:
    sign = 1
    if len(tokens) == 2 and tokens[0].is_symbol("-"):
        sign, tokens = -1, tokens[1:]
    if len(tokens) != 1:
        return _NOT_LITERAL
    token = tokens[0]
    if token.kind is Kind.INTEGER:
        return sign * int(token.value)
    if token.kind is Kind.HEX:
        return sign * int(token.value, 16)
    if token.kind is Kind.DECIMAL:
        return sign * float(token.value)
    if sign < 0:
        return _NOT_LITERAL
    if token.kind is Kind.STRING:
        return token.value
    if token.kind is Kind.WORD:
        if token.value == "DEFAULT":
            return DEFAULT
        if token.value == "NULL":
            return None
        if token.value in ("TRUE", "FALSE"):
            return token.value == "TRUE"
        return token.value
    return _NOT_LITERAL
