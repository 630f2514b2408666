"""Storage-engine behaviour, written once for every engine (``engine_factory``, conftest.py).

Key checks in STRICT and IDEMPOTENT mode, tables with and without a primary key, partial row
images, isolation, rollback, row locks between sessions, DDL, and MySQL's error numbers and
texts. The last section holds what only the in-memory engine has (group-commit counters).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import threading
from dataclasses import dataclass
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.constants import ColumnType
from spark_replica.applier_core.binlog.rows import (
    ABSENT,
    DiffOperation,
    JsonDiff,
    PartialJson,
    RowKind,
    make_column,
)
from spark_replica.applier_core.storage import (
    Column,
    EngineError,
    EngineSession,
    ExecMode,
    HandlerError,
    InMemoryEngine,
    Row,
    RowChange,
    SessionState,
    StorageEngine,
    TableDef,
    TableRef,
    TransactionRef,
)
from tests.unit.binlog_rows.builders import table as table_map_event
from tests.unit.storage.conftest import JOIN_TIMEOUT, EngineFactory, Spawn

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
T = TableRef("d", "t")  # id INT PRIMARY KEY, v VARCHAR(10)
C = TableRef("d", "c")  # a INT, b VARCHAR(10), v INT, PRIMARY KEY (a, b)
N = TableRef("d", "n")  # a INT, b INT (no primary key)
_orders = itertools.count(1)


@dataclass(frozen=True)
class Map:
    """The part of a Table_map event the engines read."""

    schema: str
    table: str


def trx() -> TransactionRef:
    order = next(_orders)
    return TransactionRef(f"{UUID}:{order}", order)


def ddl(engine: StorageEngine, *statements: str, database: str | None = "d") -> None:
    """Run each statement as its own committed transaction."""
    session = engine.session("ddl")
    for statement in statements:
        session.begin(trx())
        session.apply_ddl(statement, database)
        session.commit()


def commit(engine: StorageEngine, table: TableRef, *changes: RowChange) -> None:
    session = engine.session("writer")
    session.begin(trx())
    session.apply_rows(Map(*table), changes)
    session.prepare()
    session.commit()


def started(engine: StorageEngine, name: str = "worker") -> tuple[EngineSession, TransactionRef]:
    session = engine.session(name)
    ref = trx()
    session.begin(ref)
    return session, ref


def state_of(session: EngineSession) -> SessionState:
    return session.state


def fails(session: EngineSession, table: TableRef, *changes: RowChange) -> EngineError:
    with pytest.raises(EngineError) as caught:
        session.apply_rows(Map(*table), changes)
    session.rollback()
    return caught.value


def ins(*row: object) -> RowChange:
    return RowChange.insert(row)


def upd(before: Row, after: Row) -> RowChange:
    return RowChange.update(before, after)


def dele(*row: object) -> RowChange:
    return RowChange.delete(row)


def rows(engine: StorageEngine, table: TableRef) -> list[Row]:
    return sorted(engine.rows(table), key=repr)


def schema(engine: StorageEngine) -> None:
    ddl(
        engine,
        "CREATE DATABASE d",
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
        "CREATE TABLE c (a INT, b VARCHAR(10), v INT, PRIMARY KEY (a, b))",
        "CREATE TABLE n (a INT, b INT)",
        database="d",
    )


@pytest.fixture
def db(engine: StorageEngine) -> StorageEngine:
    schema(engine)
    return engine


@pytest.fixture
def idempotent(engine_factory: EngineFactory) -> StorageEngine:
    engine = engine_factory(exec_mode=ExecMode.IDEMPOTENT)
    schema(engine)
    return engine


# -- applying and committing ------------------------------------------------------------------


def test_committed_changes_are_visible(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"), ins(2, "b"), ins(3, "c"))
    commit(db, T, upd((2, "b"), (2, "B")), dele(3, "c"))
    assert rows(db, T) == [(1, "a"), (2, "B")]


def test_changes_are_invisible_until_commit(db: StorageEngine) -> None:
    session, _ = started(db)
    session.apply_rows(Map(*T), [ins(1, "a")])
    session.prepare()
    assert state_of(session) is SessionState.PREPARED
    assert db.rows(T) == []
    session.commit()
    assert state_of(session) is SessionState.IDLE
    assert session.transaction is None
    assert db.rows(T) == [(1, "a")]


def test_a_commit_may_leave_the_wait_for_durability_for_later(db: StorageEngine) -> None:
    session, _ = started(db)
    session.apply_rows(Map(*T), [ins(1, "a")])
    session.commit(durable=False)
    assert state_of(session) is SessionState.IDLE
    assert db.rows(T) == [(1, "a")]
    session.begin(trx())  # the session is free meanwhile
    session.apply_rows(Map(*T), [ins(2, "b")])
    session.commit(durable=False)
    session.wait_durable()
    session.wait_durable()
    assert rows(db, T) == [(1, "a"), (2, "b")]


def test_a_transaction_commits_its_tables_together(db: StorageEngine) -> None:
    session, _ = started(db)
    session.apply_rows(Map(*T), [ins(1, "a")])
    session.apply_rows(Map(*N), [ins(1, 2)])
    session.apply_rows(Map(*T), [ins(2, "b")])
    assert (db.rows(T), db.rows(N)) == ([], [])
    session.commit()
    assert (rows(db, T), db.rows(N)) == ([(1, "a"), (2, "b")], [(1, 2)])


def test_rollback_discards_everything(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"))
    session, ref = started(db)
    session.apply_rows(Map(*T), [ins(2, "b"), upd((1, "a"), (1, "z")), dele(2, "b")])
    session.rollback()
    assert session.state is SessionState.IDLE
    assert db.rows(T) == [(1, "a")]
    assert db.locks.held_by(ref) == []
    session.rollback()  # nothing open: nothing to do


def test_a_transaction_sees_its_own_changes(db: StorageEngine) -> None:
    session, _ = started(db)
    session.apply_rows(Map(*T), [ins(1, "a"), upd((1, "a"), (1, "b")), dele(1, "b"), ins(1, "c")])
    session.commit()
    assert db.rows(T) == [(1, "c")]


def test_an_update_may_change_the_key(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"))
    commit(db, T, upd((1, "a"), (5, "a")))
    assert db.rows(T) == [(5, "a")]
    commit(db, C, ins(1, "x", 0))
    commit(db, C, upd((1, "x", 0), (1, "y", 0)))
    assert db.rows(C) == [(1, "y", 0)]


def test_an_update_finds_its_row_by_key(db: StorageEngine) -> None:
    """As MySQL with a primary key: only the key columns of the before image are compared."""
    commit(db, T, ins(1, "a"))
    commit(db, T, upd((1, "stale"), (1, "b")))
    assert db.rows(T) == [(1, "b")]


def test_a_table_map_event_serves_as_table_map(db: StorageEngine) -> None:
    columns = (make_column(0, ColumnType.LONG), make_column(1, ColumnType.VARCHAR, length=40))
    event = table_map_event(columns, schema="d", name="t")
    session, _ = started(db)
    session.apply_rows(event, [ins(1, "a")])
    session.commit()
    assert db.rows(T) == [(1, "a")]


def test_row_changes_from_event_rows() -> None:
    assert RowChange.of_rows(RowKind.INSERT, [(1,), (2,)]) == [ins(1), ins(2)]
    assert RowChange.of_rows(RowKind.DELETE, [(1,)]) == [dele(1)]
    assert RowChange.of_rows(RowKind.UPDATE, [((1,), (2,))]) == [upd((1,), (2,))]


# -- key checks in STRICT mode ----------------------------------------------------------------


def test_a_duplicate_insert_fails_with_1062(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"))
    session, ref = started(db)
    error = fails(session, T, ins(2, "b"), ins(1, "x"))
    assert error.code == 1062
    assert error.sqlstate == "23000"
    assert error.message == "Duplicate entry '1' for key 't.PRIMARY'"
    assert error.handler_error is HandlerError.FOUND_DUPP_KEY
    assert (error.table, error.kind, error.gtid) == (T, RowKind.INSERT, ref.gtid)
    assert not error.transient
    assert str(error) == (
        "Could not execute Write_rows event on table d.t; Duplicate entry '1' for key "
        "'t.PRIMARY', Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY; "
        f"transaction '{ref.gtid}'"
    )
    assert error.row_event_detail("binlog.000007", 1234) == (
        "Could not execute Write_rows event on table d.t; Duplicate entry '1' for key "
        "'t.PRIMARY', Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY; "
        "the event's source log binlog.000007, end_log_pos 1234"
    )
    assert db.rows(T) == [(1, "a")]


def test_a_duplicate_of_a_staged_insert_fails_with_1062(db: StorageEngine) -> None:
    session, _ = started(db)
    assert fails(session, T, ins(1, "a"), ins(1, "b")).code == 1062
    assert db.rows(T) == []


def test_a_composite_key_is_printed_with_dashes(db: StorageEngine) -> None:
    commit(db, C, ins(1, "x", 0), ins(2, "y", 0))
    session, _ = started(db)
    error = fails(session, C, ins(1, "x", 5))
    assert error.message == "Duplicate entry '1-x' for key 'c.PRIMARY'"
    session, _ = started(db)
    error = fails(session, C, upd((2, "y", 0), (1, "x", 0)))
    assert error.message == "Duplicate entry '1-x' for key 'c.PRIMARY'"
    assert error.kind is RowKind.UPDATE
    assert rows(db, C) == [(1, "x", 0), (2, "y", 0)]


@pytest.mark.parametrize(
    ("change", "event"),
    [
        (upd((9, "a"), (9, "b")), "Update_rows"),
        (dele(9, "a"), "Delete_rows"),
    ],
)
def test_a_change_of_a_missing_row_fails_with_1032(
    db: StorageEngine, change: RowChange, event: str
) -> None:
    commit(db, T, ins(1, "a"))
    session, ref = started(db)
    error = fails(session, T, change)
    assert error.code == 1032
    assert error.sqlstate == "HY000"
    assert error.message == "Can't find record in 't'"
    assert error.handler_error is HandlerError.KEY_NOT_FOUND
    assert str(error) == (
        f"Could not execute {event} event on table d.t; Can't find record in 't', "
        f"Error_code: 1032; handler error HA_ERR_KEY_NOT_FOUND; transaction '{ref.gtid}'"
    )


def test_a_row_deleted_by_the_transaction_is_missing(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"))
    session, _ = started(db)
    assert fails(session, T, dele(1, "a"), dele(1, "a")).code == 1032
    assert db.rows(T) == [(1, "a")]


def test_a_failed_transaction_can_only_roll_back(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"))
    session, _ = started(db)
    with pytest.raises(EngineError):
        session.apply_rows(Map(*T), [ins(2, "b"), ins(1, "a")])
    with pytest.raises(RuntimeError, match="roll it back"):
        session.commit()
    with pytest.raises(RuntimeError):
        session.prepare()
    session.rollback()
    assert db.rows(T) == [(1, "a")]
    session.begin(trx())
    session.apply_rows(Map(*T), [ins(2, "b")])
    session.commit()
    assert rows(db, T) == [(1, "a"), (2, "b")]


def test_rows_for_an_unknown_table_fail_with_1146(db: StorageEngine) -> None:
    session, ref = started(db)
    error = fails(session, TableRef("d", "missing"), ins(1))
    assert error.code == 1146
    assert error.sqlstate == "42S02"
    assert error.message == "Table 'd.missing' doesn't exist"
    assert str(error) == f"Table 'd.missing' doesn't exist; transaction '{ref.gtid}'"
    session, _ = started(db)
    assert fails(session, TableRef("nodb", "t"), ins(1)).message == ("Table 'nodb.t' doesn't exist")
    assert error.row_event_detail("binlog.000001", 99) == (
        "Error executing row event: 'Table 'd.missing' doesn't exist'"
    )
    with pytest.raises(EngineError) as caught:
        db.rows(TableRef("d", "missing"))
    assert caught.value.code == 1146


def test_a_key_prefix_compares_the_prefix(engine: StorageEngine) -> None:
    ddl(engine, "CREATE DATABASE d", "CREATE TABLE p (name VARCHAR(20), PRIMARY KEY (name(3)))")
    p = TableRef("d", "p")
    commit(engine, p, ins("abcdef"))
    session, _ = started(engine)
    assert fails(session, p, ins("abcxyz")).message == "Duplicate entry 'abc' for key 'p.PRIMARY'"
    commit(engine, p, dele("abc---"))
    assert engine.rows(p) == []


def test_key_values_are_printed_as_mysql_prints_them(engine: StorageEngine) -> None:
    ddl(
        engine,
        "CREATE DATABASE d",
        "CREATE TABLE k (a DECIMAL(5,2), b VARBINARY(4), c DATETIME, PRIMARY KEY (a, b, c))",
    )
    k = TableRef("d", "k")
    from datetime import datetime

    row = (Decimal("1.50"), b"\x01z", datetime(2024, 5, 6, 7, 8, 9))
    commit(engine, k, ins(*row))
    session, _ = started(engine)
    error = fails(session, k, ins(*row))
    assert error.message == "Duplicate entry '1.50-\\x01z-2024-05-06 07:08:09' for key 'k.PRIMARY'"


# -- IDEMPOTENT mode --------------------------------------------------------------------------


def test_idempotent_mode_overwrites_a_duplicate_insert(idempotent: StorageEngine) -> None:
    commit(idempotent, T, ins(1, "a"))
    commit(idempotent, T, ins(1, "b"), ins(2, "c"), ins(2, "d"))
    assert rows(idempotent, T) == [(1, "b"), (2, "d")]


def test_idempotent_mode_skips_changes_of_missing_rows(idempotent: StorageEngine) -> None:
    commit(idempotent, T, ins(1, "a"))
    commit(idempotent, T, upd((9, "x"), (9, "y")), dele(8, "x"), upd((1, "a"), (1, "b")))
    assert idempotent.rows(T) == [(1, "b")]
    commit(idempotent, N, dele(1, 1), upd((1, 1), (2, 2)), ins(3, 3))
    assert idempotent.rows(N) == [(3, 3)]


def test_idempotent_mode_skips_an_update_onto_an_existing_key(idempotent: StorageEngine) -> None:
    commit(idempotent, T, ins(1, "a"), ins(2, "b"))
    commit(idempotent, T, upd((2, "b"), (1, "b")))
    assert rows(idempotent, T) == [(1, "a"), (2, "b")]


def test_the_mode_is_read_when_a_transaction_begins(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"))
    session, _ = started(db)
    db.exec_mode = ExecMode.IDEMPOTENT
    assert fails(session, T, ins(1, "b")).code == 1062
    commit(db, T, ins(1, "b"))
    assert db.rows(T) == [(1, "b")]
    db.exec_mode = ExecMode.STRICT
    session, _ = started(db)
    assert fails(session, T, dele(7, "x")).code == 1032


# -- tables without a primary key -------------------------------------------------------------


def test_a_keyless_table_is_a_multiset(db: StorageEngine) -> None:
    commit(db, N, ins(1, 1), ins(1, 1), ins(2, 2))
    assert rows(db, N) == [(1, 1), (1, 1), (2, 2)]
    commit(db, N, dele(1, 1))
    assert rows(db, N) == [(1, 1), (2, 2)]
    commit(db, N, upd((2, 2), (1, 1)))
    assert rows(db, N) == [(1, 1), (1, 1)]
    commit(db, N, dele(1, 1), dele(1, 1))
    assert db.rows(N) == []


def test_a_keyless_change_of_a_missing_row_fails_with_1032(db: StorageEngine) -> None:
    commit(db, N, ins(1, 1))
    session, _ = started(db)
    error = fails(session, N, dele(1, 1), dele(1, 1))
    assert (error.code, error.message) == (1032, "Can't find record in 'n'")
    session, _ = started(db)
    assert fails(session, N, upd((1, 2), (1, 3))).code == 1032
    assert db.rows(N) == [(1, 1)]


def test_a_keyless_row_is_compared_whole(db: StorageEngine) -> None:
    commit(db, N, ins(1, None))
    session, _ = started(db)
    assert fails(session, N, dele(1, 0)).code == 1032
    commit(db, N, dele(1, None))
    assert db.rows(N) == []


def test_a_keyless_table_holds_unhashable_values(engine: StorageEngine) -> None:
    ddl(engine, "CREATE DATABASE d", "CREATE TABLE v (a INT, e VECTOR(2))")
    v = TableRef("d", "v")
    commit(engine, v, ins(1, [1.0, 2.0]), ins(1, [1.0, 2.0]))
    commit(engine, v, dele(1, [1.0, 2.0]))
    assert len(engine.rows(v)) == 1


# -- partial row images (binlog_row_image=MINIMAL/NOBLOB, PARTIAL_JSON) ------------------------


def test_absent_columns_of_an_update_keep_their_values(db: StorageEngine) -> None:
    commit(db, C, ins(1, "x", 10))
    commit(db, C, upd((1, "x", ABSENT), (ABSENT, ABSENT, 11)))
    assert db.rows(C) == [(1, "x", 11)]


def test_absent_columns_of_an_insert_are_null(db: StorageEngine) -> None:
    commit(db, C, ins(1, "x", ABSENT))
    assert db.rows(C) == [(1, "x", None)]


def test_a_before_image_without_key_columns_is_matched_on_what_it_has(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"), ins(2, "b"))
    commit(db, T, upd((ABSENT, "b"), (ABSENT, "B")), dele(ABSENT, "a"))
    assert db.rows(T) == [(2, "B")]
    session, _ = started(db)
    assert fails(session, T, dele(ABSENT, "zz")).code == 1032


def test_a_partial_keyless_before_image_is_matched_on_what_it_has(db: StorageEngine) -> None:
    commit(db, N, ins(1, 10), ins(2, 20))
    commit(db, N, dele(ABSENT, 20), upd((1, ABSENT), (ABSENT, 11)))
    assert db.rows(N) == [(1, 11)]


def test_images_narrower_or_wider_than_the_table(db: StorageEngine) -> None:
    """Extra source columns are dropped, missing ones filled, as MySQL's replica does."""
    commit(db, C, ins(1, "x"), ins(2, "y", 5, "extra"))
    assert rows(db, C) == [(1, "x", None), (2, "y", 5)]
    commit(db, C, upd((1, "x"), (1, "x", 7, "extra")), dele(2, "y", 5, "extra"))
    assert db.rows(C) == [(1, "x", 7)]


