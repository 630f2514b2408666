"""Opening a metadata store from a database URL.

SQLite is the embedded default. Its connections are set up so that a store call is a real,
durable transaction:

- the driver's own transaction handling is switched off and every transaction starts with
  ``BEGIN IMMEDIATE``, which takes the write lock up front: reads inside a transaction are
  repeatable and two processes cannot interleave a read-then-write;
- a file database runs in WAL mode with ``synchronous=FULL``, so a committed transaction
  survives a power loss, not only a crash of the process;
- ``sqlite:///:memory:`` uses one connection shared by every thread (``StaticPool``), since each
  new connection to it would be a new, empty database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy import URL, Connection, Engine, create_engine, event, make_url
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from spark_replica.metadata.store import MetadataStore


def open_store(url: str) -> MetadataStore:
    """A store on the database at ``url``, with every table created if missing.

    >>> store = open_store("sqlite:///:memory:")
    >>> store.load_channels()
    []
    >>> store.close()
    """
    store = MetadataStore(_engine_for(make_url(url)))
    store.create_tables()
    return store


def _is_memory(url: URL) -> bool:
    database = url.database or ""
    return database in ("", ":memory:") or url.query.get("mode") == "memory"


def _engine_for(url: URL) -> Engine:
    if url.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    if _is_memory(url):
        engine = create_engine(url, poolclass=StaticPool, connect_args={"check_same_thread": False})
        _control_sqlite_transactions(engine, durable_file=False)
        return engine
    database = url.database or ""
    if not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False})
    _control_sqlite_transactions(engine, durable_file=True)
    return engine


def _control_sqlite_transactions(engine: Engine, *, durable_file: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        # Autocommit at the driver level: the "begin" hook below emits BEGIN itself.
        dbapi_connection.isolation_level = None
        if durable_file:
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=FULL")
            finally:
                cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
