"""The session service of a channel (DES.SE.0010–0030): engine sessions for its jobs.

A job holds a session from its first event until it commits or rolls back; with
``replica_preserve_commit_order=ON`` that includes the time a prepared transaction waits for
its commit turn with no worker. So a channel needs as many sessions as it may have
transactions in flight (the scheduler's limit), not as many as it has workers. Sessions are
created up front and reused; ``acquire`` waits while all are taken (it does not happen when
the pool is as large as the in-flight limit).
"""

from __future__ import annotations

import threading
from collections import deque

from spark_replica.applier_core.storage import EngineSession, StorageEngine


class SessionPool:
    """``size`` sessions of ``engine`` named ``<name>-session-<n>``. Thread-safe."""

    def __init__(self, engine: StorageEngine, name: str, size: int) -> None:
        if size < 1:
            raise ValueError("a session pool needs at least one session")
        self._free: deque[EngineSession] = deque(
            engine.session(f"{name}-session-{n}") for n in range(1, size + 1)
        )
        self.size = size
        # _available guards _free.
        self._available = threading.Condition()

    def acquire(self) -> EngineSession:
        """A free session; waits until one is released when all are in use."""
        with self._available:
            while not self._free:
                self._available.wait()
            return self._free.popleft()

    def release(self, session: EngineSession) -> None:
        """Give ``session`` back; its transaction must be committed or rolled back."""
        with self._available:
            self._free.append(session)
            self._available.notify()

    @property
    def in_use(self) -> int:
        with self._available:
            return self.size - len(self._free)
