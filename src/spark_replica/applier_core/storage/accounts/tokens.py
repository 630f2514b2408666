"""A token stream over one account statement: words, quoted strings (with MySQL's escapes),
backquoted names, hex literals and punctuation; and the masking of secrets in its text.

Account statements carry passwords and hashes (MariaDB logs ``IDENTIFIED BY 'clear'`` as
the client sent it), so ``redacted`` gives the text an error message may show, with every
secret replaced by ``<secret>`` as MySQL writes statements to its logs.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.interface import EngineError


class Kind(enum.Enum):
    WORD = "word"
    STRING = "string"
    NAME = "name"  # `quoted`
    HEX = "hex"
    PUNCT = "punct"


@dataclass(frozen=True, slots=True)
class Token:
    kind: Kind
    text: str  # the value: unquoted, escapes resolved; words as written
    start: int
    end: int

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind is Kind.WORD else ""


_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}
_WORD = re.compile(r"[\w$]+")
_HEX = re.compile(r"0x[0-9a-fA-F]*|[xX]'[0-9a-fA-F]*'")


def tokenize(statement: str) -> list[Token]:
    """The tokens of ``statement`` (comments were removed by ``as_executed``)."""
    tokens: list[Token] = []
    i, size = 0, len(statement)
    while i < size:
        char = statement[i]
        if char.isspace():
            i += 1
        elif hexed := _HEX.match(statement, i):
            digits = hexed.group(0)[2:].rstrip("'")
            tokens.append(Token(Kind.HEX, digits, i, hexed.end()))
            i = hexed.end()
        elif char in "'\"`":
            text, end = _quoted(statement, i)
            kind = Kind.NAME if char == "`" else Kind.STRING
            tokens.append(Token(kind, text, i, end))
            i = end
        elif word := _WORD.match(statement, i):
            tokens.append(Token(Kind.WORD, word.group(0), i, word.end()))
            i = word.end()
        else:
            tokens.append(Token(Kind.PUNCT, char, i, i + 1))
            i += 1
    return tokens


def _quoted(text: str, start: int) -> tuple[str, int]:
    quote, i, out = text[start], start + 1, []
    while i < len(text):
        char = text[i]
        if char == "\\" and quote != "`" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
        elif char == quote:
            if text.startswith(quote * 2, i):
                out.append(quote)
                i += 2
            else:
                return "".join(out), i + 1
        else:
            out.append(char)
            i += 1
    raise EngineError.of(ErrorCode.PARSE_ERROR, text[start : start + 80], 1)


#: The words after which a string literal is a secret.
_SECRET_AFTER = frozenset({"BY", "AS", "USING", "PASSWORD", "REPLACE", "="})


def redacted(statement: str) -> str:
    """``statement`` with passwords and hashes replaced by ``<secret>``."""
    try:
        tokens = tokenize(statement)
    except EngineError:
        return statement.split("'", 1)[0] + "<secret>"
    out, last = [], 0
    for index, token in enumerate(tokens):
        if token.kind not in (Kind.STRING, Kind.HEX):
            continue
        before = [t for t in tokens[max(0, index - 2) : index] if t.text != "("][-1:]
        words = {t.upper or t.text for t in before}
        if words & _SECRET_AFTER:
            out.append(statement[last : token.start] + "<secret>")
            last = token.end
    out.append(statement[last:])
    return "".join(out)
