"""Transactions many times larger than APPLIER_EVENT_MEMORY_LIMIT apply through a channel's
Change Stream Applier without deadlock, and the events held in memory stay within the limit
the channel enforces, ``max(APPLIER_EVENT_MEMORY_LIMIT, replica_max_allowed_packet)``
(T76, INT.0033, WL10500.RM.3, WL10500.STREAM.1)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.binlog.constants import ColumnType
from spark_replica.applier_core.channels.config import ChannelConfig
from spark_replica.applier_core.csa.service import CsaChannel
from spark_replica.applier_core.provider.resources import EVENT_MEMORY
from spark_replica.applier_core.settings import SystemVariables
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.applier_core.storage.store import StoreSession
from spark_replica.tools.generator.schema import ColumnDef, TableDef
from spark_replica.tools.generator.simulate import (
    BASE_TIME_US,
    SERVER_UUID,
    GeneratedTransaction,
    RowChange,
)
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.csa_apply.harness import Replica, copy_into_relay_log

KIB = 1024
#: Rows of each large transaction, and the bytes of each row's payload: about 2 MB of row
#: events per transaction, more than six times the largest limit below.
LARGE_ROWS = 2_000
PAYLOAD = 1_000
SMALL = 10
TABLE = TableDef(
    "big",
    "t1",
    (
        ColumnDef("id", "BIGINT", ColumnType.LONGLONG, nullable=False),
        ColumnDef("payload", "VARCHAR(1024)", ColumnType.VARCHAR, nullable=False,
                  params=(4 * 1024,)),
    ),
)  # fmt: skip


@dataclass
class LimitedReplica(Replica):
    """The harness's channel with an ``APPLIER_EVENT_MEMORY_LIMIT``."""

    memory_limit: int = 0

    def config(self) -> ChannelConfig:
        config = super().config()
        applier = replace(config.applier, applier_event_memory_limit=self.memory_limit)
        return ChannelConfig(name=config.name, applier=applier)


class HeldEngine(InMemoryEngine):
    """An in-memory engine whose first row change waits until ``until()`` is true, so the
    reader meanwhile has to hold the transaction's events (at most 60 s, then it fails)."""

    def __init__(self, until: Callable[[], bool]) -> None:
        super().__init__()
        self._until: Callable[[], bool] | None = until
        self._lock = threading.Lock()

    def session(self, name: str) -> StoreSession:
        session = super().session(name)
        apply_rows = session.apply_rows

        def held(table_map: Any, changes: Any) -> None:
            with self._lock:
                until, self._until = self._until, None
            if until is not None:
                deadline = time.monotonic() + 60
                while not until():
                    assert time.monotonic() < deadline, "the reader never waited"
                    threading.Event().wait(0.005)
            apply_rows(table_map, changes)

        session.apply_rows = held  # type: ignore[method-assign]
        return session


def row(key: int) -> tuple[int, str]:
    return key, f"{key:010d}" * (PAYLOAD // 10)


def trx(gno: int, last_committed: int, **kw: Any) -> GeneratedTransaction:
    return GeneratedTransaction(gno=gno, last_committed=last_committed, sequence_number=gno,
                                commit_time_us=BASE_TIME_US + gno * 1000, file_index=1,
                                **kw)  # fmt: skip


def inserts(keys: range) -> tuple[RowChange, ...]:
    return tuple(RowChange(TABLE, "insert", None, row(key)) for key in keys)


def workload() -> list[GeneratedTransaction]:
    """The DDL, two large transactions (the second depends on the first, so its events wait
    in memory while the first one applies), then small ones that may run in parallel."""
    first, second = range(1, LARGE_ROWS + 1), range(LARGE_ROWS + 1, 2 * LARGE_ROWS + 1)
    made = [
        trx(1, 0, ddl="CREATE DATABASE `big`", ddl_database="big"),
        trx(2, 1, ddl=TABLE.create_statement(), ddl_database="big"),
        trx(3, 2, changes=inserts(first)),
        trx(4, 3, changes=inserts(second)),
    ]
    start = 2 * LARGE_ROWS + 1
    made += [trx(5 + n, 4, changes=inserts(range(start + n, start + n + 1))) for n in range(SMALL)]
    return made


@pytest.mark.parametrize(
    ("limit", "packet", "effective"),
    [(256 * KIB, KIB, 256 * KIB), (64 * KIB, 256 * KIB, 256 * KIB)],
    ids=["limit", "packet-size"],
)
def test_transactions_larger_than_the_limit_stream_within_it(
    tmp_path: Path, no_thread_leaks: None, limit: int, packet: int, effective: int
) -> None:
    transactions = workload()
    files = write_binlogs(transactions, tmp_path / "source", server_uuid=SERVER_UUID)
    assert files[0].stat().st_size > 12 * effective  # two transactions of over 6 limits each
    copy_into_relay_log(files, tmp_path / "data")
    settings = SystemVariables({})
    settings.set_internal("replica_max_allowed_packet", packet)
    # The worker holds its first row change until the reader waits for memory: the events
    # of the transaction it applies then fill the limit whatever the threads' speeds.
    engine = HeldEngine(lambda: replica.handle.memory.stats(EVENT_MEMORY).waits > 0)
    replica = LimitedReplica(tmp_path / "data", workers=4, commit_order=True, settings=settings,
                             engine=engine, memory_limit=limit)  # fmt: skip
    try:
        replica.start()
        channel = replica.handle
        assert isinstance(channel, CsaChannel)
        assert replica.wait_for(f"{SERVER_UUID}:1-{len(transactions)}")
        replica.stop()
        assert replica.exits == []
        assert replica.rows("big", "t1") == [row(k) for k in range(1, 2 * LARGE_ROWS + SMALL + 1)]
    finally:
        replica.close()
    stats = channel.memory.stats(EVENT_MEMORY)
    assert stats.limit == effective
    assert stats.waits >= 1  # the events did not fit: the reader waited for the workers
    assert stats.peak <= effective and stats.oversized == 0
    assert stats.held == 0
