"""``tests/bench/bench_row_deletes.py`` runs end to end with tiny sizes on the test run's
SparkSession: every way of writing row changes (MERGE v2 and v3, equality deletes) gives the
content the batches make, un-compacted and compacted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.scripts import bench_script

pytestmark = pytest.mark.spark


@pytest.mark.timeout(300)
def test_quick_run_checks_every_way_and_prints_its_figures(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "figures.json"
    argv = ["--rows", "300", "--batch", "40", "--flushes", "2", "--repeat", "1",
            "--json", str(path)]  # fmt: skip
    with bench_script("bench_row_deletes") as bench:
        code = bench.main(argv, spark=spark)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "checks: every answer equals the content the batches make" in out
    results = json.loads(path.read_text())["results"]
    assert set(results) == {"merge_v2", "merge_v3", "matched_v3", "delete_v3", "equality_v2"}
    for figures in results.values():
        assert len(figures["flush_seconds"]) == 2
        assert figures["uncompacted"]["count_sum"]["rows"][0][0] == 300
        assert figures["compacted"]["lookup"]["rows"] == figures["uncompacted"]["lookup"]["rows"]
        assert figures["compaction_seconds"] > 0
