"""Tasks that record what runs where, gates that hold them, and a scheduler fixture."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from spark_replica.applier_core.scheduler import (
    CommitOrderClock,
    DependencyTracker,
    LwmClock,
    Scheduler,
    SchedulerClock,
    Step,
    ThreadPool,
)

TIMEOUT = 10.0
"""Seconds any wait in a test may take before the test fails (a hang guard, not an order)."""

APPLY = (0, Step.WHOLE)
START = (1, Step.START)
REST = (1, Step.REST)


@dataclass(frozen=True, slots=True)
class Event:
    task_id: int
    phase: int
    step: Step
    thread: str
    done: bool
    """False when the step began, True when it returned."""


class Log:
    """Every step of every task, in the order they began and ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[Event] = []

    def add(self, task_id: int, phase: int, step: Step, done: bool) -> None:
        with self._lock:
            self.events.append(Event(task_id, phase, step, threading.current_thread().name, done))

    def began(self, phase: int, step: Step) -> list[int]:
        """Task ids in the order they began ``step`` of ``phase``."""
        with self._lock:
            return [
                e.task_id for e in self.events if (e.phase, e.step) == (phase, step) and not e.done
            ]

    def thread_of(self, task_id: int, phase: int, step: Step) -> str:
        with self._lock:
            return next(
                e.thread
                for e in self.events
                if (e.task_id, e.phase, e.step) == (task_id, phase, step)
            )

    def index(self, task_id: int, phase: int, step: Step, done: bool) -> int:
        """Position of an event in the log."""
        with self._lock:
            return next(
                i
                for i, e in enumerate(self.events)
                if (e.task_id, e.phase, e.step, e.done) == (task_id, phase, step, done)
            )


class Boom(Exception):
    pass


@dataclass(eq=False)
class GatedTask:
    """A task that logs its steps; ``reached[(phase, step)]`` is set when the step begins,
    and the step waits for ``gates[(phase, step)]`` when there is one."""

    task_id: int
    log: Log
    gates: dict[tuple[int, Step], threading.Event] = field(default_factory=dict)
    reached: dict[tuple[int, Step], threading.Event] = field(default_factory=dict)
    fail_at: tuple[int, Step] | None = None
    barrier: threading.Barrier | None = None
    """Waited for at the start of the apply phase (proves tasks run at the same time)."""

    def gate(self, phase: int, step: Step) -> threading.Event:
        return self.gates.setdefault((phase, step), threading.Event())

    def on(self, phase: int, step: Step) -> threading.Event:
        return self.reached.setdefault((phase, step), threading.Event())

    def run(self, phase: int, step: Step) -> None:
        self.log.add(self.task_id, phase, step, False)
        if (phase, step) in self.reached:
            self.reached[(phase, step)].set()
        if phase == 0 and self.barrier is not None:
            self.barrier.wait(TIMEOUT)
        gate = self.gates.get((phase, step))
        if gate is not None and not gate.wait(TIMEOUT):
            raise TimeoutError(f"task {self.task_id}: gate {phase} {step} never opened")
        if self.fail_at == (phase, step):
            raise Boom(f"task {self.task_id} fails in {phase} {step}")
        self.log.add(self.task_id, phase, step, True)


class WatchedLwmClock(LwmClock):
    """An LWM clock that checks it never goes back and signals each task's tick."""

    def __init__(self) -> None:
        super().__init__()
        self.history: list[int] = [self.now()]
        self._ticked: dict[int, threading.Event] = {}
        self._guard = threading.Lock()

    def ticked(self, task_id: int) -> threading.Event:
        with self._guard:
            return self._ticked.setdefault(task_id, threading.Event())

    def tick(self, task_id: int) -> bool:
        moved = super().tick(task_id)
        assert self.now() >= self.history[-1], "the LWM went back"
        self.history.append(self.now())
        self.ticked(task_id).set()
        return moved


@contextmanager
def running_scheduler(
    workers: int,
    *,
    commit_order: bool = False,
    clock: SchedulerClock | None = None,
    tracker: DependencyTracker | None = None,
    max_tasks: int | None = None,
    name: str = "test",
) -> Iterator[Scheduler]:
    """A started scheduler over a new pool (with a commit-order phase clock when asked),
    stopped on exit even when the test fails."""
    pool = ThreadPool(name, workers)
    try:
        scheduler = Scheduler(name, pool, clock, tracker, max_tasks)
    except BaseException:
        pool.stop()
        raise
    if commit_order:
        scheduler.register_phase(CommitOrderClock())
    scheduler.start()
    try:
        yield scheduler
    finally:
        scheduler.stop(cancel_pending=True)
