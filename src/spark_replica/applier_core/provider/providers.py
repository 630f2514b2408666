"""Transaction providers: where the Change Stream Applier service and the legacy applier's
coordinator get their transactions (DES.TS.0010-0080, WL10500.TP.1).

``SyncTransactionProvider`` (the default) reads the relay log in the caller's thread: ``next``
reads up to the next GTID event, publishing the events of the transaction returned before on
the way. ``AsyncTransactionProvider`` reads in its own thread, ``csa-provider-<channel>``, into
a bounded queue. In both, ``next(timeout)`` returns a transaction right after its GTID event
(streaming, STREAM.1), or None on timeout or once stopped; a relay log that cannot be read
raises ER_REPLICA_RELAY_LOG_READ_FAILURE (13121), also from every later call. ``stop()``
truncates the open transaction, releasing a consumer waiting for its events (STREAM.3, T71).
"""

from __future__ import annotations

import abc
import logging
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Self

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog import RelayCoordinate, RelayLog
from spark_replica.applier_core.binlog.relaylog.prefetch import Prefetcher
from spark_replica.applier_core.concurrency import BoundedQueue, QueueClosed
from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.provider.boundaries import SkipRule
from spark_replica.applier_core.provider.fetchable import FetchableTransaction
from spark_replica.applier_core.provider.reader import WAIT_SLICE, TransactionReader
from spark_replica.applier_core.provider.resources import (
    EVENT_MEMORY,
    ResourceMonitor,
    effective_event_memory_limit,
)
from spark_replica.applier_core.provider.streaming import CACHE_THRESHOLD

logger = logging.getLogger(__name__)

DEFAULT_MAX_ALLOWED_PACKET = 1 << 30
"""replica_max_allowed_packet's default: the memory limit when no monitor is given."""


