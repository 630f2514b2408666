"""``tests/bench/bench_key_index.py`` runs end to end with tiny sizes (the standard library's
stores and the project's LMDB key index, each in its own process, as the full run measures
them) and prints every figure."""

from __future__ import annotations

import json

import pytest

from tests.helpers.scripts import bench_script


def test_quick_run_prints_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    stores = "dict,sqlite,lmdb-index"
    args = ["--rows", "3000", "--batches", "4", "--batch", "50", "--stores", stores]
    with bench_script("bench_key_index") as script:
        assert script.main([*args, "--json"]) == 0
    figures = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [f["store"] for f in figures] == ["dict", "sqlite", "lmdb-index"]
    for found in figures:
        assert found["rows"] == 3000
        assert found["load_rows_per_s"] > 0 and found["operations_per_s"] > 0
    assert figures[1]["disk_mb"] > 0  # the SQLite file holds the keys
    assert figures[2]["disk_mb"] > 0


def test_codec_figures(capsys: pytest.CaptureFixture[str]) -> None:
    with bench_script("bench_key_index") as script:
        figures = script.codec_figures(repeat=1, number=10)
    assert figures["codec_encode_row"] > 0 and figures["row_bytes"] > 180


def test_an_unknown_store_is_refused() -> None:
    with bench_script("bench_key_index") as script, pytest.raises(SystemExit):
        script.main(["--stores", "redis"])
