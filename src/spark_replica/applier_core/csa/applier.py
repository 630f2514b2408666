"""The Change Stream Applier as a channel component (APPLIER_VERSION=2).

``CsaApplier(engine)`` is what the server installs in ``Components.appliers``; START REPLICA
[SQL_THREAD] on a CSA channel calls ``start_applier``, which starts a ``CsaChannel`` on the
channel's relay log and returns it (its ``stop`` is the one way to end it). The engine's lock
manager reports every lock wait to the applier's conflict router.
"""

from __future__ import annotations

from spark_replica.applier_core.channels.components import RunningThreads, ThreadContext
from spark_replica.applier_core.csa.conflicts import ConflictRouter
from spark_replica.applier_core.csa.service import CsaChannel
from spark_replica.applier_core.storage import ExecMode, StorageEngine


class CsaApplier:
    """Starts a channel's Change Stream Applier on ``engine``."""

    def __init__(self, engine: StorageEngine) -> None:
        self.engine = engine
        self.router = ConflictRouter()
        engine.locks.add_wait_hook(self.router.on_wait)

    def start_applier(self, context: ThreadContext) -> RunningThreads:
        settings = context.settings
        self.engine.exec_mode = ExecMode(settings.get_str("replica_exec_mode"))
        self.engine.lock_wait_timeout = float(settings.get_int("innodb_lock_wait_timeout"))
        channel = CsaChannel(context, self.engine, self.router)
        channel.start()
        return channel
