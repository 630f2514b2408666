"""Dependency trackers (WL10500.DT.2-3) and schedules (WL10500.TS.1-3)."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.scheduler import (
    APPLY_PHASE,
    COMMIT_PHASE,
    DelayedSchedule,
    Phase,
    Schedule,
    SinglePredecessorTracker,
    TrackerStub,
    TransactionOrderSchedule,
)


def test_the_stub_tracker_is_always_ready() -> None:
    tracker = TrackerStub()
    assert tracker.activate_task(1)
    assert not tracker.add_dependency(1, 2)
    assert tracker.check_ready(2)
    assert list(tracker.mark_dependency_met(1)) == []
    assert repr(tracker) == "<TrackerStub>"


def test_single_predecessor_tracker_links_only_to_active_tasks() -> None:
    tracker = SinglePredecessorTracker()
    assert tracker.activate_task(1)
    assert not tracker.activate_task(1)
    assert tracker.activate_task(2)
    assert tracker.activate_task(3)
    assert not tracker.add_dependency(9, 2)  # 9 is not active: nothing to wait for
    assert not tracker.add_dependency(2, 2)
    assert tracker.add_dependency(1, 2)
    assert not tracker.add_dependency(3, 2)  # one predecessor at most
    assert tracker.add_dependency(1, 3)
    assert tracker.check_ready(1)
    assert not tracker.check_ready(2)
    assert not tracker.check_ready(3)
    assert "links=2" in repr(tracker)
    assert list(tracker.mark_dependency_met(1)) == [2, 3]
    assert tracker.check_ready(2) and tracker.check_ready(3)
    assert not tracker.add_dependency(1, 4)  # 1 ended
    assert list(tracker.mark_dependency_met(2)) == []


def test_delayed_schedule_has_one_phase_on_the_global_clock() -> None:
    schedule = DelayedSchedule(7, 3)
    assert schedule.task_id == 7
    assert schedule.delay == 3
    assert schedule.phases == (Phase(0, 3),)
    assert "task 7" in repr(schedule)


def test_transaction_order_schedule_applies_then_commits() -> None:
    schedule = TransactionOrderSchedule(7, 3, 5)
    assert schedule.phases[APPLY_PHASE] == Phase(0, 3)
    assert schedule.phases[COMMIT_PHASE] == Phase(1, 5)
    assert schedule.commit_time == 5
    assert TransactionOrderSchedule(7, 3, 5, commit_clock=2).phases[1] == Phase(2, 5)


def test_schedules_reject_phases_on_the_wrong_clock() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Schedule(0, [])
    with pytest.raises(ValueError, match="global clock"):
        Schedule(0, [Phase(1, 0)])
    with pytest.raises(ValueError, match="registered phase clocks"):
        Schedule(0, [Phase(0, 0), Phase(0, 1)])
