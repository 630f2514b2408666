"""The simulated source: valid dependency data, exact final content, determinism."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from spark_replica.applier_core.binlog.constants import ColumnType as C
from spark_replica.tools.generator.schema import alltypes_table
from spark_replica.tools.generator.simulate import (
    Dependency,
    GeneratedTransaction,
    WorkloadSpec,
    simulate,
)

Key = tuple[str, object]


def replay(transactions: list[GeneratedTransaction]) -> dict[str, dict[object, tuple[object, ...]]]:
    """Apply the transactions one by one, checking every before image against the data."""
    tables: dict[str, dict[object, tuple[object, ...]]] = defaultdict(dict)
    for trx in transactions:
        if trx.ddl and "ADD COLUMN" in trx.ddl:
            name = trx.ddl.split("`")[3]
            qualified = f"{trx.ddl_database}.{name}"
            tables[qualified] = {k: (*v, None) for k, v in tables[qualified].items()}
        for change in trx.changes:
            rows = tables[change.table.qualified]
            if change.kind == "insert":
                assert change.after is not None
                assert change.after[0] not in rows
                rows[change.after[0]] = change.after
            else:
                assert change.before is not None
                assert rows[change.before[0]] == change.before
                if change.kind == "update":
                    assert change.after is not None
                    rows[change.before[0]] = change.after
                else:
                    del rows[change.before[0]]
    return tables


def keys_of(trx: GeneratedTransaction) -> set[Key]:
    keys: set[Key] = set()
    for c in trx.changes:
        row = c.before if c.before is not None else c.after
        assert row is not None
        keys.add((c.table.qualified, row[0]))
    return keys


def check_dependencies(transactions: list[GeneratedTransaction]) -> None:
    """A transaction's last_committed covers every earlier transaction it conflicts with, and
    the last DDL before it."""
    by_file: dict[int, list[GeneratedTransaction]] = defaultdict(list)
    for trx in transactions:
        by_file[trx.file_index].append(trx)
    for trxs in by_file.values():
        assert [t.sequence_number for t in trxs] == list(range(1, len(trxs) + 1))
        writer: dict[Key, int] = {}
        barrier = 0  # the last DDL: everything after it depends on it
        for trx in trxs:
            assert 0 <= trx.last_committed < trx.sequence_number
            assert trx.last_committed >= barrier, (trx.gno, "depends on the DDL before it")
            if trx.ddl:
                assert trx.last_committed == trx.sequence_number - 1
                barrier = trx.sequence_number
            for key in keys_of(trx):
                if key in writer:
                    assert trx.last_committed >= writer[key], (trx.gno, key)
                writer[key] = trx.sequence_number


@pytest.mark.parametrize("dependency", [Dependency.COMMIT_ORDER, Dependency.WRITESET])
@pytest.mark.parametrize("schema", ["sbtest", "alltypes"])
def test_replay_gives_the_final_content(dependency: Dependency, schema: str) -> None:
    spec = WorkloadSpec(
        tables=3, rows_per_table=50, transactions=400, clients=6, conflict_share=0.3,
        ddl_every=150, rotate_every=120, schema=schema, dependency=dependency, seed=7,
    )  # fmt: skip
    transactions, content = simulate(spec)
    assert [t.gno for t in transactions] == list(range(1, len(transactions) + 1))
    tables = replay(transactions)
    assert {name: [rows[k] for k in sorted(rows)] for name, rows in tables.items()} == content
    check_dependencies(transactions)
    loads = spec.tables * -(-spec.rows_per_table // spec.load_batch)
    assert len([t for t in transactions if t.changes]) == loads + spec.transactions
    assert {t.file_index for t in transactions} == {1, 2, 3, 4}


def test_same_seed_same_stream() -> None:
    spec = WorkloadSpec(transactions=200, seed=3)
    assert simulate(spec) == simulate(spec)
    assert simulate(spec)[0] != simulate(WorkloadSpec(transactions=200, seed=4))[0]


def test_concurrent_clients_give_parallel_windows() -> None:
    """With many clients and few conflicts, transactions share commit parents."""
    spec = WorkloadSpec(transactions=500, clients=8, conflict_share=0.0, rows_per_table=1000)
    transactions, _ = simulate(spec)
    workload = [t for t in transactions if t.changes][10:]
    shared = sum(1 for t in workload if t.sequence_number - t.last_committed > 1)
    assert shared > len(workload) // 2


def test_writeset_finds_more_parallelism_than_commit_order() -> None:
    def spec(dependency: Dependency) -> WorkloadSpec:
        return WorkloadSpec(
            transactions=400, clients=4, conflict_share=0.05, rows_per_table=500, seed=11,
            dependency=dependency,
        )  # fmt: skip

    commit, _ = simulate(spec(Dependency.COMMIT_ORDER))
    writeset, _ = simulate(spec(Dependency.WRITESET))

    def width(ts: list[GeneratedTransaction]) -> float:
        work = [t for t in ts if t.changes]
        return sum(t.sequence_number - t.last_committed for t in work) / len(work)

    assert width(writeset) > width(commit)
    check_dependencies(writeset)


def test_single_client_is_serial() -> None:
    transactions, _ = simulate(WorkloadSpec(transactions=100, clients=1))
    assert all(t.last_committed == t.sequence_number - 1 for t in transactions)


def test_broken_dependency_data_claims_no_dependencies() -> None:
    transactions, _ = simulate(WorkloadSpec(transactions=100, dependency=Dependency.BROKEN))
    work = [t for t in transactions if t.changes]
    assert all(t.last_committed == 0 for t in work)


def test_large_transactions() -> None:
    transactions, content = simulate(
        WorkloadSpec(transactions=50, large_share=0.2, large_size=300, seed=5)
    )
    sizes = [len(t.changes) for t in transactions if t.changes]
    assert max(sizes) == 300
    assert replay(transactions) and content


def test_alltypes_has_a_column_of_every_row_type() -> None:
    """The all-types table covers every column type a rows event carries (binlog issue §2)."""
    columns = alltypes_table("db", 1).columns
    kinds = {c.column_type for c in columns}
    wanted = {
        C.TINY, C.SHORT, C.INT24, C.LONG, C.LONGLONG, C.NEWDECIMAL, C.FLOAT, C.DOUBLE, C.BIT,
        C.YEAR, C.DATE, C.TIME2, C.DATETIME2, C.TIMESTAMP2, C.STRING, C.VARCHAR, C.BLOB,
        C.JSON, C.GEOMETRY, C.VECTOR,
    }  # fmt: skip
    assert wanted <= kinds
    assert {c.column_type for c in columns if c.unsigned} >= {C.TINY, C.LONG, C.LONGLONG}
    assert {c.sql_type.split("(")[0] for c in columns} >= {"ENUM", "SET", "BINARY", "TEXT"}


def _spread(dependency: Dependency = Dependency.WRITESET) -> WorkloadSpec:
    """Seven tables over three databases (3, 2 and 2 tables), with DDL and rotations."""
    return WorkloadSpec(
        tables=7, databases=3, rows_per_table=20, transactions=300, clients=6,
        conflict_share=0.3, ddl_every=100, rotate_every=90, large_share=0.05, large_size=30,
        dependency=dependency, seed=17,
    )  # fmt: skip


@pytest.mark.parametrize("dependency", [Dependency.COMMIT_ORDER, Dependency.WRITESET])
def test_databases_each_transaction_changes_one(dependency: Dependency) -> None:
    spec = _spread(dependency)
    transactions, content = simulate(spec)
    with_changes = [t for t in transactions if t.changes]
    assert all(len({c.table.schema for c in t.changes}) == 1 for t in with_changes)
    workload = with_changes[-spec.transactions :]
    per_database = Counter(t.changes[0].table.schema for t in workload)
    assert set(per_database) == {"shop1", "shop2", "shop3"}
    assert min(per_database.values()) > spec.transactions // 5  # picked uniformly
    tables = replay(transactions)
    assert {name: [rows[k] for k in sorted(rows)] for name, rows in tables.items()} == content
    check_dependencies(transactions)


def test_databases_setup_creates_every_database_and_its_tables() -> None:
    transactions, content = simulate(_spread())
    ddl = [(t.ddl_database, t.ddl) for t in transactions if t.ddl]
    assert ddl[:3] == [(f"shop{i}", f"CREATE DATABASE `shop{i}`") for i in (1, 2, 3)]
    dealt = [(f"shop{(i - 1) % 3 + 1}", f"sbtest{i}") for i in range(1, 8)]  # round-robin
    creates, alters = ddl[3:10], ddl[10:]
    assert all(statement.startswith(f"CREATE TABLE `{db}`.") for db, statement in creates)
    assert [(db, statement.split("`")[3]) for db, statement in creates] == dealt
    assert alters and all(statement.startswith(f"ALTER TABLE `{db}`.") for db, statement in alters)
    assert sorted(content) == sorted(f"{db}.{name}" for db, name in dealt)


def test_one_database_keeps_its_plain_name() -> None:
    spec = WorkloadSpec(transactions=20, rows_per_table=5)
    assert spec.database_names == ("shop",)
    transactions, content = simulate(spec)
    assert transactions[0].ddl == "CREATE DATABASE `shop`"
    assert sorted(content) == ["shop.sbtest1", "shop.sbtest2"]


@pytest.mark.parametrize("count", [0, -1, 4])
def test_databases_must_be_within_the_tables(count: int) -> None:
    with pytest.raises(ValueError, match="databases must be between 1 and tables"):
        WorkloadSpec(tables=3, databases=count)
