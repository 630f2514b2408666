"""LIMIT and OFFSET operands: unsigned integer literals, as MySQL's grammar has them.

https://dev.mysql.com/doc/refman/8.4/en/select.html (``limit_option``: an integer literal, or a
placeholder in a prepared statement). MySQL's parser rejects anything else (``LIMIT 1.5``,
``LIMIT 0x1F``, ``LIMIT -1``, ``LIMIT 'a'``, ``LIMIT TRUE``) with 1064 near the operand;
sqlglot parses them all, and its executor then fails on them.
"""

from __future__ import annotations

from spark_replica.sql_handlers.parser.tokens import Kind, Token, syntax_error, tokenize

#: The largest LIMIT MySQL reads (ULONGLONG_NUM); a longer number is DECIMAL_NUM, refused.
MAX_LIMIT = (1 << 64) - 1


def check_limit_clauses(sql: str) -> None:
    """Raise 1064 near the first LIMIT or OFFSET operand that is not an unsigned integer.

    >>> from spark_replica.applier_core.errors import ParseError
    >>> check_limit_clauses("SELECT 1 LIMIT 2, 3")
    >>> try:
    ...     check_limit_clauses("SELECT 1 LIMIT 1.5 -- x")
    ... except ParseError as e:
    ...     print(e.code, e.message[-25:])
    1064 near '1.5 -- x' at line 1
    """
    tokens = tokenize(sql)
    for i, token in enumerate(tokens):
        if token.is_word("LIMIT", "OFFSET"):
            _unsigned(sql, tokens[i + 1])
            if token.is_word("LIMIT") and tokens[i + 2].is_symbol(","):
                _unsigned(sql, tokens[i + 3])


def _unsigned(sql: str, token: Token) -> None:
    if token.kind is not Kind.INTEGER or int(token.value) > MAX_LIMIT:
        raise syntax_error(sql, token)
