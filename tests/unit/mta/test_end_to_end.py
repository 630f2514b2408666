"""The legacy applier applies generated workloads to exactly the source's final content, with
0 (single-threaded, WL5569.R0), 1 and 4 workers, with and without commit order (WL#7846),
on COMMIT_ORDER and WRITESET dependency data (WL#6314), with DDL and relay log files that
rotate (each new file's Format_description restarts the logical clock, WL6314.SLAVE.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.unit.csa_apply.harness import copy_into_relay_log, generate
from tests.unit.mta.harness import MtaReplica, channel_threads


@pytest.mark.parametrize("dependency", [Dependency.COMMIT_ORDER, Dependency.WRITESET],
                         ids=["commit-order-clock", "writeset"])  # fmt: skip
@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
@pytest.mark.parametrize("workers", [0, 1, 4])
def test_generated_workload_ends_in_the_expected_content(
    tmp_path: Path, workers: int, commit_order: bool, dependency: Dependency
) -> None:
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=300, conflict_share=0.3,
                        ddl_every=60, rotate_every=70, dependency=dependency, clients=8,
                        seed=17)  # fmt: skip
    transactions, content, files = generate(spec, tmp_path / "source")
    assert len(files) > 1
    copy_into_relay_log(files, tmp_path / "data")
    replica = MtaReplica(tmp_path / "data", workers=workers, commit_order=commit_order)
    try:
        replica.run_until_applied(f"{spec.server_uuid}:1-{len(transactions)}")
        assert replica.content() == content
        assert channel_threads() == []
    finally:
        replica.close()


def test_restart_applies_only_what_is_missing(tmp_path: Path) -> None:
    """A second START reads what the relay log still holds (the files applied whole are
    purged; the last one stays) and skips every executed GTID in it: the content stays
    exactly the source's (each transaction applied once)."""
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=200, rotate_every=60, seed=4)
    transactions, content, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    replica = MtaReplica(tmp_path / "data", workers=4)
    try:
        for _ in range(2):
            replica.run_until_applied(f"{spec.server_uuid}:1-{len(transactions)}")
            assert replica.content() == content
    finally:
        replica.close()
