"""Tables of the metadata database.

The four ``mysql.*`` tables keep MySQL's column names and column order (MySQL 8.4 plus the
three ``Applier_*`` columns of the Change Stream Applier), so ``SELECT * FROM mysql.<table>``
can answer straight from them. Project columns that MySQL does not have (``Created_seq``) come
last and are left out of those answers (:data:`PROJECT_COLUMNS`).

Portable types are used so the same models work, and behave the same, on SQLite, PostgreSQL and
MySQL/MariaDB:

- MySQL's BOOLEAN (a TINYINT holding 0 or 1) is a small integer, its ENUMs are short strings;
- ``INTEGER UNSIGNED`` columns that take user values up to 2**32 - 1 (``Port``,
  ``Connect_retry``) and positions and sizes are ``BIGINT``: PostgreSQL's INTEGER stops at
  2**31 - 1;
- text whose length the SQL layer does not check (``Host``, ``Privilege_checks_*``) is TEXT,
  which no backend truncates or refuses; VARCHAR lengths are kept where values are checked
  before they get here (channel names, identifiers, enum values, compression algorithms);
- the text keys that results are ordered by (channel names, GTID source uuids and tags) compare
  by code point, as SQLite compares text: on PostgreSQL they use the "C" collation instead of
  the database's default one.

Text columns that MySQL declares nullable but always fills are NOT NULL here; the ones where
NULL means something (``Tls_ciphersuites``, ``Privilege_checks_*``) stay nullable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import (
    BigInteger,
    DateTime,
    Float,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, MappedAsDataclass, mapped_column

from spark_replica.applier_core.channels.store import WorkerInfo as WorkerInfo

MASTER_INFO_LINES = 33
"""``Number_of_lines`` of a ``slave_master_info`` row: its number of MySQL columns."""
RELAY_LOG_INFO_LINES = 18
"""``Number_of_lines`` of a ``slave_relay_log_info`` row: 15 columns plus the 3 applier ones."""
RELAY_LOG_INFO_ID = 1
"""``Id`` of every ``slave_relay_log_info`` row (MySQL writes 1)."""

ROLE_ADMIN = "admin"
ROLE_READ_ONLY = "read_only"
USER_ROLES = (ROLE_ADMIN, ROLE_READ_ONLY)

MYSQL_TABLE_NAMES = (
    "slave_master_info",
    "slave_relay_log_info",
    "slave_worker_info",
    "gtid_executed",
)
"""The ``mysql`` schema tables the store keeps, by their MySQL names."""
PROJECT_COLUMNS = frozenset({"Created_seq"})
"""Columns of those tables that MySQL does not have."""


def _sorted_key(length: int) -> String:
    """VARCHAR(length) that compares by code point on every backend (see the module)."""
    return String(length).with_variant(String(length, collation="C"), "postgresql")


class Base(MappedAsDataclass, DeclarativeBase):
    """Declarative base of every metadata table.

    Models are keyword-only dataclasses, so their columns keep MySQL's order whatever their
    defaults are.
    """


class SlaveMasterInfo(Base, kw_only=True):
    """Connection metadata of one channel (``mysql.slave_master_info``)."""

    __tablename__ = "slave_master_info"

    number_of_lines: Mapped[int] = mapped_column("Number_of_lines", Integer)
    master_log_name: Mapped[str] = mapped_column("Master_log_name", Text)
    master_log_pos: Mapped[int] = mapped_column("Master_log_pos", BigInteger)
    host: Mapped[str] = mapped_column("Host", Text)
    user_name: Mapped[str] = mapped_column("User_name", Text)
    user_password: Mapped[str] = mapped_column("User_password", Text)
    port: Mapped[int] = mapped_column("Port", BigInteger)
    connect_retry: Mapped[int] = mapped_column("Connect_retry", BigInteger)
    enabled_ssl: Mapped[int] = mapped_column("Enabled_ssl", SmallInteger)
    ssl_ca: Mapped[str] = mapped_column("Ssl_ca", Text)
    ssl_capath: Mapped[str] = mapped_column("Ssl_capath", Text)
    ssl_cert: Mapped[str] = mapped_column("Ssl_cert", Text)
    ssl_cipher: Mapped[str] = mapped_column("Ssl_cipher", Text)
    ssl_key: Mapped[str] = mapped_column("Ssl_key", Text)
    ssl_verify_server_cert: Mapped[int] = mapped_column("Ssl_verify_server_cert", SmallInteger)
    heartbeat: Mapped[float] = mapped_column("Heartbeat", Float)
    bind: Mapped[str] = mapped_column("Bind", Text)
    ignored_server_ids: Mapped[str] = mapped_column("Ignored_server_ids", Text)
    uuid: Mapped[str] = mapped_column("Uuid", Text)
    retry_count: Mapped[int] = mapped_column("Retry_count", BigInteger)
    ssl_crl: Mapped[str] = mapped_column("Ssl_crl", Text)
    ssl_crlpath: Mapped[str] = mapped_column("Ssl_crlpath", Text)
    enabled_auto_position: Mapped[int] = mapped_column("Enabled_auto_position", SmallInteger)
    channel_name: Mapped[str] = mapped_column("Channel_name", _sorted_key(64), primary_key=True)
    tls_version: Mapped[str] = mapped_column("Tls_version", Text)
    public_key_path: Mapped[str] = mapped_column("Public_key_path", Text)
    get_public_key: Mapped[int] = mapped_column("Get_public_key", SmallInteger)
    network_namespace: Mapped[str] = mapped_column("Network_namespace", Text)
    master_compression_algorithm: Mapped[str] = mapped_column(
        "Master_compression_algorithm", String(64)
    )
    master_zstd_compression_level: Mapped[int] = mapped_column(
        "Master_zstd_compression_level", Integer
    )
    tls_ciphersuites: Mapped[str | None] = mapped_column("Tls_ciphersuites", Text, default=None)
    source_connection_auto_failover: Mapped[int] = mapped_column(
        "Source_connection_auto_failover", SmallInteger, server_default="0"
    )
    gtid_only: Mapped[int] = mapped_column("Gtid_only", SmallInteger, server_default="0")
    created_seq: Mapped[int] = mapped_column("Created_seq", Integer)


class SlaveRelayLogInfo(Base, kw_only=True):
    """Applier metadata of one channel (``mysql.slave_relay_log_info``)."""

    __tablename__ = "slave_relay_log_info"

    number_of_lines: Mapped[int] = mapped_column("Number_of_lines", Integer)
    relay_log_name: Mapped[str] = mapped_column("Relay_log_name", Text)
    relay_log_pos: Mapped[int] = mapped_column("Relay_log_pos", BigInteger)
    master_log_name: Mapped[str] = mapped_column("Master_log_name", Text)
    master_log_pos: Mapped[int] = mapped_column("Master_log_pos", BigInteger)
    sql_delay: Mapped[int] = mapped_column("Sql_delay", Integer)
    number_of_workers: Mapped[int] = mapped_column("Number_of_workers", Integer)
    id: Mapped[int] = mapped_column("Id", Integer)
    channel_name: Mapped[str] = mapped_column("Channel_name", _sorted_key(64), primary_key=True)
    privilege_checks_username: Mapped[str | None] = mapped_column(
        "Privilege_checks_username", Text, default=None
    )
    privilege_checks_hostname: Mapped[str | None] = mapped_column(
        "Privilege_checks_hostname", Text, default=None
    )
    require_row_format: Mapped[int] = mapped_column("Require_row_format", SmallInteger)
    require_table_primary_key_check: Mapped[str] = mapped_column(
        "Require_table_primary_key_check", String(8), server_default="STREAM"
    )
    assign_gtids_to_anonymous_transactions_type: Mapped[str] = mapped_column(
        "Assign_gtids_to_anonymous_transactions_type", String(5), server_default="OFF"
    )
    assign_gtids_to_anonymous_transactions_value: Mapped[str] = mapped_column(
        "Assign_gtids_to_anonymous_transactions_value", Text
    )
    applier_version: Mapped[int] = mapped_column("Applier_version", Integer, server_default="1")
    applier_worker_count: Mapped[int] = mapped_column(
        "Applier_worker_count", Integer, server_default="4"
    )
    applier_event_memory_limit: Mapped[int] = mapped_column(
        "Applier_event_memory_limit", BigInteger, server_default="0"
    )


class SlaveWorkerInfo(Base, kw_only=True):
    """Progress of one applier worker (``mysql.slave_worker_info``)."""

    __tablename__ = "slave_worker_info"
    __table_args__ = (PrimaryKeyConstraint("Channel_name", "Id"),)

    id: Mapped[int] = mapped_column("Id", Integer)
    relay_log_name: Mapped[str] = mapped_column("Relay_log_name", Text)
    relay_log_pos: Mapped[int] = mapped_column("Relay_log_pos", BigInteger)
    master_log_name: Mapped[str] = mapped_column("Master_log_name", Text)
    master_log_pos: Mapped[int] = mapped_column("Master_log_pos", BigInteger)
    checkpoint_relay_log_name: Mapped[str] = mapped_column("Checkpoint_relay_log_name", Text)
    checkpoint_relay_log_pos: Mapped[int] = mapped_column("Checkpoint_relay_log_pos", BigInteger)
    checkpoint_master_log_name: Mapped[str] = mapped_column("Checkpoint_master_log_name", Text)
    checkpoint_master_log_pos: Mapped[int] = mapped_column("Checkpoint_master_log_pos", BigInteger)
    checkpoint_seqno: Mapped[int] = mapped_column("Checkpoint_seqno", Integer)
    checkpoint_group_size: Mapped[int] = mapped_column("Checkpoint_group_size", Integer)
    checkpoint_group_bitmap: Mapped[bytes] = mapped_column("Checkpoint_group_bitmap", LargeBinary)
    channel_name: Mapped[str] = mapped_column("Channel_name", _sorted_key(64))


class GtidExecuted(Base, kw_only=True):
    """One interval of the executed GTID set (``mysql.gtid_executed``).

    The columns follow MySQL 8.4: ``gtid_tag`` comes last, after ``interval_end``, and is part
    of the key. It is a VARCHAR here (MySQL: CHAR(32)) so that backends that pad CHAR values
    return the empty tag as ``''``.
    """

    __tablename__ = "gtid_executed"
    __table_args__ = (PrimaryKeyConstraint("source_uuid", "gtid_tag", "interval_start"),)

    source_uuid: Mapped[str] = mapped_column(_sorted_key(36))
    interval_start: Mapped[int] = mapped_column(BigInteger)
    interval_end: Mapped[int] = mapped_column(BigInteger)
    gtid_tag: Mapped[str] = mapped_column(_sorted_key(32), default="", server_default="")


class ReplicaGlobalVariable(Base, kw_only=True):
    """A global variable set with SET GLOBAL, kept across restarts."""

    __tablename__ = "replica_global_variables"

    variable_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    variable_value: Mapped[str] = mapped_column(Text)
    set_time: Mapped[datetime] = mapped_column(DateTime)


class ReplicaUser(Base, kw_only=True):
    """An account of the replica's own MySQL protocol server."""

    __tablename__ = "replica_users"

    user: Mapped[str] = mapped_column(String(255), primary_key=True)
    auth_string: Mapped[str] = mapped_column(Text)
    role: Mapped[str] = mapped_column(Text)


