"""Sequences in a client's statements (sql_handlers/query/sequences.py): the calls a replica
refuses with 1235, SHOW CREATE SEQUENCE's name and row, and its errors."""

from __future__ import annotations

import pytest
import sqlglot

from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.storage import TableRef
from spark_replica.applier_core.storage.objects import ObjectKind, ObjectRef, StoredObject
from spark_replica.sql_handlers.query.sequences import (
    parse_show_create_sequence,
    refuse_sequence_calls,
    refuse_sequence_syntax,
    sequences_of,
    show_create_sequence_row,
)

S = TableRef("d", "s")
MARKER = StoredObject(ObjectRef(ObjectKind.SEQUENCE, "d", "s"), "CREATE SEQUENCE s CACHE 0")
IS_SEQUENCE = sequences_of([MARKER])


def _refusal(sql: str) -> str | None:
    """The call a query is refused for (None: not refused)."""
    try:
        tree = sqlglot.parse_one(sql, read="mysql")
    except sqlglot.errors.ParseError:
        try:
            refuse_sequence_syntax(sql)
        except ReplicaError as error:
            assert error.code == 1235
            return error.message.split("support '")[1].split(":")[0]
        raise
    try:
        refuse_sequence_calls(tree, "d", IS_SEQUENCE)
    except ReplicaError as error:
        assert error.code == 1235
        return error.message.split("support '")[1].split(":")[0]
    return None


@pytest.mark.parametrize(
    ("sql", "call"),
    [
        ("SELECT NEXTVAL(s)", "NEXTVAL(s)"),
        ("SELECT nextval(d.s) + 1 FROM t", "NEXTVAL(d.s)"),
        ("SELECT * FROM t WHERE id = SETVAL(s, 3)", "SETVAL(s)"),
        ("SELECT LASTVAL(s)", "LASTVAL(s)"),
        ("SELECT NEXT VALUE FOR s", "NEXT VALUE FOR s"),
        ("SELECT previous value for d.s", "PREVIOUS VALUE FOR d.s"),
        ("SELECT s.nextval FROM t, s", "s.nextval"),
        ("SELECT d.s.currval FROM d.s", "s.currval"),
        ("SELECT t.nextval FROM t", None),  # t is no sequence: a column named nextval
        ("SELECT nextval FROM t", None),
        ("SELECT 'NEXT VALUE FOR s', next_not_cached_value FROM s", None),
    ],
)
def test_sequence_calls_are_refused_with_1235_naming_them(sql: str, call: str | None) -> None:
    assert _refusal(sql) == call


def test_show_create_sequence_names_a_sequence() -> None:
    assert parse_show_create_sequence("SHOW CREATE SEQUENCE s", "d") == S
    assert parse_show_create_sequence("show create sequence `x`.`a b`;", None) == TableRef(
        "x", "a b"
    )
    assert parse_show_create_sequence("SHOW CREATE TABLE s", "d") is None
    with pytest.raises(ReplicaError) as caught:
        parse_show_create_sequence("SHOW CREATE SEQUENCE s", None)
    assert caught.value.code == 1046


def test_show_create_sequence_reads_the_row_and_refuses_what_is_no_sequence() -> None:
    row = (5, 1, 9, 3, 2, 0, 1, 4)
    assert show_create_sequence_row(S, [MARKER], [S], lambda ref: [row]) == (
        "s",
        "CREATE SEQUENCE `s` start with 3 minvalue 1 maxvalue 9 increment by 2 nocache cycle "
        "ENGINE=InnoDB",
    )
    for ref, code, message in (
        (TableRef("d", "t"), 1347, "'d.t' is not SEQUENCE"),
        (TableRef("d", "nope"), 1146, "Table 'd.nope' doesn't exist"),
    ):
        with pytest.raises(ReplicaError) as caught:
            show_create_sequence_row(ref, [MARKER], [S, TableRef("d", "t")], lambda r: [])
        assert (caught.value.code, caught.value.message) == (code, message)
