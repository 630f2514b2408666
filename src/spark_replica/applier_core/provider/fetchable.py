"""A transaction handed out by a transaction provider: the consumer's side (WL10500.STREAM.5,
FT.1-3, DES.RS.0020-0022, RM.2/RM.3, PURGE.1).

The provider hands the transaction out at its GTID event and publishes the rest of its events
as it reads them (``streaming.py``). One consumer at a time (the job applying it) takes them,
decoded, with ``next_event``, which waits for the next one.

Memory (RM.2/RM.3): the provider acquired each event's bytes from the channel's
``ResourceMonitor`` before publishing it (commit events excepted); the consumer releases them
once used, that is when it takes the events after them. A transaction of at most
``CACHE_THRESHOLD`` bytes keeps its events, and their decoded form, until ``finish``, so a
retry (``rewind``) reads nothing; they are no longer counted once used (RM.3 bounds caches by
the threshold per transaction in flight). A larger transaction drops each event after use and
keeps only its segments, from which a retry reads the dropped events again with its own file
descriptors. Re-read events are counted without waiting (``force_acquire``): waiting could
deadlock behind memory held for later transactions, which only this one's end frees.

Purge: ``finish`` lets go of the transaction's files: as applied when it was applied, or
truncated because a new copy of it followed; as failed otherwise (a failure, or a stop, whose
transaction is applied again after the restart), which keeps the files.
"""

from __future__ import annotations

import threading
import time
from itertools import islice

from spark_replica.applier_core.binlog.errors import BinlogError, read_failure
from spark_replica.applier_core.binlog.events import Event, Gtid
from spark_replica.applier_core.binlog.relaylog import RelayCoordinate
from spark_replica.applier_core.provider.decoding import EventDecoder, is_commit
from spark_replica.applier_core.provider.reread import Segment, SegmentReader
from spark_replica.applier_core.provider.streaming import CACHE_THRESHOLD as CACHE_THRESHOLD
from spark_replica.applier_core.provider.streaming import (
    CUT,
    Item,
    StreamContext,
    TransactionStream,
)
from spark_replica.applier_core.provider.streaming import TransactionState as TransactionState

_TAKE = 64  # events a consumer takes per lock round trip


