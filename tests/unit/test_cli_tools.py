"""`spark-replica generate` and `spark-replica binlog show|rows`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spark_replica.server.cli import log_levels, main
from spark_replica.tools.generator.simulate import WorkloadSpec, simulate

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "binlogs"


def test_generate_writes_binlogs_and_expected_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "gen"
    args = ["generate", "--out", str(out), "--transactions", "120", "--rows-per-table", "20",
            "--rotate-every", "60", "--seed", "5", "--schema", "sbtest"]  # fmt: skip
    assert main(args) == 0
    transactions, content = simulate(
        WorkloadSpec(transactions=120, rows_per_table=20, rotate_every=60, seed=5)
    )
    files = sorted({f"binlog.{t.file_index:06d}" for t in transactions})
    assert len(files) == 2
    assert f"wrote {len(transactions)} transactions" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == [*files, "binlog.index", "expected"]
    for table, rows in content.items():
        lines = (out / "expected" / f"{table}.jsonl").read_text().splitlines()
        assert [json.loads(line)["id"] for line in lines] == [r[0] for r in rows]
        assert json.loads(lines[0]) == dict(zip(["id", "k", "c", "pad"], rows[0], strict=True))


def test_binlog_show_lists_events(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["binlog", "show", str(FIXTURES / "transaction_compression.000001")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Log_name\tPos\tEvent_type\tServer_id\tEnd_log_pos\tInfo"
    assert lines[1] == "transaction_compression.000001\t4\tFormat_desc\t1\t126\t" \
        "Server ver: 8.0.32, Binlog ver: 4"  # fmt: skip
    assert lines[4].split("\t")[2:] == [
        "Transaction_payload", "1", "431", "compression='ZSTD', decompressed_size=179 bytes",
    ]  # fmt: skip


def test_binlog_rows_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["binlog", "rows", str(FIXTURES / "mysql-enum-string-set.000001")]) == 0
    changes = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert changes and {c["op"] for c in changes} <= {"insert", "update", "delete"}
    first = changes[0]
    assert set(first) == {"gtid", "db", "table", "op", "before", "after"}


def test_damaged_file_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["binlog", "show", str(FIXTURES / "binlog_truncated_event.000001")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("spark-replica: truncated event")
    assert "binlog_truncated_event.000001" in err


def test_log_level_names_the_root_level_and_single_loggers() -> None:
    assert log_levels("info") == ("INFO", {})
    assert log_levels("WARNING,spark_replica.x=debug, py4j = error") == (
        "WARNING",
        {"spark_replica.x": "DEBUG", "py4j": "ERROR"},
    )
    assert log_levels("a.b=DEBUG") == ("WARNING", {"a.b": "DEBUG"})