def test_a_partial_json_update_applies_its_diffs(engine: StorageEngine) -> None:
    ddl(engine, "CREATE DATABASE d", "CREATE TABLE j (id INT PRIMARY KEY, doc JSON)")
    j = TableRef("d", "j")
    commit(engine, j, ins(1, '{"a": 1, "b": [1, 2]}'))
    diffs = (
        JsonDiff(DiffOperation.REPLACE, "$.a", 5),
        JsonDiff(DiffOperation.INSERT, "$.b[2]", 3),
    )
    commit(engine, j, upd((1, ABSENT), (ABSENT, PartialJson(diffs))))
    assert engine.rows(j) == [(1, '{"a": 5, "b": [1, 2, 3]}')]


# -- isolation and row locks between sessions -------------------------------------------------


def test_a_session_does_not_see_anothers_uncommitted_rows(db: StorageEngine) -> None:
    first, _ = started(db, "w1")
    first.apply_rows(Map(*T), [ins(1, "a")])
    second, _ = started(db, "w2")
    second.apply_rows(Map(*T), [ins(2, "b")])
    second.commit()
    assert db.rows(T) == [(2, "b")]
    first.rollback()
    commit(db, T, ins(1, "z"))  # no duplicate: the first insert never happened
    assert rows(db, T) == [(1, "z"), (2, "b")]


