"""``tests/bench/bench_data_files.py`` runs end to end with tiny sizes on the test run's
SparkSession: both ways of appending give the rows the batches made, and it prints and
records its figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.scripts import bench_script

pytestmark = pytest.mark.spark


@pytest.mark.timeout(300)
@pytest.mark.parametrize("shape", ["salaries", "sbtest"])
def test_quick_run_checks_both_ways_and_prints_its_figures(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    path = tmp_path / "figures.json"
    argv = ["--shape", shape, "--rows", "200", "--flushes", "2", "--busy", "--json", str(path)]
    with bench_script("bench_data_files") as bench:
        code = bench.main(argv, spark=spark)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "checks: both tables hold the rows the batches made" in out
    assert "files vs sql:" in out
    figures = json.loads(path.read_text())["figures"]
    assert {way: len(each["wall"]) for way, each in figures.items()} == {"sql": 2, "files": 2}
