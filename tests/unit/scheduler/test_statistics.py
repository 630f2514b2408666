"""The scheduler's statistics (OBS.STAT.SCHED): the tasks' own run time apart from the
scheduler's work around them, and ``enqueue``'s work apart from its waits for room."""

from __future__ import annotations

import time

from spark_replica.applier_core.scheduler import (
    CommitOrderClock,
    DelayedSchedule,
    Scheduler,
    Step,
    ThreadPool,
    TransactionOrderSchedule,
)

TASK_SECONDS = 0.03
MS = 1_000_000


class Timed:
    """A task whose every step takes at least ``TASK_SECONDS``."""

    def __init__(self) -> None:
        self.steps: list[tuple[int, Step]] = []

    def run(self, phase: int, step: Step) -> None:
        time.sleep(TASK_SECONDS)
        self.steps.append((phase, step))


def test_task_time_is_apart_from_the_scheduler_work_around_it() -> None:
    """OBS.STAT.SCHED: ``sched_task_exec_time`` (the tasks' run) lies within
    ``thp_task_exec_time`` (the pool's callables); their difference and ``enqueue``'s own
    work are the scheduler's overhead, far below the tasks' and the waits' time."""
    scheduler = Scheduler("stats", ThreadPool("stats", 1), max_tasks=1)
    scheduler.start()
    tasks = [Timed() for _ in range(3)]
    began = time.perf_counter_ns()
    try:
        for task_id, task in enumerate(tasks):
            scheduler.enqueue(task, DelayedSchedule(task_id, 0))
        enqueueing = time.perf_counter_ns() - began
    finally:
        scheduler.stop()  # joins the workers: every figure is final
    figures = scheduler.statistics()
    assert [task.steps for task in tasks] == [[(0, Step.WHOLE)]] * 3
    assert figures.ended == 3
    assert figures.task_exec_ns >= 3 * TASK_SECONDS * 1e9
    assert figures.pool_exec_ns >= figures.task_exec_ns
    assert figures.callback_ns == figures.pool_exec_ns - figures.task_exec_ns
    # One task in flight at most: the third enqueue returns only once the second task ended,
    # which began after the first one ended, so the calls took two tasks' time, waiting.
    assert figures.enqueue_ns + figures.room_wait_ns <= enqueueing
    assert figures.room_wait_ns >= 2 * TASK_SECONDS * 1e9 - 20 * MS
    assert figures.overhead_ns == (figures.enqueue_ns + figures.callback_ns) / 3
    assert 0 < figures.overhead_ns < 10 * MS


def test_both_steps_of_a_start_to_start_phase_count_as_task_time() -> None:
    scheduler = Scheduler("stats", ThreadPool("stats", 2))
    commit_clock = scheduler.register_phase(CommitOrderClock())
    scheduler.start()
    tasks = [Timed() for _ in range(2)]
    try:
        for task_id, task in enumerate(tasks):
            scheduler.enqueue(task, TransactionOrderSchedule(task_id, 0, task_id, commit_clock))
    finally:
        scheduler.stop()
    figures = scheduler.statistics()
    steps = [(0, Step.WHOLE), (1, Step.START), (1, Step.REST)]
    assert [task.steps for task in tasks] == [steps] * 2
    assert figures.ended == 2
    assert figures.task_exec_ns >= 6 * TASK_SECONDS * 1e9
    assert figures.pool_exec_ns >= figures.task_exec_ns


def test_no_figure_before_a_task_ends() -> None:
    scheduler = Scheduler("stats", ThreadPool("stats", 1))
    scheduler.start()
    scheduler.stop()
    figures = scheduler.statistics()
    assert (figures.ended, figures.task_exec_ns, figures.overhead_ns) == (0, 0, 0.0)