def test_a_row_lock_waits_for_the_holder_to_commit(
    engine_factory: EngineFactory, spawn: Spawn
) -> None:
    db = engine_factory()
    schema(db)
    waiting = threading.Event()
    db.locks.on_wait = lambda waiter, holder: waiting.set()
    first, ref1 = started(db, "w1")
    first.apply_rows(Map(*T), [ins(1, "a")])
    second, ref2 = started(db, "w2")
    task = spawn(lambda: second.apply_rows(Map(*T), [ins(1, "b")]))
    assert waiting.wait(JOIN_TIMEOUT)
    assert db.locks.waiting_for(ref2) == ref1
    first.commit()
    error = task.error()  # it got the lock and then found the committed row
    assert isinstance(error, EngineError) and error.code == 1062
    second.rollback()
    assert db.rows(T) == [(1, "a")]


def test_a_run_of_inserts_waits_at_the_first_row_another_holds_and_not_before(
    engine_factory: EngineFactory, spawn: Spawn
) -> None:
    """The inserts of one rows event take their locks in order: those before a row another
    transaction holds are staged, the rest wait with it (a third transaction may still take
    a later row meanwhile), and the row the holder committed is the duplicate reported."""
    db = engine_factory()
    schema(db)
    waiting = threading.Event()
    db.locks.on_wait = lambda waiter, holder: waiting.set()
    holder, holder_ref = started(db, "w1")
    holder.apply_rows(Map(*T), [ins(3, "held")])
    inserter, inserter_ref = started(db, "w2")
    task = spawn(lambda: inserter.apply_rows(Map(*T), [ins(k, "run") for k in (1, 2, 3, 4)]))
    assert waiting.wait(JOIN_TIMEOUT)
    assert db.locks.waiting_for(inserter_ref) == holder_ref
    assert sorted(key for _, key in db.locks.held_by(inserter_ref)) == [(1,), (2,)]
    commit(db, T, ins(4, "third"))  # row 4 is not locked by the waiting run
    holder.commit()
    error = task.error()
    assert isinstance(error, EngineError) and error.code == 1062
    assert error.message == "Duplicate entry '3' for key 't.PRIMARY'"
    inserter.rollback()
    assert rows(db, T) == [(3, "held"), (4, "third")]


