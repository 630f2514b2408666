"""Purge holds: one relay log subscription per file for every transaction in it
(WL10500.PURGE.1-5, DES.RS.0050-0090).

A provider and every transaction it hands out are subscribers of the files they use. Taking
and releasing a ``Subscription`` per transaction costs two trips through the purge tracker;
``FileHolds`` takes one per file instead and counts the holders itself: the provider while it
reads the file, and each unfinished transaction with events in it. When the last holder lets
go, the file's subscription is released as applied, or as failed if any holder failed (a
failed or stopped transaction: its files stay until the applier has applied it again). The
purge rules are the tracker's: the same files become purge candidates at the same moment as
with one subscription per transaction.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog import RelayLog, Subscription

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Hold:
    subscription: Subscription
    holders: int
    reading: bool = True  # the provider still reads the file
    failed: bool = False


class FileHolds:
    """The holders of a relay log's files. Thread-safe.

    ``after_durable`` (the storage engine's, when it makes commits durable in the background)
    delays releasing a file's subscription until the transactions in it are durable: a relay
    log file is the only copy of a transaction until then, so it must not be purged earlier.
    """

    def __init__(
        self,
        relay_log: RelayLog,
        after_durable: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self.relay_log = relay_log
        self._after_durable = after_durable
        # _lock guards _holds; no purge tracker call is made while holding it.
        self._lock = threading.Lock()
        self._holds: dict[str, _Hold] = {}

    def __repr__(self) -> str:
        with self._lock:
            return f"<FileHolds { ({n: h.holders for n, h in self._holds.items()}) }>"

    def hold(self, file: str) -> None:
        """One more transaction in ``file``, which the provider is reading.

        Raises:
            BinlogError: the file was purged.
        """
        with self._lock:
            found = self._holds.get(file)
            if found is not None:
                found.holders += 1
                return
        subscription = self.relay_log.subscribe(file)  # outside _lock: the tracker's lock
        with self._lock:
            found = self._holds.get(file)
            if found is None:
                self._holds[file] = _Hold(subscription, 2)  # the reader and the transaction
                return
            found.holders += 1
        subscription.release()

    def release(self, files: list[str], *, applied: bool) -> None:
        """A transaction with events in ``files`` is done; ``applied=False`` keeps them."""
        ended: list[_Hold] = []
        with self._lock:
            for file in files:
                found = self._holds[file]
                found.failed |= not applied
                found.holders -= 1
                if found.holders == 0:
                    ended.append(self._holds.pop(file))
        self._end(ended)

    def leave(self, file: str) -> None:
        """The provider has read ``file`` to its end."""
        self._leave([file])

    def leave_all(self) -> None:
        """The provider stopped reading."""
        with self._lock:
            files = [name for name, found in self._holds.items() if found.reading]
        self._leave(files)

    def _leave(self, files: list[str]) -> None:
        ended: list[_Hold] = []
        with self._lock:
            for file in files:
                found = self._holds.get(file)
                if found is None or not found.reading:
                    continue
                found.reading = False
                found.holders -= 1
                if found.holders == 0:
                    ended.append(self._holds.pop(file))
        self._end(ended)

    def _end(self, ended: list[_Hold]) -> None:
        if ended and self._after_durable is not None:
            self._after_durable(lambda: self._release(ended))
        else:
            self._release(ended)

    def _release(self, ended: list[_Hold]) -> None:
        purge = False
        for found in ended:
            purge |= found.subscription.release(applied=not found.failed)
        if purge:
            purge_quietly(self.relay_log)


def purge_quietly(relay_log: RelayLog) -> None:
    """Purge the applied relay log files; a failure leaves them for the next purge."""
    try:
        relay_log.purge()
    except (OSError, BinlogError):
        logger.warning("relay log purge failed; the files stay until the next purge",
                       exc_info=True)  # fmt: skip
