"""The in-memory engine made durable in the background, as the Spark engine is, with the
durability reports held back on demand.

``HeldDurabilityEngine`` answers ``background_durability`` True, so the appliers keep a relay
log file until ``after_durable`` reports its transactions durable. ``hold()`` queues those
reports (commits go on, but none counts as durable) and ``release()`` delivers them in order:
a test can see that files wait for durability, and what happens once it comes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from spark_replica.applier_core.storage import InMemoryEngine


class HeldDurabilityEngine(InMemoryEngine):
    def __init__(self) -> None:
        super().__init__()
        # _held_lock guards _held and _queued.
        self._held_lock = threading.Lock()
        self._held = False
        self._queued: list[Callable[[], None]] = []

    @property
    def background_durability(self) -> bool:
        return True

    def after_durable(self, callback: Callable[[], None]) -> None:
        with self._held_lock:
            if self._held:
                self._queued.append(callback)
                return
        callback()

    @property
    def queued(self) -> int:
        """Durability reports held back so far."""
        with self._held_lock:
            return len(self._queued)

    def hold(self) -> None:
        """From now on, nothing committed becomes durable until ``release``."""
        with self._held_lock:
            self._held = True

    def release(self) -> None:
        """Everything committed is durable: deliver the held reports, in order."""
        with self._held_lock:
            self._held = False
            queued, self._queued = self._queued, []
        for callback in queued:
            callback()
