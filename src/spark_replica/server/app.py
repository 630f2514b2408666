"""The replica server: opens the data directory and metadata, serves MySQL clients.

``ReplicaServer`` owns everything it starts; ``close()`` is the single shutdown path (stop
every channel's threads, stop listening, close the metadata store) and is idempotent.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import mysql_mimic.server
from mysql_mimic import MysqlServer

from spark_replica.applier_core.channels.components import Components
from spark_replica.applier_core.channels.manager import ChannelManager
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.settings import SystemVariables
from spark_replica.metadata import MetadataStore, open_store
from spark_replica.server import quiet_log, secrets_filter, tls
from spark_replica.server.auth import ReplicaIdentityProvider, client_host, provision_users
from spark_replica.server.config import ServerConfig
from spark_replica.server.session import ReplicaSession
from spark_replica.server.sha2_auth import client_stream
from spark_replica.server.storage import close_engine, query_engine
from spark_replica.server.user_queries import QueryTurns
from spark_replica.server.wire import ReplicaConnection, ReplicaControl, install_sqlstates
from spark_replica.sql_handlers import ReplicaContext, ReplicationService

logger = logging.getLogger(__name__)

#: Builds the components once the metadata store is open (the Spark engine keeps its state
#: there).
ComponentsFactory = Callable[[ServerConfig, MetadataStore], Components]


class _Connection(ReplicaConnection):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        peer = self.stream.writer.get_extra_info("peername")
        client_host.set(str(peer[0]) if peer else "localhost")
        client_stream.set(self.stream)
        self.client_address = f"{peer[0]}:{peer[1]}" if peer else "localhost"


class ReplicaServer:
    """One replica process: metadata, channels, and the MySQL protocol listener."""

    def __init__(
        self,
        config: ServerConfig,
        components: Components | ComponentsFactory | None = None,
        *,
        announce: Callable[[str], None] = print,
    ) -> None:
        self.config = config
        self._components = components
        self.components = Components()
        self._announce = announce
        self._server: MysqlServer | None = None
        self._query_turns: QueryTurns | None = None
        self._closed = False
        self.store: MetadataStore | None = None
        self.context: ReplicaContext | None = None
        #: Why the storage engine failed (``StorageEngine.on_failure``); None while it works.
        self.failure: str | None = None
        self._failed: asyncio.Event | None = None

    def open(self) -> ReplicaContext:
        """Open the data directory and metadata store and load every channel."""
        data_dir = Path(self.config.data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        store = open_store(self.config.effective_metadata_url)
        self.store = store
        persisted = store.load_variables()
        settings = SystemVariables(persisted)
        settings.set_internal("skip_replica_start", int(self.config.skip_replica_start))
        settings.set_internal("relay_log_space_limit", self.config.relay_log_space_limit)
        if "server_uuid" not in persisted:
            store.save_variables({"server_uuid": settings.get_str("server_uuid")})
        started = time.perf_counter()
        components = self._components
        if callable(components):
            components = components(self.config, store)
        self.components = components or Components()
        engine_opened = time.perf_counter()
        engine = self.components.engine
        stored = GtidSet.from_intervals(store.load_gtid_executed())
        settings.set_internal("gtid_executed", stored.format())
        # An engine that makes commits durable in groups records the executed GTIDs itself,
        # at each commit point; storing them earlier would claim transactions it may lose.
        durable_elsewhere = engine is not None and engine.background_durability
        executed = ExecutedGtids(
            stored, settings=settings, store=None if durable_elsewhere else store
        )
        manager = ChannelManager(
            self.components, settings, str(data_dir), executed=executed, store=store
        )
        service = ReplicationService(manager, store, settings)
        service.load()
        channels_loaded = time.perf_counter()
        logger.info(
            "opened: storage engine in %.1f s, channels (relay logs read back) in %.1f s",
            engine_opened - started,
            channels_loaded - engine_opened,
        )
        generated = provision_users(store, self.config)
        if generated is not None:
            self._announce(
                f"spark-replica: generated password for root@localhost: {generated}\n"
                "spark-replica: it is shown only once; "
                "set SPARK_REPLICA_ROOT_PASSWORD to choose one."
            )
        self.context = ReplicaContext(
            service,
            manager,
            settings,
            store,
            tables=engine,
            queries=query_engine(engine, self.config),
        )
        return self.context

    async def start(self) -> None:
        """Listen on the configured address (port 0 picks a free port)."""
        context = self.context or self.open()
        install_sqlstates()
        secrets_filter.install()
        quiet_log.install()
        mysql_mimic.server.Connection = _Connection
        tls.install()
        assert self.store is not None
        query_turns = self._query_turns = QueryTurns(self.config.spark.max_queries)
        self._server = MysqlServer(
            session_factory=lambda: ReplicaSession(context, query_turns),
            # Connection ids stay below 2**31: Connector/J reads them as a signed int.
            control=ReplicaControl(server_id=random.randrange(1, 1 << 15)),
            identity_provider=ReplicaIdentityProvider(self.store, self.components.engine),
            ssl=self.config.ssl_context(),
        )
        self._failed = asyncio.Event()
        engine = self.components.engine
        if engine is not None:
            loop = asyncio.get_running_loop()

            def failed(reason: str) -> None:  # on the engine's thread
                loop.call_soon_threadsafe(self._engine_failed, reason)

            engine.on_failure(failed)
        await self._server.start_server(host=self.config.bind, port=self.config.port)
        logger.info("listening on %s:%d", self.config.bind, self.port)
        if not self.config.skip_replica_start:
            started = await asyncio.to_thread(context.service.start_with_server)
            if started:
                logger.info("channels started with the server: %s", ", ".join(started))

    @property
    def port(self) -> int:
        if self._server is None or not self._server.sockets():
            return self.config.port
        return int(self._server.sockets()[0].getsockname()[1])

    def _engine_failed(self, reason: str) -> None:
        logger.error("the storage engine failed: %s", reason)
        self.failure = reason
        assert self._failed is not None
        self._failed.set()

    async def wait_failed(self) -> str:
        """Wait until the storage engine fails (``start`` first); why."""
        assert self._failed is not None
        await self._failed.wait()
        assert self.failure is not None
        return self.failure

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    async def close(self) -> None:
        """Stop channels, stop listening, close the store. Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        if self.context is not None:
            await asyncio.to_thread(self.context.manager.shutdown)
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        if self._query_turns is not None:
            await asyncio.to_thread(self._query_turns.close)
        await asyncio.to_thread(close_engine, self.components.engine)
        if self.store is not None:
            self.store.close()


class AsyncServer(Protocol):
    """What ``BackgroundServer`` runs: started and closed on its loop, listening on ``port``."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    @property
    def port(self) -> int: ...


async def _cancel_remaining_tasks() -> None:
    """What ``asyncio.run`` does at its end: cancel the tasks still running (a client whose
    statement waits, WAIT_FOR_EXECUTED_GTID_SET) and let them finish, rather than leave them
    to be destroyed with the loop."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class BackgroundServer:
    """Runs a server (a ``ReplicaServer`` or any ``AsyncServer``) on its own event loop
    thread, for tests, benchmarks and embedding."""

    def __init__(self, server: AsyncServer, *, name: str = "replica-server") -> None:
        self.server = server
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=False)
        self._started = threading.Event()
        self._error: BaseException | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self.server.start())
        except BaseException as e:
            self._error = e
            self._started.set()
            return
        self._started.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self.server.close())
        self._loop.run_until_complete(_cancel_remaining_tasks())
        self._loop.run_until_complete(self._loop.shutdown_default_executor())
        self._loop.close()

    def start(self) -> BackgroundServer:
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            self._thread.join()
            raise self._error
        return self

    @property
    def port(self) -> int:
        return self.server.port

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
