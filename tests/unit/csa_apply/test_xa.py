"""XA transactions in a relay log, as a MySQL 8 source logs them, applied by both appliers:
the prepare keeps its rows out of the tables, XA COMMIT applies them, XA ROLLBACK drops them,
ONE PHASE commits at once, and an unknown xid stops the channel with 1397."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.codecs.registry import encode_event_at
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import Event, XaPrepare, make_header
from spark_replica.applier_core.binlog.relaylog import RelayLogWriter
from spark_replica.applier_core.errors import ErrorCode
from tests.unit.csa_apply.harness import ChannelRun, Replica
from tests.unit.csa_apply.test_streaming import _writer
from tests.unit.mta.harness import MtaReplica
from tests.unit.provider.helpers import ITEMS, UUID, gtid, query, rows, xid

Make = Callable[[Path], ChannelRun]
APPLIERS: dict[str, Make] = {
    "csa": lambda path: Replica(path, workers=4),
    "mta": lambda path: MtaReplica(path, workers=4),
}


def _prepare(gtrid: bytes, *, one_phase: bool = False) -> XaPrepare:
    return XaPrepare(make_header(EventType.XA_PREPARE), one_phase, 1, gtrid, b"")


def _xa(gno: int, name: str, ids: list[int], *, last_committed: int,
        one_phase: bool = False) -> list[Event]:  # fmt: skip
    """A MySQL source's first phase of XA transaction ``name`` inserting ``ids``."""
    xid_text = f"X'{name.encode().hex()}',X'',1"
    return [
        gtid(gno, last_committed=last_committed),
        query(f"XA START {xid_text}"),
        ITEMS,
        *(rows([i]) for i in ids),
        query(f"XA END {xid_text}"),
        _prepare(name.encode(), one_phase=one_phase),
    ]


def _statement(gno: int, text: str, *, last_committed: int) -> list[Event]:
    return [gtid(gno, last_committed=last_committed), query(text)]


def _plain(gno: int, ids: list[int], *, last_committed: int) -> list[Event]:
    return [gtid(gno, last_committed=last_committed), query("BEGIN"), ITEMS,
            *(rows([i]) for i in ids), xid(gno)]  # fmt: skip


SETUP = [
    *_statement(1, "CREATE DATABASE shop", last_committed=0),
    *_statement(2, "CREATE TABLE shop.items (id INT PRIMARY KEY, payload BLOB)", last_committed=1),
]


def _append(writer: RelayLogWriter, events: list[Event]) -> None:
    table_maps: dict[int, object] = {ITEMS.table_id: ITEMS}
    for event in events:
        writer.append(encode_event_at(event, writer.position.offset, checksum=True,
                                      table_maps=table_maps))  # fmt: skip


def _ids(run: ChannelRun) -> list[int]:
    return [int(row[0]) for row in run.rows("shop", "items")]  # type: ignore[call-overload]


@pytest.mark.parametrize("applier", APPLIERS)
def test_prepared_rows_wait_for_xa_commit_and_rollback_drops_them(
    tmp_path: Path, applier: str
) -> None:
    run = APPLIERS[applier](tmp_path / "data")
    assert isinstance(run, Replica | MtaReplica)
    writer = _writer(run)  # type: ignore[arg-type]
    try:
        # 3, 4 and 5 share a commit group (the source ran them at once).
        _append(writer, [*SETUP, *_xa(3, "a", [1, 2], last_committed=2),
                         *_plain(4, [10], last_committed=2),
                         *_xa(5, "b", [3], last_committed=2)])  # fmt: skip
        run.run_until_applied(f"{UUID}:1-5")
        assert _ids(run) == [10]  # prepared: kept, not applied
        assert [p.xid for p in run.engine.prepared_xa()] == ["X'61',X'',1", "X'62',X'',1"]
        assert run.engine.prepared_xa()[0].gtid == f"{UUID}:3"

        _append(writer, [*_statement(6, "XA COMMIT X'61',X'',1", last_committed=5),
                         *_statement(7, "XA ROLLBACK X'62',X'',1", last_committed=6),
                         *_xa(8, "c", [4], last_committed=7, one_phase=True),
                         *_plain(9, [11], last_committed=7)])  # fmt: skip
        run.run_until_applied(f"{UUID}:1-9")
        assert _ids(run) == [1, 2, 4, 10, 11]
        assert run.engine.prepared_xa() == []
    finally:
        writer.close()
        run.close()


@pytest.mark.parametrize("applier", APPLIERS)
@pytest.mark.parametrize("verb", ["COMMIT", "ROLLBACK"])
def test_an_unknown_xid_stops_the_channel_with_1397(tmp_path: Path, applier: str,
                                                    verb: str) -> None:  # fmt: skip
    run = APPLIERS[applier](tmp_path / "data")
    assert isinstance(run, Replica | MtaReplica)
    writer = _writer(run)  # type: ignore[arg-type]
    try:
        _append(writer, [*SETUP, *_statement(3, f"XA {verb} 'nope'", last_committed=2)])
        run.start()
        assert run.exited.wait(30)
        error = run.exits[0]
        assert error is not None and error.number == ErrorCode.XAER_NOTA
        worker = [w.last_error for w in run.status.snapshot().workers if w.last_error.number]
        assert [e.number for e in worker] == [ErrorCode.XAER_NOTA]
        assert worker[0].message.endswith(
            f"Error 'XAER_NOTA: Unknown XID' on query. Default database: 'shop'. "
            f"Query: 'XA {verb} 'nope''"
        )
        assert run.executed.contains(UUID, "", 2) and not run.executed.contains(UUID, "", 3)
    finally:
        writer.close()
        run.close()


OUT_OF_PLACE: dict[str, list[Event]] = {
    "recover": [gtid(3, last_committed=2), query("XA RECOVER")],
    "end-alone": [gtid(3, last_committed=2), query("XA END 'a'")],
    "end-in-begin": [
        gtid(3, last_committed=2),
        query("BEGIN"),
        ITEMS,
        rows([1]),
        query("XA END 'a'"),
        xid(3),
    ],  # fmt: skip
    "xa-body-commit": [
        gtid(3, last_committed=2),
        query("XA START 'a'"),
        ITEMS,
        rows([1]),
        query("COMMIT"),
    ],  # fmt: skip
    "prepare-in-begin": [
        gtid(3, last_committed=2),
        query("BEGIN"),
        ITEMS,
        rows([1]),
        _prepare(b"a"),
    ],  # fmt: skip
}


@pytest.mark.parametrize("applier", APPLIERS)
@pytest.mark.parametrize("case", OUT_OF_PLACE)
def test_xa_statements_out_of_place_stop_the_channel_as_a_relay_log_read_failure(
    tmp_path: Path, applier: str, case: str
) -> None:
    run = APPLIERS[applier](tmp_path / "data")
    assert isinstance(run, Replica | MtaReplica)
    writer = _writer(run)  # type: ignore[arg-type]
    try:
        _append(writer, [*SETUP, *OUT_OF_PLACE[case]])
        run.start()
        assert run.exited.wait(30)
        error = run.exits[0]
        workers = [w.last_error.number for w in run.status.snapshot().workers]
        assert error is not None
        assert ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE in (error.number, *workers)
        assert not run.executed.contains(UUID, "", 3)
        assert _ids(run) == []
    finally:
        writer.close()
        run.close()
