"""Generated binlogs read back with the codec replay to exactly the expected content."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from spark_replica.applier_core.apply.serial import SerialApplier
from spark_replica.applier_core.binlog.events import Gtid, Query, TransactionPayload
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.binlog.payload import payload_events
from spark_replica.applier_core.binlog.rows import RowKind, RowsEvent
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.tools.generator.simulate import (
    SERVER_UUID,
    Dependency,
    WorkloadSpec,
    simulate,
)
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.csa_apply.harness import engine_content

Rows = dict[str, dict[object, tuple[object, ...]]]


def replay(files: list[Path]) -> tuple[Rows, list[tuple[int, int, int]]]:
    tables: Rows = defaultdict(dict)
    clock: list[tuple[int, int, int]] = []
    for path in files:
        reader = BinlogFileReader(path)
        for _, _, event in reader:
            events = (
                list(payload_events(event)) if isinstance(event, TransactionPayload) else [event]
            )
            for inner in events:
                if isinstance(inner, Gtid):
                    clock.append((inner.gno, inner.last_committed, inner.sequence_number))
                elif isinstance(inner, Query) and "ADD COLUMN" in inner.query:
                    name = inner.query.split("`")[1] + "." + inner.query.split("`")[3]
                    tables[name] = {k: (*v, None) for k, v in tables[name].items()}
                elif isinstance(inner, RowsEvent):
                    assert inner.table_map is not None
                    rows = tables[f"{inner.table_map.schema}.{inner.table_map.table}"]
                    for row in inner.rows:
                        if inner.kind is RowKind.INSERT:
                            rows[row[0]] = tuple(row)
                        elif inner.kind is RowKind.DELETE:
                            del rows[row[0]]
                        else:
                            before, after = row
                            assert rows[before[0]] == tuple(before)
                            rows[before[0]] = tuple(after)
    return tables, clock


@pytest.mark.parametrize("compression", [False, True])
@pytest.mark.parametrize("schema", ["sbtest", "alltypes"])
def test_generated_binlogs_replay_to_the_expected_content(
    tmp_path: Path, schema: str, compression: bool
) -> None:
    spec = WorkloadSpec(
        tables=2, rows_per_table=40, transactions=150, clients=4, ddl_every=60, rotate_every=70,
        schema=schema, dependency=Dependency.WRITESET, seed=3, large_share=0.05, large_size=200,
    )  # fmt: skip
    transactions, content = simulate(spec)
    files = write_binlogs(transactions, tmp_path, server_uuid=SERVER_UUID, compression=compression)
    assert [p.name for p in files] == ["binlog.000001", "binlog.000002", "binlog.000003"]
    assert (tmp_path / "binlog.index").read_text().splitlines() == [f"./{p.name}" for p in files]
    tables, clock = replay(files)
    assert {name: [rows[k] for k in sorted(rows)] for name, rows in tables.items()} == content
    assert clock == [(t.gno, t.last_committed, t.sequence_number) for t in transactions]


@pytest.mark.clients
def test_mariadb_binlog_reads_generated_files(tmp_path: Path) -> None:
    """An independent decoder agrees on the row changes (MariaDB's tool reads no MySQL JSON,
    so this uses the sbtest schema)."""
    import shutil
    import subprocess

    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    if tool is None:
        pytest.skip("mariadb-binlog is not installed")
    transactions, _ = simulate(WorkloadSpec(transactions=30, rows_per_table=10, seed=9))
    files = write_binlogs(transactions, tmp_path, server_uuid=SERVER_UUID)
    out = subprocess.run(
        [tool, "-v", "--base64-output=DECODE-ROWS", *map(str, files)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    changes = [c for t in transactions for c in t.changes]
    assert out.count("### INSERT INTO `shop`.") == sum(c.kind == "insert" for c in changes)
    assert out.count("### UPDATE `shop`.") == sum(c.kind == "update" for c in changes)
    assert out.count("### DELETE FROM `shop`.") == sum(c.kind == "delete" for c in changes)
    first = next(c for c in changes if c.kind == "insert")
    assert first.after is not None
    assert f"###   @3='{first.after[2]}'" in out


@pytest.mark.parametrize("compression", [False, True])
def test_databases_applied_by_the_serial_applier(tmp_path: Path, compression: bool) -> None:
    """A stream over three databases, written and applied by the serial applier, ends in
    exactly the simulated content, each table in its own database."""
    spec = WorkloadSpec(
        tables=5, databases=3, rows_per_table=30, transactions=250, clients=6,
        conflict_share=0.2, ddl_every=90, rotate_every=100, dependency=Dependency.WRITESET,
        seed=8,
    )  # fmt: skip
    transactions, content = simulate(spec)
    files = write_binlogs(transactions, tmp_path, server_uuid=SERVER_UUID, compression=compression)
    engine = InMemoryEngine()
    result = SerialApplier(engine).apply_files(files)
    assert result.committed == len(transactions)
    assert engine_content(engine) == content
    assert {name.split(".")[0] for name in content} == {"shop1", "shop2", "shop3"}
    tables, _ = replay(files)
    assert {name: [rows[k] for k in sorted(rows)] for name, rows in tables.items()} == content
