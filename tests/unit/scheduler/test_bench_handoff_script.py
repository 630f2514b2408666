"""``tests/bench/bench_handoff.py`` runs end to end with tiny sizes."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.helpers.scripts import bench_script


@pytest.fixture
def bench() -> Iterator[ModuleType]:
    with bench_script("bench_handoff") as module:
        yield module


def test_quick_run_reports_serial_and_each_pipeline(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--quick", "--items", "200", "--caps", "1,4", "--reader-us", "5",
                       "--worker-us", "10"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "machine: nproc=" in out
    for label in ("serial ", "pipeline cap 1 ", "pipeline cap 4 "):
        assert f"  {label}" in out
    assert out.count("µs/item") == 3 and out.count("switches/item") == 3
    assert "wake-up round trip between two threads:" in out


def test_the_pipeline_hands_every_item_over_in_order(bench: ModuleType) -> None:
    seen: list[int] = []
    bench.pipeline(50, 1, 1, 2, consumed=seen.append)
    assert seen == list(range(50))


def test_bad_arguments_are_rejected(bench: ModuleType) -> None:
    for argv in (["--items", "0"], ["--caps", "0"], ["--reader-us", "0"]):
        with pytest.raises(SystemExit) as excinfo:
            bench.main(argv)
        assert excinfo.value.code == 2
