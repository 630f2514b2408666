"""``tests/bench/bench_applier.py`` runs end to end with tiny sizes and checks the content."""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.scripts import bench_script


@pytest.fixture
def bench() -> Iterator[ModuleType]:
    with bench_script("bench_applier") as module:
        yield module


def test_quick_run_reports_every_configuration(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--transactions", "300", "--commit-latency", "0.0002", "--appliers",
            "serial,csa", "--workloads", "uniform", "--dir", str(tmp_path)]  # fmt: skip
    assert bench.main(argv) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "machine: nproc=" in out
    assert "backlog: WorkloadSpec(" in out and "dependency=<Dependency.WRITESET" in out
    assert "generation: " in out and "the dependency data allows a parallelism of " in out
    for latency in ("0 (pure CPU)", "0.2 ms/flush"):
        assert f"commit latency {latency}\n" in out
        assert f"| {latency} | serial |" in out
        for workers in (1, 4):
            for commit_order in ("on", "off"):
                assert f"| {latency} | csa workers {workers} commit order {commit_order} |" in out
    assert "csa workers 2" not in out
    assert out.count(" trx/s ") == 10 + 1  # and the CSA in one thread
    assert "the CSA's cost over the serial applier (CSA with 1 worker - serial, no commit " in out
    assert "scheduler's overhead per transaction (dispatch, enqueue and the work around " in out
    assert " over 8 CSA runs, the most with csa workers " in out
    for line in out.splitlines():  # each CSA run shows its scheduling cost
        if line.startswith("  csa workers") and "in one thread" not in line:
            assert " scheduling " in line and line.endswith(" µs"), line
    assert "| scheduling µs/trx |" in out
    assert "csa workers 1 commit order off, in one thread" in out
    assert "of which, commit order off: the CSA's own work " in out
    assert "handing transactions between its two threads " in out
    assert "CSA with 4 workers vs serial, commit latency 0.2 ms/flush: " in out
    assert "content: every run ends in the generated content" in out
    assert "ERROR" not in out
    assert "mta" not in out and "workload skewed" not in out
    assert f"applier-writeset-300-db{bench.DEFAULT_DATABASES}" in out

    # Second run, one configuration: the backlog comes from the cache directory.
    argv += ["--workers", "2"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "generation: reused from the cache directory" in out
    assert "csa workers 2 commit order off" in out
    assert "target (CSA with 4 workers never slower than serial): not measured" in out


def test_wrong_content_fails(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--transactions", "100", "--workers", "1", "--appliers", "csa",
            "--workloads", "uniform", "--dir", str(tmp_path)]  # fmt: skip
    assert bench.main(argv) == 0
    capsys.readouterr()
    (directory,) = tmp_path.iterdir()
    path = directory / bench.CONTENT
    content = pickle.loads(path.read_bytes())
    table = sorted(content)[0]
    content[table] = content[table][1:]  # a row the appliers will not lose
    data = pickle.dumps(content)
    manifest = directory / bench.MANIFEST
    manifest.write_text(
        manifest.read_text().replace(
            f'"content_size": {path.stat().st_size}', f'"content_size": {len(data)}'
        )  # fmt: skip
    )
    path.write_bytes(data)
    assert bench.main(argv) == 1
    out = capsys.readouterr().out
    assert "generation: reused from the cache directory" in out
    assert f"ERROR: content differs from the generated one in 1 table(s) ({table}: " in out
    assert "content: 7 run(s) FAILED: serial at 0 (pure CPU)" in out
    assert out.endswith("csa workers 1 commit order off, in one thread at 0 (pure CPU)\n")


def _figures(row: str) -> list[float]:
    """The numbers of a markdown row's cells after the label (``6,408 (1.00)`` gives two)."""
    cells = [cell for cell in row.strip().strip("|").split("|")[1:] if cell.strip() != "—"]
    return [float(part.strip("()").replace(",", "")) for cell in cells for part in cell.split()]


def test_comparison_of_serial_mta_and_csa_on_two_workloads(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--transactions", "300", "--workers", "1,2", "--commit-latency", "0.0002",
            "--appliers", "serial,mta,mta-database,csa", "--workloads", "uniform,skewed",
            "--databases", "3", "--dir", str(tmp_path / "cache"),
            "--json", str(tmp_path / "drain-writeset.json")]  # fmt: skip
    assert bench.main(argv) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert (
        "appliers: serial, mta, mta-database, csa; workloads: uniform, skewed; databases: 3" in out
    )
    assert "\nworkload uniform\n" in out and "\nworkload skewed\n" in out
    assert "large_share=0.02, large_size=100" in out and "databases=3)" in out
    assert {p.name for p in (tmp_path / "cache").iterdir()} == {
        "applier-writeset-300-db3", "applier-writeset-300-db3-skewed100"}  # fmt: skip
    latencies = ("0 (pure CPU)", "0.2 ms/flush")
    labels = ["serial"] + [
        f"{kind} workers {workers} commit order {order}"
        for kind, orders in (
            ("mta logical_clock", ("on", "off")),
            ("mta database", ("off",)),
            ("csa", ("on", "off")),
        )
        for order in orders
        for workers in (1, 2)
    ]
    assert "mta database workers 1 commit order on" not in out  # refused: error 3031
    for workload in ("uniform", "skewed"):
        assert f"summary (markdown), workload {workload}\n" in out
    assert out.count(" trx/s ") == 2 * 2 * len(labels) + 1  # the CSA in one thread, once
    head = "| applier | " + " | ".join(
        f"{workload}, {latency}" for workload in ("uniform", "skewed") for latency in latencies
    )
    table = out.split("comparison (markdown): ", 1)[1]
    assert head + " |\n" in table
    rows = {line.split(" | ")[0][2:]: line for line in table.splitlines() if line.startswith("| ")}
    for label in labels:
        figures = _figures(rows[label])
        assert len(figures) == 8 and all(f > 0 for f in figures), rows[label]
    assert _figures(rows["serial"])[1::2] == [1.0] * 4
    assert "FAILED" not in out and "ERROR" not in out
    assert "content: every run ends in the generated content" in out

    # The same runs as JSON, for make bench's charts.
    figures = json.loads((tmp_path / "drain-writeset.json").read_text())
    assert figures["benchmark"] == "drain" and figures["machine"].startswith("machine: nproc=")
    assert figures["dependency"] == "writeset" and figures["databases"] == 3
    assert len(figures["runs"]) == 2 * 2 * len(labels)
    by_key = {(r["label"], r["workload"], r["latency"]): r for r in figures["runs"]}
    for (_, workload, latency), run in by_key.items():
        assert run["error"] is None and run["per_second"] > 0
        serial = by_key["serial", workload, latency]
        assert run["ratio"] == pytest.approx(serial["seconds"] / run["seconds"])
    with bench_script("charts") as charts:
        drawn = charts.drain_chart(tmp_path)
    assert drawn == tmp_path / "drain.png"
    assert drawn.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_dependency_data_parallelism(bench: ModuleType) -> None:
    from spark_replica.tools.generator.simulate import GeneratedTransaction

    def chain(pairs: list[tuple[int, int]]) -> list[GeneratedTransaction]:
        return [GeneratedTransaction(i + 1, lc, seq, 0, 1) for i, (lc, seq) in enumerate(pairs)]

    assert bench.graph_parallelism(chain([(0, 1), (1, 2), (2, 3), (3, 4)])) == 1.0
    assert bench.graph_parallelism(chain([(0, 1), (1, 2), (1, 3), (1, 4)])) == 2.0


def test_bad_arguments_are_rejected(bench: ModuleType) -> None:
    for argv in (
        ["--transactions", "0"],
        ["--workers", "0"],
        ["--commit-latency", "0"],
        ["--appliers", "serial,foo"],
        ["--workloads", "hot"],
        ["--databases", "0"],
        ["--databases", "9"],
    ):
        with pytest.raises(SystemExit) as excinfo:
            bench.main(argv)
        assert excinfo.value.code == 2


def test_backlog_directories_keep_shapes_apart(bench: ModuleType) -> None:
    """One database keeps the plain names; several add their count, so caches never mix."""
    from spark_replica.tools.generator.simulate import Dependency

    names = {
        bench.backlog_name(bench.plan_spec(300, Dependency.WRITESET, 0.0, workload, databases))
        for workload in ("uniform", "skewed")
        for databases in (1, 4)
    }
    assert names == {
        "applier-writeset-300", "applier-writeset-300-skewed100",
        "applier-writeset-300-db4", "applier-writeset-300-db4-skewed100",
    }  # fmt: skip
