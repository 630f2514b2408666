"""Seconds_Behind_Source: what a channel's threads record for it, and how SHOW REPLICA STATUS
computes the column from that (mysql-reference §3 row 33).

The applier records two things in the channel's ``StatusBoard``:

* ``source_commit_time``, MySQL's ``last_master_timestamp``: when the source committed the
  oldest transaction the applier has taken and not committed yet (epoch seconds; 0 when no
  such transaction is known). The legacy applier moves it on its checkpoint schedule
  (WL5569.SSS.3), the Change Stream Applier whenever the status is read;
* ``applier_caught_up``: the applier found nothing more to read in the relay log and has
  committed everything it read.

The receiver records ``source_clock_diff``: how many seconds the replica's clock is ahead of
the source's, measured with ``SELECT UNIX_TIMESTAMP()`` when it connects, so that a source
whose clock differs does not make the replica look behind (or ahead).

The column is then, as MySQL computes it: NULL while the applier does not run; once it has
caught up, 0 while the receiver is connected and NULL otherwise (nothing says how far behind
the source the replica is then); while it has work, ``now - source_commit_time -
source_clock_diff``, never negative, and 0 while no transaction is known (the applier has just
started or has not yet taken the next one). Storing the commit time rather than an age makes
the value grow while the applier is stuck on one transaction, as a DBA expects.
"""

from __future__ import annotations

import time

from spark_replica.applier_core.binlog.events import Gtid
from spark_replica.applier_core.channels.status import ChannelStatus

_MICROS_PER_SECOND = 1_000_000


def commit_time_us(gtid: Gtid) -> int:
    """When the source that originated the transaction committed it, in microseconds since
    the epoch: the GTID event's original_commit_timestamp, else its immediate one, else (a
    source older than MySQL 8.0.1 writes neither) the event's own timestamp."""
    return (
        gtid.original_commit_timestamp
        or gtid.immediate_commit_timestamp
        or gtid.header.timestamp * _MICROS_PER_SECOND
    )


def seconds_behind_source(
    status: ChannelStatus,
    *,
    applier_running: bool,
    receiver_connected: bool,
    now: float | None = None,
) -> int | None:
    """The Seconds_Behind_Source value of a channel whose threads recorded ``status``, at
    ``now`` (epoch seconds; the current time when None)."""
    if not applier_running:
        return None
    if status.applier_caught_up:
        return 0 if receiver_connected else None
    if not status.source_commit_time:
        return 0
    if now is None:
        now = time.time()
    return max(0, int(now - status.source_commit_time) - status.source_clock_diff)
