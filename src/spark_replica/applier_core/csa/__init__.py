"""The service layer of the Change Stream Applier (APPLIER_VERSION=2): see docs/csa.md."""

from __future__ import annotations

from spark_replica.applier_core.csa.boundaries import UNEXPECTED_EVENT as UNEXPECTED_EVENT
from spark_replica.applier_core.csa.fetchable import (
    FetchableTransaction as FetchableTransaction,
)
from spark_replica.applier_core.csa.provider import (
    AsyncTransactionProvider as AsyncTransactionProvider,
)
from spark_replica.applier_core.csa.provider import (
    SyncTransactionProvider as SyncTransactionProvider,
)
from spark_replica.applier_core.csa.provider import TransactionProvider as TransactionProvider
from spark_replica.applier_core.csa.resources import EVENT_MEMORY as EVENT_MEMORY
from spark_replica.applier_core.csa.resources import ResourceGuard as ResourceGuard
from spark_replica.applier_core.csa.resources import ResourceMonitor as ResourceMonitor
from spark_replica.applier_core.csa.resources import ResourceStats as ResourceStats
from spark_replica.applier_core.csa.resources import (
    effective_event_memory_limit as effective_event_memory_limit,
)
from spark_replica.applier_core.csa.streaming import CACHE_THRESHOLD as CACHE_THRESHOLD
from spark_replica.applier_core.csa.streaming import TransactionState as TransactionState

__all__ = [
    "CACHE_THRESHOLD",
    "EVENT_MEMORY",
    "UNEXPECTED_EVENT",
    "AsyncTransactionProvider",
    "FetchableTransaction",
    "ResourceGuard",
    "ResourceMonitor",
    "ResourceStats",
    "SyncTransactionProvider",
    "TransactionProvider",
    "TransactionState",
    "effective_event_memory_limit",
]
