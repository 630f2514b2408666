"""The legacy multi-threaded applier as a channel component (APPLIER_VERSION=1).

``MtaApplier(engine)`` is what the server installs in ``Components.appliers`` for
``ApplierVersion.MTA``; START REPLICA [SQL_THREAD] calls ``start_applier``, which starts an
``MtaChannel`` on the channel's relay log and returns it (its ``stop`` is the one way to end
it).
"""

from __future__ import annotations

from spark_replica.applier_core.channels.components import RunningThreads, ThreadContext
from spark_replica.applier_core.mta.coordinator import MtaChannel
from spark_replica.applier_core.storage import ExecMode, StorageEngine


class MtaApplier:
    """Starts a channel's legacy applier on ``engine``."""

    def __init__(self, engine: StorageEngine) -> None:
        self.engine = engine

    def start_applier(self, context: ThreadContext) -> RunningThreads:
        """Start the channel's applier (START REPLICA [SQL_THREAD] [UNTIL ...])."""
        settings = context.settings
        self.engine.exec_mode = ExecMode(settings.get_str("replica_exec_mode"))
        self.engine.lock_wait_timeout = float(settings.get_int("innodb_lock_wait_timeout"))
        channel = MtaChannel(context, self.engine)
        channel.start()
        return channel
