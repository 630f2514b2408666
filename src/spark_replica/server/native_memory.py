"""The server's C heap: two malloc arenas instead of one per thread.

glibc hands a thread that allocates while another thread holds the main arena an arena of
its own, up to eight per core. The server's threads (the receiver, the applier's workers,
the flusher, the query threads) each come to hold one, and what a burst frees in one arena
(a big transaction decoded, a flush's batch built) is not reused by the others: the process
keeps the high-water mark of every arena. Two arenas bound that, at the price of some lock
contention that the interpreter's own lock mostly hides. The driver JVM is given the same
limit through ``MALLOC_ARENA_MAX`` (``spark/session.py``).

An operator's own ``MALLOC_ARENA_MAX`` is left as it is: glibc read it at start.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import sys

logger = logging.getLogger(__name__)

ARENAS = 2
#: ``mallopt``'s parameter for the arena limit (glibc's malloc.h).
_M_ARENA_MAX = -8


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Limit glibc's malloc to ``arenas`` arenas from now on. Returns whether it did: not on
    another C library or platform, nor when ``MALLOC_ARENA_MAX`` is set."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 (glibc only: musl has no arena limit)
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    done = mallopt(_M_ARENA_MAX, arenas) == 1
    logger.debug("malloc arenas limited to %d: %s", arenas, done)
    return done
