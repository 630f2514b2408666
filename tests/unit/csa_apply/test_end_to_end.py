"""The Change Stream Applier applies generated workloads to exactly the source's final content
(issue: "a relay log of any generated workload applied by the CSA ends in exactly the expected
content"), with and without commit order, at several worker counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.csa.service import CsaChannel
from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.unit.csa_apply.harness import Replica, copy_into_relay_log, generate


def _apply_all(tmp_path: Path, spec: WorkloadSpec, **options: Any) -> None:
    """Apply the whole generated stream of ``spec`` with a CSA channel (``Replica`` options);
    it must end without error in the generator's content."""
    retries = options.pop("retries", None)
    variables: dict[str, int] = options.pop("variables", {})
    transactions, content, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    replica = Replica(tmp_path / "data", **options)
    if retries is not None:
        replica.settings.set_internal("replica_transaction_retries", retries)
    for name, value in variables.items():
        replica.settings.set_internal(name, value)
    try:
        replica.run_until_applied(f"{spec.server_uuid}:1-{len(transactions)}")
        assert replica.content() == content
    finally:
        replica.close()


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
@pytest.mark.parametrize("workers", [1, 4])
def test_generated_workload_ends_in_the_expected_content(
    tmp_path: Path, workers: int, commit_order: bool
) -> None:
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=300, conflict_share=0.3, seed=7)
    _apply_all(tmp_path, spec, workers=workers, commit_order=commit_order)


def test_conflicting_rows_under_wrong_dependency_data(tmp_path: Path) -> None:
    """Every transaction claims to depend on nothing (last_committed 0) while half the changes
    hit ten hot rows. With commit order, row locks, deadlock detection, the conflict manager
    (T65, T69) and retrying key errors once every earlier transaction has ended still give
    the source's content. (Without commit order, wrong dependency data lets conflicting
    transactions commit out of order; no replica can promise the source's content then.)"""
    spec = WorkloadSpec(tables=1, rows_per_table=20, transactions=400, conflict_share=0.5,
                        dependency=Dependency.BROKEN, seed=11)  # fmt: skip
    _apply_all(tmp_path, spec, workers=4, commit_order=True, retries=1000)


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_conflicting_rows_with_writeset_dependencies(tmp_path: Path, commit_order: bool) -> None:
    """WRITESET dependency data (a transaction depends on the last one that wrote its rows)
    with many conflicts: exact content with and without commit order."""
    spec = WorkloadSpec(tables=2, rows_per_table=30, transactions=400, conflict_share=0.5,
                        dependency=Dependency.WRITESET, clients=16, seed=5)  # fmt: skip
    _apply_all(tmp_path, spec, workers=8, commit_order=commit_order)


@pytest.mark.parametrize(
    "variables",
    [
        {"replica_applier_async_provider": 1},
        {"replica_applier_prefetcher": 1},
        {"replica_applier_async_provider": 1, "replica_applier_prefetcher": 1},
    ],
    ids=["async-provider", "prefetch-active", "both"],
)
def test_the_optional_provider_thread_and_prefetcher(
    tmp_path: Path, variables: dict[str, int]
) -> None:
    """The asynchronous provider (DES.TS.0040) and the prefetcher on the active file too
    (DES.PF.0010) change nothing in what is applied; relay log files rotate every 50
    transactions, so complete files are prefetched as well."""
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=300, conflict_share=0.3,
                        rotate_every=50, seed=9)  # fmt: skip
    _apply_all(tmp_path, spec, workers=4, commit_order=True, variables=variables)


def test_scheduling_cost_is_measured_per_transaction(tmp_path: Path) -> None:
    """OBS.STAT.SCHED: the channel times the scheduling of each transaction (its dispatch,
    the scheduler's enqueue and the work around each job), waits apart: every transaction
    counts once, and the cost is a small positive figure (bench_applier's target is 50 µs)."""
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=200, seed=3)
    transactions, content, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    replica = Replica(tmp_path / "data", workers=2)
    try:
        replica.start()
        channel = replica.handle
        assert isinstance(channel, CsaChannel)
        assert replica.wait_for(f"{spec.server_uuid}:1-{len(transactions)}")
        replica.stop()
        figures = channel.scheduler.statistics()
        assert figures.ended == len(transactions)
        assert figures.task_exec_ns > 0 and figures.pool_exec_ns >= figures.task_exec_ns
        assert figures.overhead_ns < channel.scheduling_ns() < 10_000_000
        assert replica.content() == content
    finally:
        replica.close()
