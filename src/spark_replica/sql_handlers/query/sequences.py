"""MariaDB sequences in a client's statements: SHOW CREATE SEQUENCE, and the sequence
functions a replica cannot run.

A replicated sequence is a table holding one row (``storage.ddl_sequence``): ``SELECT * FROM
s`` reads it as on the source. ``NEXTVAL(s)``, ``SETVAL(s, n)``, ``LASTVAL(s)``, ``NEXT VALUE
FOR s``, ``PREVIOUS VALUE FOR s`` and ``s.nextval`` / ``s.currval`` / ``s.lastval`` would
advance the sequence or read what this session advanced: the replica is read-only, so they
are refused with 1235 naming the call rather than answered wrongly (MySQL 8.4 itself has no
sequences). ``SHOW CREATE SEQUENCE s`` answers with MariaDB's columns (``Table``, ``Create
Table``) and text.
https://mariadb.com/kb/en/sequence-functions/, https://mariadb.com/kb/en/show-create-sequence/
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sqlglot import expressions as exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import TokenType

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage import TableRef
from spark_replica.applier_core.storage.ddl_sequence import SequenceRow
from spark_replica.applier_core.storage.ddl_sequence_parser import show_create_sequence
from spark_replica.applier_core.storage.objects import ObjectKind, StoredObject

#: Whether a table is a sequence.
IsSequence = Callable[[TableRef], bool]

_FUNCTIONS = frozenset({"NEXTVAL", "SETVAL", "LASTVAL"})
_PSEUDO_COLUMNS = frozenset({"NEXTVAL", "CURRVAL", "LASTVAL"})
_MYSQL = Dialect.get_or_raise("mysql")
_SHOW_CREATE = re.compile(
    r"\s*SHOW\s+CREATE\s+SEQUENCE\s+(?P<first>`(?:[^`]|``)+`|[\w$]+)"
    r"(?:\s*\.\s*(?P<second>`(?:[^`]|``)+`|[\w$]+))?\s*;?\s*$",
    re.IGNORECASE,
)
#: SHOW CREATE SEQUENCE's columns, as MariaDB names them.
SHOW_CREATE_COLUMNS = ("Table", "Create Table")


def sequences_of(objects: Sequence[StoredObject]) -> IsSequence:
    """The sequences among kept ``objects``."""
    found = {
        TableRef(o.ref.schema, o.ref.name) for o in objects if o.ref.kind is ObjectKind.SEQUENCE
    }
    return found.__contains__


def refuse_sequence_calls(tree: exp.Expr, database: str | None, is_sequence: IsSequence) -> None:
    """1235 for the first sequence function or pseudo column in ``tree``.

    >>> refuse_sequence_calls(exp.maybe_parse("SELECT 1", dialect="mysql"), "d", lambda r: True)
    """
    for node in tree.find_all(exp.Anonymous, exp.Column):
        if isinstance(node, exp.Anonymous) and node.name.upper() in _FUNCTIONS:
            argument = node.expressions[0].sql("mysql") if node.expressions else ""
            raise _refused(f"{node.name.upper()}({argument})")
        if isinstance(node, exp.Column) and node.name.upper() in _PSEUDO_COLUMNS:
            schema = node.db or database
            if node.table and schema and is_sequence(TableRef(schema, node.table)):
                raise _refused(f"{node.table}.{node.name}")


def refuse_sequence_syntax(sql: str) -> None:
    """1235 for NEXT VALUE FOR / PREVIOUS VALUE FOR, which the MySQL grammar does not read
    (called when a statement did not parse)."""
    try:
        tokens = _MYSQL.tokenize(sql)
    except TokenError:
        return
    words = [t.text.upper() if t.token_type is not TokenType.STRING else "" for t in tokens]
    for index in range(len(words) - 3):
        if words[index] in ("NEXT", "PREVIOUS") and words[index + 1 : index + 3] == [
            "VALUE",
            "FOR",
        ]:
            name = [token.text for token in tokens[index + 3 : index + 6]]
            qualified = name[:3] if name[1:2] == ["."] and len(name) == 3 else name[:1]
            raise _refused(f"{words[index]} VALUE FOR {''.join(qualified)}")


def _refused(call: str) -> ReplicaError:
    return ReplicaError.from_code(
        ErrorCode.NOT_SUPPORTED_YET,
        f"{call}: a replica reads sequences (SELECT * FROM the sequence) but does not use them",
    )


def parse_show_create_sequence(sql: str, database: str | None) -> TableRef | None:
    """The sequence ``SHOW CREATE SEQUENCE [db.]name`` names; None for another statement.
    Raises 1046 for a name without a database and none current."""
    found = _SHOW_CREATE.match(sql)
    if found is None:
        return None
    first, second = _unquote(found.group("first")), found.group("second")
    if second is not None:
        return TableRef(first, _unquote(second))
    if not database:
        raise ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
    return TableRef(database, first)


def show_create_sequence_row(
    ref: TableRef,
    objects: Sequence[StoredObject],
    tables: Sequence[TableRef],
    rows: Callable[[TableRef], list[tuple[object, ...]]],
) -> tuple[str, str]:
    """SHOW CREATE SEQUENCE's row: 1146 when there is no such table, 1347 when it is not a
    sequence."""
    marker = next(
        (o for o in objects if o.ref.kind is ObjectKind.SEQUENCE
         and TableRef(o.ref.schema, o.ref.name) == ref),
        None,
    )  # fmt: skip
    if marker is None:
        if ref in tables:
            raise ReplicaError.from_code(ErrorCode.WRONG_OBJECT, ref.schema, ref.table, "SEQUENCE")
        raise ReplicaError.from_code(ErrorCode.NO_SUCH_TABLE, ref.schema, ref.table)
    held = rows(ref)
    row = SequenceRow._make(int(str(v)) for v in held[0]) if held else None
    return ref.table, show_create_sequence(ref.table, row, marker.statement)


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == name[-1] == "`":
        return name[1:-1].replace("``", "`")
    return name
