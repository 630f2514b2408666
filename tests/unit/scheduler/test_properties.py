"""Properties of the scheduler over random dependency graphs, with real threads.

Streams of (last_committed, sequence_number) as a source writes them, sequence restarts
included, go through the LWM adapter into a scheduler with 1..8 workers, with or without a
commit-order phase. Whatever the interleaving: no task starts before its LWM delay is reached;
commit-phase STARTs happen in task-id order; every task runs each phase exactly once; the LWM
never goes back.
"""

from __future__ import annotations

import threading
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.scheduler import (
    DelayedSchedule,
    LwmDependencyAdapter,
    Schedule,
    Step,
    TransactionOrderSchedule,
)
from tests.unit.scheduler.helpers import TIMEOUT, WatchedLwmClock, running_scheduler


class Checker:
    """Shared by the tasks of one run: records steps and checks the delays as tasks start."""

    def __init__(self, delays: list[int], last_phase: int) -> None:
        self.delays = delays
        self.last_phase = last_phase
        self.lock = threading.Lock()
        self.ended: set[int] = set()
        self.steps: Counter[tuple[int, int, Step]] = Counter()
        self.commit_starts: list[int] = []
        self.violations: list[str] = []


class Probe:
    def __init__(self, task_id: int, checker: Checker) -> None:
        self.task_id = task_id
        self.checker = checker

    def run(self, phase: int, step: Step) -> None:
        checker = self.checker
        with checker.lock:
            checker.steps[(self.task_id, phase, step)] += 1
            if phase == 0:
                missing = [t for t in range(checker.delays[self.task_id]) if t not in checker.ended]
                if missing:
                    checker.violations.append(f"task {self.task_id} started before {missing}")
            if step is Step.START:
                checker.commit_starts.append(self.task_id)
        sum(range(64))  # a little work outside the lock, where other workers may run
        if phase == checker.last_phase and step is not Step.START:
            with checker.lock:
                checker.ended.add(self.task_id)


def _stream(steps: list[tuple[int, bool, bool]]) -> list[tuple[int, int]]:
    """(last_committed, sequence_number) pairs; sequence numbers restart at 1."""
    pairs: list[tuple[int, int]] = []
    seq = 0
    for lag, restart, independent in steps:
        seq = 1 if restart or seq == 0 else seq + 1
        pairs.append((0 if independent else max(0, seq - 1 - lag), seq))
    return pairs


@settings(
    max_examples=100,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 9).map(lambda n: n == 0), st.booleans()),
        min_size=1,
        max_size=120,
    ),
    workers=st.integers(1, 8),
    commit_order=st.booleans(),
    tight=st.booleans(),
)
def test_random_graphs_respect_delays_commit_order_and_run_each_phase_once(
    steps: list[tuple[int, bool, bool]], workers: int, commit_order: bool, tight: bool
) -> None:
    pairs = _stream(steps)
    adapter = LwmDependencyAdapter()
    delays = [adapter.solve(i, seq, lc).delay for i, (lc, seq) in enumerate(pairs)]
    checker = Checker(delays, last_phase=1 if commit_order else 0)
    clock = WatchedLwmClock()
    max_tasks = workers if tight else None  # a tight limit makes enqueue block often
    with running_scheduler(
        workers, commit_order=commit_order, clock=clock, max_tasks=max_tasks
    ) as scheduler:
        for task_id, delay in enumerate(delays):
            schedule: Schedule = (
                TransactionOrderSchedule(task_id, delay, task_id)
                if commit_order
                else DelayedSchedule(task_id, delay)
            )
            scheduler.enqueue(Probe(task_id, checker), schedule)
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.error is None
        assert scheduler.in_flight == 0
    n = len(pairs)
    assert checker.violations == []
    expected_steps = [(0, Step.WHOLE)]
    if commit_order:
        expected_steps += [(1, Step.START), (1, Step.REST)]
    assert checker.steps == Counter(
        (t, phase, step) for t in range(n) for phase, step in expected_steps
    )
    if commit_order:
        assert checker.commit_starts == list(range(n))
    assert clock.now() == n
    assert clock.history == sorted(clock.history)
