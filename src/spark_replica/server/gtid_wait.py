"""WAIT_FOR_EXECUTED_GTID_SET for a session: wait in a thread, in slices, so that the event
loop stays free and a closed connection or a server shutdown ends the wait within a slice.

https://dev.mysql.com/doc/refman/8.4/en/gtid-functions.html#function_wait-for-executed-gtid-set
"""

from __future__ import annotations

import asyncio
import time

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.sql_handlers.gtid_functions import GtidWait

#: Seconds a waiting thread waits before the session looks again (its task may be cancelled).
WAIT_SLICE = 0.5


async def wait_executed(executed: ExecutedGtids, wait: GtidWait) -> int | None:
    """0 once every GTID of the wait's set is executed (and shown in ``@@gtid_executed``,
    which is otherwise refreshed periodically), 1 when its timeout passed first; None for a
    NULL argument."""
    if wait.gtids is None:
        return None
    deadline = None if wait.timeout is None else time.monotonic() + wait.timeout
    while True:
        remaining = WAIT_SLICE if deadline is None else deadline - time.monotonic()
        slice_ = max(0.0, min(WAIT_SLICE, remaining))
        if await asyncio.to_thread(_wait_and_publish, executed, wait.gtids, slice_):
            return 0
        if deadline is not None and time.monotonic() >= deadline:
            return 1


def _wait_and_publish(executed: ExecutedGtids, gtids: GtidSet, timeout: float) -> bool:
    if not executed.wait_for(gtids, timeout):
        return False
    executed.publish()
    return True
