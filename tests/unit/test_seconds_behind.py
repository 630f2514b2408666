"""Seconds_Behind_Source in SHOW REPLICA STATUS (mysql-reference §3 row 33): NULL while the
applier does not run; once it has caught up, 0 with the receiver connected and NULL
otherwise; while it has work, ``now - source commit time - clock difference``, never
negative, whatever the receiver does (T45 for the caught-up case of the legacy applier)."""

from __future__ import annotations

import time
from typing import cast

import pytest

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import Gtid, make_header
from spark_replica.applier_core.channels.config import (
    ChannelConfig,
    SourceConnection,
    ThreadType,
)
from spark_replica.applier_core.channels.lag import commit_time_us
from spark_replica.applier_core.channels.manager import Channel
from spark_replica.applier_core.receiver.client import CR_SERVER_LOST, ResultSet, SourceClient
from spark_replica.applier_core.receiver.dump import clock_diff
from spark_replica.applier_core.receiver.protocol import SourceError
from spark_replica.sql_handlers.replication.replica_status import status_row

#: Where Seconds_Behind_Source is in a SHOW REPLICA STATUS row (the 33rd column).
COLUMN = 32


class _Running:
    def stop(self) -> None:
        """Nothing to stop: the channel's threads are only shown as running."""


def _shown(
    *,
    sql: bool = True,
    io: bool = False,
    connecting: bool = False,
    caught_up: bool = False,
    age: float = 0.0,
    clock: int = 0,
) -> object:
    """The column for a channel whose applier recorded a transaction committed ``age``
    seconds ago (none when 0), or caught up, with a clock difference of ``clock``."""
    channel = Channel(ChannelConfig("c1", SourceConnection(host="h")))
    if sql:
        channel._attach(ThreadType.SQL, _Running())
    if io:
        channel._attach(ThreadType.IO, _Running())
    channel.status.update(
        source_commit_time=time.time() - age if age else 0.0,
        applier_caught_up=caught_up,
        source_clock_diff=clock,
        io_connecting=connecting,
    )
    return status_row(channel, "")[COLUMN]


def test_null_while_the_applier_does_not_run() -> None:
    assert _shown(sql=False, io=True, age=42) is None
    assert _shown(sql=False, io=True, caught_up=True) is None


def test_caught_up_is_zero_only_with_the_receiver_connected() -> None:
    """T45: an idle channel with its receiver connected shows 0."""
    assert _shown(io=True, caught_up=True) == 0
    assert _shown(io=True, connecting=True, caught_up=True) is None
    assert _shown(io=False, caught_up=True) is None


@pytest.mark.parametrize("io", [True, False], ids=["receiver", "sql-thread-only"])
def test_a_backlog_shows_its_age_whatever_the_receiver_does(io: bool) -> None:
    assert _shown(io=io, age=42.5) in (42, 43)
    assert _shown(io=io, connecting=io, age=3600) in (3600, 3601)


def test_the_clock_difference_is_subtracted_and_the_value_never_negative() -> None:
    assert _shown(io=True, age=100, clock=30) in (70, 71)
    assert _shown(io=True, age=100, clock=-30) in (130, 131)
    assert _shown(io=True, age=10, clock=60) == 0


def test_a_backlog_with_no_transaction_taken_yet_is_zero() -> None:
    assert _shown(io=True) == 0
    assert _shown(io=False) == 0


def _gtid(*, original: int = 0, immediate: int = 0, header: int = 0) -> Gtid:
    return Gtid(
        make_header(EventType.GTID, timestamp=header),
        flags=0,
        uuid="3e11fa47-71ca-11e1-9e33-c80aa9429562",
        gno=1,
        original_commit_timestamp=original,
        immediate_commit_timestamp=immediate,
    )


def test_commit_time_is_the_original_then_the_immediate_then_the_event_timestamp() -> None:
    assert commit_time_us(_gtid(original=5_000_001, immediate=7_000_000, header=9)) == 5_000_001
    assert commit_time_us(_gtid(immediate=7_000_000, header=9)) == 7_000_000
    assert commit_time_us(_gtid(header=9)) == 9_000_000


class _Source:
    """Answers SELECT UNIX_TIMESTAMP() with ``answer``, or fails with ``error``."""

    def __init__(self, answer: str | None = None, error: SourceError | None = None) -> None:
        self.answer, self.error = answer, error
        self.asked: list[str] = []

    def query(self, sql: str) -> ResultSet:
        self.asked.append(sql)
        if self.error is not None:
            raise self.error
        return ResultSet(["UNIX_TIMESTAMP()"], [(self.answer,)])


def test_the_receiver_measures_how_far_its_clock_is_ahead_of_the_source() -> None:
    behind = _Source(str(int(time.time()) - 300))
    assert clock_diff(cast(SourceClient, behind)) in (300, 301)
    assert behind.asked == ["SELECT UNIX_TIMESTAMP()"]
    ahead = _Source(str(int(time.time()) + 20))
    assert clock_diff(cast(SourceClient, ahead)) in (-20, -19)
    assert clock_diff(cast(SourceClient, _Source(None))) == 0
    assert clock_diff(cast(SourceClient, _Source("not a number"))) == 0
    refused = _Source(error=SourceError(1045, "Access denied"))
    assert clock_diff(cast(SourceClient, refused)) == 0
    with pytest.raises(SourceError):
        clock_diff(cast(SourceClient, _Source(error=SourceError(CR_SERVER_LOST, "lost"))))
