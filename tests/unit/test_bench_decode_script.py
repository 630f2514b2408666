"""``tests/bench/bench_decode.py`` runs end to end with tiny sizes and checks its row counts."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.scripts import bench_script


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    with bench_script("bench_decode") as module:
        yield module


def test_quick_run_prints_the_summary_and_reuses_its_cache(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--rows", "400", "--alltypes-rows", "60", "--dir", str(tmp_path)]
    assert bench.main(argv) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "machine: nproc=" in out
    assert "sbtest: WorkloadSpec(" in out and "alltypes: WorkloadSpec(" in out
    assert "generation: " in out and "simulate " in out
    assert "\nsummary\n" in out
    for row in ("sbtest    framing only", "sbtest    full decode", "alltypes  full decode"):
        assert row in out
    assert "target >= 150,000 rows/s (sbtest full decode): " in out
    assert "row counts: all match the generated ones" in out
    if shutil.which("mariadb-binlog"):
        assert "sbtest    mariadb-binlog" in out
        assert "ours/mariadb-binlog (sbtest rows/s): " in out
    else:
        assert "ours/mariadb-binlog: not measured" in out
    manifest = json.loads((tmp_path / "sbtest-400" / "manifest.json").read_text())
    assert sum(manifest["changes"].values()) >= 400

    # Second run: the sets come from the cache directory.
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("generation: reused from the cache directory") == 2
    assert "row counts: all match the generated ones" in out


def test_a_row_count_mismatch_fails(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--rows", "200", "--alltypes-rows", "0", "--dir", str(tmp_path)]
    assert bench.main(argv) == 0
    capsys.readouterr()
    path = tmp_path / "sbtest-200" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["changes"]["insert"] += 1
    path.write_text(json.dumps(manifest))
    assert bench.main(argv) == 1
    out = capsys.readouterr().out
    assert "ERROR: full decode found" in out
    assert "row counts: MISMATCH" in out


def test_plan_covers_the_requested_rows(bench: ModuleType) -> None:
    spec = bench.plan_spec("sbtest", 1_000_000)
    assert (spec.tables, spec.changes_per_transaction, spec.clients) == (4, 4, 8)
    assert spec.rows_per_table * spec.tables + spec.transactions * 4 >= 1_000_000


def test_bad_arguments_are_rejected(bench: ModuleType) -> None:
    with pytest.raises(SystemExit) as excinfo:
        bench.main(["--repeat", "0"])
    assert excinfo.value.code == 2
