"""``make bench``'s pieces: the suite's command lines, and the lag benchmark with its chart
(the drain chart is checked with ``bench_applier.py``'s smoke test)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers.scripts import BENCH, bench_script


def test_the_suite_runs_each_script_with_its_sizes_and_json(tmp_path: Path) -> None:
    with bench_script("suite") as suite:
        steps = {step.name: step for step in suite.STEPS}
        full = suite.command(steps["drain-commit-order"], tmp_path, quick=False)
        quick = suite.command(steps["drain-commit-order"], tmp_path, quick=True)
        receiver = suite.command(steps["receiver"], tmp_path, quick=True)
        handoff = suite.command(steps["handoff"], tmp_path, quick=False)
        handoff_quick = suite.command(steps["handoff"], tmp_path, quick=True)
        lag = suite.command(steps["lag"], tmp_path, quick=False)
        lag_quick = suite.command(steps["lag"], tmp_path, quick=True)
    assert full == [sys.executable, str(BENCH / "bench_applier.py"), "--transactions", "20000",
                    "--workloads", "uniform", "--dependency", "commit_order",
                    "--json", str(tmp_path / "drain-commit-order.json")]  # fmt: skip
    assert quick[2:] == ["--workloads", "uniform", "--dependency", "commit_order", "--quick",
                         "--json", str(tmp_path / "drain-commit-order.json")]  # fmt: skip
    assert receiver[2:] == ["--transactions", "300", "--rounds", "1"]  # no JSON, no --quick
    assert (handoff[2:], handoff_quick[2:]) == ([], ["--quick"])  # its defaults, no JSON
    assert lag[2:4] == ["--loads", "0.5,0.9,1.1,1.5,2"]  # overload shown beyond 110 %
    assert "--loads" not in lag_quick  # --quick's single load
    assert all((BENCH / step.script).is_file() for step in steps.values())


def test_the_suite_refuses_an_unknown_step(tmp_path: Path) -> None:
    with bench_script("suite") as suite, pytest.raises(SystemExit) as excinfo:
        suite.main(["--only", "drain-writeset,nonsense", "--dir", str(tmp_path)])
    assert excinfo.value.code == 2


@pytest.mark.slow
def test_the_lag_benchmark_samples_lag_and_backlog_and_charts_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A source process at half the capacity measured just before, and a replica server
    process following it: the replica keeps up. (Above capacity, how fast the source itself
    can write on a busy 2-core machine varies too much for a test; the full run shows it.)"""
    path = tmp_path / "lag.json"
    with bench_script("bench_lag") as bench:
        code = bench.main(["--quick", "--engine", "memory", "--loads", "0.5",
                           "--transactions", "1000", "--json", str(path)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "machine: nproc=" in out and "capacity: " in out
    figures = json.loads(path.read_text())
    assert figures["benchmark"] == "lag" and figures["capacity_per_second"] > 0
    (run,) = figures["runs"]
    assert run["load"] == 0.5
    assert run["rate"] == pytest.approx(0.5 * figures["capacity_per_second"])
    seconds = [s["seconds"] for s in run["samples"]]
    assert len(seconds) >= 10 and seconds == sorted(seconds)
    assert all(0 <= s["applied"] <= s["written"] for s in run["samples"])
    assert all(s["lag_seconds"] >= 0 for s in run["samples"])
    assert run["written_per_second"] == pytest.approx(run["rate"], rel=0.5)
    assert run["lag_median_seconds"] < 1.0
    with bench_script("charts") as charts:
        drawn = charts.lag_chart(tmp_path)
    assert drawn == tmp_path / "lag.png"
    assert drawn.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
