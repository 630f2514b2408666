"""The scheduler's life cycle: threads, the in-flight limit, idleness, stop, failures."""

from __future__ import annotations

import threading

import pytest

from spark_replica.applier_core.scheduler import (
    CommitOrderClock,
    DelayedSchedule,
    LogicalClock,
    LwmClock,
    Phase,
    Schedule,
    Scheduler,
    SchedulerState,
    SchedulerStopped,
    SinglePredecessorTracker,
    Step,
    ThreadPool,
    TransactionOrderSchedule,
)
from tests.unit.scheduler.helpers import (
    APPLY,
    REST,
    START,
    TIMEOUT,
    Boom,
    GatedTask,
    Log,
    running_scheduler,
)


def state_of(scheduler: Scheduler) -> SchedulerState:
    """The state, read through a call (mypy would narrow a property across calls)."""
    return scheduler.state


def test_threads_are_named_after_the_scheduler() -> None:
    before = set(threading.enumerate())
    with running_scheduler(3, name="ch1") as scheduler:
        names = {t.name for t in set(threading.enumerate()) - before}
        assert names == {"ch1-scheduler", "ch1-worker-0", "ch1-worker-1", "ch1-worker-2"}
        assert state_of(scheduler) is SchedulerState.RUNNING
        assert "ch1" in repr(scheduler)
    assert state_of(scheduler) is SchedulerState.STOPPED
    assert not (set(threading.enumerate()) - before)


def test_max_tasks_defaults_to_four_per_worker_and_must_fit_the_pool() -> None:
    pool = ThreadPool("m", 2)
    try:
        assert Scheduler("m", pool).max_tasks == 8
        with pytest.raises(ValueError, match="max_tasks"):
            Scheduler("m", pool, max_tasks=9)
        with pytest.raises(ValueError, match="max_tasks"):
            Scheduler("m", pool, max_tasks=0)
        with pytest.raises(ValueError, match="END_TO_START"):
            Scheduler("m", pool, CommitOrderClock())
    finally:
        pool.stop()


def test_enqueue_blocks_while_max_tasks_are_in_flight() -> None:
    log = Log()
    tasks = [GatedTask(i, log) for i in range(3)]
    hold = tasks[0].gate(*APPLY)
    tasks[1].gate(*APPLY).set()
    with running_scheduler(1, max_tasks=2) as scheduler:
        scheduler.enqueue(tasks[0], DelayedSchedule(0, 0))
        scheduler.enqueue(tasks[1], DelayedSchedule(1, 1))  # waits for task 0
        assert scheduler.in_flight == 2
        producer = threading.Thread(
            target=scheduler.enqueue, args=(tasks[2], DelayedSchedule(2, 0)), name="producer"
        )
        producer.start()
        producer.join(0.05)
        assert producer.is_alive(), "enqueue did not block at max_tasks"
        assert scheduler.in_flight == 2
        hold.set()
        producer.join(TIMEOUT)
        assert not producer.is_alive()
        assert scheduler.wait_idle(TIMEOUT)
    assert sorted(log.began(*APPLY)) == [0, 1, 2]


def test_wait_idle_times_out_while_a_task_runs() -> None:
    log = Log()
    task = GatedTask(0, log)
    hold = task.gate(*APPLY)
    with running_scheduler(1) as scheduler:
        assert scheduler.wait_idle(0)
        scheduler.enqueue(task, DelayedSchedule(0, 0))
        assert not scheduler.wait_idle(0.01)
        hold.set()
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.in_flight == 0


def test_stop_runs_the_tasks_in_flight_then_is_idempotent() -> None:
    log = Log()
    tasks = [GatedTask(i, log) for i in range(5)]
    pool = ThreadPool("s", 2)
    scheduler = Scheduler("s", pool)
    scheduler.register_phase(CommitOrderClock())
    scheduler.start()
    for task in tasks:
        scheduler.enqueue(task, TransactionOrderSchedule(task.task_id, task.task_id, task.task_id))
    assert scheduler.stop() == []
    assert state_of(scheduler) is SchedulerState.STOPPED
    assert log.began(*START) == [0, 1, 2, 3, 4]
    assert scheduler.stop() == []
    with pytest.raises(SchedulerStopped):
        scheduler.enqueue(GatedTask(5, log), DelayedSchedule(5, 0))


