"""Opening a metadata store from a database URL.

Store calls are transactions that read before they write: saving a channel reads its row and
the last creation position before it inserts or updates, a ``merge`` reads the row it
replaces. The engines are set up so that the transactions of every store on one database run
one at a time, as if serially, whether the stores are in one process or in several.

SQLite, the embedded default (``sqlite:///path/metadata.db``):

- the driver's own transaction handling is switched off and every transaction starts with
  ``BEGIN IMMEDIATE``, which takes the write lock up front: reads inside a transaction are
  repeatable and two processes cannot interleave a read-then-write;
- a file database runs in WAL mode with ``synchronous=FULL``, so a committed transaction
  survives a power loss, not only a crash of the process;
- ``sqlite:///:memory:`` uses one connection shared by every thread (``StaticPool``), since each
  new connection to it would be a new, empty database.

PostgreSQL (``postgresql+psycopg://user:password@host:port/database``, with the ``postgresql``
extra installed):

- every transaction first takes a transaction-level advisory lock
  (``pg_advisory_xact_lock(POSTGRES_LOCK_KEY)``), which its commit or rollback releases. Store
  transactions on one database therefore run one after another, as with SQLite's
  ``BEGIN IMMEDIATE``: nothing is retried and no serialization failure can happen. Advisory
  locks belong to a database, so stores on different databases of one server never wait for
  each other;
- connections run at READ COMMITTED whatever the server's default is: each statement then
  reads what was committed before it started, which is after the lock was granted. At
  REPEATABLE READ or SERIALIZABLE the snapshot would be taken by the locking statement itself,
  before the wait, and the transaction would not see the commit it waited for;
- durability is the server's: a commit returns once PostgreSQL has flushed it, with its
  default ``synchronous_commit=on``.

Any other URL gets a plain engine with the backend's own isolation level: transactions of
stores on one database are not serialised there.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy import URL, Connection, Engine, create_engine, event, make_url
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from spark_replica.metadata.store import MetadataStore

POSTGRES_LOCK_KEY = 0x5350_524B_5245_504C
"""The advisory lock every PostgreSQL transaction of a store takes first ("SPRKREPL")."""


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
    backend = url.get_backend_name()
    if backend == "postgresql":
        return _postgresql_engine(url)
    if backend != "sqlite":
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


def _postgresql_engine(url: URL) -> Engine:
    engine = create_engine(url, pool_pre_ping=True, isolation_level="READ COMMITTED")

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({POSTGRES_LOCK_KEY})").close()

    return engine
