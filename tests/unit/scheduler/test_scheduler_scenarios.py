"""The applier-core ordering scenarios of requirements §11.3 at the scheduler level:
T52-T55, T58 and T78 (unblock). Threads are ordered with events and barriers only."""

from __future__ import annotations

import threading

from spark_replica.applier_core.scheduler import (
    CommitOrderClock,
    DelayedSchedule,
    LogicalClock,
    LwmDependencyAdapter,
    Scheduler,
    SequentialClockAdapter,
    Step,
    ThreadPool,
    TransactionOrderSchedule,
)
from tests.unit.scheduler.helpers import (
    APPLY,
    REST,
    START,
    TIMEOUT,
    GatedTask,
    Log,
    WatchedLwmClock,
    running_scheduler,
)


def test_t52_independent_transactions_run_concurrently_and_a_dependent_one_waits() -> None:
    log = Log()
    adapter = LwmDependencyAdapter()
    barrier = threading.Barrier(3)
    tasks = [GatedTask(i, log, barrier=barrier) for i in range(3)]
    tasks.append(GatedTask(3, log))
    hold = tasks[2].gate(*APPLY)
    stream = [(0, 1), (0, 2), (0, 3), (3, 4)]
    delays = [adapter.solve(i, seq, lc).delay for i, (lc, seq) in enumerate(stream)]
    assert delays == [0, 0, 0, 3]
    with running_scheduler(4) as scheduler:
        for task in tasks[:3]:
            scheduler.enqueue(task, DelayedSchedule(task.task_id, delays[task.task_id]))
        scheduler.enqueue(tasks[3], DelayedSchedule(3, delays[3]))
        # The three met at the barrier, so they ran at the same time; task 2 is held, so the
        # fourth must wait in the scheduler.
        assert scheduler.statistics().queued == 1
        assert 3 not in log.began(*APPLY)
        hold.set()
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.error is None
    start_of_3 = log.index(3, *APPLY, done=False)
    assert all(log.index(t, *APPLY, done=True) < start_of_3 for t in range(3))


def test_t53_sequence_restart_keeps_task_ids_and_orders_across_it() -> None:
    log = Log()
    adapter = LwmDependencyAdapter()
    # Two source binlogs: (last_committed, sequence_number); the second restarts at 1.
    stream = [(0, 1), (0, 2), (0, 3), (0, 1), (0, 2), (2, 3)]
    solutions = [adapter.solve(i, seq, lc) for i, (lc, seq) in enumerate(stream)]
    assert [s.delay for s in solutions] == [0, 0, 0, 3, 3, 5]
    tasks = [GatedTask(i, log) for i in range(len(stream))]
    hold = tasks[1].gate(*APPLY)
    with running_scheduler(4) as scheduler:
        for task, solution in zip(tasks, solutions, strict=True):
            scheduler.enqueue(task, DelayedSchedule(task.task_id, solution.delay))
        assert scheduler.statistics().queued == 3  # tasks 3, 4, 5 wait for task 1
        hold.set()
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.error is None
    for later in (3, 4):
        start = log.index(later, *APPLY, done=False)
        assert all(log.index(t, *APPLY, done=True) < start for t in range(3))
    assert log.index(4, *APPLY, done=True) < log.index(5, *APPLY, done=False)


def test_t54_the_lwm_counts_tasks_finished_without_a_gap() -> None:
    log = Log()
    clock = WatchedLwmClock()
    tasks = [GatedTask(i, log) for i in range(4)]
    hold = tasks[2].gate(*APPLY)
    with running_scheduler(2, clock=clock) as scheduler:
        for task in tasks:
            scheduler.enqueue(task, DelayedSchedule(task.task_id, 0))
        for task_id in (0, 1, 3):
            assert clock.ticked(task_id).wait(TIMEOUT)
        assert scheduler.clock.now() == 2  # 0, 1 and 3 done
        hold.set()
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.clock.now() == 4  # 0..3 done
    assert clock.history == sorted(clock.history)


def test_t55_sequential_adapter_windows_on_the_logical_clock() -> None:
    log = Log()
    adapter = SequentialClockAdapter()
    stream = [(1, 0), (2, 1), (3, 1), (4, 3)]  # (sequence_number, last_committed)
    windows = [adapter.solve(i, seq, lc).delay for i, (seq, lc) in enumerate(stream)]
    assert windows == [1, 2, 2, 3]
    barrier = threading.Barrier(2)  # tasks 1 and 2 share window 2: they run together
    tasks = [GatedTask(0, log), GatedTask(1, log, barrier=barrier)]
    tasks += [GatedTask(2, log, barrier=barrier), GatedTask(3, log)]
    with running_scheduler(3, clock=LogicalClock()) as scheduler:
        for task, window in zip(tasks, windows, strict=True):
            scheduler.enqueue(task, DelayedSchedule(task.task_id, window))
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.error is None
    assert log.index(0, *APPLY, True) < min(log.index(t, *APPLY, False) for t in (1, 2))
    assert max(log.index(t, *APPLY, True) for t in (1, 2)) < log.index(3, *APPLY, False)


