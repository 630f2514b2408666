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
