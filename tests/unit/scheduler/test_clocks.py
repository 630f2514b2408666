"""Clocks: the LWM (T54), commit order, logical windows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.scheduler import (
    ClockKind,
    CommitOrderClock,
    LogicalClock,
    LwmClock,
    SchedulerClock,
)


def _subscribe(clock: SchedulerClock, count: int) -> None:
    for task_id in range(count):
        assert clock.add_time(task_id, 0)


def test_the_lwm_is_the_count_of_tasks_done_without_a_gap() -> None:
    clock = LwmClock()
    assert (clock.kind, clock.now(), clock.start_time()) == (ClockKind.END_TO_START, 0, 0)
    assert not clock.advances_independently()
    _subscribe(clock, 4)
    assert clock.tick(0)
    assert not clock.tick(3)
    assert clock.tick(1)
    assert clock.now() == 2  # 0, 1 and 3 done (T54)
    assert clock.tick(2)
    assert clock.now() == 4  # 0..3 done
    assert "lwm=4" in repr(clock)


def test_the_lwm_clock_refuses_what_it_cannot_order() -> None:
    clock = LwmClock(start=5)
    assert clock.start_time() == clock.now() == 5
    assert not clock.add_time(4, 0)  # below the LWM
    assert not clock.add_time(6, 7)  # waits for itself
    assert clock.add_time(6, 6)
    assert not clock.add_time(6, 0)  # already active
    assert not clock.tick(6)
    assert not clock.add_time(6, 0)  # finished above the LWM
    with pytest.raises(ValueError, match="not active"):
        clock.tick(6)
    with pytest.raises(ValueError, match="not active"):
        clock.tick(9)
    with pytest.raises(ValueError):
        LwmClock(start=-1)


@settings(max_examples=200, deadline=None, database=None)
@given(st.permutations(list(range(40))))
def test_the_lwm_never_goes_back_whatever_the_finishing_order(order: list[int]) -> None:
    clock = LwmClock()
    _subscribe(clock, len(order))
    done: set[int] = set()
    previous = 0
    for task_id in order:
        moved = clock.tick(task_id)
        done.add(task_id)
        expected = 0
        while expected in done:
            expected += 1
        assert clock.now() == expected
        assert moved == (expected != previous)
        assert clock.now() >= previous
        previous = clock.now()
    assert clock.now() == len(order)


def test_commit_order_clock_counts_registrations() -> None:
    clock = CommitOrderClock()
    assert (clock.kind, clock.now(), clock.start_time()) == (ClockKind.START_TO_START, 0, 0)
    for task_id, time in ((10, 0), (11, 1), (12, 2)):
        assert clock.add_time(task_id, time)
    assert not clock.add_time(10, 5)  # the task has a time
    assert not clock.add_time(20, 1)  # another task has that time
    assert clock.tick(10)
    assert clock.now() == 1
    assert clock.tick(11)
    assert clock.tick(12)
    assert clock.now() == 3
    assert not clock.add_time(13, 2)  # that time passed
    with pytest.raises(ValueError, match="no commit time"):
        clock.tick(10)


def test_commit_order_clock_skips_a_time_that_ticked_out_of_turn() -> None:
    clock = CommitOrderClock(start=1)
    assert clock.start_time() == 1
    for task_id in range(3):
        assert clock.add_time(task_id, task_id + 1)
    assert not clock.tick(1)  # time 2 registers early (an unblock)
    assert clock.now() == 1  # time 1 still goes first
    assert not clock.add_time(7, 2)  # time 2 is taken
    assert clock.tick(0)
    assert clock.now() == 3  # 1, then the early 2
    assert clock.tick(2)
    assert clock.now() == 4
    assert "now=4" in repr(clock)


def test_logical_clock_opens_the_next_window_when_the_open_one_is_done() -> None:
    clock = LogicalClock()
    assert (clock.kind, clock.now(), clock.start_time()) == (ClockKind.END_TO_START, 0, 0)
    # The windows of T55: tasks 0..3 in windows 1, 2, 2, 3.
    for task_id, window in enumerate((1, 2, 2, 3)):
        assert clock.add_time(task_id, window)
    assert clock.now() == 1  # nothing before window 1: it opens at once
    assert clock.tick(0)
    assert clock.now() == 2
    assert not clock.tick(2)
    assert clock.now() == 2  # task 1 is still in window 2
    assert clock.tick(1)
    assert clock.now() == 3
    assert not clock.tick(3)  # the last window stays open
    assert clock.add_time(4, 3)  # a late task of the open window runs at once
    assert clock.now() == 3
    assert not clock.tick(4)
    assert clock.add_time(5, 5)
    assert clock.now() == 5


def test_logical_clock_refuses_windows_out_of_order() -> None:
    clock = LogicalClock()
    assert clock.add_time(0, 2)
    assert clock.add_time(1, 3)
    assert not clock.add_time(2, 1)  # before the open window
    assert not clock.add_time(3, 2)  # before the last subscribed window
    assert not clock.add_time(0, 4)  # subscribed already
    with pytest.raises(ValueError, match="not subscribed"):
        clock.tick(9)
    assert "now=2" in repr(clock)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.integers(0, 2), min_size=1, max_size=40), st.data())
def test_logical_windows_run_in_order_whatever_the_finishing_order(
    steps: list[int], data: st.DataObject
) -> None:
    windows: list[int] = []
    for step in steps:  # non-decreasing windows from 1
        windows.append((windows[-1] if windows else 1) + step)
    clock = LogicalClock()
    for task_id, window in enumerate(windows):
        assert clock.add_time(task_id, window)
    finished: set[int] = set()
    previous = clock.now()
    while len(finished) < len(windows):
        runnable = [t for t, w in enumerate(windows) if t not in finished and w <= clock.now()]
        assert runnable, "the clock stalled"
        for task_id in runnable:  # every task of an earlier window has finished
            earlier = [t for t, w in enumerate(windows) if w < windows[task_id]]
            assert all(t in finished for t in earlier)
        task_id = data.draw(st.sampled_from(runnable))
        finished.add(task_id)
        clock.tick(task_id)
        assert clock.now() >= previous
        previous = clock.now()
    assert clock.now() == windows[-1]