def test_stop_with_cancel_pending_returns_the_tasks_it_dropped() -> None:
    log = Log()
    tasks = [GatedTask(i, log) for i in range(4)]
    hold = tasks[0].gate(*APPLY)
    running = tasks[0].on(*APPLY)
    with running_scheduler(2, commit_order=True) as scheduler:
        for task in tasks:
            delay = min(task.task_id, 1)
            scheduler.enqueue(task, TransactionOrderSchedule(task.task_id, delay, task.task_id))
        assert running.wait(TIMEOUT)
        stopper = threading.Thread(
            target=lambda: dropped.extend(scheduler.stop(cancel_pending=True)), name="stopper"
        )
        dropped: list[object] = []
        stopper.start()
        stopper.join(0.05)
        assert stopper.is_alive(), "stop did not wait for the running task"
        hold.set()
        stopper.join(TIMEOUT)
        assert not stopper.is_alive()
    # Tasks 1..3 waited for task 0; task 0 itself was running and had a phase left.
    assert sorted(t.task_id for t in dropped) == [0, 1, 2, 3]  # type: ignore[attr-defined]
    assert log.began(*APPLY) == [0]
    assert log.began(*START) == []


def test_stop_before_start_stops_the_pool() -> None:
    pool = ThreadPool("n", 2)
    scheduler = Scheduler("n", pool)
    with pytest.raises(SchedulerStopped, match="not running"):
        scheduler.enqueue(GatedTask(0, Log()), DelayedSchedule(0, 0))
    assert scheduler.stop() == []
    assert state_of(scheduler) is SchedulerState.STOPPED
    with pytest.raises(RuntimeError, match="already started"):
        scheduler.start()


def test_a_failing_task_stops_dispatching_and_is_recorded() -> None:
    log = Log()
    tasks = [GatedTask(i, log) for i in range(6)]
    tasks[2].fail_at = START
    with running_scheduler(2, commit_order=True) as scheduler:
        for task in tasks[:4]:
            scheduler.enqueue(task, TransactionOrderSchedule(task.task_id, 0, task.task_id))
        assert scheduler.wait_idle(TIMEOUT)
        assert isinstance(scheduler.error, Boom)
        assert state_of(scheduler) is SchedulerState.FAILED
        with pytest.raises(SchedulerStopped) as raised:
            scheduler.enqueue(tasks[4], DelayedSchedule(4, 0))
        assert raised.value.__cause__ is scheduler.error
        dropped = scheduler.stop()
    # Tasks 0 and 1 committed; 2 failed at its START, so 3 never started its commit phase.
    assert log.began(*START) == [0, 1, 2]
    assert sorted(log.began(*REST)) == [0, 1]
    assert [t.task_id for t in dropped] == [3]  # type: ignore[attr-defined]
    assert state_of(scheduler) is SchedulerState.STOPPED
    assert isinstance(scheduler.error, Boom)


def test_a_failure_wakes_a_producer_blocked_at_max_tasks() -> None:
    log = Log()
    tasks = [GatedTask(i, log) for i in range(3)]
    hold = tasks[0].gate(*APPLY)
    tasks[0].fail_at = APPLY
    outcome: list[BaseException] = []

    def produce() -> None:
        try:
            scheduler.enqueue(tasks[2], DelayedSchedule(2, 0))
        except SchedulerStopped as exc:
            outcome.append(exc)

    with running_scheduler(1, max_tasks=2) as scheduler:
        scheduler.enqueue(tasks[0], DelayedSchedule(0, 0))
        scheduler.enqueue(tasks[1], DelayedSchedule(1, 1))
        producer = threading.Thread(target=produce, name="producer")
        producer.start()
        hold.set()
        producer.join(TIMEOUT)
        assert not producer.is_alive()
        assert scheduler.wait_idle(TIMEOUT)
    assert len(outcome) == 1
    assert log.began(*APPLY) == [0]


def test_enqueue_rejects_schedules_its_clocks_refuse() -> None:
    log = Log()
    with running_scheduler(1) as scheduler:
        with pytest.raises(ValueError, match="not registered"):
            scheduler.enqueue(GatedTask(0, log), TransactionOrderSchedule(0, 0, 0))
        with pytest.raises(ValueError, match="refused"):
            scheduler.enqueue(GatedTask(0, log), DelayedSchedule(0, 1))  # waits for itself
        scheduler.enqueue(GatedTask(0, log), DelayedSchedule(0, 0))
        assert scheduler.wait_idle(TIMEOUT)
        with pytest.raises(ValueError, match="refused"):
            scheduler.enqueue(GatedTask(0, log), DelayedSchedule(0, 0))  # already ran


