"""replica_pending_jobs_size_max: the bytes of transactions queued to the legacy applier's
workers and not taken yet stay under the limit; one larger than the limit goes alone
(issue text §1; SV.slave_pending_jobs_size_max)."""

from __future__ import annotations

import threading
from pathlib import Path

from spark_replica.applier_core.mta.pending import STATE
from spark_replica.applier_core.storage import RowChange
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.unit.csa_apply.harness import WAIT, copy_into_relay_log, engine_content, generate
from tests.unit.csa_apply.test_conflicts import SPEC, Stream, _update
from tests.unit.mta.harness import MtaReplica, TimelineEngine, wait_until

UUID = SPEC.server_uuid
LIMIT = 1024


def _chain(stream: Stream, count: int) -> list[RowChange]:
    """``count`` updates of row 1, each from the row the one before left."""
    row = stream.rows[1]
    changes = []
    for value in range(1, count + 1):
        change = _update(stream.table, row, 1, 1000 + value)
        assert change.after is not None
        row = change.after
        changes.append(change)
    return changes


def test_queued_bytes_stay_under_the_limit(tmp_path: Path) -> None:
    """One worker holds T1; the coordinator queues the transactions after it (all in T1's
    commit group, so only the byte limit stops it) until one more would pass the limit, and
    waits there with the state 'Waiting for replica workers to free pending events'. Once T1
    goes on, everything is applied and nothing stays counted."""
    stream = Stream()
    changes = _chain(stream, 40)
    transactions = [stream.transaction(n, change) for n, change in enumerate(changes, 1)]
    stream.write(tmp_path, *transactions)
    engine = TimelineEngine()
    first = transactions[0].gno
    release = engine.faults.hold_apply[first] = threading.Event()
    began = engine.began[first] = threading.Event()
    replica = MtaReplica(tmp_path / "data", workers=1, commit_order=False, engine=engine)
    replica.settings.set_internal("replica_pending_jobs_size_max", LIMIT)
    try:
        channel = replica.start()
        [worker] = channel.workers
        assert began.wait(WAIT)  # the worker took T1: from now on it takes nothing
        # (Until the coordinator sees T1 taken it may still show the wait that came before.)
        assert wait_until(lambda: replica.status.snapshot().sql_state_text == STATE
                          and len(worker.queue) > 0)  # fmt: skip
        assert len(worker.queue) < len(transactions) - 1
        assert 0 < channel.pending.total <= LIMIT
        release.set()
        assert replica.wait_for(f"{UUID}:1-{transactions[-1].gno}")
        assert wait_until(lambda: channel.pending.total == 0)
    finally:
        replica.close()
    assert replica.rows("shop", "sbtest1")[0][1] == 1040


def test_transactions_larger_than_the_limit_go_alone(tmp_path: Path) -> None:
    """With the smallest limit, every transaction of a generated workload with large ones
    passes it: each waits until nothing is queued, then goes; the content is the source's."""
    spec = WorkloadSpec(tables=2, rows_per_table=30, transactions=150, large_share=0.1,
                        large_size=40, seed=12)  # fmt: skip
    transactions, content, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    replica = MtaReplica(tmp_path / "data", workers=4, commit_order=True)
    replica.settings.set_internal("replica_pending_jobs_size_max", LIMIT)
    try:
        channel = replica.start()
        assert replica.wait_for(f"{spec.server_uuid}:1-{len(transactions)}")
        assert channel.pending.total == 0
    finally:
        replica.close()
    assert engine_content(replica.engine) == content
