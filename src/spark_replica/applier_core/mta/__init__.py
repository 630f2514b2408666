"""The legacy multi-threaded applier (APPLIER_VERSION=1): a coordinator and its workers.

The coordinator reads the relay log and hands whole transactions to workers through bounded
queues, scheduling them by LOGICAL_CLOCK (WL#6314): transactions with the same commit parent
run in parallel, the next group waits for the current one, and a Format_description event
starts a new group. ``replica_parallel_workers`` (read at START) sets the number of workers;
0 makes the coordinator apply every transaction itself. ``replica_preserve_commit_order=ON``
makes the commits follow relay-log order (WL#7846) through the ``CommitOrderGate`` shared
with the Change Stream Applier. ``replica_parallel_type=DATABASE`` schedules by database
partitions instead (WL#5569): a database's transactions run in order on one worker, those of
different databases in parallel (``partitions.py``).

Not here yet: the group assignment queue
and low-water-mark checkpoints (``mysql.slave_worker_info``, recovery with gaps, UNTIL
SQL_AFTER_MTS_GAPS), UNTIL conditions, the commit-order deadlock detection of WL#7846 and the
per-worker status tables.
"""

from __future__ import annotations

from spark_replica.applier_core.mta.applier import MtaApplier as MtaApplier
from spark_replica.applier_core.mta.clock import LogicalClock as LogicalClock
from spark_replica.applier_core.mta.clock import Stamp as Stamp
from spark_replica.applier_core.mta.coordinator import MtaChannel as MtaChannel

__all__ = ["LogicalClock", "MtaApplier", "MtaChannel", "Stamp"]
