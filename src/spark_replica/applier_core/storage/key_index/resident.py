"""Keeping the key index's pages out of the process's resident set.

LMDB reads through a read-only shared mapping of its data file: every page a lookup touches
stays mapped, so the process's resident set grows with the part of the index it has read,
up to the whole file (a table's size). Those pages are the file's cache, not the process's
memory: ``release`` drops them from the mapping (``madvise(MADV_DONTNEED)``), which leaves
them in the OS page cache while memory allows; the next read of one maps it again (a minor
fault) or reads it from disk. The index writes through the same shared mapping (LMDB's
``writemap``): a page written and released stays in the page cache, modified, until the
kernel writes it back, so releasing loses nothing, during a write transaction too.

A read maps more than the page it needs: the kernel maps the cached pages around a faulting
one too ("fault-around", 64 KiB by default), so random lookups in a table that was just
written map the whole file within a few hundred thousand reads. ``ResidentBound`` therefore
releases after a number of reads, not only after writes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
from collections.abc import Callable
from pathlib import Path

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_libc.madvise.restype = ctypes.c_int


def mappings(path: Path) -> list[tuple[int, int]]:
    """The ``(address, length)`` of this process's mappings of the file ``path``."""
    target = os.stat(path)
    found = []
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) < 6 or fields[4] != str(target.st_ino):
                continue
            if fields[5].rstrip("\n") != str(path):
                continue
            start, end = (int(part, 16) for part in fields[0].split("-"))
            found.append((start, end - start))
    return found


def release(path: Path, spans: list[tuple[int, int]] | None = None) -> int:
    """Drop every page of this process's mappings of ``path`` (``spans``, when known) from
    its resident set; the bytes of mapping released (0 where the system has no ``/proc`` or
    refuses)."""
    released = 0
    try:
        spans = mappings(path) if spans is None else spans
    except OSError:
        return 0
    for address, length in spans:
        if _libc.madvise(address, length, mmap.MADV_DONTNEED) == 0:
            released += length
    return released


#: What one read may map at most, for counting: a B-tree path's pages with the kernel's
#: fault-around (64 KiB each), the upper pages mostly mapped already.
READ_MAPS = 128 * 1024


class ResidentBound:
    """Keeps the resident pages of the mapped file ``path`` near ``limit`` bytes once the
    file's used part (``used()``) is bigger: ``read`` counts reads and releases every
    ``limit // READ_MAPS`` of them, ``wrote`` releases after a write transaction. The
    count is approximate (threads race on it): the bound is a size, not a promise to the
    byte.

    The mapping's address is looked up once and kept until ``remapped``: call ``read``
    and ``wrote`` only where the mapping cannot move meanwhile (in a read transaction, or
    in the thread that grows the map)."""

    def __init__(self, path: Path, limit: int | None, used: Callable[[], int]) -> None:
        self.path = path
        self.limit = limit
        self._used = used
        self._every = max(1, (limit or 0) // READ_MAPS)
        self._reads = 0
        self._spans: list[tuple[int, int]] | None = None

    def read(self, count: int = 1) -> None:
        """``count`` reads were made (a write transaction's changes count: each reads its
        B-tree path and writes a page). Safe during a write transaction: the pages it
        changed are in the page cache, and mapped again when it touches them."""
        if self.limit is None:
            return
        self._reads += count
        if self._reads >= self._every:
            self._reads = 0
            self.wrote()

    def wrote(self) -> None:
        if self.limit is not None and self._used() > self.limit:
            if self._spans is None:
                try:
                    self._spans = mappings(self.path)
                except OSError:
                    return
            release(self.path, self._spans)

    def remapped(self) -> None:
        """The file was mapped again (its mapping grew): find the mapping again at the
        next release. Called with no transaction running."""
        self._spans = None
