"""Tables without a primary key in generated workloads: DDL and Table_map without a key,
MySQL's WRITESET fallback to commit order for them, determinism, and unchanged streams
without them."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from spark_replica.applier_core.binlog.events import Gtid, Query
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.binlog.rows import RowsEvent, TableMapEvent
from spark_replica.tools.generator.clock import WritesetClock
from spark_replica.tools.generator.schema import Row
from spark_replica.tools.generator.simulate import (
    SERVER_UUID,
    Dependency,
    GeneratedTransaction,
    WorkloadSpec,
    simulate,
    simulate_with_tables,
)
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.generator.test_simulate import check_dependencies, replay
from tests.unit.generator.test_writer import replay as replay_files

_BASE = WorkloadSpec(
    tables=3, keyless_tables=1, rows_per_table=30, transactions=300, clients=8,
    conflict_share=0.3, ddl_every=120, rotate_every=110, dependency=Dependency.WRITESET,
    seed=13,
)  # fmt: skip


def _spec(dependency: Dependency = Dependency.WRITESET, **changes: Any) -> WorkloadSpec:
    return replace(_BASE, dependency=dependency, **changes)


def _keyless(trx: GeneratedTransaction) -> bool:
    return any(change.table.keyless for change in trx.changes)


def _by_key(tables: dict[str, dict[object, Row]]) -> dict[str, list[Row]]:
    """Every table's rows sorted by first column (the form ``simulate`` returns)."""
    return {
        name: sorted(rows.values(), key=lambda r: cast(int, r[0])) for name, rows in tables.items()
    }


def _digests(spec: WorkloadSpec, directory: Path) -> tuple[str, str]:
    """sha256 of the simulated stream and final content, and of the binlog files written."""
    transactions, content = simulate(spec)
    stream = hashlib.sha256(repr((transactions, content)).encode()).hexdigest()
    files = write_binlogs(transactions, directory, server_uuid=spec.server_uuid)
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return stream, digest.hexdigest()


# Computed before tables without a primary key existed: the option's default changes nothing.
_UNCHANGED = {
    "writeset_sbtest": (
        WorkloadSpec(
            tables=3,
            rows_per_table=30,
            transactions=200,
            clients=6,
            conflict_share=0.3,
            ddl_every=80,
            rotate_every=70,
            dependency=Dependency.WRITESET,
            seed=21,
        ),  # fmt: skip
        "9c1b4860087525f30accc50202f2ea3144e99a681b30c22c28b7165a6ce0a8e5",
        "b3d0e5b6cc78b37707cb40d5297148d1d9ca154784a323b89dbe3adf0cbb09d0",
    ),
    "commit_order_alltypes": (
        WorkloadSpec(
            tables=2,
            rows_per_table=20,
            transactions=120,
            clients=4,
            conflict_share=0.2,
            ddl_every=50,
            rotate_every=60,
            schema="alltypes",
            seed=22,
        ),  # fmt: skip
        "e53f27fa6c979965723ce65a6ac4036a9ab5721aa87b06dc22ee7da896991798",
        "e19bf6eeb0326b53d113231adad5a419b18d0be9712512533639aee3b7d30385",
    ),
}


@pytest.mark.parametrize("name", sorted(_UNCHANGED))
def test_no_keyless_tables_leaves_the_stream_unchanged(tmp_path: Path, name: str) -> None:
    spec, stream, files = _UNCHANGED[name]
    assert spec.keyless_tables == 0
    assert _digests(spec, tmp_path / "default") == (stream, files)
    explicit = replace(spec, keyless_tables=0)
    assert _digests(explicit, tmp_path / "explicit") == (stream, files)


@pytest.mark.parametrize("schema", ["sbtest", "alltypes"])
def test_keyless_tables_have_no_primary_key(tmp_path: Path, schema: str) -> None:
    """The first ``keyless_tables`` tables: CREATE TABLE without PRIMARY KEY, and Table_map
    events without primary-key metadata; full before and after images for every table."""
    spec = _spec(tables=3, keyless_tables=2, schema=schema, transactions=80)
    transactions, _, tables = simulate_with_tables(spec)
    keyless = {f"shop.{schema}1", f"shop.{schema}2"}
    assert {name for name, table in tables.items() if table.keyless} == keyless
    creates = {
        t.ddl.split("`")[3]: t.ddl for t in transactions if t.ddl and "CREATE TABLE" in t.ddl
    }
    assert set(creates) == {f"{schema}1", f"{schema}2", f"{schema}3"}
    for name, statement in creates.items():
        assert ("PRIMARY KEY" in statement) is (f"shop.{name}" not in keyless), statement
    assert creates[f"{schema}1"].endswith("\n)")

    files = write_binlogs(transactions, tmp_path, server_uuid=SERVER_UUID)
    maps: dict[str, set[tuple[int, ...]]] = {}
    queries: list[str] = []
    for path in files:
        for _, _, event in BinlogFileReader(path):
            if isinstance(event, TableMapEvent):
                maps.setdefault(f"{event.schema}.{event.table}", set()).add(event.primary_key)
            elif isinstance(event, Query):
                queries.append(event.query)
            elif isinstance(event, RowsEvent):
                assert event.table_map is not None
                everything = (1 << len(event.table_map.columns)) - 1
                assert event.columns_present == everything
                assert event.columns_after in (None, everything)
    assert maps == {name: {()} if name in keyless else {(0,)} for name in tables}
    assert [q for q in queries if "CREATE TABLE" in q] == list(creates.values())


