"""The Change Stream Applier applies generated workloads on tables without a primary key (rows
found by their whole before image, WRITESET dependency data falling back to commit order for
transactions on them) to exactly the source's final content, with and without commit order."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.storage import TableRef
from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.unit.csa_apply.harness import Content, Replica, copy_into_relay_log, generate


def _apply_all(
    tmp_path: Path,
    spec: WorkloadSpec,
    *,
    workers: int,
    commit_order: bool,
    retries: int | None = None,
) -> None:
    """Apply the whole generated stream of ``spec``; it must end without error in the
    generator's content, with the keyless tables created without a primary key."""
    transactions, content, files = generate(spec, tmp_path / "source")
    keyless = {c.table.qualified for t in transactions for c in t.changes if c.table.keyless}
    assert len(keyless) == spec.keyless_tables
    touched = [
        c.kind for t in transactions[-spec.transactions :] for c in t.changes if c.table.keyless
    ]
    assert {"update", "delete", "insert"} <= set(touched)
    copy_into_relay_log(files, tmp_path / "data")
    replica = Replica(tmp_path / "data", workers=workers, commit_order=commit_order)
    if retries is not None:
        replica.settings.set_internal("replica_transaction_retries", retries)
    try:
        replica.run_until_applied(f"{spec.server_uuid}:1-{len(transactions)}")
        for name in keyless:
            schema, table = name.split(".")
            assert replica.engine.definition(TableRef(schema, table)).primary_key == ()
        got = replica.content()
        assert got == content, _first_difference(got, content)
    finally:
        replica.close()


def _first_difference(got: Content, want: Content) -> str:
    """Where the replica's content first differs from the source's, value types included."""
    for name in sorted(set(got) | set(want)):
        mine, theirs = got.get(name, []), want.get(name, [])
        if len(mine) != len(theirs):
            return f"{name}: {len(mine)} rows on the replica, {len(theirs)} on the source"
        for row, expected in zip(mine, theirs, strict=True):
            for column, (value, wanted) in enumerate(zip(row, expected, strict=False)):
                if value != wanted:
                    return (
                        f"{name} row {expected[0]!r} column {column}: replica has "
                        f"{type(value).__name__} {value!r}, source {type(wanted).__name__} "
                        f"{wanted!r}"
                    )
            if len(row) != len(expected):
                return f"{name} row {expected[0]!r}: {len(row)} columns, source {len(expected)}"
    return "no difference"


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
@pytest.mark.parametrize("seed", [3, 8])
def test_keyless_workload_ends_in_the_expected_content(
    tmp_path: Path, seed: int, commit_order: bool
) -> None:
    spec = WorkloadSpec(tables=3, keyless_tables=1, rows_per_table=20, transactions=300,
                        conflict_share=0.3, dependency=Dependency.WRITESET, seed=seed)  # fmt: skip
    _apply_all(tmp_path, spec, workers=4, commit_order=commit_order)


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_keyless_alltypes_with_ddl_and_rotation(tmp_path: Path, commit_order: bool) -> None:
    """Every column type in keyless rows (whole-row matching compares each value), with ADD
    COLUMN on the tables and new relay log files along the way."""
    spec = WorkloadSpec(tables=2, keyless_tables=1, rows_per_table=20, transactions=300,
                        conflict_share=0.3, ddl_every=100, rotate_every=80, schema="alltypes",
                        dependency=Dependency.WRITESET, clients=12, seed=4)  # fmt: skip
    _apply_all(tmp_path, spec, workers=4, commit_order=commit_order)


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_only_keyless_tables_with_many_conflicts(tmp_path: Path, commit_order: bool) -> None:
    spec = WorkloadSpec(tables=2, keyless_tables=2, rows_per_table=20, transactions=300,
                        conflict_share=0.5, dependency=Dependency.WRITESET, clients=16,
                        seed=6)  # fmt: skip
    _apply_all(tmp_path, spec, workers=4, commit_order=commit_order)


def test_keyless_rows_under_wrong_dependency_data(tmp_path: Path) -> None:
    """Every transaction claims to depend on nothing while half the changes hit ten hot
    keyless rows: with commit order, locks on whole rows and retries still give the source's
    content (as ``test_conflicting_rows_under_wrong_dependency_data`` for keyed rows)."""
    spec = WorkloadSpec(tables=1, keyless_tables=1, rows_per_table=20, transactions=400,
                        conflict_share=0.5, dependency=Dependency.BROKEN, seed=11)  # fmt: skip
    _apply_all(tmp_path, spec, workers=4, commit_order=True, retries=1000)
