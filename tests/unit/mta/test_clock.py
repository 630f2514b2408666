"""The LOGICAL_CLOCK rule alone, without threads (WL6314.GEN.2, SLAVE.1/2/4)."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.mta import LogicalClock, Stamp


def test_same_commit_parent_runs_together_and_the_next_group_waits() -> None:
    """WL6314.SLAVE.1/2: one group runs in parallel; the next waits until it has ended."""
    clock = LogicalClock()
    for seq in (1, 2, 3):
        assert clock.runnable(Stamp(0, seq))
        clock.admit(Stamp(0, seq))
    nxt = Stamp(3, 4)
    assert not clock.runnable(nxt)
    clock.ended(3)
    clock.ended(1)
    assert not clock.runnable(nxt)  # 2 still runs
    clock.ended(2)
    assert clock.runnable(nxt)


def test_a_transaction_waits_only_for_its_commit_parent() -> None:
    """WRITESET data: 3 depends on 1 only, so it may start while 2 runs."""
    clock = LogicalClock()
    clock.admit(Stamp(0, 1))
    clock.admit(Stamp(0, 2))
    assert not clock.runnable(Stamp(1, 3))
    clock.ended(1)
    assert clock.runnable(Stamp(1, 3))
    assert not clock.runnable(Stamp(2, 3))


@pytest.mark.parametrize(
    "stamp",
    [Stamp(0, 1, clock_reset=True), Stamp(0, 2), Stamp(0, 0), Stamp(5, 5)],
    ids=["format-description", "sequence-restart", "no-timestamps", "inconsistent"],
)
def test_a_new_group_waits_for_everything_before_it(stamp: Stamp) -> None:
    """WL6314.SLAVE.4: after a Format_description (or a sequence number that does not grow,
    or unusable stamps) the next transaction waits for every one admitted before."""
    clock = LogicalClock()
    clock.admit(Stamp(0, 1))
    clock.admit(Stamp(0, 2))
    clock.ended(2)
    assert clock.starts_group(stamp)
    assert not clock.runnable(stamp)
    clock.ended(1)
    assert clock.runnable(stamp)
    clock.admit(stamp)
    assert clock.running == 1


def test_a_skipped_transaction_still_carries_a_clock_restart() -> None:
    """Format_description events are never skipped (WL6314.SLAVE.4): the restart reaches the
    next applied transaction even when the first one after it is executed already."""
    clock = LogicalClock()
    clock.admit(Stamp(0, 7))
    clock.skip(Stamp(0, 1, clock_reset=True))
    assert not clock.runnable(Stamp(1, 2))
    clock.ended(7)
    assert clock.runnable(Stamp(1, 2))


def test_admitting_a_transaction_that_must_wait_is_a_bug() -> None:
    clock = LogicalClock()
    clock.admit(Stamp(0, 1))
    with pytest.raises(RuntimeError):
        clock.admit(Stamp(1, 2))
