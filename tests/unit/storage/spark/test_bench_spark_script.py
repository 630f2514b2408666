"""``tests/bench/bench_spark_engine.py`` runs end to end with tiny sizes, on the test run's
SparkSession, and prints every figure as a positive number."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.scripts import bench_script

pytestmark = pytest.mark.spark

NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"


@pytest.fixture
def bench() -> Iterator[ModuleType]:
    with bench_script("bench_spark_engine") as module:
        yield module


def figure(out: str, pattern: str) -> float:
    """The number ``pattern`` (a regex with one ``NUMBER`` group) finds in ``out``."""
    found = re.search(pattern, out)
    assert found is not None, f"no match for {pattern!r} in:\n{out}"
    return float(found.group(1).replace(",", ""))


@pytest.mark.timeout(120)
def test_quick_run_prints_every_figure(
    bench: ModuleType, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "figures.json"
    argv = ["--rows", "2000", "--batches", "10", "--query-rows", "400", "--repeat", "2",
            "--transactions", "300", "--json", str(path)]  # fmt: skip
    code = bench.main(argv, spark=spark)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "machine: nproc=" in out and "spark: " in out
    assert "conversion is included in both" in out
    figures = [
        figure(out, rf"flush path: +{NUMBER} s"),
        figure(out, rf"flush path: .* s +{NUMBER} rows/s"),
        figure(out, rf"bulk write: +{NUMBER} s"),
        figure(out, rf"bulk write: .* s +{NUMBER} rows/s"),
        figure(out, rf"flush path / bulk write: {NUMBER}x rows/s; target >= 0.5x: (?:NOT )?met"),
        figure(out, rf"drain: {NUMBER} transactions/s"),
        figure(out, rf"transactions/s, {NUMBER} rows/s \(until durable\); target >= 3,000"),
        figure(out, rf"peak memory: Python process {NUMBER} MiB"),
    ]
    for label in ("full count", "point lookup by id", "group by k"):
        figures.append(figure(out, rf"{label} +{NUMBER} ms"))
        figures.append(figure(out, rf"{label} +[0-9.]+ ms +{NUMBER} ms"))
        figures.append(figure(out, rf"{label} +[0-9.]+ ms +[0-9.]+ ms +{NUMBER}x"))
    assert all(value > 0 for value in figures), figures
    assert "then 9 flushes of 40 row changes" in out
    assert "results: equal over many batches and compacted, and as committed" in out
    assert "checks: every part ends in the content committed" in out
    assert "ERROR" not in out

    written = json.loads(path.read_text())
    assert written["flush"]["rows"] == 2000 and written["flush"]["conversion_included"]
    assert written["flush"]["flush_rows_per_second"] > 0 < written["flush"]["ratio"]
    assert written["queries"]["batches"] == 10
    assert all(ratio > 0 for ratio in written["queries"]["ratios"].values())
    assert written["drain"]["transactions_per_second"] > 0
    assert written["drain"]["python_peak"] > 0
    assert written["errors"] == []


@pytest.mark.timeout(120)
def test_one_part_runs_alone(
    bench: ModuleType, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--parts 2`` runs only the queries, with ``--batch-changes`` changes per flush."""
    path = tmp_path / "figures.json"
    argv = ["--parts", "2", "--batches", "4", "--batch-changes", "15", "--query-rows", "300",
            "--repeat", "2", "--json", str(path)]  # fmt: skip
    assert bench.main(argv, spark=spark) == 0
    out = capsys.readouterr().out
    assert "then 3 flushes of 15 row changes" in out and "part 1" not in out
    assert "part 3" not in out
    written = json.loads(path.read_text())
    assert "flush" not in written and "drain" not in written
    assert written["queries"]["batch_changes"] == 15 and written["errors"] == []


def test_bad_arguments_are_rejected(bench: ModuleType) -> None:
    for argv in (["--rows", "0"], ["--batches", "x"], ["--query-rows", "10"], ["--parts", "4"],
                 ["--query-rows", "100", "--batch-changes", "200"]):  # fmt: skip
        with pytest.raises(SystemExit) as excinfo:
            bench.main(argv)
        assert excinfo.value.code == 2
