"""The dispatcher alone, without threads: which tasks each event releases.

The property test plays the workers: it picks at random which handed-out task takes its next
step, so every interleaving of step ends is reachable without a thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.scheduler import (
    ClockKind,
    CommitOrderClock,
    DelayedSchedule,
    LwmClock,
    LwmDependencyAdapter,
    SinglePredecessorTracker,
    Step,
    TrackerStub,
    TransactionOrderSchedule,
)
from spark_replica.applier_core.scheduler.dispatch import Dispatcher, Entry


@dataclass
class Noop:
    task_id: int
    calls: list[tuple[int, Step]] = field(default_factory=list)

    def run(self, phase: int, step: Step) -> None:
        self.calls.append((phase, step))


def _dispatcher(commit_order: bool = False) -> Dispatcher:
    dispatcher = Dispatcher(LwmClock(), TrackerStub())
    if commit_order:
        assert dispatcher.register_phase(CommitOrderClock()) == 1
    return dispatcher


def _ids(entries: list[Entry]) -> list[int]:
    return [entry.task_id for entry in entries]


def test_a_task_whose_delay_is_reached_is_ready_at_once() -> None:
    dispatcher = _dispatcher()
    first = dispatcher.add(Noop(0), DelayedSchedule(0, 0))
    assert first is not None and first.task_id == 0
    assert dispatcher.add(Noop(1), DelayedSchedule(1, 1)) is None
    assert dispatcher.add(Noop(2), DelayedSchedule(2, 1)) is None
    assert (dispatcher.in_flight, dispatcher.active) == (3, 1)
    assert _ids(dispatcher.finished(first)) == [1, 2]
    assert (dispatcher.in_flight, dispatcher.active) == (2, 2)
    assert dispatcher.clock.now() == 1


def test_the_commit_phase_follows_the_commit_clock() -> None:
    dispatcher = _dispatcher(commit_order=True)
    entries = [dispatcher.add(Noop(i), TransactionOrderSchedule(i, 0, i)) for i in range(3)]
    e0, e1, e2 = entries
    assert e0 is not None and e1 is not None and e2 is not None
    # Task 1 applied first: its commit waits for task 0's.
    assert dispatcher.finished(e1) == []
    assert dispatcher.finished(e2) == []
    # Task 0 applied: it goes on to its commit phase at once.
    assert dispatcher.finished(e0) == [e0]
    assert dispatcher.is_start_to_start(e0)
    assert dispatcher.started(e0) == [e1]  # its START releases task 1's START
    assert dispatcher.finished(e0) == []  # task 0 ended; the LWM is 1
    assert dispatcher.clock.now() == 1
    assert dispatcher.started(e1) == [e2]
    assert dispatcher.finished(e1) == []
    assert dispatcher.started(e2) == []
    assert dispatcher.finished(e2) == []
    assert (dispatcher.in_flight, dispatcher.active, dispatcher.clock.now()) == (0, 0, 3)


def test_unblock_hands_out_the_first_task_waiting_on_a_phase_clock() -> None:
    dispatcher = _dispatcher(commit_order=True)
    entries = [dispatcher.add(Noop(i), TransactionOrderSchedule(i, 0, i)) for i in range(3)]
    e0, e1, e2 = entries
    assert e0 is not None and e1 is not None and e2 is not None
    assert dispatcher.unblock() is None
    dispatcher.finished(e2)
    dispatcher.finished(e1)
    assert dispatcher.unblock() is e1
    assert e1.unblocked
    assert dispatcher.started(e1) == []  # out of turn: the clock stays at 0
    assert dispatcher.finished(e1) == []
    assert dispatcher.finished(e0) == [e0]
    assert dispatcher.started(e0) == [e2]  # 0 registered, 1 had: 2 is next
    assert "in_flight=2" in repr(dispatcher)


def test_the_tracker_holds_a_task_whose_delay_is_reached() -> None:
    dispatcher = Dispatcher(LwmClock(), SinglePredecessorTracker())
    e0 = dispatcher.add(Noop(0), DelayedSchedule(0, 0))
    e1 = dispatcher.add(Noop(1), DelayedSchedule(1, 0))
    assert e0 is not None and e1 is not None
    assert dispatcher.add(Noop(2), DelayedSchedule(2, 0), after=1) is None
    assert dispatcher.collect() == []
    assert dispatcher.finished(e0) == []
    assert _ids(dispatcher.finished(e1)) == [2]


def test_halt_drops_what_waits_and_what_would_come_next() -> None:
    dispatcher = _dispatcher(commit_order=True)
    e0 = dispatcher.add(Noop(0), TransactionOrderSchedule(0, 0, 0))
    e1 = dispatcher.add(Noop(1), TransactionOrderSchedule(1, 0, 1))
    assert dispatcher.add(Noop(2), TransactionOrderSchedule(2, 2, 2)) is None
    assert e0 is not None and e1 is not None
    assert dispatcher.finished(e1) == []
    dispatcher.halt()
    assert dispatcher.halted
    assert _ids(dispatcher.dropped) == [1, 2]
    assert dispatcher.finished(e0) == []  # its commit phase is not dispatched
    assert _ids(dispatcher.dropped) == [1, 2, 0]
    assert dispatcher.unblock() is None
    assert dispatcher.collect() == []
    assert (dispatcher.in_flight, dispatcher.active) == (0, 0)


class ManualClock:
    """A clock the test moves (it advances independently)."""

    def __init__(self, kind: ClockKind) -> None:
        self.kind = kind
        self.time = 0

    def now(self) -> int:
        return self.time

    def start_time(self) -> int:
        return 0

    def add_time(self, task_id: int, time: int) -> bool:
        return True

    def tick(self, task_id: int) -> bool:
        return False

    def advances_independently(self) -> bool:
        return True


class ManualTracker(TrackerStub):
    """Tasks in ``held`` are not ready until the test removes them."""

    def __init__(self, *held: int) -> None:
        self.held = set(held)

    def check_ready(self, task_id: int) -> bool:
        return task_id not in self.held


def test_collect_runs_the_three_steps() -> None:
    tracker = ManualTracker(2)
    dispatcher = Dispatcher(ManualClock(ClockKind.END_TO_START), tracker)
    phase_clock = ManualClock(ClockKind.START_TO_START)
    dispatcher.register_phase(phase_clock)
    e0 = dispatcher.add(Noop(0), TransactionOrderSchedule(0, 0, 1))
    assert e0 is not None
    assert dispatcher.add(Noop(1), DelayedSchedule(1, 1)) is None
    assert dispatcher.add(Noop(2), DelayedSchedule(2, 1)) is None
    assert dispatcher.finished(e0) == []  # commit time 1 > now 0
    assert dispatcher.collect() == []
    phase_clock.time = 1
    dispatcher.clock.time = 1  # type: ignore[attr-defined]
    # (1) the phase task, (2) task 1, while task 2 goes to the blocked set.
    released = dispatcher.collect()
    assert _ids(released) == [0, 1]
    assert released[0] is e0
    tracker.held.clear()
    assert _ids(dispatcher.collect()) == [2]  # (3) the tracker now reports it ready
    assert dispatcher.collect() == []


_STEPS = st.lists(st.tuples(st.integers(0, 12), st.booleans()), min_size=1, max_size=60)


@settings(max_examples=400, deadline=None, database=None)
@given(_STEPS, st.booleans(), st.integers(1, 8), st.data())
def test_every_interleaving_respects_the_clocks(
    steps: list[tuple[int, bool]], commit_order: bool, max_tasks: int, data: st.DataObject
) -> None:
    # A source stream: sequence numbers from 1 (restarting at 1), last_committed lagging.
    adapter = LwmDependencyAdapter()
    schedules = []
    seq = 0
    for task_id, (lag, restart) in enumerate(steps):
        seq = 1 if restart or seq == 0 else seq + 1
        delay = adapter.solve(task_id, seq, max(0, seq - 1 - lag)).delay
        schedules.append(
            TransactionOrderSchedule(task_id, delay, task_id)
            if commit_order
            else DelayedSchedule(task_id, delay)
        )
    dispatcher = _dispatcher(commit_order)
    tasks = [Noop(i) for i in range(len(schedules))]
    ended: set[int] = set()
    started: list[int] = []
    lwm = [0]
    #: Handed-out entries and whether they are between START and REST.
    handed: list[tuple[Entry, bool]] = []

    def take(entries: list[Entry]) -> None:
        for entry in entries:
            if entry.phase == 0:
                delay = schedules[entry.task_id].delay
                assert all(t in ended for t in range(delay)), "started before its delay"
            handed.append((entry, False))

    queued = 0
    while queued < len(schedules) or handed:
        if queued < len(schedules) and (
            not handed or (dispatcher.in_flight < max_tasks and data.draw(st.booleans()))
        ):
            entry = dispatcher.add(tasks[queued], schedules[queued])
            take([] if entry is None else [entry])
            queued += 1
            continue
        assert handed, "nothing can run: the dispatcher stalled"
        entry, mid = handed.pop(data.draw(st.integers(0, len(handed) - 1)))
        task = tasks[entry.task_id]
        if dispatcher.is_start_to_start(entry) and not mid:
            task.run(entry.phase, Step.START)
            started.append(entry.task_id)
            handed.append((entry, True))
            take(dispatcher.started(entry))
            continue
        task.run(entry.phase, Step.REST if mid else Step.WHOLE)
        if entry.phase == len(entry.phases) - 1:
            ended.add(entry.task_id)
        take(dispatcher.finished(entry))
        assert dispatcher.clock.now() >= lwm[-1], "the LWM went back"
        lwm.append(dispatcher.clock.now())
    assert ended == set(range(len(schedules)))
    assert dispatcher.clock.now() == len(schedules)
    assert (dispatcher.in_flight, dispatcher.active) == (0, 0)
    expected = [(0, Step.WHOLE)] + ([(1, Step.START), (1, Step.REST)] if commit_order else [])
    assert all(task.calls == expected for task in tasks)
    if commit_order:
        assert started == sorted(started)
