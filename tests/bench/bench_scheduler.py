"""Scheduler throughput and overhead: no-op tasks with random LWM dependencies.

Builds a stream of ``--tasks`` transactions as a source logs them (sequence numbers from 1,
``last_committed`` lagging 0..``--lag`` behind, a share of independent ones, a sequence
restart every ``--restart-every``), turns it into LWM delays with ``LwmDependencyAdapter``,
and pushes no-op tasks through ``Scheduler`` + ``ThreadPool`` for each worker count, with
and without a commit-order phase (``TransactionOrderSchedule`` on a ``CommitOrderClock``).

For each run it prints tasks/s, the scheduler's overhead per task in µs (wall time per task
minus the cost of calling a no-op task directly: everything else is scheduling, pool
hand-offs and thread switches), the process CPU time per task, and the mean number of tasks
ready or running at once (sampled by the scheduler each time it releases tasks), next to the
parallelism the graph allows (tasks / critical path, with unit-time tasks and unlimited
workers). The overhead target for the whole Change Stream Applier is 50 µs per transaction.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_scheduler.py [--tasks 100000] [--workers 1,2,4,8]
        [--lag 8] [--independent 0.3] [--restart-every 20000] [--repeat 3] [--seed 1] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.benchkit import machine_line, worker_counts  # noqa: E402

from spark_replica.applier_core.scheduler import (  # noqa: E402
    CommitOrderClock,
    DelayedSchedule,
    LwmDependencyAdapter,
    Schedule,
    Scheduler,
    Step,
    ThreadPool,
    TransactionOrderSchedule,
)

DEFAULT_TASKS = 100_000
QUICK_TASKS = 2_000
DEFAULT_WORKERS = (1, 2, 4, 8)
TARGET_US_PER_TRANSACTION = 50.0


class Noop:
    """A task that does nothing."""

    __slots__ = ()

    def run(self, phase: int, step: Step) -> None:
        return None


# -- the dependency graph --------------------------------------------------------------------
def source_stream(
    tasks: int, lag: int, independent: float, restart_every: int, rng: random.Random
) -> list[tuple[int, int]]:
    """(last_committed, sequence_number) pairs as a source logs them."""
    pairs: list[tuple[int, int]] = []
    seq = 0
    for task_id in range(tasks):
        restart = seq == 0 or (restart_every > 0 and task_id % restart_every == 0)
        seq = 1 if restart else seq + 1
        if restart or rng.random() < independent:
            pairs.append((0, seq))
        else:
            pairs.append((max(0, seq - 1 - rng.randint(0, lag)), seq))
    return pairs


def graph_parallelism(delays: Sequence[int]) -> float:
    """Tasks / critical path, for unit-time tasks and unlimited workers.

    A task may start once every task before its delay finished: it finishes one unit after
    the latest of those.
    """
    latest_before = [0]  # latest_before[d]: latest finish among tasks 0..d-1
    for delay in delays:
        finish = latest_before[delay] + 1
        latest_before.append(max(latest_before[-1], finish))
    return len(delays) / latest_before[-1] if delays else 0.0


def schedules_for(delays: Sequence[int], commit_order: bool) -> list[Schedule]:
    if commit_order:
        return [TransactionOrderSchedule(i, d, i) for i, d in enumerate(delays)]
    return [DelayedSchedule(i, d) for i, d in enumerate(delays)]


# -- measurement -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Run:
    workers: int
    commit_order: bool
    tasks: int
    seconds: float
    cpu_seconds: float
    bare_seconds: float
    mean_ready: float
    ok: bool

    @property
    def tasks_per_second(self) -> float:
        return self.tasks / self.seconds

    @property
    def overhead_us(self) -> float:
        return max(0.0, self.seconds - self.bare_seconds) / self.tasks * 1e6

    @property
    def cpu_us(self) -> float:
        return self.cpu_seconds / self.tasks * 1e6


def bare_cost(tasks: int, commit_order: bool) -> float:
    """Seconds to call a no-op task's steps directly, ``tasks`` times."""
    task = Noop()
    run = task.run
    start = time.perf_counter()
    if commit_order:
        for _ in range(tasks):
            run(0, Step.WHOLE)
            run(1, Step.START)
            run(1, Step.REST)
    else:
        for _ in range(tasks):
            run(0, Step.WHOLE)
    return time.perf_counter() - start


