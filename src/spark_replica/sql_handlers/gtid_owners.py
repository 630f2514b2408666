"""Which client owns which GTID (``@@global.gtid_owned``).

``SET GTID_NEXT='uuid:n'`` makes the session the owner of that GTID until it commits or rolls
back, so that no other client commits the same GTID meanwhile: a second client that asks for
it waits, as MySQL's ``set_gtid_next`` does, and finds it executed (its transaction is then
skipped) or released. Sessions run on the server's event loop, so the registry lives there
too and a waiting client holds no thread; its wait ends with KILL QUERY, the end of its
connection or the server's shutdown (the task is cancelled).
"""

from __future__ import annotations

import asyncio

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids

Gtid = tuple[str, str, int]


class GtidOwners:
    """The GTIDs client sessions own. Used from the event loop only."""

    def __init__(self) -> None:
        self._owners: dict[Gtid, int] = {}
        self._released: asyncio.Condition | None = None
        self._purging: asyncio.Lock | None = None

    def _condition(self) -> asyncio.Condition:
        if self._released is None:
            self._released = asyncio.Condition()
        return self._released

    async def acquire(self, gtid: Gtid, owner: int, executed: ExecutedGtids) -> bool:
        """Own ``gtid`` for ``owner``: True once owned, False when it is executed (the
        session's next transaction is then skipped). Waits while another session owns it."""
        condition = self._condition()
        async with condition:
            while True:
                if executed.contains(*gtid):
                    return False
                holder = self._owners.get(gtid)
                if holder is None or holder == owner:
                    self._owners[gtid] = owner
                    return True
                await condition.wait()

    async def release(self, gtid: Gtid, owner: int) -> None:
        """Give ``gtid`` up (committed or rolled back) and wake the sessions waiting for it."""
        condition = self._condition()
        async with condition:
            if self._owners.get(gtid) == owner:
                del self._owners[gtid]
            condition.notify_all()

    def purge_lock(self) -> asyncio.Lock:
        """Held by a SET GLOBAL gtid_purged from its checks to its commit, so that two of
        them never both pass their checks against the same executed set."""
        if self._purging is None:
            self._purging = asyncio.Lock()
        return self._purging

    def owned(self) -> GtidSet:
        """Every GTID owned now."""
        result = GtidSet()
        for uuid, tag, number in self._owners:
            result.add(uuid, tag, number)
        return result
