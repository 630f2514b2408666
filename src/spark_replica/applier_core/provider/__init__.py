"""The transaction provider both appliers take their transactions from: a channel's relay log
read into transactions, handed out as they are read (see docs/csa.md).

``providers`` holds the synchronous and asynchronous providers, ``reader`` the relay log reader
behind them, ``fetchable`` the consumer's side of a transaction, ``streaming`` and ``reread``
the provider's side of one too large to keep, ``resources`` the memory they share.
"""

from __future__ import annotations

from spark_replica.applier_core.provider.boundaries import UNEXPECTED_EVENT as UNEXPECTED_EVENT
from spark_replica.applier_core.provider.fetchable import (
    FetchableTransaction as FetchableTransaction,
)
from spark_replica.applier_core.provider.providers import (
    AsyncTransactionProvider as AsyncTransactionProvider,
)
from spark_replica.applier_core.provider.providers import (
    SyncTransactionProvider as SyncTransactionProvider,
)
from spark_replica.applier_core.provider.providers import (
    TransactionProvider as TransactionProvider,
)
from spark_replica.applier_core.provider.resources import EVENT_MEMORY as EVENT_MEMORY
from spark_replica.applier_core.provider.resources import ResourceGuard as ResourceGuard
from spark_replica.applier_core.provider.resources import ResourceMonitor as ResourceMonitor
from spark_replica.applier_core.provider.resources import ResourceStats as ResourceStats
from spark_replica.applier_core.provider.resources import (
    effective_event_memory_limit as effective_event_memory_limit,
)
from spark_replica.applier_core.provider.streaming import CACHE_THRESHOLD as CACHE_THRESHOLD
from spark_replica.applier_core.provider.streaming import TransactionState as TransactionState

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
