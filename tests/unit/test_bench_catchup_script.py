"""``tests/bench/bench_catchup.py``: its employees-shaped backlog, its arguments, and a
smoke run against real MariaDB servers."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers import mariadb
from tests.helpers.scripts import bench_script

ROW = re.compile(r"\((\d+|'d\d{3}'),")


def test_the_bulk_backlog_is_employees_shaped_with_its_keys_kept(tmp_path: Path) -> None:
    """Every child row names an employee inserted before it; the salaries, titles and
    departments per employee are the original's proportions; INSERTs hold 10,000 rows."""
    script = tmp_path / "data.sql"
    with bench_script("bench_catchup") as bench:
        written = bench.employees_script(script, 2_000)
    per_table: Counter[str] = Counter()
    employees: set[int] = set()
    for line in script.read_text().splitlines()[1:]:
        table = line.split()[2]
        keys = ROW.findall(line)
        assert 0 < len(keys) <= 10_000
        per_table[table] += len(keys)
        if table == "employees":
            employees.update(map(int, keys))
        elif table != "departments":
            assert {int(k) for k in keys} <= employees, table
    assert per_table["employees"] == 2_000 and per_table["departments"] == 9
    assert sum(per_table.values()) == written
    assert 8 < per_table["salaries"] / 2_000 < 11
    assert 1.3 < per_table["titles"] / 2_000 < 1.7
    assert 1.0 < per_table["dept_emp"] / 2_000 < 1.2


def test_arguments_are_checked() -> None:
    with bench_script("bench_catchup") as bench:
        for argv in (["--shapes", "bulk,dump"], ["--replicas", "mysql"], ["--employees", "0"]):
            with pytest.raises(SystemExit) as excinfo:
                bench.main(argv)
            assert excinfo.value.code == 2
        assert bench.parse_args(["--quick"]).oltp_events == bench.QUICK["oltp_events"]


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.skipif(not mariadb.available(), reason="needs Debian's mariadb-server")
def test_a_quick_run_catches_up_on_both_replicas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "figures.json"
    with bench_script("bench_catchup") as bench:
        code = bench.main(["--quick", "--shapes", "oltp", "--replicas", "mariadb,csa",
                           "--json", str(path)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    figures = json.loads(path.read_text())
    oltp = figures["shapes"]["oltp"]
    assert oltp["backlog"]["total"] - oltp["backlog"]["setup"] >= 500
    runs = {run["replica"]: run for run in oltp["runs"]}
    for run in runs.values():
        assert run["error"] is None
        assert 0 < run["setup_seconds"] <= run["executed_seconds"] <= run["queryable_seconds"]
    assert oltp["ratios"]["csa"]["executed"] > 0
    assert re.search(r"csa / mariadb: executed [0-9.]+x the seconds", out)
