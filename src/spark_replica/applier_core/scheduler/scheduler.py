"""The scheduler: releases each task to the thread pool when its clocks allow (DES.SH.*,
WL10500.SCHED.1-8).

Tasks arrive with ``enqueue(task, schedule)`` and leave when their last phase ends, which
ticks the global clock with their id. The scheduler thread (``<name>-scheduler``) runs the
scheduling pass of DES.SH.0150 each time it wakes. So that no task waits for a thread
hand-off, the thread that causes an event runs the steps the event affects at once, under the
same lock: ``enqueue`` hands a task that may start to the pool itself, and a worker that ends a
phase releases the tasks that end allows, keeping the first for itself (it continues with the
task's next phase when that one may start, else with another task). The scheduler thread is
then needed only for clocks that advance by themselves, which it polls, and to finish: it
ends once a stop or a failure has been requested and no task is left in flight.

At most ``max_tasks`` tasks are in flight (enqueued, not ended); ``enqueue`` blocks at that
limit and resumes as soon as one of them ends. (MySQL waits for a quarter to end; measured
here, that hysteresis gained nothing, so the contract's plain rule stands.)

The scheduler times itself as MySQL's scheduler statistics do (OBS.STAT.SCHED): the tasks'
own run time (``sched_task_exec_time``) apart from the time workers spend in the scheduler's
callables around them (``thp_task_exec_time``), and the time ``enqueue`` takes beside its
waits for room. ``SchedulerStatistics.overhead_ns`` is the scheduling cost per task from these.
"""

from __future__ import annotations

import logging
import threading
from functools import partial
from time import monotonic, perf_counter_ns
from types import TracebackType

from spark_replica.applier_core.concurrency import ShardedCounter
from spark_replica.applier_core.scheduler.clocks import LwmClock, SchedulerClock
from spark_replica.applier_core.scheduler.dispatch import Dispatcher, Entry
from spark_replica.applier_core.scheduler.schedules import Schedule, Step, Task
from spark_replica.applier_core.scheduler.status import (
    SchedulerState,
    SchedulerStatistics,
    SchedulerStopped,
)
from spark_replica.applier_core.scheduler.thread_pool import ThreadPool
from spark_replica.applier_core.scheduler.trackers import DependencyTracker, TrackerStub

_log = logging.getLogger(__name__)

POLL_INTERVAL = 0.001
"""Seconds between passes while a registered clock advances independently."""


