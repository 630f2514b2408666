"""Marking GTIDs executed without changing any row: MySQL's empty transaction.

A DBA skips a transaction the applier cannot apply by committing an empty one with its GTID
(``SET GTID_NEXT='uuid:n'; BEGIN; COMMIT``), and declares transactions applied elsewhere with
``SET GLOBAL gtid_purged``. Either way the GTIDs must become executed exactly as an applied
transaction's do, so that they survive a restart and the appliers skip them:

1. an engine transaction with no change commits with the GTIDs as its identity. An engine
   that makes commits durable in the background (the Spark engine) records the executed set
   itself at its commit points, so the GTIDs go where an applied transaction's go; the call
   returns once that commit is durable (``after_durable``), as a COMMIT returns once durable;
2. then ``ExecutedGtids`` learns them (an applier skips them from then on) and publishes the
   set: to ``@@global.gtid_executed`` and, when the engine does not record it, to
   ``mysql.gtid_executed``.
"""

from __future__ import annotations

import itertools
import threading

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.storage import StorageEngine, TransactionRef

#: Seconds to wait for the engine to make the commit durable before giving up with an error.
DURABLE_TIMEOUT = 600.0

# The lock owner of each empty transaction: below any applier's order (appliers count up
# from 0), and distinct, since two transactions active at once may not share a reference.
_ORDERS = itertools.count(-(1 << 62), -1)


def identity(gtids: GtidSet) -> str:
    """The transaction identity the engine records for ``gtids``: each interval as
    ``uuid[:tag]:first-last``, comma separated, a form every engine parses as a GTID set."""
    return ",".join(
        f"{uuid}:{tag + ':' if tag else ''}{first}-{last}"
        for uuid, tag, first, last in gtids.intervals()
    )


def commit_empty(
    engine: StorageEngine | None, executed: ExecutedGtids, gtids: GtidSet, *, name: str
) -> None:
    """Commit an empty transaction that makes ``gtids`` executed and durable (blocking; call
    it off the event loop). ``name`` names the engine session (a client connection)."""
    if not gtids:
        return
    if engine is not None:
        session = engine.session(name)
        session.begin(TransactionRef(identity(gtids), next(_ORDERS)))
        try:
            session.prepare()
            session.commit()
        except BaseException:
            session.rollback()
            raise
        durable = threading.Event()
        engine.after_durable(durable.set)
        if not durable.wait(DURABLE_TIMEOUT):
            raise TimeoutError("the storage engine did not make the commit durable")
    executed.update(gtids)
    executed.publish()
