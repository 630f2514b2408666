"""``tests/bench/bench_scheduler.py`` runs end to end with tiny sizes."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.helpers.scripts import bench_script


@pytest.fixture
def bench() -> Iterator[ModuleType]:
    with bench_script("bench_scheduler") as module:
        yield module


def test_quick_run_reports_every_configuration(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--quick", "--tasks", "300", "--workers", "1,3"]) == 0
    out = capsys.readouterr().out
    assert "machine: nproc=" in out
    for workers in (1, 3):
        assert f"workers {workers}  apply only" in out
        assert f"workers {workers}  apply+commit" in out
    assert out.count("tasks/s") == 4
    assert "µs/task" in out
    assert "every task ran: yes" in out


def test_graph_parallelism_of_simple_graphs(bench: ModuleType) -> None:
    assert bench.graph_parallelism([0, 0, 0, 0]) == 4.0  # all independent
    assert bench.graph_parallelism([0, 1, 2, 3]) == 1.0  # a chain
    assert bench.graph_parallelism([0, 0, 2, 2]) == 2.0  # two waves of two


def test_bad_arguments_are_rejected(bench: ModuleType) -> None:
    with pytest.raises(SystemExit) as excinfo:
        bench.main(["--tasks", "0"])
    assert excinfo.value.code == 2
    with pytest.raises(SystemExit):
        bench.main(["--workers", "0"])