class ReplicaDatabase(Base, kw_only=True):
    """A replicated database (the Spark engine's catalog of record)."""

    __tablename__ = "replica_databases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: Its default collation (NULL: not known).
    default_collation: Mapped[str | None] = mapped_column(String(64), default=None)


class ReplicaTable(Base, kw_only=True):
    """A replicated table in the Spark engine: its definition (JSON) and the Iceberg
    snapshot that holds its rows at the commit point, with the flushes since its last
    compaction. A table of the engine's earlier layout has no snapshot; its generation and
    change-log batches say where its rows are until it moves into Iceberg."""

    __tablename__ = "replica_tables"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    schema_name: Mapped[str] = mapped_column(String(64))
    table_name: Mapped[str] = mapped_column(String(64))
    definition: Mapped[str] = mapped_column(Text)
    generation: Mapped[int] = mapped_column(Integer)
    has_base: Mapped[int] = mapped_column(SmallInteger)
    batches: Mapped[str] = mapped_column(Text)
    snapshot_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    changes: Mapped[int | None] = mapped_column(Integer, default=None)


class ReplicaObject(Base, kw_only=True):
    """A view, trigger, routine or event the Spark engine keeps: its definition (JSON)."""

    __tablename__ = "replica_objects"

    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    schema_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    definition: Mapped[str] = mapped_column(Text)


