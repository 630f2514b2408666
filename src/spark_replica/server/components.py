"""The replication components ``spark-replica serve`` installs.

Channels apply their relay logs with the applier their APPLIER_VERSION names: the legacy
multi-threaded applier (1, ``applier_core/mta``) or the Change Stream Applier (2), both on the
server's one storage engine (``server/storage.py`` picks it; the in-memory engine by default
here, for tests and embedding).
"""

from __future__ import annotations

from spark_replica.applier_core.channels.components import Components
from spark_replica.applier_core.channels.config import ApplierVersion
from spark_replica.applier_core.csa.applier import CsaApplier
from spark_replica.applier_core.mta.applier import MtaApplier
from spark_replica.applier_core.receiver.thread import Receivers
from spark_replica.applier_core.storage import InMemoryEngine, StorageEngine


def default_components(engine: StorageEngine | None = None) -> Components:
    """The components of a server whose tables live in ``engine`` (default: in memory)."""
    engine = engine or InMemoryEngine()
    return Components(
        appliers={ApplierVersion.CSA: CsaApplier(engine), ApplierVersion.MTA: MtaApplier(engine)},
        receiver=Receivers(),
    )
