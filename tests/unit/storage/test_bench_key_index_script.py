"""``tests/bench/bench_key_index.py`` runs end to end with tiny sizes (the standard library's
stores, each in its own process, as the full run measures them) and prints every figure."""

from __future__ import annotations

import json

import pytest

from tests.helpers.scripts import bench_script


def test_quick_run_prints_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--rows", "3000", "--batches", "4", "--batch", "50", "--stores", "dict,sqlite"]
    with bench_script("bench_key_index") as script:
        assert script.main([*args, "--json"]) == 0
    figures = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [f["store"] for f in figures] == ["dict", "sqlite"]
    for found in figures:
        assert found["rows"] == 3000
        assert found["load_rows_per_s"] > 0 and found["operations_per_s"] > 0
    assert figures[1]["disk_mb"] > 0  # the SQLite file holds the keys


def test_an_unknown_store_is_refused() -> None:
    with bench_script("bench_key_index") as script, pytest.raises(SystemExit):
        script.main(["--stores", "redis"])