class ReplicaXaPrepared(Base, kw_only=True):
    """A prepared XA transaction the Spark engine keeps until its XA COMMIT or XA ROLLBACK:
    the GTID of its prepare and its row events (``apply.xa.encode_events``), recorded at the
    engine's commit points with the executed GTIDs."""

    __tablename__ = "replica_xa_prepared"

    xid: Mapped[str] = mapped_column(String(300), primary_key=True)
    gtid: Mapped[str] = mapped_column(String(200))
    events: Mapped[bytes] = mapped_column(LargeBinary)


class ReplicaAccount(Base, kw_only=True):
    """A replicated user or role the Spark engine keeps: its plugin, hash, privileges and
    roles (JSON), recorded at the engine's commit points."""

    __tablename__ = "replica_accounts"

    user_name: Mapped[str] = mapped_column(String(255), primary_key=True)
    host_name: Mapped[str] = mapped_column(String(255), primary_key=True)
    definition: Mapped[str] = mapped_column(Text)


class ReplicaEngineState(Base, kw_only=True):
    """The Spark engine's counters (one row): the last batch recorded (the commit point of
    the last flush) and the next table id."""

    __tablename__ = "replica_engine_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_batch: Mapped[int] = mapped_column(BigInteger)
    next_table_id: Mapped[int] = mapped_column(Integer)
    committed_at: Mapped[datetime] = mapped_column(DateTime)


