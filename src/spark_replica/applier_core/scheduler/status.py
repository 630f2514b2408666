"""What the scheduler reports: its state, its statistics, and the error of a stopped one."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class SchedulerState(Enum):
    NEW = "new"
    RUNNING = "running"
    """Accepting and dispatching tasks."""
    DRAINING = "draining"
    """``stop()`` called: no new tasks; those in flight run to their end."""
    FAILED = "failed"
    """A task raised: nothing more is dispatched; tasks running finish their current step."""
    STOPPED = "stopped"
    """The scheduler thread and the pool have ended."""


class SchedulerStopped(RuntimeError):
    """Raised by ``enqueue`` when the scheduler is not running (stopping, stopped, failed)."""


@dataclass(frozen=True, slots=True)
class SchedulerStatistics:
    in_flight: int
    """Tasks enqueued and not ended."""
    queued: int
    """Tasks waiting for a clock or a dependency."""
    active: int
    """Tasks handed to the pool (ready or running)."""
    releases: int
    """Times tasks were handed out (each may hand out several)."""
    mean_ready: float
    """Mean number of tasks ready or running, sampled at each release."""
    wakeups: int
    """Passes of the scheduler thread."""
    unblocks: int
    """Tasks let through by ``unblock()``."""
    ended: int = 0
    """Tasks that ran all their phases."""
    enqueue_ns: int = 0
    """Nanoseconds producers spent in ``enqueue``, their waits for room apart."""
    room_wait_ns: int = 0
    """Nanoseconds producers waited in ``enqueue`` for a task in flight to end."""
    task_exec_ns: int = 0
    """Nanoseconds in the tasks' own ``run`` (MySQL's ``sched_task_exec_time``)."""
    pool_exec_ns: int = 0
    """Nanoseconds the pool's workers spent in the scheduler's callables: the tasks' runs
    and the scheduler's work around them (MySQL's ``thp_task_exec_time``)."""

    @property
    def callback_ns(self) -> int:
        """The workers' time in the scheduler's own work around the tasks."""
        return max(0, self.pool_exec_ns - self.task_exec_ns)

    @property
    def overhead_ns(self) -> float:
        """The scheduler's cost per ended task: its work in ``enqueue`` and around the
        task on the worker, in nanoseconds (0.0 before a task ends)."""
        if not self.ended:
            return 0.0
        return (self.enqueue_ns + self.callback_ns) / self.ended
