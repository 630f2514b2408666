"""``tests/bench/bench_iceberg_spike.py`` runs end to end with tiny sizes on the test run's
SparkSession, checks its results and prints every figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.scripts import bench_script

pytestmark = pytest.mark.spark


@pytest.mark.timeout(240)
def test_quick_run_prints_every_figure(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], pyiceberg_pool: None
) -> None:
    path = tmp_path / "figures.json"
    argv = ["--rows", "500", "--batch", "50", "--batches", "1", "--commits", "2",
            "--appends", "2", "--repeat", "1", "--json", str(path)]  # fmt: skip
    with bench_script("bench_iceberg_spike") as bench:
        code = bench.main(argv, spark=spark)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "checks: every result as expected" in out
    figures = json.loads(path.read_text())
    assert "session_start_s" not in figures  # only with a session of its own
    assert figures["append_commit_s"]["median_s"] > 0
    paths = figures["write_paths"]
    assert set(paths) == {"merge_v2", "delete_append_v2", "merge_v3", "delete_append_v3",
                          "merge_v2_copy_on_write"}  # fmt: skip
    assert {path["rows"] for path in paths.values()} == {510}
    assert paths["merge_v2"]["delete_files"] > 0  # merge-on-read wrote deletes
    assert paths["merge_v2_copy_on_write"]["delete_files"] == 0
    before, after = figures["reads"]["before"], figures["reads"]["after"]
    assert before["delete_files"] > 0 and after["delete_files"] == 0
    assert after["data_files"] == 1
    assert before["result"] == after["result"]
    assert before["pyiceberg_rows"] == after["pyiceberg_rows"] == 500 + 2 * 10