def run_once(schedules: Sequence[Schedule], workers: int, commit_order: bool) -> Run:
    pool = ThreadPool("bench", workers)
    scheduler = Scheduler("bench", pool)
    if commit_order:
        scheduler.register_phase(CommitOrderClock())
    scheduler.start()
    task = Noop()
    gc.collect()
    gc.disable()
    try:
        start, cpu_start = time.perf_counter(), time.process_time()
        enqueue = scheduler.enqueue
        for schedule in schedules:
            enqueue(task, schedule)
        scheduler.wait_idle()
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
    finally:
        gc.enable()
        statistics = scheduler.statistics()
        scheduler.stop()
    ok = scheduler.error is None and scheduler.clock.now() == len(schedules)
    return Run(
        workers, commit_order, len(schedules), seconds, cpu_seconds,
        bare_cost(len(schedules), commit_order), statistics.mean_ready, ok,
    )  # fmt: skip


def best_of(schedules: Sequence[Schedule], workers: int, commit_order: bool, repeat: int) -> Run:
    runs = [run_once(schedules, workers, commit_order) for _ in range(repeat)]
    best = min(runs, key=lambda r: r.seconds)
    if not all(r.ok for r in runs):
        return Run(best.workers, best.commit_order, best.tasks, best.seconds, best.cpu_seconds,
                   best.bare_seconds, best.mean_ready, False)  # fmt: skip
    return best


def _show(run: Run) -> None:
    phase = "apply+commit" if run.commit_order else "apply only"
    print(f"  workers {run.workers}  {phase:<12} {run.tasks_per_second:>10,.0f} tasks/s  "
          f"overhead {run.overhead_us:>6.1f} µs/task  cpu {run.cpu_us:>6.1f} µs/task  "
          f"ready at once {run.mean_ready:>5.2f}{'' if run.ok else '  ERROR'}")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tasks",
        type=int,
        default=None,
        help=f"tasks per run (default {DEFAULT_TASKS}, {QUICK_TASKS} with --quick)",
    )
    parser.add_argument(
        "--workers",
        type=worker_counts,
        default=DEFAULT_WORKERS,
        help="comma-separated worker counts (default 1,2,4,8)",
    )
    parser.add_argument(
        "--lag",
        type=int,
        default=8,
        help="last_committed lags 0..LAG transactions behind (default 8)",
    )
    parser.add_argument(
        "--independent",
        type=float,
        default=0.3,
        help="share of transactions with last_committed 0 (default 0.3)",
    )
    parser.add_argument(
        "--restart-every",
        type=int,
        default=20_000,
        help="a sequence restart every N transactions, 0 for none",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="runs per measurement, the best kept (default 3, 1 with --quick)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for smoke tests")
    args = parser.parse_args(argv)  # fmt: skip
    tasks = args.tasks if args.tasks is not None else QUICK_TASKS if args.quick else DEFAULT_TASKS
    repeat = args.repeat if args.repeat is not None else 1 if args.quick else 3
    if tasks < 1 or repeat < 1 or args.lag < 0 or not 0 <= args.independent <= 1:
        parser.error("--tasks and --repeat must be at least 1, --lag at least 0, "
                     "--independent within 0..1")  # fmt: skip

    print(machine_line())
    rng = random.Random(args.seed)
    pairs = source_stream(tasks, args.lag, args.independent, args.restart_every, rng)
    adapter = LwmDependencyAdapter()
    start = time.perf_counter()
    delays = [adapter.solve(i, seq, lc).delay for i, (lc, seq) in enumerate(pairs)]
    adapter_us = (time.perf_counter() - start) / tasks * 1e6
    print(f"graph: {tasks:,} tasks, last_committed lag 0..{args.lag}, "
          f"{args.independent:.0%} independent, restart every {args.restart_every:,}; "
          f"parallelism it allows {graph_parallelism(delays):.2f}")  # fmt: skip
    print(f"dependency adapter: {adapter_us:.2f} µs/task")
    print(f"best of {repeat} run(s)")
    runs: list[Run] = []
    for commit_order in (False, True):
        schedules = schedules_for(delays, commit_order)
        for workers in args.workers:
            runs.append(best_of(schedules, workers, commit_order, repeat))
            _show(runs[-1])
    worst = max(run.overhead_us for run in runs)
    verdict = "within" if worst < TARGET_US_PER_TRANSACTION else "ABOVE"
    print(f"worst scheduler overhead {worst:.1f} µs/task: {verdict} the CSA's whole budget of "
          f"{TARGET_US_PER_TRANSACTION:.0f} µs/transaction")  # fmt: skip
    ok = all(run.ok for run in runs)
    print("every task ran: " + ("yes" if ok else "NO (a run failed or lost tasks)"))
    return 0 if ok and not math.isnan(worst) else 1


if __name__ == "__main__":
    raise SystemExit(main())
