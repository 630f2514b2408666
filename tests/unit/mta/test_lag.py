"""Seconds_Behind_Source of the legacy applier (WL5569.SSS.3, T45; mysql-reference §3 row 33):
set at checkpoints from the low-water mark's source commit time, cleared once the channel has
nothing left to read or apply; SHOW REPLICA STATUS shows a cleared value as 0 while the
receiver is connected and NULL otherwise."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from spark_replica.applier_core.channels.config import ChannelConfig, SourceConnection
from spark_replica.applier_core.channels.manager import Channel, ThreadType
from spark_replica.applier_core.channels.status import ChannelStatus
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.sql_handlers.replication.replica_status import status_row
from tests.unit.csa_apply.faults import RecordingEngine
from tests.unit.csa_apply.test_conflicts import SPEC, Stream, _update
from tests.unit.mta.harness import MtaReplica, wait_until

UUID = SPEC.server_uuid


def test_lag_follows_the_low_water_mark_and_clears_when_idle(tmp_path: Path) -> None:
    """While T1 is held, the mark is the last setup transaction: the lag is how long ago the
    source committed it, and it grows with time, not with T2 committing after T1. Once
    everything is applied it is cleared (T45)."""
    stream = Stream()
    table, rows = stream.table, stream.rows
    t1 = stream.transaction(1, _update(table, rows[1], 1, 111))
    t2 = stream.transaction(2, _update(table, rows[2], 1, 222))
    stream.write(tmp_path, t1, t2)
    engine = RecordingEngine()
    release = engine.faults.hold_apply[t1.gno] = threading.Event()
    replica = MtaReplica(tmp_path / "data", workers=2, commit_order=False, engine=engine)
    replica.settings.set_internal("replica_checkpoint_period", 1)
    mark_committed = stream.setup[-1].commit_time_us / 1e6
    try:
        replica.start()
        assert replica.wait_for(f"{UUID}:{t2.gno}")

        def lag() -> int | None:
            return replica.status.snapshot().seconds_behind_source

        def near_mark() -> bool:
            value = lag()
            expected = time.time() - mark_committed
            return value is not None and expected - 2 <= value <= expected + 1

        assert wait_until(near_mark), lag()
        release.set()
        assert replica.wait_for(f"{UUID}:1-{t2.gno}")
        assert wait_until(lambda: lag() is None), lag()
        assert replica.executed.snapshot() == GtidSet.parse(f"{UUID}:1-{t2.gno}")
    finally:
        replica.close()


class _Running:
    def stop(self) -> None:
        """Nothing to stop: the channel's threads are only shown as running."""


def _shown(status: ChannelStatus, *, io: bool, connecting: bool = False) -> object:
    channel = Channel(ChannelConfig("c1", SourceConnection(host="h")))
    channel._attach(ThreadType.SQL, _Running())
    if io:
        channel._attach(ThreadType.IO, _Running())
    channel.status.update(
        seconds_behind_source=status.seconds_behind_source, io_connecting=connecting
    )
    names_row = status_row(channel, "")
    return names_row[32]  # Seconds_Behind_Source, the 33rd column


def test_status_shows_a_cleared_lag_as_zero_only_with_the_receiver_connected() -> None:
    """mysql-reference §3 row 33: caught up and the IO thread connected: 0; caught up without
    it: NULL; behind: the lag, whatever the receiver does."""
    caught_up = ChannelStatus(seconds_behind_source=None)
    behind = ChannelStatus(seconds_behind_source=42)
    assert _shown(caught_up, io=True) == 0
    assert _shown(caught_up, io=True, connecting=True) is None
    assert _shown(caught_up, io=False) is None
    assert _shown(behind, io=False) == 42
    assert _shown(behind, io=True) == 42
