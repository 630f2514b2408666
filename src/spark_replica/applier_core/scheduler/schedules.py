"""Tasks and their schedules: which phases a task runs, on which clock, at which time
(WL10500.TS.1-3, DES.SH.0050-0090).

A schedule is a list of phases. Phase 0 runs on the scheduler's global clock at the task's
``delay``; each later phase runs on a clock given to ``Scheduler.register_phase`` (clock 1 is
the first registered one). A task runs its phases in order, each once:

* on an END_TO_START clock the task is called once, ``run(phase, Step.WHOLE)``;
* on a START_TO_START clock it is called twice: ``run(phase, Step.START)``, after which the
  scheduler ticks the clock (releasing the next task's START), then at once on the same
  worker ``run(phase, Step.REST)``, in parallel with other tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import NamedTuple, Protocol

GLOBAL_CLOCK = 0
"""The clock index of phase 0: the scheduler's global clock."""
APPLY_PHASE = 0
"""``TransactionOrderSchedule``'s phase on the global clock."""
COMMIT_PHASE = 1
"""``TransactionOrderSchedule``'s phase on the commit-order clock."""


class Step(Enum):
    """Which part of a phase a task is asked to run."""

    WHOLE = "whole"
    """The whole of an END_TO_START phase."""
    START = "start"
    """The first part of a START_TO_START phase; the next task's START waits for it."""
    REST = "rest"
    """The rest of a START_TO_START phase, run right after START on the same worker."""


class Task(Protocol):
    def run(self, phase: int, step: Step) -> None:
        """Run ``step`` of ``phase``. Raising fails the task and stops the scheduler; retries
        happen inside ``run``."""
        ...


class Phase(NamedTuple):
    """One phase of a schedule: the index of its clock and its time on that clock."""

    clock: int
    """0 for the global clock, n for the n-th clock registered with ``register_phase``."""
    time: int


#: Builds a ``Phase`` without its generated ``__new__`` (a Python call per phase, and the
#: schedules below are made once per transaction).
_new_phase = tuple.__new__


class Schedule:
    """A task id and its phases: phase 0 on the global clock, later ones on phase clocks."""

    __slots__ = ("phases", "task_id")

    def __init__(self, task_id: int, phases: Sequence[Phase]) -> None:
        if not phases:
            raise ValueError("a schedule needs at least one phase")
        if phases[0].clock != GLOBAL_CLOCK:
            raise ValueError("phase 0 runs on the global clock")
        if any(phase.clock <= GLOBAL_CLOCK for phase in phases[1:]):
            raise ValueError("phases after the first run on registered phase clocks (>= 1)")
        self.task_id = task_id
        self.phases: tuple[Phase, ...] = tuple(phases)

    @property
    def delay(self) -> int:
        """The time of phase 0 on the global clock."""
        return self.phases[0].time

    def __repr__(self) -> str:
        phases = ", ".join(f"clock {p.clock} @ {p.time}" for p in self.phases)
        return f"<{type(self).__name__} task {self.task_id}: {phases}>"


class DelayedSchedule(Schedule):
    """One END_TO_START phase on the global clock at ``delay``: the task runs once."""

    __slots__ = ()

    def __init__(self, task_id: int, delay: int) -> None:
        # Valid as built: Schedule's checks are skipped (one schedule per transaction).
        self.task_id = task_id
        self.phases = (_new_phase(Phase, (GLOBAL_CLOCK, delay)),)


class TransactionOrderSchedule(Schedule):
    """Apply, then commit in order (WL10500.TS.2).

    Phase 0 (``APPLY_PHASE``) on the global clock at ``delay``; phase 1 (``COMMIT_PHASE``) on
    the commit-order clock (START_TO_START; registered phase clock ``commit_clock``) at
    ``commit_time``. The tasks with a commit phase need consecutive commit times.
    """

    __slots__ = ()

    def __init__(self, task_id: int, delay: int, commit_time: int, commit_clock: int = 1) -> None:
        if commit_clock <= GLOBAL_CLOCK:
            raise ValueError("phases after the first run on registered phase clocks (>= 1)")
        self.task_id = task_id
        self.phases = (
            _new_phase(Phase, (GLOBAL_CLOCK, delay)),
            _new_phase(Phase, (commit_clock, commit_time)),
        )

    @property
    def commit_time(self) -> int:
        return self.phases[COMMIT_PHASE].time