def mysql_native_password_hash(password: str) -> str:
    """The ``authentication_string`` MySQL stores for ``mysql_native_password``.

    ``'*'`` followed by the upper-case hex of SHA1(SHA1(password)); empty for no password.

    >>> mysql_native_password_hash("password")
    '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'
    """
    if password == "":
        return ""
    stage1 = hashlib.sha1(password.encode("utf-8")).digest()
    return "*" + hashlib.sha1(stage1).hexdigest().upper()


def pack_server_ids(ids: Sequence[int]) -> str:
    """MySQL's text form of IGNORE_SERVER_IDS: the count, then the ids.

    >>> pack_server_ids(()), pack_server_ids((3, 4))
    ('0', '2 3 4')
    """
    return " ".join(str(n) for n in (len(ids), *ids))


def unpack_server_ids(text: str) -> tuple[int, ...]:
    """The ids of :func:`pack_server_ids`' text form.

    >>> unpack_server_ids("2 3 4"), unpack_server_ids("0"), unpack_server_ids("")
    ((3, 4), (), ())
    """
    fields = text.split()
    if not fields:
        return ()
    return tuple(int(f) for f in fields[1 : 1 + int(fields[0])])


def worker_row(channel: str, w: WorkerInfo) -> SlaveWorkerInfo:
    """The ``slave_worker_info`` row of one worker of ``channel``."""
    return SlaveWorkerInfo(
        id=w.id,
        relay_log_name=w.relay_log_name,
        relay_log_pos=w.relay_log_pos,
        master_log_name=w.source_log_name,
        master_log_pos=w.source_log_pos,
        checkpoint_relay_log_name=w.checkpoint_relay_log_name,
        checkpoint_relay_log_pos=w.checkpoint_relay_log_pos,
        checkpoint_master_log_name=w.checkpoint_source_log_name,
        checkpoint_master_log_pos=w.checkpoint_source_log_pos,
        checkpoint_seqno=w.checkpoint_seqno,
        checkpoint_group_size=w.checkpoint_group_size,
        checkpoint_group_bitmap=w.checkpoint_group_bitmap,
        channel_name=channel,
    )


def worker_of(row: SlaveWorkerInfo) -> WorkerInfo:
    """The worker progress held in a ``slave_worker_info`` row."""
    return WorkerInfo(
        id=row.id,
        relay_log_name=row.relay_log_name,
        relay_log_pos=row.relay_log_pos,
        source_log_name=row.master_log_name,
        source_log_pos=row.master_log_pos,
        checkpoint_relay_log_name=row.checkpoint_relay_log_name,
        checkpoint_relay_log_pos=row.checkpoint_relay_log_pos,
        checkpoint_source_log_name=row.checkpoint_master_log_name,
        checkpoint_source_log_pos=row.checkpoint_master_log_pos,
        checkpoint_seqno=row.checkpoint_seqno,
        checkpoint_group_size=row.checkpoint_group_size,
        checkpoint_group_bitmap=bytes(row.checkpoint_group_bitmap),
    )