def test_a_run_of_inserts_reports_the_first_duplicate_in_the_event_order(
    db: StorageEngine,
) -> None:
    commit(db, T, ins(5, "a"), ins(2, "b"))
    session, _ = started(db)
    error = fails(session, T, ins(7, "x"), ins(5, "x"), ins(2, "x"))
    assert error.message == "Duplicate entry '5' for key 't.PRIMARY'"
    session, _ = started(db)
    session.apply_rows(Map(*T), [ins(8, "x"), ins(9, "x")])
    error = fails(session, T, ins(10, "x"), ins(9, "y"), ins(5, "y"))
    assert error.message == "Duplicate entry '9' for key 't.PRIMARY'"
    assert rows(db, T) == [(2, "b"), (5, "a")]


def test_idempotent_mode_overwrites_duplicates_in_a_run_of_inserts(
    idempotent: StorageEngine,
) -> None:
    commit(idempotent, T, ins(1, "a"))
    commit(idempotent, T, ins(1, "b"), ins(2, "c"), ins(2, "d"), ins(3, "e"))
    assert rows(idempotent, T) == [(1, "b"), (2, "d"), (3, "e")]


def test_a_row_lock_wait_times_out_with_1205(engine_factory: EngineFactory) -> None:
    db = engine_factory(lock_wait_timeout=0.05)
    schema(db)
    commit(db, T, ins(1, "a"))
    first, _ = started(db, "w1")
    first.apply_rows(Map(*T), [upd((1, "a"), (1, "b"))])
    second, ref = started(db, "w2")
    error = fails(second, T, dele(1, "a"))
    assert (error.code, error.handler_error, error.transient) == (
        1205,
        HandlerError.LOCK_WAIT_TIMEOUT,
        True,
    )
    assert (error.table, error.kind, error.gtid) == (T, RowKind.DELETE, ref.gtid)
    assert db.lock_wait_timeout == 0.05
    first.commit()
    assert db.rows(T) == [(1, "b")]


def test_a_deadlock_between_sessions_fails_with_1213(db: StorageEngine, spawn: Spawn) -> None:
    waiting = threading.Event()
    db.locks.on_wait = lambda waiter, holder: waiting.set()
    commit(db, T, ins(1, "a"), ins(2, "b"))
    first, _ = started(db, "w1")
    first.apply_rows(Map(*T), [upd((1, "a"), (1, "x"))])
    second, _ = started(db, "w2")
    second.apply_rows(Map(*T), [upd((2, "b"), (2, "y"))])
    task = spawn(lambda: first.apply_rows(Map(*T), [upd((2, "b"), (2, "x"))]))
    assert waiting.wait(JOIN_TIMEOUT)
    error = fails(second, T, upd((1, "a"), (1, "y")))
    assert (error.code, error.transient) == (1213, True)
    task.result()
    first.commit()
    assert rows(db, T) == [(1, "x"), (2, "x")]


def test_an_abort_fails_prepare(db: StorageEngine) -> None:
    session, ref = started(db)
    session.apply_rows(Map(*T), [ins(1, "a")])
    assert db.locks.abort(ref, EngineError(1213, "commit order deadlock"))
    with pytest.raises(EngineError, match="commit order deadlock"):
        session.prepare()
    with pytest.raises(RuntimeError, match="roll it back"):
        session.commit()
    session.rollback()
    assert db.rows(T) == []
    assert db.locks.held_by(ref) == []


