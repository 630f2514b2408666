"""Checkpoints of the legacy applier: its positions move as the low-water mark does
(WL5569.SSS.1/SSS.2, mysql.slave_worker_info).

The positions SHOW REPLICA STATUS gives (Relay_Log_File/Relay_Log_Pos in the relay log,
Relay_Source_Log_File/Exec_Source_Log_Pos in the source's binary log) are those of the
group assignment queue's low-water mark: they never pass a transaction not committed, and
never go back (T44). They move at checkpoints, after ``replica_checkpoint_group``
transactions or ``replica_checkpoint_period`` milliseconds, whichever comes first, and once
more when the applier stops. Each checkpoint also writes one ``mysql.slave_worker_info`` row
per worker: where its last committed transaction ends, the checkpoint it counts from, and a
bitmap of the transactions after the checkpoint it committed. Bits left set after a stop are
gaps: transactions committed after one that was not (a worker's error, a crash).

Seconds_Behind_Source moves on the same schedule (WL5569.SSS.3): each checkpoint records when
the source committed the head of the queue, the oldest transaction not committed yet (nothing
once every assigned one is), as MySQL's coordinator records the head of its queue. While
nothing is recorded, the next group assigned records its own commit time at once (as MySQL
does), so that a backlog taken while the queue was empty does not read 0 until the next
checkpoint. Once nothing is left to read or to apply the coordinator marks the applier caught
up (``caught_up``). SHOW REPLICA STATUS computes the column from these (``channels/lag.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from spark_replica.applier_core.channels.status import StatusBoard
from spark_replica.applier_core.channels.store import Checkpoint, WorkerInfo
from spark_replica.applier_core.mta.gaq import Group, GroupQueue, Position
from spark_replica.applier_core.provider import FetchableTransaction


def end_position(trx: FetchableTransaction) -> Position | None:
    """Where ``trx`` ends in the relay log and in the source's binary log (None until it is
    read whole)."""
    end = trx.end
    if end is None:
        return None
    return Position(end.file, end.offset, trx.source_file, trx.source_end)


class Checkpointer:
    """Decides when to checkpoint and writes the checkpoints. The coordinator's thread only.

    ``workers``: the worker ids with a ``slave_worker_info`` row (none for the single-threaded
    applier). ``record`` saves a checkpoint (None: positions are only shown, not kept).
    ``origin``: the positions the applier started from, the mark until a group commits.
    """

    def __init__(
        self,
        groups: GroupQueue,
        status: StatusBoard,
        record: Callable[[Checkpoint], None] | None,
        *,
        workers: list[int],
        every: int,
        period_ms: int,
        origin: Position,
    ) -> None:
        self._groups = groups
        self._status = status
        self._record = record
        self._workers = workers
        self._every = max(1, every)
        self._period = period_ms / 1000
        self._last_time = time.monotonic()
        self._last_count = 0
        self._last_lwm: int | None = None
        self._origin = origin
        self._last_end = origin
        # What the status shows: the source commit time of the oldest group not committed
        # (epoch seconds, 0 when none is recorded) and whether the applier has caught up.
        self._commit_time = 0.0
        self._caught_up = False
        self.count = 0
        """Checkpoints written."""

    def due(self, assigned: int) -> bool:
        """Whether a checkpoint is due, ``assigned`` groups having been handed out so far."""
        return (
            assigned - self._last_count >= self._every
            or time.monotonic() - self._last_time >= self._period
        )

    def checkpoint(self, assigned: int, *, final: bool = False) -> None:
        """Move the positions to the low-water mark and write the worker rows (always when
        ``final``; otherwise only when the mark moved)."""
        self._last_time, self._last_count = time.monotonic(), assigned
        head = self._groups.head
        self._commit_time = 0.0 if head is None else head.commit_us / 1e6
        self._status.update(source_commit_time=self._commit_time)
        lwm = self._groups.lwm
        if not final and (lwm is None or lwm.number == self._last_lwm):
            return
        self._last_lwm = None if lwm is None else lwm.number
        end = self._origin if lwm is None or lwm.end is None else lwm.end
        if lwm is not None and lwm.end is None:  # a cut-off transaction: keep the last mark
            end = self._last_end
        self._last_end = end
        if end.relay_file:
            self._status.update(relay_log_file=end.relay_file, relay_log_pos=end.relay_pos)
        if self._record is None:
            return
        pending = self._groups.pending()
        workers = tuple(self._worker_row(number, end, pending) for number in self._workers)
        self._record(Checkpoint(end.relay_file, end.relay_pos, end.source_file,
                                end.source_pos, workers))  # fmt: skip
        self.count += 1

    def assigned(self, commit_us: int) -> None:
        """A group was assigned, which the source committed at ``commit_us`` (microseconds
        since the epoch): the applier has work again; its commit time is the one shown
        while none is recorded. Touches the status only when what it shows changes."""
        commit_time = self._commit_time or commit_us / 1e6
        if commit_time == self._commit_time and not self._caught_up:
            return
        self._commit_time, self._caught_up = commit_time, False
        self._status.update(source_commit_time=commit_time, applier_caught_up=False)

    def caught_up(self) -> bool:
        """(Nothing left to read) Mark the applier caught up once every assigned group is
        committed; True when it is."""
        if len(self._groups):
            return False
        if not self._caught_up:
            self._commit_time, self._caught_up = 0.0, True
            self._status.update(source_commit_time=0.0, applier_caught_up=True)
        return True

    def _worker_row(self, number: int, lwm: Position, pending: list[Group]) -> WorkerInfo:
        last = self._groups.last_done(number)
        own = last.end if last is not None and last.end is not None else lwm
        size = max(self._every, len(pending))
        bitmap = bytearray((size + 7) // 8)
        seqno = 0
        for index, group in enumerate(pending):
            if group.done and group.worker == number:
                bitmap[index // 8] |= 1 << (index % 8)
                seqno = index + 1
        return WorkerInfo(
            id=number,
            relay_log_name=own.relay_file,
            relay_log_pos=own.relay_pos,
            source_log_name=own.source_file,
            source_log_pos=own.source_pos,
            checkpoint_relay_log_name=lwm.relay_file,
            checkpoint_relay_log_pos=lwm.relay_pos,
            checkpoint_source_log_name=lwm.source_file,
            checkpoint_source_log_pos=lwm.source_pos,
            checkpoint_seqno=seqno,
            checkpoint_group_size=size,
            checkpoint_group_bitmap=bytes(bitmap),
        )
