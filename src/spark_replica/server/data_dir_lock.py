"""One process per data directory: ``spark-replica serve`` and ``check`` hold an exclusive
lock on ``<data_dir>/spark-replica.lock`` while they run (released by the kernel when the
process ends, however it ends). A second one on the same directory is refused at once, before
it touches the tables, the relay logs or the key index."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = "spark-replica.lock"


class DataDirInUse(RuntimeError):
    """Another process holds the data directory."""


@contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[None]:
    """Hold ``data_dir``'s lock meanwhile (the directory is created if missing).

    Raises:
        DataDirInUse: another process holds it; the message names that process's pid.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise DataDirInUse(
                f"the data directory {data_dir} is in use by another spark-replica process "
                f"(pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
