"""The applier channel monitor (WL10500.ACM.1, T78): unblocks a stalled channel, at most the
allowed number of times per stall, never an idle or progressing one."""

from __future__ import annotations

from spark_replica.applier_core.csa.monitor import ChannelMonitor


def test_a_stall_gets_at_most_the_allowed_unblocks() -> None:
    monitor = ChannelMonitor(allowed=2, interval=10.0)
    assert not monitor.check(0.0, (5, 3), busy=True)
    assert not monitor.check(9.9, (5, 3), busy=True)  # not a whole interval yet
    assert monitor.check(10.0, (5, 3), busy=True)
    assert not monitor.check(15.0, (5, 3), busy=True)  # the next waits another interval
    assert monitor.check(20.0, (5, 3), busy=True)
    assert not monitor.check(40.0, (5, 3), busy=True)  # the stall's budget is spent
    assert (monitor.unblocks, monitor.stall_unblocks) == (2, 2)


def test_progress_ends_the_stall_and_restores_the_budget() -> None:
    monitor = ChannelMonitor(allowed=1, interval=1.0)
    monitor.check(0.0, 1, busy=True)
    assert monitor.check(1.0, 1, busy=True)
    assert not monitor.check(2.0, 1, busy=True)
    assert not monitor.check(2.5, 2, busy=True)  # progress
    assert not monitor.check(3.0, 2, busy=True)
    assert monitor.check(3.5, 2, busy=True)
    assert monitor.unblocks == 2


def test_an_idle_channel_is_never_stalled() -> None:
    monitor = ChannelMonitor(allowed=3, interval=1.0)
    for second in range(10):
        assert not monitor.check(float(second), 7, busy=False)
    assert monitor.unblocks == 0
