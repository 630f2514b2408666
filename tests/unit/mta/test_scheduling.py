"""When transactions start and commit under the legacy applier's LOGICAL_CLOCK scheduling.

The engine records every begin and commit in one timeline; the checks hold for every
interleaving the threads may take, so no test orders threads with sleeps.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from spark_replica.tools.generator.simulate import (
    Dependency,
    GeneratedTransaction,
    WorkloadSpec,
)
from tests.unit.csa_apply.harness import WAIT, copy_into_relay_log, generate
from tests.unit.mta.harness import MtaReplica, TimelineEngine

SPEC = WorkloadSpec(tables=3, rows_per_table=20, transactions=300, conflict_share=0.2,
                    ddl_every=100, rotate_every=80, clients=12, seed=23)  # fmt: skip


Run = tuple[TimelineEngine, list[GeneratedTransaction]]


def _run(tmp_path: Path, spec: WorkloadSpec, *, commit_order: bool, server_id: int = 2,
         engine: TimelineEngine | None = None) -> Run:  # fmt: skip
    transactions, content, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    engine = engine or TimelineEngine()
    replica = MtaReplica(tmp_path / "data", workers=4, commit_order=commit_order,
                         engine=engine, server_id=server_id)  # fmt: skip
    try:
        replica.run_until_applied(f"{spec.server_uuid}:1-{len(transactions)}")
        assert replica.content() == content
    finally:
        replica.close()
    return engine, transactions


@pytest.mark.parametrize("server_id", [2, 1], ids=["format-description", "sequence-restart"])
@pytest.mark.parametrize("dependency", [Dependency.COMMIT_ORDER, Dependency.WRITESET],
                         ids=["commit-order-clock", "writeset"])  # fmt: skip
@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_no_transaction_starts_before_its_commit_parent_committed(
    tmp_path: Path, commit_order: bool, dependency: Dependency, server_id: int
) -> None:
    """WL6314.GEN.2/SLAVE.2: a transaction begins only once every transaction of its file with
    sequence_number <= its last_committed has committed; WL6314.SLAVE.4: the first transaction
    of a new file (a new Format_description, or, with the replica's own server id, sequence
    numbers that start again) waits for everything before it."""
    spec = WorkloadSpec(tables=3, rows_per_table=20, transactions=300, conflict_share=0.2,
                        ddl_every=100, rotate_every=80, clients=12, dependency=dependency,
                        seed=23)  # fmt: skip
    engine, transactions = _run(tmp_path, spec, commit_order=commit_order, server_id=server_id)
    committed_at = {gno: i for i, (kind, gno) in enumerate(engine.timeline) if kind == "commit"}
    first_begin: dict[int, int] = {}
    for i, (kind, gno) in enumerate(engine.timeline):
        if kind == "begin":
            first_begin.setdefault(gno, i)
    assert sorted(committed_at) == [t.gno for t in transactions]
    for trx in transactions:
        must_wait = [
            d.gno
            for d in transactions
            if d.file_index < trx.file_index
            or (d.file_index == trx.file_index and d.sequence_number <= trx.last_committed)
        ]
        late = [d for d in must_wait if committed_at[d] > first_begin[trx.gno]]
        assert late == [], f"{trx.gno} began before {late} committed"


def test_with_commit_order_commits_follow_the_relay_log(tmp_path: Path) -> None:
    """WL#7846 / WL6314.CONS.1 policy 4: with replica_preserve_commit_order=ON the commit
    history is the relay log's."""
    engine, transactions = _run(tmp_path, SPEC, commit_order=True)
    assert engine.commits == [t.gno for t in transactions]


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_one_group_runs_in_parallel(tmp_path: Path, commit_order: bool) -> None:
    """WL6314.GEN.2: two transactions with the same commit parent run at once: the first
    one's commit is held until the second has begun (it would wait forever if the second
    waited for the first)."""
    transactions, _, _ = generate(SPEC, tmp_path / "probe")
    first, second = next(
        (a, b)
        for a, b in zip(transactions, transactions[1:], strict=False)
        if a.file_index == b.file_index and a.last_committed == b.last_committed and a.changes
    )
    engine = TimelineEngine()
    began = engine.began[second.gno] = threading.Event()
    engine.hold_commit[first.gno] = began
    _run(tmp_path, SPEC, commit_order=commit_order, engine=engine)
    assert began.wait(WAIT)
    timeline = engine.timeline
    assert timeline.index(("begin", second.gno)) < timeline.index(("commit", first.gno))
