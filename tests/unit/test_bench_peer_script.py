"""``tests/bench/bench_peer.py`` runs end to end with tiny sizes on the test run's SparkSession:
ours, the peer (python-mysql-replication) and the floor each move every transaction and row
change of the generated binary log, and the figures it prints and writes agree."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from spark_replica.tools.generator.simulate import simulate
from tests.helpers.scripts import bench_script

TRANSACTIONS = 120
PATHS = ("ours", "peer", "floor")


@pytest.fixture
def bench() -> Iterator[ModuleType]:
    with bench_script("bench_peer") as module:
        yield module


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(300)
# python-mysql-replication opens its second connection with PyMySQL's deprecated ``db``.
@pytest.mark.filterwarnings("ignore:'db' is deprecated:DeprecationWarning")
@pytest.mark.usefixtures("no_thread_leaks")
def test_quick_run_moves_every_row_change_on_every_path(
    bench: ModuleType, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "figures.json"
    code = bench.main(["--quick", "--transactions", str(TRANSACTIONS), "--json", str(path)],
                      spark=spark)  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ERROR" not in out
    assert "checks: ours holds the generated content and GTIDs in Spark" in out

    generated, _ = simulate(bench.workload_spec(TRANSACTIONS))
    transactions = len(generated)
    row_changes = sum(len(trx.changes) for trx in generated)
    figures = json.loads(path.read_text())
    assert figures["machine"].startswith("machine: nproc=")
    assert figures["machine"] in out
    assert datetime.fromisoformat(figures["timestamp"]).tzinfo is not None
    assert figures["workload"]["transactions"] == transactions
    assert figures["workload"]["row_changes"] == row_changes
    assert figures["errors"] == []
    for name in PATHS:
        run = figures["paths"][name]
        assert (run["transactions"], run["row_changes"], run["error"]) == (
            transactions, row_changes, None)  # fmt: skip
        assert run["seconds"] > 0
        assert run["transactions_per_second"] == pytest.approx(transactions / run["seconds"])
        assert run["row_changes_per_second"] == pytest.approx(row_changes / run["seconds"])
    assert list(figures["paths"]) == list(PATHS)
    assert figures["paths"]["peer"]["details"]["change_rows"] == row_changes
    assert figures["paths"]["floor"]["details"]["decoded_rows"] == row_changes
    ours, peer, floor = (figures["paths"][name]["seconds"] for name in PATHS)
    assert figures["ratios"]["ours_over_peer"] == pytest.approx(ours / peer)
    assert figures["ratios"]["ours_over_floor"] == pytest.approx(ours / floor)

    printed = re.search(r"ours / peer: ([0-9.]+)x the time .* ours / floor: ([0-9.]+)x", out)
    assert printed is not None, out
    assert float(printed.group(1)) == pytest.approx(ours / peer, abs=0.006)
    assert float(printed.group(2)) == pytest.approx(ours / floor, abs=0.006)
    for label in ("ours (receiver + CSA x4 -> Spark)", "peer (python-mysql-replication)",
                  "floor (decode + bulk write)"):  # fmt: skip
        assert re.search(rf"{re.escape(label)} +[0-9.]+ s +[0-9,]+ trx/s +[0-9,]+ row changes/s",
                         out), label  # fmt: skip


def test_a_change_row_count_that_differs_fails_the_check(bench: ModuleType) -> None:
    expected = {("shop.sbtest1", "insert"): 40, ("shop.sbtest1", "update"): 12}
    assert bench.check_change_rows(dict(expected), expected) is None
    found = {("shop.sbtest1", "insert"): 40, ("shop.sbtest1", "update"): 11}
    assert bench.check_change_rows(found, expected) == (
        "change rows (51) are not the row changes (52): (found, expected) by table and "
        "operation: {'shop.sbtest1 update': (11, 12)}")  # fmt: skip


def test_bad_arguments_are_rejected(bench: ModuleType) -> None:
    for argv in (["--transactions", "0"], ["--transactions", "x"]):
        with pytest.raises(SystemExit) as excinfo:
            bench.main(argv)
        assert excinfo.value.code == 2
