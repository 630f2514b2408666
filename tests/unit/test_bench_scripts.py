"""The benchmark scripts still run end to end (with tiny parameters)."""

from __future__ import annotations

import pytest

from tests.helpers.scripts import BENCH as BENCH_DIR
from tests.helpers.scripts import bench_script as load_script


def test_bench_directory_holds_no_tests() -> None:
    assert not list(BENCH_DIR.glob("test_*.py"))


def test_bench_frontend_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with load_script("bench_frontend") as bench:
        code = bench.main(["--iterations", "5", "--connections", "3", "--statements", "3"])
        labels = [label for label, _ in bench.STATEMENTS]
    out = capsys.readouterr().out
    assert code == 0, out
    assert "machine: nproc=" in out
    for label in labels:
        assert label in out
    assert "errors        0" in out
    assert "statements/s" in out


def test_bench_frontend_rejects_bad_arguments() -> None:
    with load_script("bench_frontend") as bench, pytest.raises(SystemExit) as excinfo:
        bench.main(["--iterations", "0"])
    assert excinfo.value.code == 2


def test_bench_receiver_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with load_script("bench_receiver") as bench:
        code = bench.main(["--transactions", "30", "--rounds", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "machine: nproc=" in out
    assert "round 1: raw " in out
    assert "receiver/raw " in out
