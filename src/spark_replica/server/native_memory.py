"""The server's C heap: two malloc arenas instead of one per thread, trimmed now and then.

glibc hands a thread that allocates while another thread holds the main arena an arena of
its own, up to eight per core. The server's threads (the receiver, the applier's workers,
the flusher, the query threads) each come to hold one, and what a burst frees in one arena
(a big transaction decoded, a flush's batch built) is not reused by the others: the process
keeps the high-water mark of every arena. Two arenas bound that, at the price of some lock
contention that the interpreter's own lock mostly hides. The driver JVM is given the same
limit through ``MALLOC_ARENA_MAX`` (``spark/session.py``).

An operator's own ``MALLOC_ARENA_MAX`` is left as it is: glibc read it at start.

Memory freed inside an arena stays in the process until the arena's top is free: a flush's
rows freed while the next batch's are allocated above them keep their pages resident.
``trim_periodically`` hands such free pages back to the system every few seconds
(``malloc_trim``), from a worker thread: it walks the free lists, milliseconds at most.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
import logging
import os
import sys
from typing import Any

logger = logging.getLogger(__name__)

ARENAS = 2
#: Seconds between two trims of the heap.
TRIM_PERIOD = 5.0
#: ``mallopt``'s parameter for the arena limit (glibc's malloc.h).
_M_ARENA_MAX = -8


@functools.cache
def _glibc() -> Any:
    """glibc, loaded; None on another C library or platform."""
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.gnu_get_libc_version  # noqa: B018 (glibc only: musl has neither call)
        libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        libc.mallopt.restype = ctypes.c_int
        libc.malloc_trim.argtypes = (ctypes.c_size_t,)
        libc.malloc_trim.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return libc


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Limit glibc's malloc to ``arenas`` arenas from now on. Returns whether it did: not on
    another C library or platform, nor when ``MALLOC_ARENA_MAX`` is set."""
    libc = _glibc()
    if libc is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    done = bool(libc.mallopt(_M_ARENA_MAX, arenas) == 1)
    logger.debug("malloc arenas limited to %d: %s", arenas, done)
    return done


def trim_heap() -> bool:
    """Give the free pages of every arena back to the system; whether glibc released any
    (False on another C library)."""
    libc = _glibc()
    return libc is not None and bool(libc.malloc_trim(0))


async def trim_periodically(period: float = TRIM_PERIOD) -> None:
    """``trim_heap`` every ``period`` seconds until cancelled (nothing on another C
    library)."""
    if _glibc() is None:
        return
    while True:
        await asyncio.sleep(period)
        await asyncio.to_thread(trim_heap)