def test_t58_the_worker_that_applied_t2_picks_up_t3_while_t1_is_still_applying() -> None:
    log = Log()
    t1, t2, t3 = (GatedTask(i, log) for i in range(3))
    hold_t1, hold_t2 = t1.gate(*APPLY), t2.gate(*APPLY)
    t2_applying, t3_applying = t2.on(*APPLY), t3.on(*APPLY)
    with running_scheduler(2, commit_order=True) as scheduler:
        scheduler.enqueue(t1, TransactionOrderSchedule(0, 0, 0))
        scheduler.enqueue(t2, TransactionOrderSchedule(1, 0, 1))
        assert t2_applying.wait(TIMEOUT)
        scheduler.enqueue(t3, TransactionOrderSchedule(2, 0, 2))  # both workers are busy
        assert not t3_applying.is_set()
        hold_t2.set()
        # T2's apply ends; its commit waits for T1, but its worker goes on with T3.
        assert t3_applying.wait(TIMEOUT), "T3 did not start while T1 was applying"
        assert log.thread_of(2, *APPLY) == log.thread_of(1, *APPLY)
        assert log.thread_of(2, *APPLY) != log.thread_of(0, *APPLY)
        assert log.began(*START) == []
        hold_t1.set()
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.error is None
    assert log.began(*START) == [0, 1, 2]
    assert sorted(log.began(*REST)) == [0, 1, 2]


def test_t78_unblock_lets_one_phase_task_through_and_keeps_the_others_in_order() -> None:
    log = Log()
    t1, t2, t3 = (GatedTask(i, log) for i in range(3))
    sentinel = GatedTask(3, log)
    hold_t1, hold_t2, hold_t2_rest = t1.gate(*APPLY), t2.gate(*APPLY), t2.gate(*REST)
    sentinel_ran, t2_applying, t2_resting = sentinel.on(*APPLY), t2.on(*APPLY), t2.on(*REST)
    with running_scheduler(2, commit_order=True) as scheduler:
        assert not scheduler.unblock()  # nothing waits on a phase clock
        scheduler.enqueue(t1, TransactionOrderSchedule(0, 0, 0))
        scheduler.enqueue(t2, TransactionOrderSchedule(1, 0, 1))
        assert t2_applying.wait(TIMEOUT)
        scheduler.enqueue(t3, TransactionOrderSchedule(2, 0, 2))
        scheduler.enqueue(sentinel, DelayedSchedule(3, 0))
        hold_t2.set()
        # One worker is stuck in T1; the other applies T2, T3, then the sentinel: when the
        # sentinel runs, T2 and T3 wait for their commit turn.
        assert sentinel_ran.wait(TIMEOUT)
        assert scheduler.statistics().queued == 2
        assert scheduler.unblock()
        assert t2_resting.wait(TIMEOUT)
        # T2 got through although T1 has not registered; T3 did not.
        assert log.began(*START) == [1]
        assert scheduler.statistics().queued == 1
        assert scheduler.pool.queue_size() == 0
        hold_t2_rest.set()
        hold_t1.set()
        assert scheduler.wait_idle(TIMEOUT)
        assert scheduler.error is None
        assert not scheduler.unblock()
        assert scheduler.statistics().unblocks == 1
    # T1 still registered before T3: the commit order of the tasks not unblocked holds.
    assert log.began(*START) == [1, 0, 2]
    assert sorted(log.began(*REST)) == [0, 1, 2]


def test_unblock_on_a_stopped_scheduler_does_nothing() -> None:
    pool = ThreadPool("u", 1)
    scheduler = Scheduler("u", pool)
    scheduler.register_phase(CommitOrderClock())
    scheduler.stop()
    assert not scheduler.unblock()


def test_steps_of_a_commit_phase_run_on_one_worker() -> None:
    log = Log()
    tasks = [GatedTask(i, log) for i in range(6)]
    with running_scheduler(3, commit_order=True) as scheduler:
        for task in tasks:
            scheduler.enqueue(task, TransactionOrderSchedule(task.task_id, 0, task.task_id))
        assert scheduler.wait_idle(TIMEOUT)
    for task in tasks:
        assert log.thread_of(task.task_id, *START) == log.thread_of(task.task_id, *REST)
        assert log.index(task.task_id, *START, True) < log.index(task.task_id, *REST, False)
    assert log.began(*START) == list(range(6))
    assert {e.step for e in log.events} == {Step.WHOLE, Step.START, Step.REST}
