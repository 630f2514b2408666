"""The scheduler's decisions, as plain state without threads or locks (style §7 rule 4).

``Dispatcher`` holds every task the scheduler owns and answers, for each event, which tasks
are ready to run now. The ``Scheduler`` calls it under its lock and hands the ready tasks to
the thread pool. A task is in exactly one place: a clock queue (waiting for its phase's time),
the blocked set (its global delay reached, waiting for the dependency tracker), or handed out
(ready or running on a worker).

The scheduling pass of DES.SH.0150 is ``collect()``: (1) phase-queue tasks whose clock is
ready, (2) waiting tasks whose delay the global clock reached, to the pool or to the blocked
set, (3) blocked tasks the tracker reports ready. The event methods run only the steps the
event can affect: a START tick runs step 1 for its clock, the end of a task runs steps 2 and 3.
"""

from __future__ import annotations

from heapq import heappop, heappush

from spark_replica.applier_core.scheduler.clocks import ClockKind, SchedulerClock
from spark_replica.applier_core.scheduler.schedules import Schedule, Task
from spark_replica.applier_core.scheduler.trackers import DependencyTracker

#: A clock queue: (time, task id, entry), the lowest time first, then the lowest task id
#: (WL10500.SCHED.2).
_Queue = list[tuple[int, int, "Entry"]]


class Entry:
    """A task the scheduler owns: its schedule and the phase it is at."""

    __slots__ = ("phase", "phases", "task", "task_id", "unblocked")

    def __init__(self, task: Task, schedule: Schedule) -> None:
        self.task = task
        self.task_id = schedule.task_id
        self.phases = schedule.phases
        self.phase = 0
        #: Handed out by ``unblock`` although its clock was not ready.
        self.unblocked = False

    def __repr__(self) -> str:
        return f"<Entry task {self.task_id} phase {self.phase}/{len(self.phases)}>"


