"""Scheduler clocks: when may a task (or one of its phases) start (WL10500.CLK.IF, DES.SC.*).

A task subscribes to a time with ``add_time(task_id, time)`` and may run once ``time <=
now()``. Workers ``tick(task_id)`` as tasks finish (an END_TO_START clock) or start (a
START_TO_START clock), which moves ``now()`` forward; ``now()`` never goes back.

Clocks are plain state, free of locks: the scheduler calls every method under its own lock.
Reading ``now()`` from another thread is safe (one attribute read) and gives a recent value.

* ``LwmClock``: the global clock, the low-water mark of finished task ids (DA.LWM.3, CLK.LWMR).
* ``CommitOrderClock``: the commit phase's clock; registrations for commit in order (CLK.CO).
* ``LogicalClock``: windows of tasks; a window closes when its last task finishes (CLK.LC).
"""

from __future__ import annotations

from collections import deque
from enum import Enum
from typing import Protocol


class ClockKind(Enum):
    """How a clock orders the phases scheduled on it (DES.SH.0070)."""

    END_TO_START = "end_to_start"
    """A task may start once the tasks it waits for have ended; ticks when a task ends."""
    START_TO_START = "start_to_start"
    """A task may start once its predecessor has started; ticks after the START step."""


class SchedulerClock(Protocol):
    """What the scheduler needs from a clock (WL10500.CLK.IF)."""

    @property
    def kind(self) -> ClockKind: ...

    def now(self) -> int:
        """The current time; a task subscribed at ``time <= now()`` may run."""
        ...

    def start_time(self) -> int:
        """The time of a new clock."""
        ...

    def add_time(self, task_id: int, time: int) -> bool:
        """Subscribe ``task_id`` at ``time``; False when the clock cannot accept it."""
        ...

    def tick(self, task_id: int) -> bool:
        """Record that ``task_id`` ended (or started); True when ``now()`` moved."""
        ...

    def advances_independently(self) -> bool:
        """True if ``now()`` may move without a ``tick`` (the scheduler then polls it)."""
        ...


class LwmClock:
    """The low-water mark (LWM) of finished tasks: the global clock of the scheduler.

    ``now()`` is the number of tasks finished without a gap from ``start``: tasks 0..3 finished
    gives 4; tasks 0, 1 and 3 give 2 (T54). A task subscribed with delay ``d`` may run once
    ``d <= now()``, that is once every task before ``d`` has finished. Task ids are unique and
    a delay is at most the task's own id (a task never waits for itself or a later task).
    """

    __slots__ = ("_active", "_finished", "_lwm", "_start")

    def __init__(self, start: int = 0) -> None:
        if start < 0:
            raise ValueError(f"start must not be negative: {start}")
        self._start = start
        self._lwm = start
        #: Subscribed tasks not finished yet.
        self._active: set[int] = set()
        #: Tasks finished above the LWM (after a gap).
        self._finished: set[int] = set()

    @property
    def kind(self) -> ClockKind:
        return ClockKind.END_TO_START

    def now(self) -> int:
        return self._lwm

    def start_time(self) -> int:
        return self._start

    def add_time(self, task_id: int, time: int) -> bool:
        """Register ``task_id`` as active; False if it is finished, already active, below the
        LWM, or ``time`` is beyond ``task_id``."""
        if task_id < self._lwm or time > task_id or task_id in self._active:
            return False
        if task_id in self._finished:
            return False
        self._active.add(task_id)
        return True

    def tick(self, task_id: int) -> bool:
        """Mark ``task_id`` finished; True when the LWM moved.

        Raises ``ValueError`` for a task that is not active (never subscribed, or finished).
        """
        try:
            self._active.remove(task_id)
        except KeyError:
            raise ValueError(f"task {task_id} is not active on the LWM clock") from None
        if task_id != self._lwm:
            self._finished.add(task_id)
            return False
        lwm = task_id + 1
        finished = self._finished
        while lwm in finished:
            finished.remove(lwm)
            lwm += 1
        self._lwm = lwm
        return True

    def advances_independently(self) -> bool:
        return False

    def __repr__(self) -> str:
        return (
            f"<LwmClock lwm={self._lwm} active={len(self._active)} "
            f"finished_above={len(self._finished)}>"
        )