@pytest.mark.parametrize("compression", [False, True])
def test_keyless_workload_replays_to_the_expected_content(
    tmp_path: Path, compression: bool
) -> None:
    """Updates and deletes hit keyless rows; replaying the stream (and the binlog files read
    back) by whole before image gives the content ``simulate`` returns."""
    spec = _spec()
    transactions, content = simulate(spec)
    kinds = {c.kind for t in transactions for c in t.changes if c.table.keyless}
    assert kinds == {"insert", "update", "delete"}
    tables = replay(transactions)
    assert _by_key(tables) == content
    files = write_binlogs(transactions, tmp_path, server_uuid=SERVER_UUID, compression=compression)
    read, clock = replay_files(files)
    assert _by_key(read) == content
    assert clock == [(t.gno, t.last_committed, t.sequence_number) for t in transactions]


def test_writeset_falls_back_to_commit_order_for_keyless_tables() -> None:
    """With WRITESET, a transaction writing a keyless table gets the commit-order
    last_committed (the same interleaving under COMMIT_ORDER: dependency tracking draws no
    random numbers); the others still get WRITESET's, never more than commit order's."""
    writeset, content = simulate(_spec(Dependency.WRITESET))
    commit_order, same_content = simulate(_spec(Dependency.COMMIT_ORDER))
    assert content == same_content
    assert [(t.gno, t.changes, t.ddl) for t in writeset] == [
        (t.gno, t.changes, t.ddl) for t in commit_order
    ]
    check_dependencies(writeset)
    keyless = [(w, c) for w, c in zip(writeset, commit_order, strict=True) if _keyless(w)]
    assert len(keyless) > 50
    assert all(w.last_committed == c.last_committed for w, c in keyless)
    # Commit order, not a barrier: transactions that overlapped on the source stay parallel.
    assert any(w.last_committed < w.sequence_number - 1 for w, _ in keyless)
    keyed = [(w, c) for w, c in zip(writeset, commit_order, strict=True) if not _keyless(w)]
    assert all(w.last_committed <= c.last_committed for w, c in keyed)
    assert any(w.last_committed < c.last_committed for w, c in keyed if w.changes)


def test_writeset_clock_missing_keys() -> None:
    """MySQL's rule: missing keys keep the commit-order parent and update the history with
    the keys there are, without resetting it; an empty write set without missing keys is a
    barrier."""
    clock = WritesetClock()
    assert clock.last_committed(["a"], 1, commit_parent=0, ddl=False) == 0
    assert clock.last_committed(["b"], 2, commit_parent=1, ddl=False) == 0
    # Rows of a keyless table only: the commit-order parent, no barrier.
    assert clock.last_committed([], 3, commit_parent=1, ddl=False, missing_keys=True) == 1
    assert clock.last_committed(["c"], 4, commit_parent=3, ddl=False) == 0
    # Keyless rows and key "a": commit order; "a" now last written by 5.
    assert clock.last_committed(["a"], 5, commit_parent=2, ddl=False, missing_keys=True) == 2
    assert clock.last_committed(["a"], 6, commit_parent=5, ddl=False) == 5
    assert clock.last_committed(["b"], 7, commit_parent=6, ddl=False) == 2
    # No keys at all and nothing missing: depends on everything, and everything after on it.
    assert clock.last_committed([], 8, commit_parent=3, ddl=False) == 7
    assert clock.last_committed(["z"], 9, commit_parent=8, ddl=False) == 8


def test_same_seed_same_keyless_stream(tmp_path: Path) -> None:
    spec = _spec(seed=29)
    assert simulate(spec) == simulate(spec)
    assert _digests(spec, tmp_path / "a") == _digests(spec, tmp_path / "b")
    assert simulate(spec)[0] != simulate(_spec(seed=30))[0]


@pytest.mark.parametrize("dependency", [Dependency.COMMIT_ORDER, Dependency.BROKEN])
def test_other_dependency_modes_ignore_keys(dependency: Dependency) -> None:
    """Commit order and the broken data do not look at keys: a keyless table changes nothing."""
    keyless, _ = simulate(_spec(dependency))
    keyed, _ = simulate(_spec(dependency, keyless_tables=0))
    assert [(t.last_committed, t.sequence_number) for t in keyless] == [
        (t.last_committed, t.sequence_number) for t in keyed
    ]


def test_every_table_keyless_and_gtid_clock_in_files(tmp_path: Path) -> None:
    spec = _spec(tables=2, keyless_tables=2, transactions=150)
    transactions, _ = simulate(spec)
    work = [t for t in transactions if t.changes]
    assert all(_keyless(t) for t in work)
    files = write_binlogs(transactions, tmp_path, server_uuid=SERVER_UUID)
    clock = [
        (e.last_committed, e.sequence_number)
        for path in files
        for _, _, e in BinlogFileReader(path)
        if isinstance(e, Gtid)
    ]
    assert clock == [(t.last_committed, t.sequence_number) for t in transactions]


@pytest.mark.parametrize("count", [-1, 3])
def test_keyless_tables_must_be_within_the_tables(count: int) -> None:
    with pytest.raises(ValueError, match="keyless_tables"):
        WorkloadSpec(tables=2, keyless_tables=count)