def test_a_later_transaction_in_the_way_is_rolled_back_and_replayed(
    db: StorageEngine, spawn: Spawn
) -> None:
    """T65/T69: T2 (later) applied and waits for its commit turn holding a row T1 (earlier)
    needs; the conflict manager (here the on_wait hook) rolls T2 back, T1 commits, T2 is
    applied again and commits after it."""
    commit(db, T, ins(1, "a"))
    t1_ref, t2_ref = trx(), trx()
    t2 = db.session("w2")
    t2_changes = [upd((1, "t1"), (1, "t2")), ins(3, "t2")]

    def conflict_manager(waiter: TransactionRef, holder: TransactionRef) -> None:
        if holder.order > waiter.order and t2.transaction == holder:
            t2.rollback()  # T2 has no active worker: roll it back for it

    db.locks.on_wait = conflict_manager
    t2.begin(t2_ref)
    t2.apply_rows(Map(*T), t2_changes)
    t2.prepare()  # now waiting for T1 to commit first
    t1 = db.session("w1")
    t1.begin(t1_ref)
    spawn(lambda: t1.apply_rows(Map(*T), [upd((1, "a"), (1, "t1")), ins(2, "t1")])).result()
    assert t2.state is SessionState.IDLE
    assert db.rows(T) == [(1, "a")]
    t1.prepare()
    t1.commit()
    t2.begin(t2_ref)
    t2.apply_rows(Map(*T), t2_changes)
    t2.commit()
    assert rows(db, T) == [(1, "t2"), (2, "t1"), (3, "t2")]


def test_many_sessions_apply_at_once(db: StorageEngine, spawn: Spawn) -> None:
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        session = db.session(f"w{n}")
        barrier.wait(JOIN_TIMEOUT)
        for i in range(50):
            session.begin(trx())
            session.apply_rows(Map(*T), [ins(n * 1000 + i, "x")])
            session.apply_rows(Map(*N), [ins(n, i)])
            session.prepare()
            session.commit()

    for task in [spawn(functools.partial(worker, n)) for n in range(8)]:
        task.result()
    assert len(db.rows(T)) == 400
    assert len(db.rows(N)) == 400
    assert db.locks.stats().held == 0


# -- session state ----------------------------------------------------------------------------


def test_session_misuse_is_refused(db: StorageEngine) -> None:
    session, ref = started(db)
    assert session.transaction == ref
    with pytest.raises(RuntimeError):
        session.begin(trx())
    other = db.session("other")
    with pytest.raises(RuntimeError, match="already active"):
        other.begin(ref)
    session.prepare()
    with pytest.raises(RuntimeError):
        session.apply_rows(Map(*T), [ins(1, "a")])
    session.commit()
    with pytest.raises(RuntimeError):
        session.commit()
    with pytest.raises(RuntimeError):
        session.prepare()
    other.begin(ref)  # free again once committed
    other.rollback()


# -- DDL --------------------------------------------------------------------------------------


def ddl_error(engine: StorageEngine, statement: str, database: str | None = "d") -> EngineError:
    session, _ = started(engine, "ddl")
    with pytest.raises(EngineError) as caught:
        session.apply_ddl(statement, database)
    session.rollback()
    return caught.value


def test_create_and_drop_database(engine: StorageEngine) -> None:
    ddl(
        engine,
        "CREATE DATABASE d",
        "CREATE SCHEMA IF NOT EXISTS e",
        "CREATE DATABASE IF NOT EXISTS d",
    )
    assert engine.databases() == ["d", "e"]
    error = ddl_error(engine, "CREATE DATABASE d")
    assert (error.code, error.message) == (1007, "Can't create database 'd'; database exists")
    ddl(engine, "CREATE TABLE e.t (a INT)")
    commit(engine, TableRef("e", "t"), ins(1))
    ddl(engine, "DROP DATABASE e", "DROP SCHEMA IF EXISTS e")
    assert engine.databases() == ["d"]
    assert engine.tables() == []
    with pytest.raises(EngineError, match="Table 'e.t' doesn't exist"):
        engine.rows(TableRef("e", "t"))
    error = ddl_error(engine, "DROP DATABASE e")
    assert (error.code, error.message) == (1008, "Can't drop database 'e'; database doesn't exist")