class TransactionProvider(abc.ABC):
    """The source of a channel's transactions (DES.TS.0040).

    Args:
        relay_log: the channel's open relay log.
        channel: the channel name, for error texts.
        monitor: the channel's resource monitor, with ``EVENT_MEMORY`` registered; None gives
            a private one limited to ``replica_max_allowed_packet``'s default.
        start: the relay log file and offset to read from (None: the first file).
        skip: GTIDs executed already; their transactions come with ``skip`` set.
        own_server_id: this replica's server id (its Format_description events neither cut a
            transaction nor restart the logical clock).
        prefetcher: a started ``Prefetcher`` reading the relay log ahead (the caller stops it).

    Raises:
        ReplicaError: ER_REPLICA_RELAY_LOG_READ_FAILURE, ``start`` is not in the relay log.
    """

    def __init__(
        self,
        relay_log: RelayLog,
        *,
        channel: str = "",
        monitor: ResourceMonitor | None = None,
        start: tuple[str, int] | None = None,
        skip: SkipRule = None,
        own_server_id: int | None = None,
        cache_threshold: int = CACHE_THRESHOLD,
        prefetcher: Prefetcher | None = None,
        after_durable: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self.channel = channel
        if monitor is None:
            monitor = ResourceMonitor(channel)
            limit = effective_event_memory_limit(0, DEFAULT_MAX_ALLOWED_PACKET)
            monitor.register(EVENT_MEMORY, limit)
        self.monitor = monitor
        self._stop_requested = threading.Event()
        # _lock serialises the reader between next() and stop() (sync), and guards the thread's
        # start and join (async).
        self._lock = threading.RLock()
        self._reader = TransactionReader(
            relay_log,
            monitor,
            self._stop_requested,
            channel=channel,
            start=start,
            skip=skip,
            own_server_id=own_server_id,
            cache_threshold=cache_threshold,
            prefetcher=prefetcher,
            after_durable=after_durable,
        )

    def __repr__(self) -> str:
        state = "error" if self.is_error() else "stopped" if self.is_stopped() else "running"
        return f"<{type(self).__name__} '{self.channel}' {state}>"

    @abc.abstractmethod
    def start(self) -> None:
        """Start reading (the asynchronous provider's thread)."""

    @abc.abstractmethod
    def next(self, timeout: float | None = None) -> FetchableTransaction | None:
        """The next transaction, right after its GTID event; None on timeout or when stopped.

        Raises:
            ReplicaError: ER_REPLICA_RELAY_LOG_READ_FAILURE (13121).
        """

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop reading and truncate the open transaction. Idempotent."""

    def is_stopped(self) -> bool:
        return self._stop_requested.is_set()

    def is_error(self) -> bool:
        return self.error is not None

    @property
    def error(self) -> ReplicaError | None:
        """The read failure that ended the provider, if one did."""
        return self._reader.error

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class SyncTransactionProvider(TransactionProvider):
    """Reads in the thread that calls ``next``; ``stop`` may come from any thread (a ``next``
    that is reading returns within ``WAIT_SLICE`` of it)."""

    @property
    def position(self) -> RelayCoordinate | None:
        """Where the next event is read from (only meaningful between ``next`` calls)."""
        return self._reader.position

    def start(self) -> None:
        pass

    def next(self, timeout: float | None = None) -> FetchableTransaction | None:
        with self._lock:
            if self._stop_requested.is_set():
                return None
            return self._reader.next_transaction(timeout)

    def stop(self) -> None:
        self._stop_requested.set()
        self.monitor.wake()
        with self._lock:
            self._reader.close()


class AsyncTransactionProvider(TransactionProvider):
    """Reads in its own thread into a queue of ``capacity`` transactions (DES.TS.0040).

    The queue holds transactions still being published (the last one) and complete ones; the
    thread waits while it is full. ``stop`` joins the thread and finishes, as not applied, the
    transactions nobody took.
    """

    def __init__(
        self,
        relay_log: RelayLog,
        *,
        channel: str = "",
        monitor: ResourceMonitor | None = None,
        start: tuple[str, int] | None = None,
        skip: SkipRule = None,
        own_server_id: int | None = None,
        cache_threshold: int = CACHE_THRESHOLD,
        prefetcher: Prefetcher | None = None,
        after_durable: Callable[[Callable[[], None]], None] | None = None,
        capacity: int = 64,
        thread_name: str | None = None,
    ) -> None:
        super().__init__(relay_log, channel=channel, monitor=monitor, start=start, skip=skip,
                         own_server_id=own_server_id, cache_threshold=cache_threshold,
                         prefetcher=prefetcher, after_durable=after_durable)  # fmt: skip
        self._queue: BoundedQueue[FetchableTransaction] = BoundedQueue(capacity)
        name = thread_name or (f"csa-provider-{channel}" if channel else "csa-provider")
        self._thread = threading.Thread(target=self._run, name=name)
        self._started = False
        self._joined = False

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def start(self) -> None:
        """Start the reader thread (idempotent; after ``stop`` it does nothing)."""
        with self._lock:
            if self._started or self._stop_requested.is_set():
                return
            self._started = True
            self._thread.start()

    def next(self, timeout: float | None = None) -> FetchableTransaction | None:
        if not self._started and not self._stop_requested.is_set():
            raise RuntimeError("the provider is not started")
        try:
            return self._queue.get(timeout)
        except TimeoutError:
            return None
        except QueueClosed:
            if self.error is not None:
                raise self.error from None
            return None

    def is_stopped(self) -> bool:
        return self._stop_requested.is_set() or (self._started and not self._thread.is_alive())

    def stop(self) -> None:
        self._stop_requested.set()
        self.monitor.wake()
        self._queue.close()
        with self._lock:
            started, joined, self._joined = self._started, self._joined, True
        if joined:
            return
        if started:
            self._thread.join()
        else:
            self._reader.close()
        while True:  # transactions nobody took: not applied, their files kept
            try:
                self._queue.get(0).finish(success=False)
            except (QueueClosed, TimeoutError):
                break

    def _run(self) -> None:
        reader = self._reader
        try:
            while not self._stop_requested.is_set():
                trx = reader.next_transaction(None)
                if trx is None:
                    self._stop_requested.wait(WAIT_SLICE)  # stopped, or the relay log closed
                    continue
                try:
                    self._queue.put(trx)
                except QueueClosed:
                    reader.close()
                    trx.finish(success=False)
                    break
        except ReplicaError:
            pass  # the reader keeps it as ``error``; the consumer gets it after the queue
        except BaseException as exc:
            logger.critical("transaction provider '%s' failed", self.channel, exc_info=True)
            reader.fail(BinlogError(f"the reader thread failed: {exc!r}"))
        finally:
            reader.close()
            self._queue.close()
