"""The built-in source's live mode: generated transactions appended to its binary log at a
target rate, so that replicas have a moving source and lag can be measured.

``LiveWorkload`` owns a thread (``source-live``) that encodes each transaction of the
stream (the generator's) and appends it when its turn comes: transaction ``n`` is due
``n / rate`` seconds after the start (``rate`` 0: as fast as possible). When it falls behind
it catches up without pausing. ``stop`` is idempotent and joins the thread; ``finished`` is
set once the stream is exhausted.

Each transaction's commit timestamps (the GTID event's original and immediate commit
timestamps, and the events' header time) are the wall-clock time it is appended at, as a real
source stamps its commits, so that a replica's lag can be read from them.

With ``prepare``, the thread first encodes every transaction and only then starts the clock:
each append then costs a restamp of its GTID event (``restamped_gtid``) instead of an
encoding, so that the source sustains higher rates on a machine it shares with a replica
(other events keep the header time of their encoding). It holds the whole encoded workload
in memory.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

from spark_replica.applier_core.binlog.codecs.gtid import restamped_gtid
from spark_replica.tools.generator.simulate import GeneratedTransaction
from spark_replica.tools.generator.writer import TransactionEncoder
from spark_replica.tools.source.binlog import SourceBinlog

_T = TypeVar("_T")


class LiveWorkload:
    """Appends ``transactions`` to ``binlog`` at ``rate`` transactions per second."""

    def __init__(
        self,
        binlog: SourceBinlog,
        transactions: Iterable[GeneratedTransaction],
        *,
        server_uuid: str,
        rate: float = 0.0,
        prepare: bool = False,
    ) -> None:
        if rate < 0:
            raise ValueError(f"rate must be >= 0, got {rate}")
        self._binlog = binlog
        self._transactions = transactions
        self._encoder = TransactionEncoder(server_uuid, binlog.server_id)
        self._uuid = server_uuid
        self.rate = rate
        self.prepare = prepare
        self.appended = 0
        #: The commit time (µs since the epoch) of the last transaction appended.
        self.last_commit_time_us = 0
        self.finished = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="source-live")
        self._started = False

    def __repr__(self) -> str:
        return f"<LiveWorkload {self.appended} appended at {self.rate}/s>"

    def start(self) -> LiveWorkload:
        if not self._started:
            self._started = True
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop appending and join the thread. Idempotent."""
        self._stop.set()
        if self._started:
            self._thread.join()

    def _run(self) -> None:
        try:
            if self.prepare:
                encoded = []
                for trx in self._transactions:
                    if self._stop.is_set():
                        return
                    encoded.append((self._encoder.encode(trx), trx.gno))
                self._append_all(encoded, self._stamp_prepared)
            else:
                self._append_all(((trx, trx.gno) for trx in self._transactions), self._encode)
        except RuntimeError:
            return  # the binary log closed under us: the server is stopping
        finally:
            self.finished.set()

    def _append_all(self, items: Iterable[tuple[_T, int]], stamp: Callable[[_T, int], list[bytes]]
                    ) -> None:  # fmt: skip
        """Append each item when its turn comes, as the events ``stamp`` makes of it at the
        wall-clock time of the append."""
        started = time.monotonic()
        for item, gno in items:
            if self.rate > 0:
                due = started + self.appended / self.rate
                if self._stop.wait(max(0.0, due - time.monotonic())):
                    return
            elif self._stop.is_set():
                return
            now = time.time_ns() // 1000
            self._binlog.append(stamp(item, now), (self._uuid, gno))
            self.last_commit_time_us = now
            self.appended += 1

    def _encode(self, trx: GeneratedTransaction, now: int) -> list[bytes]:
        return self._encoder.encode(dataclasses.replace(trx, commit_time_us=now))

    @staticmethod
    def _stamp_prepared(events: list[bytes], now: int) -> list[bytes]:
        return [restamped_gtid(events[0], now), *events[1:]]