def test_create_table_records_columns_and_key(db: StorageEngine) -> None:
    ddl(
        db,
        "CREATE TABLE `k` (`id` int unsigned NOT NULL AUTO_INCREMENT, `name` varchar(20) "
        "CHARACTER SET utf8mb4 DEFAULT NULL, `d` decimal(10,2), PRIMARY KEY (`name`, `id`), "
        "KEY `i` (`d`), UNIQUE KEY `u` (`d`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    )
    assert db.tables() == [C, TableRef("d", "k"), N, T]
    found = db.definition(TableRef("d", "k"))
    assert dataclasses.replace(found, indexes=()) == TableDef(
        (
            Column("id", "INT UNSIGNED", False),
            Column("name", "VARCHAR(20)", False, "utf8mb4_0900_ai_ci"),
            Column("d", "DECIMAL(10, 2)", True),
        ),
        (1, 0),
        collation="utf8mb4_0900_ai_ci",
    )
    # Secondary keys in MySQL's order: UNIQUE before the others.
    assert [(i.name, i.kind.value, [p.column for p in i.parts]) for i in found.indexes] == [
        ("u", "UNIQUE", [2]), ("i", "INDEX", [2])]  # fmt: skip
    assert db.definition(N).primary_key == ()
    assert db.definition(T).column_names == ("id", "v")
    ddl(db, "CREATE TABLE IF NOT EXISTS t (x INT)", "CREATE TABLE l LIKE c")
    assert db.definition(T).column_names == ("id", "v")
    assert db.definition(TableRef("d", "l")) == db.definition(C)


@pytest.mark.parametrize(
    ("statement", "database", "code", "message"),
    [
        ("CREATE TABLE t (a INT)", "d", 1050, "Table 't' already exists"),
        ("CREATE TABLE x.t (a INT)", "d", 1049, "Unknown database 'x'"),
        ("CREATE TABLE t2 (a INT)", None, 1046, "No database selected"),
        ("CREATE TABLE t2 (a INT, A INT)", "d", 1060, "Duplicate column name 'A'"),
        ("CREATE TABLE t2 (a INT, PRIMARY KEY (b))", "d", 1072,
         "Key column 'b' doesn't exist in table"),
        ("CREATE TABLE t2 LIKE nope", "d", 1146, "Table 'd.nope' doesn't exist"),
        ("DROP TABLE nope", "d", 1051, "Unknown table 'd.nope'"),
        ("TRUNCATE TABLE nope", "d", 1146, "Table 'd.nope' doesn't exist"),
        ("RENAME TABLE nope TO x", "d", 1146, "Table 'd.nope' doesn't exist"),
        ("RENAME TABLE t TO n", "d", 1050, "Table 'n' already exists"),
        ("ALTER TABLE nope ADD COLUMN x INT", "d", 1146, "Table 'd.nope' doesn't exist"),
        ("ALTER TABLE t ADD COLUMN V INT", "d", 1060, "Duplicate column name 'V'"),
        ("ALTER TABLE t ADD COLUMN x INT AFTER y", "d", 1054, "Unknown column 'y' in 't'"),
        ("/* nothing */", "d", 1065, "Query was empty"),
        ("DROP TABLE t; DROP TABLE n", "d", 1235,
         "This version of MySQL doesn't yet support 'several statements in one DDL event' "
         "(statement: DROP TABLE t; DROP TABLE n)"),
        ("ALTER TABLE t DROP COLUMN x", "d", 1091,
         "Can't DROP 'x'; check that column/key exists"),
        ("ALTER TABLE t DROP COLUMN id, DROP COLUMN v", "d", 1090,
         "You can't delete all columns with ALTER TABLE; use DROP TABLE instead"),
        ("CREATE TABLE (", "d", 1064,
         "You have an error in your SQL syntax; check the manual that corresponds to your "
         "MySQL server version for the right syntax to use near '(' at line 1"),
        ("RENAME TABLE t n", "d", 1064,
         "You have an error in your SQL syntax; check the manual that corresponds to your "
         "MySQL server version for the right syntax to use near 'RENAME TABLE t n' at line 1"),
    ],
)  # fmt: skip
def test_ddl_errors(
    db: StorageEngine, statement: str, database: str | None, code: int, message: str
) -> None:
    error = ddl_error(db, statement, database)
    assert (error.code, error.message) == (code, message)
    assert db.tables() == [C, N, T]


@pytest.mark.parametrize(
    ("statement", "what"),
    [
        ("ALTER TABLE t DROP PARTITION p0", "ALTER TABLE ... DROP PARTITION p0"),
        ("ALTER TABLE t TRUNCATE PARTITION p1", "ALTER TABLE ... TRUNCATE PARTITION p1"),
        ("ALTER TABLE t ENGINE=BLACKHOLE", "ALTER TABLE ... ENGINE=BLACKHOLE"),
        ("CREATE TEMPORARY TABLE x (a INT)", "CREATE TEMPORARY TABLE"),
        ("CREATE TABLE x (a INT) SELECT 1", "CREATE TABLE ... SELECT"),
        ("CREATE TEMPORARY SEQUENCE s", "CREATE TEMPORARY SEQUENCE"),
        ("INSERT INTO t VALUES (1, 'a')", "this statement as replicated DDL"),
        ("RENAME TABLESPACE a TO b", "this RENAME statement as replicated DDL"),
    ],
)
def test_unsupported_ddl_fails_with_1235_naming_the_statement(
    db: StorageEngine, statement: str, what: str
) -> None:
    error = ddl_error(db, statement)
    assert error.code == 1235
    assert error.message == (
        f"This version of MySQL doesn't yet support '{what}' (statement: {statement})"
    )


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE INDEX i ON t (v)",
        "CREATE UNIQUE INDEX i USING BTREE ON d.t (v(10)) ALGORITHM=INPLACE LOCK=NONE",
        "CREATE FULLTEXT INDEX f ON `t` (v)",
        "DROP INDEX i ON t",
        "ALTER TABLE t PARTITION BY HASH(id) PARTITIONS 4",
        "ALTER TABLE t REMOVE PARTITIONING",
        "ALTER TABLE t ADD PARTITION (PARTITION p3 VALUES LESS THAN (30))",
        "ALTER TABLE t COALESCE PARTITION 2",
        "ALTER TABLE t REORGANIZE PARTITION p0 INTO (PARTITION a VALUES LESS THAN (5))",
    ],
)
def test_index_and_partition_ddl_keep_every_row(db: StorageEngine, statement: str) -> None:
    if statement.startswith("DROP INDEX"):
        ddl(db, "CREATE INDEX i ON t (v)")
    before = sorted(db.rows(T))  # type: ignore[type-var]
    ddl(db, statement)
    assert db.tables() == [C, N, T] and sorted(db.rows(T)) == before  # type: ignore[type-var]
    assert ddl_error(db, "CREATE INDEX i ON nope (v)").code == 1146


def test_drop_index_primary_drops_the_primary_key(db: StorageEngine) -> None:
    ddl(db, "DROP INDEX `PRIMARY` ON t")
    assert db.definition(T).primary_key == ()


def test_ddl_takes_effect_at_commit(db: StorageEngine) -> None:
    session, _ = started(db, "ddl")
    session.apply_ddl("CREATE TABLE x (a INT)", "d")
    session.apply_ddl("DROP TABLE t", "d")
    assert db.tables() == [C, N, T]
    session.rollback()
    assert db.tables() == [C, N, T]
    session.begin(trx())
    session.apply_ddl("CREATE TABLE x (a INT)", "d")
    session.apply_ddl("DROP TABLE t", "d")
    session.commit()
    assert db.tables() == [C, N, TableRef("d", "x")]


def test_drop_table_is_all_or_nothing(db: StorageEngine) -> None:
    error = ddl_error(db, "DROP TABLE t, nope, n")
    assert error.code == 1051
    assert db.tables() == [C, N, T]
    ddl(db, "DROP TABLE IF EXISTS t, nope, n /* generated by server */")
    assert db.tables() == [C]


