"""MySQL's type synonyms that sqlglot's MySQL tokenizer reads wrongly or not at all.

A DDL statement is parsed by sqlglot, and a column's type kept as sqlglot renders it
(``Column.type``). sqlglot takes ``INT8`` for TINYINT, ``REAL`` for FLOAT and ``LONG`` for
BIGINT, and does not know ``MIDDLEINT``, ``INT3``, ``VARCHARACTER``, ``LONG VARCHAR``,
``NATIONAL CHAR`` or ``NCHAR VARYING``. MySQL reads them as ``column_types`` does
(https://dev.mysql.com/doc/refman/8.4/en/other-vendor-data-types.html):
``type_synonyms`` rewrites their tokens to the type they stand for before sqlglot parses.
The words are reserved in MySQL, so an unquoted one is never a name.
"""

from __future__ import annotations

from sqlglot.tokenizer_core import Token, TokenType

#: A word's token type (as the tokenizer gives it) → the type it stands for.
_ONE_WORD = {
    ("INT8", TokenType.TINYINT): TokenType.BIGINT,
    ("REAL", TokenType.FLOAT): TokenType.DOUBLE,  # FLOAT only under REAL_AS_FLOAT
    ("LONG", TokenType.BIGINT): TokenType.MEDIUMTEXT,
    ("MIDDLEINT", TokenType.VAR): TokenType.MEDIUMINT,
    ("INT3", TokenType.VAR): TokenType.MEDIUMINT,
    ("VARCHARACTER", TokenType.VAR): TokenType.VARCHAR,
}
#: Two words that are one type: (first word's type, second's) → the type.
_TWO_WORDS = {
    (TokenType.MEDIUMTEXT, TokenType.VARCHAR): TokenType.MEDIUMTEXT,  # LONG VARCHAR
    (TokenType.MEDIUMTEXT, TokenType.VARBINARY): TokenType.MEDIUMBLOB,  # LONG VARBINARY
    (TokenType.NCHAR, TokenType.VARCHAR): TokenType.NVARCHAR,  # NCHAR VARCHAR
}
_NATIONAL = {TokenType.CHAR: TokenType.NCHAR, TokenType.VARCHAR: TokenType.NVARCHAR}


def type_synonyms(tokens: list[Token]) -> list[Token]:
    """``tokens`` with each type synonym as the token of the type it stands for."""
    out: list[Token] = []
    for token in tokens:
        kind = _kind(token)
        previous = out[-1] if out else None
        if previous is not None and (previous.token_type, kind) in _TWO_WORDS:
            out[-1] = _as(previous, _TWO_WORDS[previous.token_type, kind], token)
        elif previous is not None and _is(previous, "NATIONAL") and kind in _NATIONAL:
            out[-1] = _as(previous, _NATIONAL[kind], token)
        elif (
            previous is not None
            and previous.token_type is TokenType.NCHAR
            and _is(token, "VARYING")
        ):
            out[-1] = _as(previous, TokenType.NVARCHAR, token)
        elif kind is not token.token_type:
            out.append(_as(token, kind, token))
        else:
            out.append(token)
    return out


def _kind(token: Token) -> TokenType:
    return _ONE_WORD.get((token.text.upper(), token.token_type), token.token_type)


def _is(token: Token, word: str) -> bool:
    return token.token_type is TokenType.VAR and token.text.upper() == word


def _as(first: Token, kind: TokenType, last: Token) -> Token:
    """One token of type ``kind`` spanning ``first`` to ``last``."""
    return Token(kind, first.text, first.line, first.col, first.start, last.end, first.comments)
