"""``make bench``: every benchmark, one after the other, then the charts.

    .venv/bin/python tests/bench/suite.py [--only drain-writeset,lag,...] [--quick]
        [--dir docs/benchmarks]

Each step runs one script of ``tests/bench/`` in its own process, alone on the machine (the
figures are CPU-bound and these machines have few cores). It writes into ``--dir``:
``NAME.json`` (the figures, with the machine they ran on) when the script writes JSON, and
``NAME.txt`` (everything it printed, its tables included). Then ``charts.py`` draws the
PNG charts from the JSON files. A failing step is reported and the others still run; the
exit code is 1 when any failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
DEFAULT_DIR = BENCH.parents[1] / "docs" / "benchmarks"


@dataclass(frozen=True)
class Step:
    name: str
    script: str
    arguments: tuple[str, ...] = ()
    #: The script takes ``--json PATH``.
    writes_json: bool = True
    #: The script takes ``--quick``.
    has_quick: bool = True


STEPS = (
    # The backlog drain as the CSA is measured, every applier at 1, 2, 4 and 8 workers.
    Step("drain-writeset", "bench_applier.py",
         ("--transactions", "20000", "--workloads", "uniform,skewed", "--dependency", "writeset")),
    Step("drain-commit-order", "bench_applier.py",
         ("--transactions", "20000", "--workloads", "uniform", "--dependency", "commit_order")),
    Step("spark-engine", "bench_spark_engine.py", has_quick=False),
    # A flush's appended rows: Spark's INSERT INTO against pyarrow's files, beside a busy thread.
    Step("data-files", "bench_data_files.py", ("--busy",), has_quick=False),
    Step("peer", "bench_peer.py"),
    # The shares of the drain capacity the issue names, and two above: a backlog drains
    # slower than a live stream applies, so 110 % of it may still be kept up with.
    Step("lag", "bench_lag.py", ("--loads", "0.5,0.9,1.1,1.5,2")),
    # One 1 GiB transaction under APPLIER_EVENT_MEMORY_LIMIT=64M, into each engine.
    Step("big-transaction-memory", "bench_big_transaction.py", ("--engine", "memory")),
    # With Spark's default driver memory (1g): the engine hands batches over in slices.
    Step("big-transaction-spark", "bench_big_transaction.py", ("--engine", "spark")),
    # A big sysbench table (1M rows): load, write workload, memory, restart, queries.
    Step("scale", "bench_scale.py", ("--rows", "1000000")),
    # Catching up with a real MariaDB source's backlog, against a MariaDB replica.
    Step("catchup", "bench_catchup.py"),
    Step("clients", "bench_clients.py"),
    Step("receiver", "bench_receiver.py", writes_json=False, has_quick=False),
    # The floor under any two-thread applier here: the CSA's hand-over cost beside it.
    Step("handoff", "bench_handoff.py", writes_json=False),
    Step("frontend", "bench_frontend.py", writes_json=False, has_quick=False),
)  # fmt: skip
QUICK_ARGUMENTS = {
    "spark-engine": ("--transactions", "2000", "--query-rows", "2000", "--repeat", "1"),
    "data-files": ("--rows", "2000", "--flushes", "2"),
    "receiver": ("--transactions", "300", "--rounds", "1"),
    "frontend": ("--iterations", "20", "--connections", "5", "--statements", "5"),
}


def command(step: Step, directory: Path, quick: bool) -> list[str]:
    """The command line that runs ``step``, writing its JSON into ``directory``."""
    arguments = list(step.arguments)
    if quick:
        if step.has_quick:
            # --quick sets small sizes; the step's own size would override it.
            sizes = ("--transactions", "--loads", "--rows")
            arguments = [*_without_values(arguments, sizes), "--quick"]
        else:
            arguments = [*arguments, *QUICK_ARGUMENTS.get(step.name, ())]
    if step.writes_json:
        arguments += ["--json", str(directory / f"{step.name}.json")]
    return [sys.executable, str(BENCH / step.script), *arguments]


def _without_values(arguments: Sequence[str], options: Sequence[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for argument in arguments:
        if skip:
            skip = False
        elif argument in options:
            skip = True
        else:
            kept.append(argument)
    return kept


def run_step(step: Step, directory: Path, quick: bool) -> bool:
    """Run ``step``, its output shown and kept in ``NAME.txt``; True when it succeeded."""
    line = command(step, directory, quick)
    print(f"\n== {step.name}: {' '.join(line[1:])}", flush=True)
    started = time.monotonic()
    with (directory / f"{step.name}.txt").open("w") as log:
        process = subprocess.Popen(line, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, cwd=BENCH.parents[1])  # fmt: skip
        assert process.stdout is not None
        for output in process.stdout:
            sys.stdout.write(output)
            log.write(output)
        code = process.wait()
    seconds = time.monotonic() - started
    print(f"== {step.name}: {'ok' if code == 0 else f'FAILED (exit {code})'} in {seconds:.0f} s",
          flush=True)  # fmt: skip
    return code == 0


def main(argv: Sequence[str] | None = None) -> int:
    names = [step.name for step in STEPS]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", type=lambda text: text.split(","), default=names,
                        help=f"comma-separated steps, of {','.join(names)}")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only) - set(names))
    if unknown:
        parser.error(f"unknown steps: {', '.join(unknown)}")
    args.dir.mkdir(parents=True, exist_ok=True)
    failed = [step.name for step in STEPS
              if step.name in args.only and not run_step(step, args.dir, args.quick)]  # fmt: skip
    charts = subprocess.run([sys.executable, str(BENCH / "charts.py"), "--dir", str(args.dir)],
                            check=False)  # fmt: skip
    if charts.returncode != 0:
        failed.append("charts")
    print(f"\nbench: {'every step ok' if not failed else 'FAILED: ' + ', '.join(failed)}; "
          f"figures in {args.dir}")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