def test_truncate_rename_and_drop_move_the_rows(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"))
    commit(db, N, ins(1, 1))
    ddl(db, "CREATE DATABASE e", "RENAME TABLE t TO e.t2, n TO n2")
    assert db.tables() == [C, TableRef("d", "n2"), TableRef("e", "t2")]
    assert db.rows(TableRef("e", "t2")) == [(1, "a")]
    assert db.rows(TableRef("d", "n2")) == [(1, 1)]
    commit(db, TableRef("e", "t2"), ins(2, "b"))  # still keyed on id
    session, _ = started(db)
    assert fails(session, TableRef("e", "t2"), ins(2, "c")).code == 1062
    ddl(db, "TRUNCATE TABLE e.t2", "ALTER TABLE n2 RENAME TO n")
    assert db.rows(TableRef("e", "t2")) == []
    assert db.rows(N) == [(1, 1)]


def test_add_column_fills_existing_rows_with_null(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"))
    ddl(db, "ALTER TABLE t ADD COLUMN z INT, ADD COLUMN f INT FIRST, ADD m INT AFTER id")
    assert db.definition(T).column_names == ("f", "id", "m", "v", "z")
    assert db.definition(T).primary_key == (1,)
    assert db.rows(T) == [(None, 1, None, "a", None)]
    commit(db, T, ins(7, 2, 8, "b", 9), upd((None, 1, None, "a", None), (0, 1, 0, "a", 0)))
    assert rows(db, T) == [(0, 1, 0, "a", 0), (7, 2, 8, "b", 9)]
    ddl(db, "ALTER TABLE t ADD COLUMN IF NOT EXISTS z INT")
    assert len(db.definition(T).columns) == 5


def test_drop_column_removes_its_values(db: StorageEngine) -> None:
    commit(db, C, ins(1, "x", 10), ins(2, "y", 20))
    ddl(db, "ALTER TABLE c DROP COLUMN v")
    assert rows(db, C) == [(1, "x"), (2, "y")]
    ddl(db, "ALTER TABLE c DROP b")  # a key column: the key keeps the others
    assert db.definition(C).primary_key == (0,)
    assert rows(db, C) == [(1,), (2,)]
    session, _ = started(db)
    assert fails(session, C, ins(1)).message == "Duplicate entry '1' for key 'c.PRIMARY'"


def test_dropping_a_key_column_that_leaves_duplicates_fails(db: StorageEngine) -> None:
    commit(db, C, ins(1, "x", 0), ins(1, "y", 0))
    session, _ = started(db, "ddl")
    session.apply_ddl("ALTER TABLE c DROP COLUMN b", "d")
    with pytest.raises(EngineError) as caught:
        session.commit()
    assert caught.value.code == 1062
    session.rollback()
    assert db.definition(C).column_names == ("a", "b", "v")
    assert len(db.rows(C)) == 2


def test_dropping_the_whole_key_makes_a_multiset(db: StorageEngine) -> None:
    commit(db, T, ins(1, "a"), ins(2, "a"))
    ddl(db, "ALTER TABLE t DROP COLUMN id")
    assert db.definition(T).primary_key == ()
    commit(db, T, ins("a"))
    assert db.rows(T) == [("a",), ("a",), ("a",)]


def test_create_table_with_rows_in_one_transaction(db: StorageEngine) -> None:
    """CREATE TABLE ... SELECT is logged as the CREATE TABLE and the rows, in one trx."""
    session, _ = started(db)
    session.apply_ddl("CREATE TABLE s (a INT PRIMARY KEY)", "d")
    session.apply_rows(Map("d", "s"), [ins(1), ins(2)])
    assert db.tables() == [C, N, T]
    session.commit()
    assert sorted(db.rows(TableRef("d", "s")), key=repr) == [(1,), (2,)]


def test_ddl_and_rows_on_existing_tables_do_not_mix(db: StorageEngine) -> None:
    session, _ = started(db)
    session.apply_ddl("ALTER TABLE t ADD COLUMN z INT", "d")
    assert fails(session, T, ins(1, "a", 2)).code == 1235
    session, _ = started(db)
    session.apply_rows(Map(*T), [ins(1, "a")])
    with pytest.raises(EngineError) as caught:
        session.apply_ddl("CREATE TABLE x (a INT)", "d")
    assert caught.value.code == 1235
    session.rollback()


def test_rows_staged_before_a_table_changed_are_refused_at_commit(db: StorageEngine) -> None:
    """DDL runs alone in the appliers; if it does not, the commit fails instead of writing
    rows of the old shape."""
    session, _ = started(db)
    session.apply_rows(Map(*T), [ins(1, "a")])
    ddl(db, "TRUNCATE TABLE t")
    with pytest.raises(EngineError) as caught:
        session.commit()
    assert (caught.value.code, caught.value.message) == (
        1412,
        "Table definition has changed, please retry transaction",
    )
    session.rollback()
    assert db.rows(T) == []


# -- a model check ----------------------------------------------------------------------------

_ops = st.lists(
    st.tuples(st.sampled_from(["ins", "upd", "del"]), st.integers(0, 5), st.integers(0, 3)),
    max_size=8,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(transactions=st.lists(st.tuples(_ops, st.booleans()), max_size=6))
def test_strict_mode_matches_a_model(
    engine_factory: EngineFactory, transactions: list[tuple[list[tuple[str, int, int]], bool]]
) -> None:
    """Random transactions, committed or rolled back; a failing change fails the whole
    transaction. The engine ends with exactly what a dict model says."""
    db = engine_factory()
    schema(db)
    model: dict[int, Row] = {}
    for operations, keep in transactions:
        staged = dict(model)
        session, _ = started(db)
        changes = []
        failed = False
        for op, key, value in operations:
            if op == "ins":
                changes.append(ins(key, str(value)))
                failed = key in staged
                staged[key] = (key, str(value))
            elif key not in staged:
                changes.append(dele(key, "?") if op == "del" else upd((key, "?"), (key, "x")))
                failed = True
            elif op == "del":
                changes.append(dele(*staged.pop(key)))
            else:
                changes.append(upd(staged[key], (key, str(value))))
                staged[key] = (key, str(value))
            if failed:
                break
        if failed:
            with pytest.raises(EngineError):
                session.apply_rows(Map(*T), changes)
            session.rollback()
            continue
        session.apply_rows(Map(*T), changes)
        if keep:
            session.commit()
            model = staged
        else:
            session.rollback()
        assert rows(db, T) == sorted(model.values(), key=repr)


# -- the in-memory engine only ----------------------------------------------------------------


def test_concurrent_commits_are_flushed_in_groups(spawn: Spawn) -> None:
    """T82: while one flush runs, the commits that arrive queue up and go in one flush."""
    flushing = threading.Event()
    proceed = threading.Event()
    groups: list[tuple[TransactionRef, ...]] = []

    def on_flush(group: tuple[TransactionRef, ...]) -> None:
        groups.append(group)
        flushing.set()
        assert proceed.wait(JOIN_TIMEOUT)

    db = InMemoryEngine(on_flush=on_flush)
    proceed.set()
    schema(db)
    flushing.clear()
    proceed.clear()
    base = db.stats()
    sessions = [db.session(f"w{n}") for n in range(4)]
    refs = []
    for n, session in enumerate(sessions):
        refs.append(trx())
        session.begin(refs[-1])
        session.apply_rows(Map(*T), [ins(n, "x")])
    leader = spawn(sessions[0].commit)
    assert flushing.wait(JOIN_TIMEOUT)
    followers = [spawn(session.commit) for session in sessions[1:]]
    assert db.wait_for(lambda s: s.queued == 3, JOIN_TIMEOUT)
    assert len(db.rows(T)) == 4  # committed (visible) before they are flushed
    proceed.set()
    for task in [leader, *followers]:
        task.result()
    stats = db.stats()
    assert stats.commits - base.commits == 4
    assert stats.flushes - base.flushes == 2
    assert groups[-2:] == [(refs[0],), tuple(refs[1:])]
    assert stats.queued == 0


def test_ordered_commits_are_flushed_in_groups(spawn: Spawn) -> None:
    """T82 with replica_preserve_commit_order: commits are called in source order without
    waiting for durability; the waits run in parallel and share flushes."""
    groups: list[tuple[TransactionRef, ...]] = []
    flushing, proceed = threading.Event(), threading.Event()

    def on_flush(group: tuple[TransactionRef, ...]) -> None:
        groups.append(group)
        flushing.set()
        assert proceed.wait(JOIN_TIMEOUT)

    db = InMemoryEngine(on_flush=on_flush)
    proceed.set()
    schema(db)
    proceed.clear()
    flushing.clear()
    base = db.stats()
    sessions, refs = [], []
    for n in range(5):
        session, ref = started(db, f"w{n}")
        session.apply_rows(Map(*T), [ins(n, "x")])
        session.prepare()
        sessions.append(session)
        refs.append(ref)
    sessions[0].commit(durable=False)  # commit order: 0, then 1..4
    waits = [spawn(sessions[0].wait_durable)]
    assert flushing.wait(JOIN_TIMEOUT)  # the first wait leads a flush of transaction 0
    for session in sessions[1:]:
        session.commit(durable=False)
        waits.append(spawn(session.wait_durable))
    assert db.stats().queued == 4
    assert len(db.rows(T)) == 5
    proceed.set()
    for task in waits:
        task.result()
    assert groups[-2:] == [(refs[0],), tuple(refs[1:])]
    assert db.stats()[:2] == (base.commits + 5, base.flushes + 2)


def test_flush_makes_every_commit_durable() -> None:
    flushed: list[tuple[TransactionRef, ...]] = []
    db = InMemoryEngine(on_flush=flushed.append)
    db.flush()  # nothing committed: nothing to do
    assert flushed == []
    refs = []
    for _ in range(3):
        session, ref = started(db)
        session.commit(durable=False)
        refs.append(ref)
    assert db.stats() == (3, 0, 3)
    db.flush()
    assert flushed == [tuple(refs)]
    assert db.stats() == (3, 1, 0)
    db.flush()
    assert db.stats() == (3, 1, 0)


def test_each_commit_flushes_alone_without_concurrency() -> None:
    db = InMemoryEngine(commit_latency=0.001)
    schema(db)
    commit(db, T, ins(1, "a"))
    assert db.stats() == (5, 5, 0)
    assert db.commit_latency == 0.001
    assert not db.wait_for(lambda s: s.commits > 5, 0.01)
    assert db.wait_for(lambda s: s.commits == 5, 0)


def test_an_exception_of_on_flush_reaches_the_leader_after_its_commit() -> None:
    def broken(group: tuple[TransactionRef, ...]) -> None:
        raise OSError("disk full")

    db = InMemoryEngine(on_flush=broken)
    session, _ = started(db, "ddl")
    session.apply_ddl("CREATE DATABASE d", None)
    with pytest.raises(OSError, match="disk full"):
        session.commit()
    assert state_of(session) is SessionState.IDLE
    assert db.databases() == ["d"]
    assert db.stats() == (1, 1, 0)


def test_an_empty_transaction_commits() -> None:
    db = InMemoryEngine()
    session, _ = started(db)
    session.commit()
    assert db.stats().commits == 1


def test_the_engine_shows_its_state() -> None:
    db = InMemoryEngine()
    schema(db)
    session, ref = started(db, "w1")
    assert repr(session) == f"StoreSession('w1', active, {ref.gtid})"
    assert "tables=3" in repr(db) and "active=1" in repr(db)
    session.rollback()


def test_enum_and_set_values_are_stored_by_name(engine: StorageEngine) -> None:
    """With binlog_row_metadata=MINIMAL the binlog gives an ENUM as its index and a SET as its
    bitmap; the engine keeps the member names MySQL shows, and a before image by index finds
    the row stored by name."""
    session = engine.session("enum")
    ref = TableRef("d", "e")
    for number, statement in enumerate(
        [
            "CREATE DATABASE d",
            "CREATE TABLE d.e (id INT PRIMARY KEY, s ENUM('new', 'it''s', 'paid'), "
            "f SET('a', 'b', 'c'))",
        ],
        start=1,
    ):
        session.begin(TransactionRef(f"{UUID}:{number}", number))
        session.apply_ddl(statement, None)
        session.commit()
    session.begin(TransactionRef(f"{UUID}:3", 3))
    session.apply_rows(
        Map("d", "e"), [RowChange.insert((1, 2, 5)), RowChange.insert((2, "paid", "b"))]
    )
    session.commit()
    assert sorted(engine.rows(ref)) == [(1, "it's", "a,c"), (2, "paid", "b")]
    session.begin(TransactionRef(f"{UUID}:4", 4))
    session.apply_rows(Map("d", "e"), [RowChange.update((1, 2, 5), (1, 0, 0))])
    session.commit()
    assert sorted(engine.rows(ref)) == [(1, "", ""), (2, "paid", "b")]
