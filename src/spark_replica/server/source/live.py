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
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable

from spark_replica.applier_core.binlog.generator.simulate import GeneratedTransaction
from spark_replica.applier_core.binlog.generator.writer import TransactionEncoder
from spark_replica.server.source.binlog import SourceBinlog


class LiveWorkload:
    """Appends ``transactions`` to ``binlog`` at ``rate`` transactions per second."""

    def __init__(
        self,
        binlog: SourceBinlog,
        transactions: Iterable[GeneratedTransaction],
        *,
        server_uuid: str,
        rate: float = 0.0,
    ) -> None:
        if rate < 0:
            raise ValueError(f"rate must be >= 0, got {rate}")
        self._binlog = binlog
        self._transactions = transactions
        self._encoder = TransactionEncoder(server_uuid, binlog.server_id)
        self._uuid = server_uuid
        self.rate = rate
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
        started = time.monotonic()
        try:
            for trx in self._transactions:
                if self.rate > 0:
                    due = started + self.appended / self.rate
                    if self._stop.wait(max(0.0, due - time.monotonic())):
                        return
                elif self._stop.is_set():
                    return
                now = dataclasses.replace(trx, commit_time_us=time.time_ns() // 1000)
                self._binlog.append(self._encoder.encode(now), (self._uuid, trx.gno))
                self.last_commit_time_us = now.commit_time_us
                self.appended += 1
        except RuntimeError:
            return  # the binary log closed under us: the server is stopping
        finally:
            self.finished.set()
