"""Failpoints: named places where an operator's test makes the process fail on purpose, as
MySQL's debug builds do with ``DBUG_EXECUTE_IF``, to prove recovery at exact points that a
random kill reaches only by chance.

``SPARK_REPLICA_FAILPOINTS`` (read once, at the first ``hit``) lists them, comma-separated,
each ``name=action[@n]``: at the ``n``-th time (default 1) the process passes ``name``, the
action runs: ``kill`` (SIGKILL to itself: no cleanup, as a machine failure) or ``raise``
(``FailpointError``). Unset, ``hit`` costs one dict lookup.

Places: ``spark.table_committed`` (after each table's Iceberg commit of a flush, before the
next table's), ``spark.before_commit_point`` (Iceberg and the key index written, the commit
point not recorded), ``spark.ddl_steps`` (a DDL flush's catalog steps taken, its tables
not yet created), ``spark.compacted`` (a compaction committed to Iceberg, not recorded).
"""

from __future__ import annotations

import os
import signal
import threading

ENVIRONMENT = "SPARK_REPLICA_FAILPOINTS"


class FailpointError(RuntimeError):
    """Raised by a failpoint whose action is ``raise``."""


_lock = threading.Lock()
_armed: dict[str, tuple[str, int]] | None = None
_hits: dict[str, int] = {}


def parse(text: str) -> dict[str, tuple[str, int]]:
    """``name=action[@n],...`` as name → (action, n).

    Raises:
        ValueError: a malformed entry or an unknown action.
    """
    armed: dict[str, tuple[str, int]] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, sep, action = entry.partition("=")
        action, at, count = action.partition("@")
        if not sep or action not in ("kill", "raise") or (at and not count.isdigit()):
            raise ValueError(f"{ENVIRONMENT}: cannot read {entry!r} (name=kill|raise[@n])")
        armed[name.strip()] = (action, int(count or 1))
    return armed


def hit(name: str) -> None:
    """Pass the failpoint ``name``."""
    global _armed
    armed = _armed
    if armed is None:
        with _lock:
            if _armed is None:
                _armed = parse(os.environ.get(ENVIRONMENT, ""))
            armed = _armed
    found = armed.get(name)
    if found is None:
        return
    action, at = found
    with _lock:
        _hits[name] = count = _hits.get(name, 0) + 1
    if count != at:
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise FailpointError(f"failpoint {name} (hit {count})")
