"""A relay log's seal: how its receiver left it, so the next start need not read it back.

Opening a relay log after a restart walks its last file twice: every event header, to cut a
partial event a crash left (``framing.scan_tail``), and every event, to rebuild the
Retrieved_Gtid_Set (``receiver/retrieved.py``). A file grows to ``max_relay_log_size``
(1 GiB by default), millions of small events under a steady write load: seconds of a
restart that depend on where the file happened to be.

When the receiver stops cleanly (STOP REPLICA, a server shutdown) it has fsynced the file
and knows the transactions it holds whole; it writes ``<base>.seal`` beside the index: the
last file, where it ends, its last event's type and the received GTID set. The next open
trusts the seal while the last file is the one it names and is exactly as long: the file
is only ever appended to, and a writer removes the seal before it appends anything (and
RESET REPLICA before it deletes the files), so a matching length is the same content. Any
other state (no seal after a crash, another last file, another length) reads the files as
before.

The file is JSON, written to ``<base>.seal.tmp``, fsynced and renamed over the seal.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from spark_replica.applier_core.binlog.relaylog.index import fsync_directory, replace_file

logger = logging.getLogger(__name__)

SEAL_SUFFIX = ".seal"


@dataclass(frozen=True, slots=True)
class Seal:
    file: str
    """The relay log's last file when its receiver stopped."""
    end: int
    """Its length: the end of its last event."""
    last_type: int | None
    """Its last event's type code (None for a file without events)."""
    retrieved: str
    """The GTIDs of the transactions the relay log holds whole, as GtidSet formats them."""


def seal_path(directory: Path, base_name: str) -> Path:
    return directory / f"{base_name}{SEAL_SUFFIX}"


def write_seal(path: Path, seal: Seal) -> None:
    """Write ``seal`` durably (temp file, fsync, rename, directory fsync).

    Raises:
        OSError: it cannot be written (the relay log is then read back at the next start).
    """
    data = json.dumps({"file": seal.file, "end": seal.end, "last_type": seal.last_type,
                       "retrieved": seal.retrieved}).encode()  # fmt: skip
    replace_file(path.with_name(path.name + ".tmp"), path, data)
    fsync_directory(path.parent)


def read_seal(path: Path) -> Seal | None:
    """The seal at ``path``; None when there is none or it cannot be used (logged)."""
    try:
        found = json.loads(path.read_bytes())
        last_type = None if found["last_type"] is None else int(found["last_type"])
        seal = Seal(str(found["file"]), int(found["end"]), last_type, str(found["retrieved"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as error:
        logger.warning("relay log seal '%s' is not used: %s", path, error)
        return None
    return seal


def remove_seal(path: Path) -> None:
    """Remove the seal durably (before the relay log changes). Idempotent.

    Raises:
        OSError: it cannot be removed (the relay log must not change then).
    """
    try:
        path.unlink()
    except FileNotFoundError:
        return
    fsync_directory(path.parent)
