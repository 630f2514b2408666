"""The group assignment queue, the low-water mark and checkpoints of the legacy applier
(WL5569.GAQ.1-3, WL5569.SSS.1/SSS.2, T44, T64; mysql.slave_worker_info)."""

from __future__ import annotations

import threading
from pathlib import Path

from spark_replica.applier_core.binlog.events import Gtid, Xid
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.channels.store import Checkpoint
from spark_replica.applier_core.mta.gaq import GroupQueue, Position
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.unit.csa_apply.faults import RecordingEngine
from tests.unit.csa_apply.harness import WAIT
from tests.unit.csa_apply.test_conflicts import Stream, _update
from tests.unit.mta.harness import MtaReplica, wait_until

UUID = WorkloadSpec().server_uuid


def _at(pos: int) -> Position:
    return Position("relay.000001", pos, "binlog.000001", pos)


def test_t64_the_head_moves_past_every_group_done_in_a_row() -> None:
    """WL5569.GAQ.3: groups 0..4 on workers 2, 1, 1, 2, 3. Groups 1 and 4 commit, then 0:
    the head moves to 2 and the queue holds [2, 3, 4] with 4 done; once 2 and 3 commit it
    is empty, and the low-water mark is group 4."""
    gaq = GroupQueue()
    numbers = [gaq.assign(worker) for worker in (2, 1, 1, 2, 3)]
    assert numbers == [0, 1, 2, 3, 4]
    gaq.done(1, _at(200))
    gaq.done(4, _at(500))
    assert [g.number for g in gaq.pending()] == [0, 1, 2, 3, 4] and gaq.lwm is None
    assert [g.number for g in gaq.gaps()] == [1, 4]
    gaq.done(0, _at(100))
    assert [(g.number, g.worker, g.done) for g in gaq.pending()] == [
        (2, 1, False), (3, 2, False), (4, 3, True),
    ]  # fmt: skip
    lwm = gaq.lwm
    assert lwm is not None and lwm.number == 1 and lwm.end == _at(200)
    gaq.done(2, _at(300))
    gaq.done(3, _at(400))
    assert gaq.pending() == [] and gaq.gaps() == []
    lwm = gaq.lwm
    assert lwm is not None and lwm.number == 4 and lwm.end == _at(500)
    last = gaq.last_done(2)
    assert last is not None and last.number == 3


def _offsets(path: Path) -> tuple[dict[int, int], dict[int, int]]:
    """Where each transaction's GTID event starts and where its Xid ends, by GTID number."""
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    gno = 0
    for position, end, event in BinlogFileReader(path):
        if isinstance(event, Gtid):
            gno = event.gno
            starts[gno] = position
        elif isinstance(event, Xid):
            ends[gno] = end
    return starts, ends


def test_t44_positions_stop_at_the_first_transaction_not_committed(tmp_path: Path) -> None:
    """T44 (WL5569.SSS.1): T0 and T1 are held while T2, later, commits on the third worker;
    the checkpointed positions (Relay_Log_Pos, Exec_Source_Log_Pos) stay before T0 and never
    go back. Once T0 commits, the mark moves to where T1 starts, and that checkpoint (taken
    after T2's commit, since a checkpoint is written only when the mark moves, as MySQL's
    ``mta_checkpoint_routine`` does) shows T2 as a gap of its worker; once T1 commits the
    positions move to the end of T2. The worker rows say which worker committed what."""
    stream = Stream()
    table, rows = stream.table, stream.rows
    t0 = stream.transaction(1, _update(table, rows[3], 1, 333))
    t1 = stream.transaction(2, _update(table, rows[1], 1, 111))
    t2 = stream.transaction(3, _update(table, rows[2], 1, 222))
    stream.write(tmp_path, t0, t1, t2)
    [relay_file] = sorted((tmp_path / "source").glob("*.0*"))
    starts, ends = _offsets(relay_file)
    engine = RecordingEngine()
    release_t0 = engine.faults.hold_apply[t0.gno] = threading.Event()
    release_t1 = engine.faults.hold_apply[t1.gno] = threading.Event()
    replica = MtaReplica(tmp_path / "data", workers=3, commit_order=False, engine=engine)
    replica.settings.set_internal("replica_checkpoint_period", 1)
    try:
        replica.start()
        assert replica.wait_for(f"{UUID}:{t2.gno}")
        before = list(replica.checkpoints)
        release_t0.set()
        assert replica.wait_for(f"{UUID}:1-{t0.gno}")
        assert wait_until(lambda: replica.status.snapshot().relay_log_pos == starts[t1.gno])
        held = list(replica.checkpoints)
        release_t1.set()
        assert replica.wait_for(f"{UUID}:1-{t2.gno}")
        replica.stop()
        assert replica.exits == []
    finally:
        release_t0.set()
        release_t1.set()
        replica.close()
    assert before and all(c.relay_log_pos <= starts[t0.gno] for c in before)
    assert all(c.relay_log_pos <= starts[t1.gno] for c in held)
    checkpoints = replica.checkpoints
    positions = [c.relay_log_pos for c in checkpoints]
    assert positions == sorted(positions)  # never back
    last: Checkpoint = checkpoints[-1]
    assert (last.relay_log_file, last.relay_log_pos) == (relay_file.name, ends[t2.gno])
    assert (last.source_log_file, last.source_log_pos) == (relay_file.name, ends[t2.gno])
    status = replica.status.snapshot()
    assert (status.relay_log_file, status.relay_log_pos) == (relay_file.name, ends[t2.gno])
    assert [w.id for w in last.workers] == [1, 2, 3]
    assert all(not w.has_gaps and w.checkpoint_relay_log_pos == ends[t2.gno]
               for w in last.workers)  # fmt: skip
    assert {w.relay_log_pos for w in last.workers} == {ends[t.gno] for t in (t0, t1, t2)}
    [gap_view] = [c for c in held if c.relay_log_pos == starts[t1.gno]][-1:]
    assert [w.has_gaps for w in gap_view.workers].count(True) == 1  # T2 done after the mark
    assert WAIT > 0
