"""Properties of the legacy applier on random workloads, as for the CSA: whatever the workload,
worker count, scheduling and commit-order setting, the final content is the source's (that of
serial application), every transaction commits exactly once, and with
replica_preserve_commit_order=ON commits follow the relay log (WL#6314, WL#5569, WL#7846)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.unit.csa_apply.faults import RecordingEngine
from tests.unit.csa_apply.harness import copy_into_relay_log, generate
from tests.unit.mta.harness import MtaReplica, channel_threads

workloads = st.builds(
    WorkloadSpec,
    tables=st.integers(2, 4),
    rows_per_table=st.integers(5, 30),
    transactions=st.integers(20, 160),
    changes_per_transaction=st.integers(1, 6),
    clients=st.integers(1, 8),
    conflict_share=st.floats(0.0, 0.6),
    large_share=st.sampled_from([0.0, 0.05]),
    large_size=st.just(30),
    ddl_every=st.sampled_from([0, 25]),
    rotate_every=st.sampled_from([0, 40]),
    dependency=st.sampled_from([Dependency.COMMIT_ORDER, Dependency.WRITESET]),
    seed=st.integers(0, 10_000),
    databases=st.integers(1, 2),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=workloads,
    workers=st.sampled_from([0, 1, 2, 3, 8]),
    by_database=st.booleans(),
    commit_order=st.booleans(),
)
def test_any_workload_ends_in_the_serial_content_once_each(
    spec: WorkloadSpec, workers: int, by_database: bool, commit_order: bool
) -> None:
    commit_order = commit_order and not by_database  # DATABASE with RPCO is refused (3031)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        transactions, content, files = generate(spec, root / "source")
        copy_into_relay_log(files, root / "data")
        engine = RecordingEngine()
        replica = MtaReplica(root / "data", workers=workers, commit_order=commit_order,
                             engine=engine)  # fmt: skip
        if by_database:
            replica.settings.set_internal("replica_parallel_type", "DATABASE")
        try:
            replica.run_until_applied(f"{spec.server_uuid}:1-{len(transactions)}")
            assert replica.content() == content
            assert replica.exits == []
        finally:
            replica.close()
        assert channel_threads() == []
        commits = engine.commits
        assert len(commits) == len(set(commits)), "a transaction committed twice"
        if commit_order and workers > 0:
            assert commits == sorted(commits)
