"""The concurrency layer of the Change Stream Applier (WL10500.LAYER.1): blocking queues,
sharded counters and tickets.

It knows nothing of databases or replication (WL10500.LAYER.2) and imports only the standard
library.
"""

from __future__ import annotations

from spark_replica.applier_core.concurrency.counters import ShardedCounter as ShardedCounter
from spark_replica.applier_core.concurrency.queues import BoundedQueue as BoundedQueue
from spark_replica.applier_core.concurrency.queues import LockingQueue as LockingQueue
from spark_replica.applier_core.concurrency.queues import QueueClosed as QueueClosed
from spark_replica.applier_core.concurrency.tickets import AtomicTicket as AtomicTicket
from spark_replica.applier_core.concurrency.tickets import Ticket as Ticket
from spark_replica.applier_core.concurrency.tickets import TicketGuard as TicketGuard

__all__ = [
    "AtomicTicket",
    "BoundedQueue",
    "LockingQueue",
    "QueueClosed",
    "ShardedCounter",
    "Ticket",
    "TicketGuard",
]
