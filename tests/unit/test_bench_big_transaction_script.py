"""``tests/bench/bench_big_transaction.py`` runs end to end with ``--quick`` on both engines,
reuses its cached relay log, and fails when the content is not the generated one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.scripts import bench_script

MIB = 1 << 20


@pytest.fixture
def bench() -> Iterator[ModuleType]:
    with bench_script("bench_big_transaction") as module:
        yield module


def test_quick_run_applies_the_transaction_within_the_event_memory_limit(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_thread_leaks: None
) -> None:
    path = tmp_path / "figures.json"
    argv = ["--quick", "--engine", "memory", "--dir", str(tmp_path / "cache"), "--json", str(path)]
    assert bench.main(argv) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    rows = bench.row_count(bench.QUICK_SIZE_MB)
    assert "machine: nproc=" in out
    assert f"1 transaction of {rows:,} row inserts" in out and "generated in " in out
    assert "effective event memory limit 1 MiB; commit order on; engine memory" in out
    assert re.search(r"time: executed after [0-9.]+ s \([0-9,]+ rows/s", out), out
    staged = re.search(
        rf"rows staged at once \(row locks held\): at most ([0-9,]+) of {rows:,}\n", out
    )
    assert staged is not None and int(staged.group(1).replace(",", "")) <= rows, out
    for name in ("applied", "durable", "content in the engine", "event memory"):
        assert f"check {name}: ok" in out
    assert "checks: every check passed" in out and "FAILED" not in out

    figures = json.loads(path.read_text())
    assert figures["machine"].startswith("machine: nproc=")
    assert figures["relay_log"]["rows"] == rows == figures["relay_log"]["expected"]["rows"]
    assert figures["relay_log"]["bytes"] > bench.QUICK_SIZE_MB * MIB
    run = figures["run"]
    assert run["effective_limit"] == MIB and run["errors"] == []
    memory = run["event_memory"]
    assert memory["limit"] == MIB and 0 < memory["peak"] <= MIB and memory["oversized"] == 0
    assert run["python_peak"] >= run["python_rss_start"] > 0
    assert run["executed_seconds"] > 0 and run["table_objects"] > rows * bench.PAYLOAD
    assert figures["timeline"] and figures["sampled"]["row_locks"] <= rows

    # Second run: the relay log comes from the cache directory.
    assert bench.main(argv[:-2]) == 0
    assert "reused from the cache directory" in capsys.readouterr().out


def test_a_checksum_mismatch_fails(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--size-mb", "2", "--engine", "memory", "--dir", str(tmp_path)]
    assert bench.main(argv) == 0
    capsys.readouterr()
    manifest = tmp_path / bench.set_name(2) / bench.MANIFEST
    written = json.loads(manifest.read_text())
    written["expected"]["sum_crc32"] += 1
    manifest.write_text(json.dumps(written))
    assert bench.main(argv) == 1
    out = capsys.readouterr().out
    assert "check content in the engine: FAILED: found {" in out
    assert "checks: 1 FAILED" in out


@pytest.mark.spark
@pytest.mark.timeout(180)
def test_quick_run_on_the_spark_engine(
    bench: ModuleType, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--size-mb", "4", "--dir", str(tmp_path)]
    assert bench.main(argv, spark=spark) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "engine spark" in out and re.search(r"; durable after [0-9.]+ s", out), out
    assert re.search(r"spark driver JVM: RSS [0-9,]+ MiB at START; peak [0-9,]+ MiB", out), out
    for name in ("applied", "durable", "content in the engine", "content in Spark",
                 "GTIDs recorded"):  # fmt: skip
        assert f"check {name}: ok" in out
    assert "checks: every check passed" in out


def test_bad_arguments_are_rejected(bench: ModuleType) -> None:
    for argv in (["--size-mb", "0"], ["--packet-mb", "2048"], ["--engine", "disk"],
                 ["--generate-only"]):  # fmt: skip
        with pytest.raises(SystemExit) as excinfo:
            bench.main(argv)
        assert excinfo.value.code == 2