class Scheduler:
    """Dispatches tasks to ``pool`` as the global ``clock``, the phase clocks and ``tracker``
    allow (the channel's scheduler, DES.SH.0010).

    ``max_tasks`` (default 4 x the pool's workers, WL10500.SCHED.8) must fit in the pool's
    queue, so that handing a task to the pool never blocks a worker. The pool belongs to the
    scheduler from now on: ``stop()`` stops it.
    """

    def __init__(
        self,
        name: str,
        pool: ThreadPool,
        clock: SchedulerClock | None = None,
        tracker: DependencyTracker | None = None,
        max_tasks: int | None = None,
    ) -> None:
        max_tasks = 4 * pool.workers if max_tasks is None else max_tasks
        if not 1 <= max_tasks <= pool.capacity:
            raise ValueError(f"max_tasks must be 1..{pool.capacity} (the pool's capacity)")
        self._name = name
        self._pool = pool
        self._max_tasks = max_tasks
        # _lock guards everything below and the dispatcher; the conditions share it.
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._space = threading.Condition(self._lock)
        self._idle = threading.Condition(self._lock)
        self._dispatcher = Dispatcher(
            LwmClock() if clock is None else clock, TrackerStub() if tracker is None else tracker
        )
        self._state = SchedulerState.NEW
        self._error: BaseException | None = None
        self._notified = False
        self._producers = 0
        self._idle_waiters = 0
        self._poll: float | None = None
        self._wakeups = 0
        self._unblocks = 0
        self._ended = 0
        self._enqueue_ns = ShardedCounter()  # in enqueue, its waits for room apart
        self._room_wait_ns = 0
        self._task_ns = ShardedCounter()  # in tasks' run(), on the pool's workers
        self._thread: threading.Thread | None = None
        self._stop_lock = threading.Lock()
        if self._dispatcher.clock.advances_independently():
            self._poll = POLL_INTERVAL

    # -- properties ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def state(self) -> SchedulerState:
        return self._state

    @property
    def error(self) -> BaseException | None:
        """The exception of the first task that failed, or None."""
        return self._error

    @property
    def clock(self) -> SchedulerClock:
        """The global clock."""
        return self._dispatcher.clock

    def clock_now(self) -> int:
        """The global clock's time, read under the scheduler's lock (from any thread). With
        the LWM clock: the id of the first task that has not ended."""
        with self._lock:
            return self._dispatcher.clock.now()

    @property
    def pool(self) -> ThreadPool:
        return self._pool

    @property
    def max_tasks(self) -> int:
        return self._max_tasks

    @property
    def in_flight(self) -> int:
        """Tasks enqueued and not ended (a snapshot)."""
        return self._dispatcher.in_flight

    def statistics(self) -> SchedulerStatistics:
        with self._lock:
            d = self._dispatcher
            mean = d.ready_sum / d.ready_samples if d.ready_samples else 0.0
            return SchedulerStatistics(
                in_flight=d.in_flight,
                queued=d.in_flight - d.active,
                active=d.active,
                releases=d.ready_samples,
                mean_ready=mean,
                wakeups=self._wakeups,
                unblocks=self._unblocks,
                ended=self._ended,
                enqueue_ns=self._enqueue_ns.get(),
                room_wait_ns=self._room_wait_ns,
                task_exec_ns=self._task_ns.get(),
                pool_exec_ns=self._pool.busy_ns,
            )

    # -- life cycle ----------------------------------------------------------------------
    def register_phase(self, clock: SchedulerClock) -> int:
        """Register a phase clock; returns its index for ``Phase.clock`` (1 for the first).

        Register every phase before enqueueing tasks that use it.
        """
        with self._lock:
            index = self._dispatcher.register_phase(clock)
            if clock.advances_independently():
                self._poll = POLL_INTERVAL
            return index

    def start(self) -> None:
        """Start the scheduler thread, ``<name>-scheduler``."""
        with self._lock:
            if self._state is not SchedulerState.NEW:
                raise RuntimeError(f"scheduler {self._name} already started ({self._state.value})")
            self._state = SchedulerState.RUNNING
            self._thread = threading.Thread(target=self._main, name=f"{self._name}-scheduler")
            self._thread.start()

    def stop(self, *, cancel_pending: bool = False) -> list[Task]:
        """Stop accepting tasks, let those in flight end, then end the thread and the pool.

        With ``cancel_pending``, tasks waiting in a queue are dropped at once and tasks running
        stop after their current step. Returns the tasks that did not run all their phases
        (dropped by this call or after a failure), once; later calls return an empty list and
        change nothing. Raises ``RuntimeError`` when called from a pool worker (a task).
        """
        if self._pool.is_worker(threading.current_thread()):
            raise RuntimeError(f"a task cannot stop scheduler {self._name}")
        with self._stop_lock:
            with self._lock:
                if self._state is SchedulerState.STOPPED:
                    return []
                if self._state in (SchedulerState.NEW, SchedulerState.RUNNING):
                    self._state = SchedulerState.DRAINING
                if cancel_pending and not self._dispatcher.halted:
                    self._dispatcher.halt()
                self._notify_all_locked()
                thread = self._thread
            if thread is not None:
                thread.join()
            self._pool.stop()
            with self._lock:
                self._state = SchedulerState.STOPPED
                dropped = [entry.task for entry in self._dispatcher.dropped]
                self._dispatcher.dropped.clear()
                return dropped

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no task is queued or running; False if ``timeout`` seconds passed."""
        deadline = None if timeout is None else monotonic() + timeout
        with self._lock:
            self._idle_waiters += 1
            try:
                while self._dispatcher.in_flight:
                    if deadline is None:
                        self._idle.wait()
                    else:
                        remaining = deadline - monotonic()
                        if remaining <= 0:
                            return False
                        self._idle.wait(remaining)
                return True
            finally:
                self._idle_waiters -= 1

    # -- tasks ---------------------------------------------------------------------------
    def enqueue(self, task: Task, schedule: Schedule, *, after: int | None = None) -> None:
        """Hand ``task`` over; it runs its phases as ``schedule`` allows.

        Blocks while ``max_tasks`` tasks are in flight. ``after`` names a task that must end
        before this one starts (through the dependency tracker). Raises ``SchedulerStopped``
        when the scheduler is not running, and ``ValueError`` for a schedule its clocks refuse
        (a broken stream: the clocks may keep part of it, so stop the scheduler).
        """
        dispatcher = self._dispatcher
        started = perf_counter_ns()
        with self._lock:
            if dispatcher.in_flight >= self._max_tasks and self._state is SchedulerState.RUNNING:
                self._producers += 1
                waiting = perf_counter_ns()
                try:
                    while (
                        dispatcher.in_flight >= self._max_tasks
                        and self._state is SchedulerState.RUNNING
                    ):
                        self._space.wait()
                finally:
                    self._producers -= 1
                    waited = perf_counter_ns() - waiting
                    self._room_wait_ns += waited
                    started += waited
            if self._state is not SchedulerState.RUNNING:
                raise SchedulerStopped(
                    f"scheduler {self._name} is {self._state.value}, not running"
                ) from self._error
            entry = dispatcher.add(task, schedule, after)
        if entry is not None:
            self._pool.submit(partial(self._work, entry))
        self._enqueue_ns.add(perf_counter_ns() - started)

    def unblock(self) -> bool:
        """Let the first task waiting on a phase clock through although its clock is not
        ready (WL10500.UNBLOCK.1, for the channel monitor); one task per call.

        Its clock still ticks after its START, but out of turn, so the tasks before it keep
        their order. Returns False when no task waits on a phase clock.
        """
        with self._lock:
            if self._state not in (SchedulerState.RUNNING, SchedulerState.DRAINING):
                return False
            entry = self._dispatcher.unblock()
            if entry is None:
                return False
            self._unblocks += 1
        self._pool.submit(partial(self._work, entry))
        return True

    # -- threads -------------------------------------------------------------------------
    def _work(self, entry: Entry) -> None:
        """Run ``entry``'s phases on a pool worker, then any task their ends release."""
        clock = perf_counter_ns
        running = 0  # ns in the tasks' run()
        try:
            dispatcher = self._dispatcher
            lock = self._lock
            submit = self._pool.submit
            while True:
                if dispatcher.halted:
                    with lock:
                        dispatcher.drop(entry)
                        self._after_end_locked()
                    return
                task = entry.task
                phase = entry.phase
                try:
                    if dispatcher.is_start_to_start(entry):
                        started = clock()
                        task.run(phase, Step.START)
                        running += clock() - started
                        with lock:
                            released = dispatcher.started(entry)
                        for other in released:
                            submit(partial(self._work, other))
                        started = clock()
                        task.run(phase, Step.REST)
                    else:
                        started = clock()
                        task.run(phase, Step.WHOLE)
                    running += clock() - started
                    with lock:
                        ready = dispatcher.finished(entry)
                        if entry.phase == len(entry.phases):  # its last phase
                            self._ended += 1
                        self._after_end_locked()
                except BaseException as exc:  # noqa: BLE001 - a failed task stops the scheduler
                    self._fail(entry, exc)
                    return
                if not ready:
                    return
                entry = ready[0]
                for other in ready[1:]:
                    submit(partial(self._work, other))
        finally:
            self._task_ns.add(running)

    def _after_end_locked(self) -> None:
        """Wake whoever waits for room or for idleness (``_lock`` held)."""
        in_flight = self._dispatcher.in_flight
        if self._producers and in_flight < self._max_tasks:
            self._space.notify()
        if in_flight == 0:
            if self._idle_waiters:
                self._idle.notify_all()
            if self._state is not SchedulerState.RUNNING:
                self._notify_locked()

    def _fail(self, entry: Entry, exc: BaseException) -> None:
        with self._lock:
            self._dispatcher.failed(entry)
            first = self._error is None
            if first:
                self._error = exc
                if self._state in (SchedulerState.RUNNING, SchedulerState.DRAINING):
                    self._state = SchedulerState.FAILED
                self._dispatcher.halt()
            self._notify_all_locked()
        if first:
            _log.error(
                "scheduler %s: task %d failed in phase %d",
                self._name,
                entry.task_id,
                entry.phase,
                exc_info=exc,
            )

    def _notify_locked(self) -> None:
        self._notified = True
        self._wake.notify()

    def _notify_all_locked(self) -> None:
        self._notify_locked()
        self._space.notify_all()
        if self._dispatcher.in_flight == 0:
            self._idle.notify_all()

    def _main(self) -> None:
        """The scheduler thread: a scheduling pass per wake-up until stopped or failed and
        no task is left in flight."""
        dispatcher = self._dispatcher
        submit = self._pool.submit
        with self._lock:
            while True:
                if self._state is not SchedulerState.RUNNING and dispatcher.in_flight == 0:
                    return
                if not self._notified:
                    self._wake.wait(self._poll)
                self._notified = False
                self._wakeups += 1
                ready = dispatcher.collect()
                if ready:
                    self._lock.release()
                    try:
                        for entry in ready:
                            submit(partial(self._work, entry))
                    finally:
                        self._lock.acquire()

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """``stop()``; when the block raised, with ``cancel_pending`` (the tasks it would
        have enqueued next may be missing, so those waiting might never run)."""
        self.stop(cancel_pending=exc is not None)

    def __repr__(self) -> str:
        return (
            f"<Scheduler {self._name} {self._state.value} in_flight={self._dispatcher.in_flight} "
            f"now={self._dispatcher.clock.now()}>"
        )
