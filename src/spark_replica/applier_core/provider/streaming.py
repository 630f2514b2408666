"""The provider's side of a streamed transaction: publishing its events and ending it
(WL10500.STREAM.1-5, RD.2, RD.5).

``TransactionStream`` holds what a provider and a consumer share: the state, the events
published and not yet dropped, and the segments (runs of consecutive events in one file) a
retry reads again. The provider appends events in batches (their memory acquired) and ends the
stream in one of three terminal states; ``FetchableTransaction`` (``fetchable.py``) adds the
consumer's side.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections import deque
from dataclasses import dataclass
from itertools import islice

from spark_replica.applier_core.binlog.events import Event, FormatDescription, Gtid
from spark_replica.applier_core.binlog.relaylog import RelayCoordinate, RelayEvent, RelayLog
from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.provider.holds import FileHolds
from spark_replica.applier_core.provider.reread import Segment
from spark_replica.applier_core.provider.resources import ResourceMonitor

logger = logging.getLogger(__name__)

CACHE_THRESHOLD = 512
"""Transactions of at most this many bytes keep their events for retries (WL10500.RD.5)."""

Item = tuple[RelayEvent, int, FormatDescription | None, Event | None]
"""A published event: the event as read, the memory acquired for it, the Format_description
it is decoded under, and its decoded form when the provider decoded it already (queries)."""


class TransactionState(enum.Enum):
    OPEN = "open"
    """Events are still being published."""
    COMPLETE = "complete"
    """Every event is published."""
    TRUNCATED = "truncated"
    """Cut off before its end: roll back silently, do not retry (STREAM.3/4)."""
    FAILED = "failed"
    """It cannot be read; ``error`` says why."""


_TRANSITIONS = {
    TransactionState.OPEN: frozenset(
        {TransactionState.COMPLETE, TransactionState.TRUNCATED, TransactionState.FAILED}
    ),
    TransactionState.COMPLETE: frozenset({TransactionState.FAILED}),
    TransactionState.TRUNCATED: frozenset(),
    TransactionState.FAILED: frozenset(),
}
CUT = (TransactionState.TRUNCATED, TransactionState.FAILED)


@dataclass(frozen=True, slots=True)
class StreamContext:
    """What every transaction of one provider shares."""

    relay_log: RelayLog
    monitor: ResourceMonitor
    holds: FileHolds
    resource: str
    channel: str = ""
    cache_threshold: int = CACHE_THRESHOLD


class TransactionStream:
    """A transaction's events as the provider publishes them; see ``FetchableTransaction``."""

    __slots__ = (
        "clock_reset", "gtid", "gtid_text", "last_committed", "sequence_number", "skip",
        "source_end", "source_file", "start", "waiting", "_by_stop", "_caching", "_changed",
        "_context", "_count", "_dropped", "_end", "_error", "_files", "_finished", "_lock",
        "_released", "_retained", "_segments", "_size", "_state",
    )  # fmt: skip

    def __init__(
        self,
        gtid: Gtid,
        start: RelayCoordinate,
        context: StreamContext,
        *,
        skip: bool = False,
        clock_reset: bool = False,
        gtid_size: int = 0,
        source_file: str = "",
    ) -> None:
        self.gtid = gtid
        self.gtid_text = gtid.gtid_text
        self.last_committed = gtid.last_committed
        self.sequence_number = gtid.sequence_number
        self.start = start
        self.skip = skip
        self.clock_reset = clock_reset
        self.source_file = source_file or start.file
        """The source's binary log the transaction comes from (its last Rotate event named
        it; without one, the relay log file: binary log files copied in keep their names)."""
        self.source_end = gtid.header.log_pos
        """Where the transaction ends in ``source_file`` (its last event's ``log_pos``), once
        COMPLETE; until then where its GTID event ends."""
        self._context = context
        # _lock guards the state shared with the provider, below. _changed, built on it when
        # a consumer first waits, is notified (all) on a publish while waiting > 0 and on
        # every change of state. Lock order: _lock, then the monitor's or the holds' lock.
        self._lock = threading.Lock()
        self._changed: threading.Condition | None = None
        self.waiting = 0
        """Consumers waiting for an event: a publish notifies only when there are some."""
        self._state = TransactionState.OPEN
        self._error: ReplicaError | None = None
        self._end: RelayCoordinate | None = None
        self._size = gtid_size
        self._count = 0
        self._segments: list[Segment] = []
        self._retained: deque[Item] = deque()  # published events not dropped yet
        self._dropped = 0  # events used and dropped (large transactions): a prefix
        self._released = 0  # retained events (from the first) whose memory is released
        threshold = context.cache_threshold
        self._caching = not skip and max(gtid.transaction_length, gtid_size) <= threshold
        self._by_stop = False
        self._files = [start.file]  # the files held against purging
        self._finished = False

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.gtid_text} {self._state.value} "
                f"events={self._count} bytes={self._size}>")  # fmt: skip

    @property
    def state(self) -> TransactionState:
        return self._state

    @property
    def error(self) -> ReplicaError | None:
        """ER_REPLICA_RELAY_LOG_READ_FAILURE when FAILED."""
        return self._error

    @property
    def end(self) -> RelayCoordinate | None:
        """Where the transaction's last event ends; None until COMPLETE."""
        return self._end

    @property
    def size(self) -> int:
        """Bytes of the events published so far, the GTID event's included."""
        return self._size

    @property
    def event_count(self) -> int:
        """Events published so far (the GTID event and left-out events not counted)."""
        return self._count

    @property
    def cached(self) -> bool:
        """Whether the events are kept for retries (at most ``CACHE_THRESHOLD`` bytes)."""
        return self._caching

    @property
    def abandoned(self) -> bool:
        """Its consumer finished it: it takes no more events."""
        return self._finished

    # -- the provider's side -------------------------------------------------------------------

    def publish(
        self,
        items: list[Item],
        memory: int,
        size: int,
        end: RelayCoordinate | None = None,
        source_end: int = 0,
    ) -> bool:
        """Append ``items`` (``memory`` acquired for them) and, with ``end``, complete
        (``source_end``: the last event's ``log_pos``).

        Returns:
            False when the transaction takes no more events (finished by its consumer, cut, or
            failed): the caller releases ``memory``.
        """
        with self._lock:
            if self._state is not TransactionState.OPEN:
                return False
            if end is not None:
                self._end = end
                if source_end:
                    self.source_end = source_end
                self._set_state(TransactionState.COMPLETE)
            if self._finished:
                return False
            segments = self._segments
            segment = segments[-1] if segments else None
            for item in items:
                relay, fde = item[0], item[2]
                if (segment is not None and segment.end == relay.start
                        and segment.fde is fde and segment.file == relay.file):  # fmt: skip
                    segment.end = relay.end
                else:
                    segment = Segment(relay.file, fde, relay.start, relay.end)
                    segments.append(segment)
            self._retained.extend(items)
            self._count += len(items)
            self._size += size
            if self._caching and self._size > self._context.cache_threshold:
                self._caching = False
            if self.waiting:
                assert self._changed is not None
                self._changed.notify_all()
            return True

    def extend(self, file: str) -> None:
        """The transaction goes on into ``file``: hold it against purging too (STREAM.2)."""
        with self._lock:  # held across hold(), so that finish() releases what was held
            if not self._finished:
                self._context.holds.hold(file)
                self._files.append(file)

    def truncate(self, *, by_stop: bool) -> None:
        """Cut it off (a new GTID, a restarted source, or a stop): STREAM.3."""
        self._cut(TransactionState.TRUNCATED, None, by_stop)

    def fail(self, error: ReplicaError) -> None:
        self._cut(TransactionState.FAILED, error, False)

    def _cut(self, state: TransactionState, error: ReplicaError | None, by_stop: bool) -> None:
        with self._lock:
            if self._state in CUT or (
                state is TransactionState.TRUNCATED and self._state is not TransactionState.OPEN
            ):
                return
            self._set_state(state)
            self._error, self._by_stop = error, by_stop
            self._release(self._held_memory())
            self._retained.clear()
            if self._changed is not None:
                self._changed.notify_all()

    def _held_memory(self) -> int:
        """(``_lock`` held) The memory still counted for the retained events."""
        return sum(item[1] for item in islice(self._retained, self._released, None))

    def _set_state(self, new: TransactionState) -> None:
        if new not in _TRANSITIONS[self._state]:
            logger.critical("%r: illegal transition to %s", self, new.value)
            raise RuntimeError(f"transaction cannot go from {self._state.value} to {new.value}")
        self._state = new

    def _release(self, memory: int) -> None:
        if memory:
            self._context.monitor.release(self._context.resource, memory)
