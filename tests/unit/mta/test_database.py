"""``replica_parallel_type=DATABASE`` for the legacy applier (WL#5569).

The partition rule is checked alone (``PartitionHash``), then whole channels apply relay logs
made of two generated sources, each with its own database and server UUID, whose files are
interleaved. The engine records every begin and commit by GTID; the checks hold for every
interleaving the threads may take, so no test orders threads with sleeps.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.mta.databases import databases_of
from spark_replica.applier_core.mta.partitions import (
    MAX_DBS_IN_EVENT_MTS,
    Claim,
    PartitionAdmission,
    PartitionHash,
    partitions_of,
)
from spark_replica.applier_core.storage import InMemoryEngine, StoreSession, TransactionRef
from spark_replica.tools.generator.simulate import (
    GeneratedTransaction,
    WorkloadSpec,
    simulate,
)
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.csa_apply.harness import WAIT, Content, copy_into_relay_log
from tests.unit.mta.harness import MtaReplica, channel_threads
from tests.unit.provider.helpers import ITEMS, query, rows

A, B, C = frozenset({"a"}), frozenset({"b"}), frozenset({"c"})

# -- the rule alone ---------------------------------------------------------------------------


def test_a_new_database_goes_to_the_least_loaded_worker() -> None:
    """WL5569.CGAP.1 / decision 4.11: a database with no ongoing transaction goes to the
    worker with the fewest ongoing transactions (the lowest-numbered among equals)."""
    aph = PartitionHash(3)
    assert aph.admit(A).worker == 0
    assert aph.admit(A).worker == 0  # ongoing: stays
    assert aph.admit(B).worker == 1
    assert aph.admit(C).worker == 2
    assert aph.admit(frozenset({"d"})).worker == 1  # loads 2, 1, 1
    assert [aph.load(w) for w in range(3)] == [2, 2, 1]


def test_a_database_with_ongoing_transactions_stays_with_its_worker() -> None:
    """WL5569.APH.1: (P_id, N, W_id): the same database goes to the same worker while N > 0,
    however loaded that worker is."""
    aph = PartitionHash(2)
    claims = [aph.admit(A) for _ in range(5)]
    assert {c.worker for c in claims} == {0}
    assert aph.owner("a") == (0, 5)
    assert aph.admit(B).worker == 1
    assert aph.admit(A).worker == 0


def test_counts_drop_on_commit_and_a_free_database_moves() -> None:
    """WL5569.CGEP.1: every end lowers the counts its transaction raised; a database whose
    count reaches 0 leaves the APH and may then go to another worker."""
    aph = PartitionHash(2)
    first, second = aph.admit(A), aph.admit(A)
    busy = aph.admit(B)
    aph.ended(first)
    assert aph.owner("a") == (0, 1)
    aph.ended(second)
    assert aph.owner("a") is None
    assert aph.running == 1
    aph.admit(B)  # worker 1: load 2
    assert aph.admit(A).worker == 0
    aph.ended(busy)
    assert aph.owner("b") == (1, 1)


def test_a_transaction_across_workers_waits_then_runs_on_one() -> None:
    """WL5569.FALLBACK.1, R1.A/U.A.1: T1 = a (worker 0), T2 = b (worker 1), T3 = a+b waits
    until one of the two workers is done with its database, then runs on the other; later
    transactions of a and b follow it on that worker."""
    aph = PartitionHash(2)
    t1, t2 = aph.admit(A), aph.admit(B)
    assert not aph.runnable(A | B)
    with pytest.raises(RuntimeError):
        aph.admit(A | B)
    aph.ended(t1)
    assert aph.runnable(A | B)
    t3 = aph.admit(A | B)
    assert t3.worker == 1
    assert aph.owner("a") == (1, 1)
    assert aph.owner("b") == (1, 2)
    assert aph.admit(A).worker == 1
    aph.ended(t2)
    assert aph.runnable(A | B)  # a and b now live on worker 1 only


def test_unknown_databases_run_alone() -> None:
    """WL5569.FALLBACK.2, R1.C, DDL.1: a transaction whose databases cannot be told (none,
    more than MAX_DBS_IN_EVENT_MTS, an old source's DDL) waits for everything before it, and
    everything after it waits for it."""
    assert partitions_of(None) is None
    assert partitions_of(()) is None
    assert partitions_of(f"d{i}" for i in range(MAX_DBS_IN_EVENT_MTS + 1)) is None
    assert partitions_of(["x", "x", "y"]) == frozenset({"x", "y"})
    aph = PartitionHash(2)
    t1 = aph.admit(A)
    assert not aph.runnable(None)
    aph.ended(t1)
    alone = aph.admit(None)
    assert not aph.runnable(B)
    assert not aph.runnable(None)
    aph.ended(alone)
    assert aph.runnable(B)
    assert aph.running == 0


def test_admission_waits_for_the_end_and_interrupt_wakes_it() -> None:
    """The thread-safe side: a coordinator waiting for a database held by another worker
    starts once that worker reports the end; ``interrupt`` ends every wait with None."""
    admission = PartitionAdmission(2)
    t1 = admission.admit(A)
    assert t1 == Claim(0, A)
    admission.admit(B)
    result: list[Claim | None] = []
    waiter = threading.Thread(target=lambda: result.append(admission.admit(A | B)),
                              name="test-database-waiter")  # fmt: skip
    waiter.start()
    admission.ended(t1)
    waiter.join(WAIT)
    assert result == [Claim(1, A | B)]
    assert admission.waits <= 1
    admission.interrupt()
    assert admission.admit(C) is None


# -- whole channels ---------------------------------------------------------------------------


class GtidTimeline(InMemoryEngine):
    """Records every ``("begin", gtid)`` and ``("commit", gtid)`` in the order they happened
    (a commit once it is visible); ``hold_commit[gtid]`` is waited for before that commit,
    ``began[gtid]`` set when that transaction begins."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.timeline: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.hold_commit: dict[str, threading.Event] = {}
        self.began: dict[str, threading.Event] = {}

    def session(self, name: str) -> StoreSession:
        return _TimelineSession(self, name)


class _TimelineSession(StoreSession):
    def __init__(self, engine: GtidTimeline, name: str) -> None:
        super().__init__(engine.store, name)
        self._recorder = engine

    def begin(self, trx: TransactionRef) -> None:
        with self._recorder.lock:
            self._recorder.timeline.append(("begin", trx.gtid))
        super().begin(trx)
        began = self._recorder.began.get(trx.gtid)
        if began is not None:
            began.set()

    def commit(self, *, durable: bool = True) -> None:
        gtid = self.transaction.gtid if self.transaction else ""
        hold = self._recorder.hold_commit.get(gtid)
        if hold is not None:
            assert hold.wait(WAIT), f"the commit of {gtid} was held too long"
        super().commit(durable=durable)
        with self._recorder.lock:
            self._recorder.timeline.append(("commit", gtid))


UUID_A = "aaaaaaaa-0000-11e1-9e33-c80aa9429562"
UUID_B = "bbbbbbbb-0000-11e1-9e33-c80aa9429562"

Stream = list[tuple[str, GeneratedTransaction]]


def _two_sources(tmp_path: Path, **spec: Any) -> tuple[Stream, Content]:
    """Relay logs of two sources (databases ``alpha`` and ``beta``), their files interleaved
    (a1, b1, a2, b2, ...); returns each transaction with its GTID in relay-log order, and the
    content both sources end with."""
    runs = []
    for name, uuid, seed in (("alpha", UUID_A, 3), ("beta", UUID_B, 4)):
        workload = WorkloadSpec(database=name, server_uuid=uuid, seed=seed, **spec)
        transactions, content = simulate(workload)
        files = write_binlogs(transactions, tmp_path / name, server_uuid=uuid, base=f"{name}-bin")
        runs.append((uuid, transactions, content, files))
    (uuid_a, trx_a, content_a, files_a), (uuid_b, trx_b, content_b, files_b) = runs
    assert len(files_a) > 2 and len(files_b) > 2
    order = [f for pair in zip(files_a, files_b, strict=False) for f in pair]
    longer = files_a if len(files_a) > len(files_b) else files_b
    order += longer[len(order) // 2 :]
    copy_into_relay_log(order, tmp_path / "data")
    stream: Stream = []
    for index in range(1, max(len(files_a), len(files_b)) + 1):  # file_index: from 1
        stream += [(f"{uuid_a}:{t.gno}", t) for t in trx_a if t.file_index == index]
        stream += [(f"{uuid_b}:{t.gno}", t) for t in trx_b if t.file_index == index]
    assert len(stream) == len(trx_a) + len(trx_b)
    return stream, {**content_a, **content_b}


def _replica(tmp_path: Path, engine: InMemoryEngine, workers: int = 4) -> MtaReplica:
    replica = MtaReplica(tmp_path / "data", workers=workers, commit_order=False, engine=engine)
    replica.settings.set_internal("replica_parallel_type", "DATABASE")
    return replica


def _apply(replica: MtaReplica, stream: Stream, content: Content) -> None:
    count_a = sum(1 for gtid, _ in stream if gtid.startswith(UUID_A))
    count_b = len(stream) - count_a
    try:
        replica.run_until_applied(f"{UUID_A}:1-{count_a},{UUID_B}:1-{count_b}")
        assert replica.content() == content
        assert channel_threads() == []
    finally:
        replica.close()


SPEC: dict[str, Any] = {"tables": 2, "rows_per_table": 20, "transactions": 200,
                        "conflict_share": 0.3, "ddl_every": 50, "rotate_every": 40,
                        "clients": 8}  # fmt: skip


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_two_databases_end_in_each_sources_content(tmp_path: Path, workers: int) -> None:
    """WL5569.CGAP.1/CGEP.1, DDL.1: two sources' databases, interleaved in the relay log,
    DDL included, end in exactly each source's content; every transaction of a database
    begins only after the one before it in the relay log committed (one database's
    transactions run in source order)."""
    stream, content = _two_sources(tmp_path, **SPEC)
    engine = GtidTimeline()
    _apply(_replica(tmp_path, engine, workers), stream, content)
    begins: dict[str, int] = {}
    commits: dict[str, int] = {}
    for i, (kind, gtid) in enumerate(engine.timeline):
        if kind == "begin":
            begins.setdefault(gtid, i)
        else:
            commits[gtid] = i
    assert sorted(commits) == sorted(gtid for gtid, _ in stream)
    for uuid in (UUID_A, UUID_B):
        own = [gtid for gtid, _ in stream if gtid.startswith(uuid)]
        for before, after in zip(own, own[1:], strict=False):
            assert commits[before] < begins[after], f"{after} began before {before} committed"


def test_two_databases_run_in_parallel(tmp_path: Path) -> None:
    """WL5569.APH.1, R3: a transaction of beta begins while one of alpha before it in the
    relay log has not committed: alpha's commit is held until beta's begins (it would wait
    forever if beta waited for alpha)."""
    stream, content = _two_sources(tmp_path, **{**SPEC, "ddl_every": 0})
    alpha = next(g for g, t in stream if g.startswith(UUID_A) and t.file_index == 2 and t.changes)
    beta = next(g for g, t in stream if g.startswith(UUID_B) and t.file_index == 2 and t.changes)
    engine = GtidTimeline()
    began = engine.began[beta] = threading.Event()
    engine.hold_commit[alpha] = began
    _apply(_replica(tmp_path, engine), stream, content)
    assert began.is_set()
    timeline = engine.timeline
    assert timeline.index(("begin", beta)) < timeline.index(("commit", alpha))
    assert [g for g, _ in stream].index(alpha) < [g for g, _ in stream].index(beta)


def test_restart_applies_only_what_is_missing(tmp_path: Path) -> None:
    """A second START under DATABASE scheduling skips every executed GTID: each transaction
    is applied once."""
    stream, content = _two_sources(tmp_path, **SPEC)
    replica = _replica(tmp_path, InMemoryEngine())
    _apply(replica, stream, content)
    replica.relay_logs = type(replica.relay_logs)(tmp_path / "data")
    _apply(replica, stream, content)


def test_xa_transactions_databases() -> None:
    """XA START opens a body as BEGIN does; XA COMMIT and XA ROLLBACK change the databases of
    a prepared transaction the coordinator does not see: they run alone."""
    first = [query("XA START 'a'"), ITEMS, rows([1]), query("XA END 'a'")]
    assert databases_of(first) == frozenset({"shop"})
    assert databases_of([query("XA COMMIT 'a'")]) is None
    assert databases_of([query("XA ROLLBACK 'a'")]) is None