def test_enqueue_after_waits_for_the_predecessor_through_the_tracker() -> None:
    log = Log()
    tasks = [GatedTask(i, log) for i in range(3)]
    hold = tasks[1].gate(*APPLY)
    with running_scheduler(3, tracker=SinglePredecessorTracker()) as scheduler:
        for task in tasks[:2]:
            scheduler.enqueue(task, DelayedSchedule(task.task_id, 0))
        # Task 2 has no clock delay but must follow task 1.
        scheduler.enqueue(tasks[2], DelayedSchedule(2, 0), after=1)
        assert scheduler.statistics().queued == 1
        hold.set()
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.error is None
    assert log.index(1, *APPLY, True) < log.index(2, *APPLY, False)


def test_a_phase_on_an_end_to_start_phase_clock_ticks_when_it_ends() -> None:
    log = Log()
    phase_clock = LwmClock()
    tasks = [GatedTask(i, log) for i in range(3)]
    hold = tasks[0].gate(1, Step.WHOLE)
    sentinel = GatedTask(3, log)
    sentinel_ran = sentinel.on(*APPLY)
    with running_scheduler(2) as scheduler:
        assert scheduler.register_phase(phase_clock) == 1
        # Phase 1 of task i may start once phase 1 of every earlier task ended.
        for task in tasks:
            i = task.task_id
            scheduler.enqueue(task, Schedule(i, [Phase(0, 0), Phase(1, i)]))
        scheduler.enqueue(sentinel, DelayedSchedule(3, 0))
        # One worker holds task 0 in phase 1; the other ran phase 0 of tasks 1 and 2 before
        # the sentinel, and they wait for task 0's phase 1 to end.
        assert sentinel_ran.wait(TIMEOUT)
        assert scheduler.statistics().queued == 2
        hold.set()
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.error is None
    assert phase_clock.now() == 3
    assert scheduler.clock.now() == 4
    assert log.index(0, 1, Step.WHOLE, True) < log.index(1, 1, Step.WHOLE, False)
    assert log.index(1, 1, Step.WHOLE, True) < log.index(2, 1, Step.WHOLE, False)


def test_a_clock_that_advances_independently_is_polled() -> None:
    class Released(LogicalClock):
        """Window 1 opens when the test says so, without a tick."""

        def __init__(self) -> None:
            super().__init__()
            self.open = threading.Event()

        def now(self) -> int:
            return 1 if self.open.is_set() else 0

        def add_time(self, task_id: int, time: int) -> bool:
            return True

        def tick(self, task_id: int) -> bool:
            return False

        def advances_independently(self) -> bool:
            return True

    log = Log()
    clock = Released()
    task = GatedTask(0, log)
    ran = task.on(*APPLY)
    with running_scheduler(1, clock=clock) as scheduler:
        scheduler.enqueue(task, DelayedSchedule(0, 1))
        assert scheduler.statistics().queued == 1
        clock.open.set()
        assert ran.wait(TIMEOUT)
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.statistics().wakeups >= 1


def test_a_task_cannot_stop_its_scheduler() -> None:
    outcome: list[BaseException] = []

    class Stopper:
        def run(self, phase: int, step: Step) -> None:
            try:
                scheduler.stop()
            except RuntimeError as exc:
                outcome.append(exc)

    with running_scheduler(1) as scheduler:
        scheduler.enqueue(Stopper(), DelayedSchedule(0, 0))
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.error is None
    assert len(outcome) == 1


def test_scheduler_and_pool_are_context_managers() -> None:
    log = Log()
    with ThreadPool("cm", 1) as pool:
        pool.submit(lambda: None)
    assert "stopped" in repr(pool)
    held = GatedTask(6, log)
    with pytest.raises(Boom), Scheduler("cm", ThreadPool("cm", 1)) as scheduler:
        scheduler.start()
        scheduler.enqueue(GatedTask(0, log), DelayedSchedule(0, 0))
        scheduler.enqueue(held, DelayedSchedule(6, 5))  # waits for tasks never enqueued
        raise Boom("the producer failed")
    # Leaving the block cancelled the waiting task instead of waiting for it forever.
    assert state_of(scheduler) is SchedulerState.STOPPED
    assert 6 not in log.began(*APPLY)
