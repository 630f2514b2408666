"""PNG charts from the benchmark scripts' JSON figures (``make bench`` runs it last).

    .venv/bin/python tests/bench/charts.py [--dir docs/benchmarks]

Each chart is drawn from one JSON file in ``--dir`` when that file is there, and written
beside it; its title names the machine the figures come from.

- ``drain-writeset.json`` and ``drain-commit-order.json`` (``bench_applier.py``): the backlog
  drain of every applier at every worker count, transactions/s at the flush latency, one
  group of bars per workload → ``drain.png``;
- ``lag.json`` (``bench_lag.py``): lag and backlog over time at each share of the capacity
  → ``lag.png``;
- ``peer.json`` (``bench_peer.py``): ours, the peer and the floor → ``peer.png``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no screen

import matplotlib.pyplot as plt  # noqa: E402

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "docs" / "benchmarks"
DRAIN_FILES = {"drain-writeset.json": "WRITESET", "drain-commit-order.json": "commit order"}


def _load(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.exists() else None


def _machine(figures: dict[str, Any]) -> str:
    return str(figures.get("machine", "")).removeprefix("machine: ")


def drain_chart(directory: Path) -> Path | None:
    """Transactions/s of each applier configuration (bars) per stream (groups), at the
    flush latency, commit order on where it applies."""
    groups: list[tuple[str, list[dict[str, Any]]]] = []
    machine = ""
    for name, stream in DRAIN_FILES.items():
        figures = _load(directory / name)
        if figures is None:
            continue
        machine = _machine(figures)
        latency = max(run["latency"] for run in figures["runs"])
        for workload in dict.fromkeys(run["workload"] for run in figures["runs"]):
            runs = [
                r
                for r in figures["runs"]
                if r["workload"] == workload
                and r["latency"] == latency
                # commit order on, but DATABASE, which runs only with it off
                and (r["commit_order"] is not False or r["applier"] == "mta-database")
            ]
            groups.append((f"{stream}, {workload}\n{latency * 1000:g} ms/flush", runs))
    if not groups:
        return None
    labels = list(dict.fromkeys(r["label"] for _, runs in groups for r in runs))
    figure, axes = plt.subplots(figsize=(12, 5.5))
    width = 0.8 / len(labels)
    colours = plt.get_cmap("tab20")
    for index, label in enumerate(labels):
        xs, ys = [], []
        for group_index, (_, runs) in enumerate(groups):
            for run in runs:
                if run["label"] == label:
                    xs.append(group_index + (index - len(labels) / 2 + 0.5) * width)
                    ys.append(run["per_second"])
        axes.bar(xs, ys, width, label=label, color=colours(index % 20))
    axes.set_xticks(range(len(groups)), [title for title, _ in groups])
    axes.set_ylabel("transactions/s")
    axes.set_title(f"Backlog drain, in-memory engine ({machine})", fontsize=9)
    axes.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    return _save(figure, directory / "drain.png")


def lag_chart(directory: Path) -> Path | None:
    """Lag (seconds) and backlog (transactions) over time, one line per load."""
    figures = _load(directory / "lag.json")
    if figures is None:
        return None
    figure, (lag_axes, backlog_axes) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    for run in figures["runs"]:
        samples = run["samples"]
        seconds = [s["seconds"] for s in samples]
        label = (f"{run['load']:.0%} of capacity: {run['rate']:,.0f} trx/s asked, "
                 f"{run['written_per_second']:,.0f} written")  # fmt: skip
        lag_axes.plot(seconds, [s["lag_seconds"] for s in samples], label=label)
        backlog_axes.plot(seconds, [s["written"] - s["applied"] for s in samples], label=label)
    lag_axes.set_ylabel("lag (s)")
    backlog_axes.set_ylabel("backlog (transactions)")
    backlog_axes.set_xlabel("seconds since START REPLICA")
    lag_axes.legend(fontsize=8)
    lag_axes.set_title(
        f"Steady-state lag, {figures['engine']} engine, {figures['workers']} workers, capacity "
        f"{figures['capacity_per_second']:,.0f} trx/s ({_machine(figures)})",
        fontsize=9,
    )
    figure.tight_layout()
    return _save(figure, directory / "lag.png")


def peer_chart(directory: Path) -> Path | None:
    """Seconds to land the same source in Spark: ours, the peer, the floor."""
    figures = _load(directory / "peer.json")
    if figures is None:
        return None
    paths = [(name, path["seconds"]) for name, path in figures["paths"].items()]
    figure, axes = plt.subplots(figsize=(7, 4))
    axes.barh([name for name, _ in paths], [seconds for _, seconds in paths])
    for index, (_, seconds) in enumerate(paths):
        axes.text(seconds, index, f" {seconds:.1f} s", va="center", fontsize=8)
    axes.set_xlabel("seconds (less is better)")
    axes.set_title(f"{figures.get('title', 'Source to Spark')} ({_machine(figures)})", fontsize=9)
    figure.tight_layout()
    return _save(figure, directory / "peer.png")


def _save(figure: Any, path: Path) -> Path:
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


CHARTS = (drain_chart, lag_chart, peer_chart)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    for chart in CHARTS:
        written = chart(args.dir)
        if written is not None:
            print(f"chart: {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