class FetchableTransaction(TransactionStream):
    """One transaction of the relay log: its GTID event, where it starts, and its events.

    ``gtid``, ``gtid_text``, ``last_committed``, ``sequence_number``, ``start`` (the GTID
    event's relay log coordinate), ``source_file``, ``clock_reset`` (a source's
    Format_description came since the previous transaction: the logical clock restarts) and
    ``skip`` (its GTID is executed already: the consumer does not apply it, and no event is
    published) never change; ``source_end`` is final once the transaction is COMPLETE.

    ``next_event``, ``rewind`` and ``finish`` are for one thread at a time; the provider's
    side is thread-safe against them. Every transaction taken from a provider must be
    ``finish``-ed, skipped ones included.
    """

    __slots__ = (
        "rewinds", "_cursor", "_decoded", "_decoder", "_event_pos", "_events", "_reread",
        "_reread_memory",
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
        super().__init__(gtid, start, context, skip=skip, clock_reset=clock_reset,
                         gtid_size=gtid_size, source_file=source_file)  # fmt: skip
        # The consumer's state: no lock (one thread at a time).
        self._cursor = 0  # index of the next published event to take
        self._events: list[Event] = []  # decoded events of the last ones taken
        self._event_pos = 0
        self._decoded: list[tuple[Event, ...]] = []  # per event, while cached
        self._decoder = EventDecoder()
        self._reread: SegmentReader | None = None
        self._reread_memory = 0
        self.rewinds = 0

    def next_event(self, timeout: float | None = None) -> Event | None:
        """The next event, waiting up to ``timeout`` seconds (None: no limit) for it.

        Events come decoded, in order, from the first after the GTID event to the Xid,
        COMMIT or DDL query; a compressed transaction's inner events replace its
        Transaction_payload event. Format_description, Rotate and ignorable events are left out.

        Returns:
            None once the transaction is in a terminal state: every event handed out
            (COMPLETE), TRUNCATED or FAILED (STREAM.5). Check ``state``.

        Raises:
            TimeoutError: no event came within ``timeout`` seconds; the transaction is OPEN.
        """
        position = self._event_pos
        if position < len(self._events):
            self._event_pos = position + 1
            return self._events[position]
        if self._finished:
            raise RuntimeError(f"{self!r} is finished")
        try:
            while (events := self._next_events(timeout)) is not None:
                if events:
                    self._events, self._event_pos = events, 1
                    return events[0]
        except BinlogError as exc:
            self.fail(read_failure(exc, self._context.channel))
        self._events, self._event_pos = [], 0
        return None

    def rewind(self) -> None:
        """Start again from the first event, for a retry (DES.TS.0020, FT.1 ``reset``).

        Raises:
            RuntimeError: the transaction is TRUNCATED, FAILED or finished.
        """
        if self._finished or self._state in CUT:
            raise RuntimeError(f"cannot rewind {self!r}")
        self._end_reread()
        with self._lock:
            self._drop_used()
            self._cursor = 0
            segments = [Segment(s.file, s.fde, s.start, s.end) for s in self._segments]
        self._events, self._event_pos = [], 0
        if self._dropped:
            self._reread = SegmentReader(self._context.relay_log, segments)
        self.rewinds += 1

    def finish(self, success: bool = True) -> None:
        """Done with the transaction: free its memory and let go of its relay log files.

        ``success``: it was applied (or, skipped, needs no applying). A TRUNCATED transaction
        may be finished either way. Idempotent.

        Raises:
            RuntimeError: ``success`` for a transaction that is still OPEN.
        """
        if self._finished:
            return
        if self._reread is not None or self._reread_memory:
            self._end_reread()
        with self._lock:
            state = self._state
            if success and state is TransactionState.OPEN:
                raise RuntimeError(f"{self!r} cannot have been applied: it is still open")
            self._finished = True
            memory = 0
            if self._retained:
                memory = self._held_memory()
                self._retained.clear()
            files, self._files = self._files, []
            by_stop = self._by_stop
        self._events, self._decoded = [], []
        if memory:
            self._release(memory)
        applied = (success and state is TransactionState.COMPLETE) or (
            state is TransactionState.TRUNCATED and not by_stop
        )
        self._context.holds.release(files, applied=applied)

    # -- taking events ---------------------------------------------------------------------------

    def _next_events(self, timeout: float | None) -> list[Event] | None:
        """The events of the next published events taken at once (decoded in one go), or of
        the next event read again; None in a terminal state."""
        if self._reread_memory:
            self._release(self._reread_memory)
            self._reread_memory = 0
        if self._state in CUT:
            return None
        index = self._cursor
        if index < self._dropped:
            return self._reread_next(index)
        items = self._take(timeout)
        if items is None:
            return None
        self._cursor = index + len(items)
        decoded, decode, caching = self._decoded, self._decoder.decode, self._caching
        events: list[Event] = []
        for number, item in enumerate(items, index):
            if number < len(decoded):
                events += decoded[number]
                continue
            one = (item[3],) if item[3] is not None else decode(item[0], item[2])
            if caching and number == len(decoded):
                decoded.append(one)
            events += one
        return events

    def _take(self, timeout: float | None) -> list[Item] | None:
        """The next published events (up to ``_TAKE``); waits while there are none."""
        deadline = None
        with self._lock:
            while True:
                if self._state in CUT:
                    return None
                self._drop_used()
                first = self._cursor - self._dropped
                if len(self._retained) > first:
                    return list(islice(self._retained, first, first + _TAKE))
                if self._state is TransactionState.COMPLETE:
                    return None
                if timeout is not None and deadline is None:
                    deadline = time.monotonic() + timeout
                self._wait(deadline, timeout)

    def _wait(self, deadline: float | None, timeout: float | None) -> None:
        """(``_lock`` held) Wait for a publish or a change of state."""
        if self._changed is None:
            self._changed = threading.Condition(self._lock)
        self.waiting += 1
        try:
            if deadline is None:
                self._changed.wait()
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no event of {self.gtid_text} in {timeout} s")
            self._changed.wait(remaining)
        finally:
            self.waiting -= 1

    def _drop_used(self) -> None:
        """(``_lock`` held) Release the memory of the events used; drop them unless cached.

        A cached transaction keeps its events for a retry, but their memory is no longer
        counted: what caches hold is bounded by the threshold per transaction in flight
        (RM.3), and counting it could leave a cached transaction waiting for memory that only
        its own end frees.
        """
        used = self._cursor - self._dropped
        if used <= 0 or self._state in CUT:
            return
        retained, released = self._retained, self._released
        if self._caching:
            if used > released:
                self._release(sum(item[1] for item in islice(retained, released, used)))
                self._released = used
            return
        memory = 0
        for number in range(used):
            item = retained.popleft()
            if number >= released:
                memory += item[1]
        self._dropped += used
        self._released = max(0, released - used)
        self._decoded.clear()
        self._release(memory)

    def _reread_next(self, index: int) -> list[Event]:
        if self._reread is None:
            raise RuntimeError("dropped events without a reader")  # rewind() sets it up
        found = self._reread.next()
        if found is None:
            raise BinlogError("the relay log holds fewer events than were published",
                              file=self.start.file, position=self.start.offset)  # fmt: skip
        relay, fde = found
        events = self._decoder.decode(relay, fde)
        if not is_commit(events):
            self._reread_memory = len(relay.data)
            self._context.monitor.force_acquire(self._context.resource, self._reread_memory)
        self._cursor = index + 1
        if self._cursor == self._dropped:
            self._end_reread(release=False)
        return list(events)

    def _end_reread(self, *, release: bool = True) -> None:
        if self._reread is not None:
            self._reread.close()
            self._reread = None
        if release and self._reread_memory:
            self._release(self._reread_memory)
            self._reread_memory = 0