class CommitOrderClock:
    """The commit-order clock (START_TO_START): tasks register for commit one at a time.

    Tasks with a commit phase get consecutive commit times from ``start_time()``. ``now()`` is
    the next time to register: the task scheduled at ``t`` may start its commit phase when
    ``now() == t``, and ``tick`` after its START step adds one, releasing the next.

    A task let through early (``Scheduler.unblock``) ticks out of turn; its time is remembered
    and skipped when ``now()`` reaches it, so ``now()`` stays the lowest time not registered
    and the tasks before it still register in order.
    """

    __slots__ = ("_now", "_registered", "_start", "_taken", "_times")

    def __init__(self, start: int = 0) -> None:
        self._start = start
        self._now = start
        #: Commit time of every subscribed task that has not ticked, and those times.
        self._times: dict[int, int] = {}
        self._taken: set[int] = set()
        #: Times above now() that already ticked (out of turn).
        self._registered: set[int] = set()

    @property
    def kind(self) -> ClockKind:
        return ClockKind.START_TO_START

    def now(self) -> int:
        return self._now

    def start_time(self) -> int:
        return self._start

    def add_time(self, task_id: int, time: int) -> bool:
        """Subscribe ``task_id`` at commit time ``time``; False if the task is subscribed,
        the time has passed, or another task has it."""
        if task_id in self._times or time < self._now:
            return False
        if time in self._taken or time in self._registered:
            return False
        self._times[task_id] = time
        self._taken.add(time)
        return True

    def tick(self, task_id: int) -> bool:
        """``task_id`` has registered for commit; True when ``now()`` moved."""
        try:
            time = self._times.pop(task_id)
        except KeyError:
            raise ValueError(f"task {task_id} has no commit time to tick") from None
        self._taken.discard(time)
        if time != self._now:
            self._registered.add(time)
            return False
        now = time + 1
        registered = self._registered
        while now in registered:
            registered.remove(now)
            now += 1
        self._now = now
        return True

    def advances_independently(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<CommitOrderClock now={self._now} waiting={len(self._times)}>"


class LogicalClock:
    """Windows of tasks (END_TO_START): a task subscribed to window ``w`` runs once ``now()``
    reaches ``w``; the open window closes when its last task has finished and a later window
    has subscribers, which opens the next subscribed window (WL10500.CLK.LC).

    Windows are subscribed in non-decreasing order, as ``SequentialClockAdapter`` produces
    them. A window left without unfinished tasks stays open until a later one is subscribed,
    so a task subscribing to it late still runs at once.
    """

    __slots__ = ("_now", "_start", "_task_window", "_windows")

    def __init__(self, start: int = 0) -> None:
        self._start = start
        self._now = start
        #: [window, unfinished tasks] from the open window on, in window order.
        self._windows: deque[list[int]] = deque()
        self._task_window: dict[int, int] = {}

    @property
    def kind(self) -> ClockKind:
        return ClockKind.END_TO_START

    def now(self) -> int:
        return self._now

    def start_time(self) -> int:
        return self._start

    def add_time(self, task_id: int, time: int) -> bool:
        """Subscribe ``task_id`` to window ``time``; False if the task is subscribed or the
        window is before the open one or the last subscribed one."""
        windows = self._windows
        if task_id in self._task_window or time < self._now:
            return False
        if windows and time < windows[-1][0]:
            return False
        if windows and windows[-1][0] == time:
            windows[-1][1] += 1
        else:
            windows.append([time, 1])
        self._task_window[task_id] = time
        self._advance()
        return True

    def tick(self, task_id: int) -> bool:
        """``task_id`` finished; True when a window closed and ``now()`` moved."""
        try:
            window = self._task_window.pop(task_id)
        except KeyError:
            raise ValueError(f"task {task_id} is not subscribed to the logical clock") from None
        for entry in self._windows:
            if entry[0] == window:
                entry[1] -= 1
                break
        return self._advance()

    def _advance(self) -> bool:
        """Close finished windows and open the next subscribed one; True if ``now()`` moved."""
        windows = self._windows
        before = self._now
        while windows:
            window, unfinished = windows[0]
            if window > self._now:
                # Nothing is left at or before the open window: open the next one.
                self._now = window
            elif unfinished == 0 and len(windows) > 1:
                windows.popleft()
            else:
                break
        return self._now != before

    def advances_independently(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<LogicalClock now={self._now} windows={len(self._windows)}>"