class Dispatcher:
    """Which tasks may run, given the clocks and the tracker. Not thread-safe."""

    __slots__ = (
        "_blocked",
        "_clocks",
        "_dropped",
        "_halted",
        "_queues",
        "_start_to_start",
        "_tracker",
        "active",
        "in_flight",
        "ready_samples",
        "ready_sum",
    )

    def __init__(self, clock: SchedulerClock, tracker: DependencyTracker) -> None:
        if clock.kind is not ClockKind.END_TO_START:
            raise ValueError("the global clock must be END_TO_START")
        self._clocks: list[SchedulerClock] = [clock]
        self._start_to_start: list[bool] = [False]
        #: One queue per clock; queue 0 holds tasks waiting for their global delay.
        self._queues: list[_Queue] = [[]]
        self._blocked: dict[int, Entry] = {}
        self._tracker = tracker
        self._halted = False
        self._dropped: list[Entry] = []
        self.in_flight = 0
        """Tasks added and neither ended nor dropped."""
        self.active = 0
        """Tasks handed out (ready or running) and not reported back."""
        self.ready_sum = 0
        self.ready_samples = 0
        """``active`` summed after each release of tasks, and the number of releases."""

    @property
    def clock(self) -> SchedulerClock:
        return self._clocks[0]

    @property
    def halted(self) -> bool:
        return self._halted

    @property
    def dropped(self) -> list[Entry]:
        """Entries removed before running all their phases (``halt``, ``drop``)."""
        return self._dropped

    def register_phase(self, clock: SchedulerClock) -> int:
        """Add a phase clock; returns its index for ``Phase.clock``."""
        if any(clock is known for known in self._clocks):
            raise ValueError(f"clock already registered: {clock!r}")
        self._clocks.append(clock)
        self._start_to_start.append(clock.kind is ClockKind.START_TO_START)
        self._queues.append([])
        return len(self._clocks) - 1

    def is_start_to_start(self, entry: Entry) -> bool:
        """Whether the entry's current phase runs as START then REST."""
        return self._start_to_start[entry.phases[entry.phase].clock]

    # -- events --------------------------------------------------------------------------
    def add(self, task: Task, schedule: Schedule, after: int | None = None) -> Entry | None:
        """Take a task; returns its entry if it may run now.

        Every phase subscribes to its clock now, in task order. Raises ``ValueError`` for a
        phase clock that is not registered or a clock that refuses the subscription.
        """
        clocks = self._clocks
        task_id = schedule.task_id
        for phase in schedule.phases:
            if phase.clock >= len(clocks):
                raise ValueError(f"task {task_id}: phase clock {phase.clock} is not registered")
        for phase in schedule.phases:
            if not clocks[phase.clock].add_time(task_id, phase.time):
                raise ValueError(
                    f"task {task_id}: clock {phase.clock} refused time {phase.time} "
                    f"({clocks[phase.clock]!r})"
                )
        self._tracker.activate_task(task_id)
        if after is not None:
            self._tracker.add_dependency(after, task_id)
        self.in_flight += 1
        entry = Entry(task, schedule)
        if self._arrive(entry):
            self.active += 1
            self._sample()
            return entry
        return None

    def started(self, entry: Entry) -> list[Entry]:
        """``entry`` returned from START: tick its phase clock; returns the tasks released."""
        index = entry.phases[entry.phase].clock
        ready: list[Entry] = []
        if self._clocks[index].tick(entry.task_id) and not self._halted:
            self._release_phase(index, ready)
            self._hand_out(ready)
        return ready

    def finished(self, entry: Entry) -> list[Entry]:
        """``entry``'s phase ended (WHOLE or REST); returns the tasks that may run now, the
        entry itself first when its next phase may."""
        ready: list[Entry] = []
        self.active -= 1
        phase = entry.phases[entry.phase]
        if phase.clock and not self._start_to_start[phase.clock]:
            if self._clocks[phase.clock].tick(entry.task_id) and not self._halted:
                self._release_phase(phase.clock, ready)
        entry.phase += 1
        if entry.phase < len(entry.phases):
            if self._halted:
                self._drop(entry)
            elif self._arrive(entry):
                ready.insert(0, entry)
        else:
            self._end(entry, ready)
        self._hand_out(ready)
        return ready

    def failed(self, entry: Entry) -> None:
        """``entry`` raised: it leaves the scheduler without ending."""
        self.active -= 1
        self.in_flight -= 1

    def drop(self, entry: Entry) -> None:
        """A handed-out entry is not run (the scheduler halted before it started)."""
        self.active -= 1
        self._drop(entry)

    def halt(self) -> None:
        """Drop every queued task and release nothing more; handed-out tasks may finish."""
        self._halted = True
        waiting = [entry for queue in self._queues for _time, _task_id, entry in queue]
        waiting.extend(self._blocked.values())
        for queue in self._queues:
            queue.clear()
        self._blocked.clear()
        for entry in sorted(waiting, key=lambda e: e.task_id):
            self._drop(entry)

    def unblock(self) -> Entry | None:
        """Hand out the first task queued on a phase clock although its clock is not ready
        (the channel monitor's unblock, WL10500.UNBLOCK.1); None if no such task waits."""
        if self._halted:
            return None
        heads = [queue[0] for queue in self._queues[1:] if queue]
        if not heads:
            return None
        head = min(heads)
        queue = self._queues[head[2].phases[head[2].phase].clock]
        entry = heappop(queue)[2]
        entry.unblocked = True
        self.active += 1
        self._sample()
        return entry

    def collect(self) -> list[Entry]:
        """The full scheduling pass (DES.SH.0150); returns the tasks released."""
        ready: list[Entry] = []
        if self._halted:
            return ready
        for index in range(1, len(self._clocks)):
            self._release_phase(index, ready)
        self._release_waiting(ready)
        tracker = self._tracker
        for task_id in [t for t in self._blocked if tracker.check_ready(t)]:
            ready.append(self._blocked.pop(task_id))
        self._hand_out(ready)
        return ready

    # -- internals -----------------------------------------------------------------------
    def _arrive(self, entry: Entry) -> bool:
        """Queue ``entry`` for its current phase; True if it may run now instead."""
        phase = entry.phases[entry.phase]
        clock = self._clocks[phase.clock]
        if phase.time > clock.now():
            heappush(self._queues[phase.clock], (phase.time, entry.task_id, entry))
            return False
        if entry.phase == 0 and not self._tracker.check_ready(entry.task_id):
            self._blocked[entry.task_id] = entry
            return False
        return True

    def _end(self, entry: Entry, ready: list[Entry]) -> None:
        """The last phase of ``entry`` ended: tick the global clock, release what it allows."""
        self.in_flight -= 1
        task_id = entry.task_id
        moved = self._clocks[0].tick(task_id)
        successors = self._tracker.mark_dependency_met(task_id)
        if self._halted:
            return
        if moved:
            self._release_waiting(ready)
        blocked = self._blocked
        for successor in successors:
            found = blocked.pop(successor, None)
            if found is not None:
                ready.append(found)

    def _release_phase(self, index: int, ready: list[Entry]) -> None:
        queue = self._queues[index]
        if queue:
            now = self._clocks[index].now()
            while queue and queue[0][0] <= now:
                ready.append(heappop(queue)[2])

    def _release_waiting(self, ready: list[Entry]) -> None:
        queue = self._queues[0]
        if queue:
            now = self._clocks[0].now()
            check_ready = self._tracker.check_ready
            while queue and queue[0][0] <= now:
                entry = heappop(queue)[2]
                if check_ready(entry.task_id):
                    ready.append(entry)
                else:
                    self._blocked[entry.task_id] = entry

    def _hand_out(self, ready: list[Entry]) -> None:
        if ready:
            self.active += len(ready)
            self._sample()

    def _sample(self) -> None:
        self.ready_sum += self.active
        self.ready_samples += 1

    def _drop(self, entry: Entry) -> None:
        self.in_flight -= 1
        self._dropped.append(entry)

    def __repr__(self) -> str:
        queued = sum(len(queue) for queue in self._queues)
        return (
            f"<Dispatcher in_flight={self.in_flight} active={self.active} queued={queued} "
            f"blocked={len(self._blocked)}{' halted' if self._halted else ''}>"
        )
