"""A MySQL lexer just large enough for the replication statements.

Tokens keep their offset in the statement, so a syntax error can quote the text from the
offending token on, in MySQL's ``near '...' at line N`` shape.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from spark_replica.applier_core.errors import ErrorCode, ParseError, format_message


class Kind(enum.Enum):
    WORD = "word"  # keyword or bare identifier; ``value`` is upper case
    QUOTED_ID = "quoted identifier"  # `name`
    STRING = "string"  # 'text' or "text", ``value`` unescaped
    INTEGER = "integer"
    DECIMAL = "decimal"  # 1.5, 1e3
    HEX = "hex"  # 0x1F
    SYMBOL = "symbol"  # = , ( ) ; . @
    END = "end"


@dataclass(frozen=True, slots=True)
class Token:
    kind: Kind
    value: str
    offset: int
    line: int

    def is_word(self, *words: str) -> bool:
        return self.kind is Kind.WORD and self.value in words

    def is_symbol(self, symbol: str) -> bool:
        return self.kind is Kind.SYMBOL and self.value == symbol


_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}
_SYMBOLS = "=,();.@"
_DIGITS = frozenset("0123456789")


def syntax_error(sql: str, token: Token) -> ParseError:
    """1064 quoting the statement from ``token`` on, as MySQL does."""
    near = sql[token.offset :].rstrip().rstrip(";").rstrip()
    return ParseError(
        ErrorCode.PARSE_ERROR, format_message(ErrorCode.PARSE_ERROR, near, token.line)
    )


class TokenCursor:
    """A position in a token list; parsers build on it."""

    def __init__(self, sql: str, tokens: list[Token], pos: int = 0) -> None:
        self.sql = sql
        self.tokens = tokens
        self.pos = pos

    @property
    def token(self) -> Token:
        return self.tokens[self.pos]

    def advance(self) -> Token:
        """The current token; moves past it unless it is the end."""
        token = self.tokens[self.pos]
        if token.kind is not Kind.END:
            self.pos += 1
        return token


def tokenize(sql: str) -> list[Token]:
    """Split ``sql`` into tokens; comments and white space are dropped.

    >>> [t.value for t in tokenize("START REPLICA FOR CHANNEL 'c1'")]
    ['START', 'REPLICA', 'FOR', 'CHANNEL', 'c1', '']
    """
    tokens: list[Token] = []
    pos, line, size = 0, 1, len(sql)
    while pos < size:
        ch = sql[pos]
        if ch == "\n":
            line += 1
            pos += 1
        elif ch.isspace():
            pos += 1
        elif ch == "#" or sql.startswith("-- ", pos) or sql.startswith("--\t", pos):
            end = sql.find("\n", pos)
            pos = size if end < 0 else end
        elif sql.startswith("/*", pos):
            end = sql.find("*/", pos + 2)
            if end < 0:
                raise syntax_error(sql, Token(Kind.END, "", pos, line))
            line += sql.count("\n", pos, end)
            pos = end + 2
        elif ch in "'\"":
            value, end = _read_string(sql, pos, line)
            tokens.append(Token(Kind.STRING, value, pos, line))
            line += sql.count("\n", pos, end)
            pos = end
        elif ch == "`":
            end = sql.find("`", pos + 1)
            while end >= 0 and sql.startswith("``", end):
                end = sql.find("`", end + 2)
            if end < 0:
                raise syntax_error(sql, Token(Kind.END, "", pos, line))
            tokens.append(Token(Kind.QUOTED_ID, sql[pos + 1 : end].replace("``", "`"), pos, line))
            pos = end + 1
        elif ch in _DIGITS or (ch == "." and pos + 1 < size and sql[pos + 1] in _DIGITS):
            token, pos = _read_number(sql, pos, line)
            tokens.append(token)
        elif ch.isalpha() or ch in "_$" or ord(ch) > 127:
            end = pos + 1
            while end < size and (sql[end].isalnum() or sql[end] in "_$" or ord(sql[end]) > 127):
                end += 1
            tokens.append(Token(Kind.WORD, sql[pos:end].upper(), pos, line))
            pos = end
        elif ch in _SYMBOLS:
            tokens.append(Token(Kind.SYMBOL, ch, pos, line))
            pos += 1
        else:
            tokens.append(Token(Kind.SYMBOL, ch, pos, line))
            pos += 1
    tokens.append(Token(Kind.END, "", size, line))
    return tokens


def _read_string(sql: str, start: int, line: int) -> tuple[str, int]:
    quote = sql[start]
    out: list[str] = []
    pos = start + 1
    while pos < len(sql):
        ch = sql[pos]
        if ch == "\\" and pos + 1 < len(sql):
            nxt = sql[pos + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            pos += 2
        elif ch == quote:
            if sql.startswith(quote * 2, pos):
                out.append(quote)
                pos += 2
            else:
                return "".join(out), pos + 1
        else:
            out.append(ch)
            pos += 1
    raise syntax_error(sql, Token(Kind.END, "", start, line))


def _read_number(sql: str, start: int, line: int) -> tuple[Token, int]:
    size = len(sql)
    if sql.startswith(("0x", "0X"), start):
        end = start + 2
        while end < size and sql[end] in "0123456789abcdefABCDEF":
            end += 1
        if end > start + 2 and not (end < size and (sql[end].isalnum() or sql[end] == "_")):
            return Token(Kind.HEX, sql[start + 2 : end], start, line), end
    end = start
    while end < size and sql[end] in _DIGITS:
        end += 1
    kind = Kind.INTEGER
    if end < size and sql[end] == ".":
        kind = Kind.DECIMAL
        end += 1
        while end < size and sql[end] in _DIGITS:
            end += 1
    if end < size and sql[end] in "eE":
        exp_end = end + 1
        if exp_end < size and sql[exp_end] in "+-":
            exp_end += 1
        if exp_end < size and sql[exp_end] in _DIGITS:
            kind = Kind.DECIMAL
            end = exp_end
            while end < size and sql[end] in _DIGITS:
                end += 1
    if end < size and (sql[end].isalpha() or sql[end] == "_"):
        # 1abc is an identifier in MySQL.
        while end < size and (sql[end].isalnum() or sql[end] in "_$"):
            end += 1
        return Token(Kind.WORD, sql[start:end].upper(), start, line), end
    return Token(kind, sql[start:end], start, line), end
