"""The replication components ``spark-replica serve`` installs.

Channels with APPLIER_VERSION=2 apply with the Change Stream Applier. Its storage engine is
the in-memory engine for now: transactions are applied, committed in order and shown in the
replication status tables, but the data lives only as long as the process.
"""

from __future__ import annotations

from spark_replica.applier_core.channels.components import Components
from spark_replica.applier_core.channels.config import ApplierVersion
from spark_replica.applier_core.csa.applier import CsaApplier
from spark_replica.applier_core.storage import InMemoryEngine, StorageEngine


def default_components(engine: StorageEngine | None = None) -> Components:
    """The components of a server whose tables live in ``engine`` (default: in memory)."""
    return Components(appliers={ApplierVersion.CSA: CsaApplier(engine or InMemoryEngine())})
