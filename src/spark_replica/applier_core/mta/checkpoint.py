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

Seconds_Behind_Source moves on the same schedule (WL5569.SSS.3): at each checkpoint it is how
long ago the source committed the low-water mark's transaction (0 before the first), and the
coordinator clears it (``caught_up``) once nothing is left to read or to apply, which SHOW
REPLICA STATUS shows as 0 while the receiver is connected.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from spark_replica.applier_core.channels.status import StatusBoard
from spark_replica.applier_core.channels.store import Checkpoint, WorkerInfo
from spark_replica.applier_core.csa import FetchableTransaction
from spark_replica.applier_core.mta.gaq import Group, GroupQueue, Position


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
        lwm = self._groups.lwm
        commit_us = 0 if lwm is None else lwm.commit_us
        behind = max(0, int(time.time() - commit_us / 1e6)) if commit_us else 0
        self._status.update(seconds_behind_source=behind)
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

    def caught_up(self) -> bool:
        """(Nothing left to read) Clear Seconds_Behind_Source once every assigned group is
        committed; True when it did."""
        if len(self._groups):
            return False
        self._status.update(seconds_behind_source=None)
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
