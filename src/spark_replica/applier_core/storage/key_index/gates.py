"""Reader gates: the one thing a reader and the map's growth must not do at once.

LMDB remaps the file when the map grows (``set_mapsize``) and requires that no transaction
of the process be active meanwhile; a reader using the old mapping would read freed memory.
Each reader thread holds its own lock for the length of one read transaction (uncontended:
about 0.1 µs), and growth takes every thread's lock. A shared reader count would make the
readers contend on one lock instead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReaderGates:
    """One lock per reader thread; ``all_held`` takes them all."""

    def __init__(self) -> None:
        self._gates: list[threading.Lock] = []
        self._lock = threading.Lock()
        self._local = threading.local()
        self._holding = False

    def mine(self) -> threading.Lock:
        """The calling thread's gate (registered on first use). While ``all_held`` waits
        for the gates, a reader waits for it here rather than taking its gate again:
        Python's locks are not fair, and a busy reader would starve the growth."""
        if self._holding:
            with self._lock:
                pass
        try:
            gate: threading.Lock = self._local.gate
        except AttributeError:
            gate = threading.Lock()
            with self._lock:
                self._gates.append(gate)
            self._local.gate = gate
        return gate

    @contextmanager
    def all_held(self) -> Iterator[None]:
        """No reader is inside its gate, and none enters, until the block ends. The calling
        thread must not hold its own gate."""
        with self._lock:
            self._holding = True
            gates = list(self._gates)
            try:
                for gate in gates:
                    gate.acquire()
                try:
                    yield
                finally:
                    for gate in gates:
                        gate.release()
            finally:
                self._holding = False
