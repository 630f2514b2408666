"""A counter that many threads add to without sharing a lock (WL10500.SHARD.1, DES.STM.0040).

Each thread adds to its own shard (a one-slot list only that thread writes), so ``add`` takes
no lock once the thread has its shard. ``get`` sums the shards; it is a snapshot that may miss
an ``add`` running at the same moment, and is exact once the adding threads are quiet.
"""

from __future__ import annotations

import threading


class ShardedCounter:
    """An integer total spread over one shard per thread.

    ``store`` and ``reset`` set the total through an offset instead of touching the shards,
    so they never race with an ``add`` on another thread's shard: an ``add`` that runs at the
    same time counts either before or after the new value, never half.
    """

    __slots__ = ("_local", "_mutex", "_offset", "_shards")

    def __init__(self, value: int = 0) -> None:
        # _mutex guards _shards (the dict, not the shard contents) and _offset.
        self._mutex = threading.Lock()
        #: One shard per thread ident; a new thread with a reused ident continues the shard of
        #: the finished one, so the total stays right and the dict stays bounded.
        self._shards: dict[int, list[int]] = {}
        self._offset = value
        self._local = threading.local()

    def add(self, value: int = 1) -> None:
        """Add ``value`` (may be negative) to the calling thread's shard."""
        try:
            shard: list[int] = self._local.shard
        except AttributeError:
            shard = self._own_shard()
        shard[0] += value

    def get(self) -> int:
        """The total: the last stored value plus every add since."""
        with self._mutex:
            return self._offset + sum(shard[0] for shard in self._shards.values())

    def store(self, value: int) -> None:
        """Set the total to ``value``."""
        with self._mutex:
            self._offset = value - sum(shard[0] for shard in self._shards.values())

    def reset(self) -> None:
        """Set the total to 0."""
        self.store(0)

    def _own_shard(self) -> list[int]:
        with self._mutex:
            shard = self._shards.setdefault(threading.get_ident(), [0])
        self._local.shard = shard
        return shard

    def __repr__(self) -> str:
        return f"<ShardedCounter {self.get()} over {len(self._shards)} shard(s)>"
