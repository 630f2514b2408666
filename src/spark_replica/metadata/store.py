"""The metadata store: channels, worker progress, executed GTIDs, variables and accounts.

Every public method is one short transaction (``with Session(engine) as s, s.begin():``), so a
call stores everything it changed or nothing. On an engine whose pool hands one shared
connection to every thread (``sqlite:///:memory:`` with ``StaticPool``) the transactions of
one store are also serialised by a lock, because a single DBAPI connection cannot run two
transactions at once.

Mapping of a :class:`ChannelConfig` to its two rows:

- booleans are stored as 0/1, as MySQL stores BOOLEAN; enums as their string values;
- ``Number_of_lines`` is 33 (connection) and 18 (applier); the applier row's ``Id`` is 1;
- ``Number_of_workers`` is the applier worker count for an APPLIER_VERSION=2 channel and 0
  otherwise (the legacy applier takes its worker count from ``replica_parallel_workers`` when
  it starts, so there is no stored value to show);
- ``Ignored_server_ids`` is MySQL's text form, the count and then the ids: ``"2 3 4"``;
- ``Heartbeat`` is read back rounded to milliseconds, MySQL's resolution, so a backend that
  keeps FLOAT in single precision still returns the value that was set;
- the source's server id is learnt on connection and is not persisted: it loads as 0.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, func, insert, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from spark_replica.applier_core.channels.config import (
    AnonymousGtids,
    ApplierSettings,
    ApplierVersion,
    ChannelConfig,
    PrimaryKeyCheck,
    SourceConnection,
)
from spark_replica.applier_core.channels.store import ChannelChanges, ChannelStore, VariableStore
from spark_replica.applier_core.errors import ErrorCode, ReplicaError, format_message
from spark_replica.metadata.models import (
    MASTER_INFO_LINES,
    MYSQL_TABLE_NAMES,
    PROJECT_COLUMNS,
    RELAY_LOG_INFO_ID,
    RELAY_LOG_INFO_LINES,
    USER_ROLES,
    Base,
    GtidExecuted,
    ReplicaGlobalVariable,
    ReplicaUser,
    SlaveMasterInfo,
    SlaveRelayLogInfo,
    SlaveWorkerInfo,
    WorkerInfo,
    pack_server_ids,
    unpack_server_ids,
    worker_of,
    worker_row,
)
from spark_replica.metadata.spark_state import SparkStateRepository
from spark_replica.metadata.upgrade import add_missing_columns

GtidInterval = tuple[str, str, int, int]
"""One row of the executed GTID set: (source uuid, tag, interval start, interval end)."""


class MetadataError(ReplicaError):
    """Raised when the metadata database fails a read or a write; the call stored nothing.

    ER_REPLICA_FATAL_ERROR (13117) with the database's own words (``database or disk is
    full``), never the statement or its parameters (they may hold a password)."""

    @classmethod
    def of(cls, error: SQLAlchemyError) -> MetadataError:
        cause = getattr(error, "orig", None) or error
        detail = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        return cls(
            ErrorCode.REPLICA_FATAL_ERROR,
            format_message(
                ErrorCode.REPLICA_FATAL_ERROR, f"the replication metadata store failed: {detail}"
            ),
        )


class MetadataStore(ChannelStore, VariableStore, SparkStateRepository):
    """Replication metadata kept in any SQLAlchemy database (see :func:`open_store`)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        # Serialises whole transactions when every session shares one DBAPI connection.
        self._guard: AbstractContextManager[object] = (
            threading.Lock() if isinstance(engine.pool, StaticPool) else nullcontext()
        )

    def __repr__(self) -> str:
        return f"MetadataStore({self._engine.url.render_as_string(hide_password=True)!r})"

    @property
    def engine(self) -> Engine:
        """The engine the store runs on."""
        return self._engine

    @contextmanager
    def _transaction(self) -> Iterator[Session]:
        try:
            with self._guard, Session(self._engine) as session, session.begin():
                yield session
        except SQLAlchemyError as exc:
            raise MetadataError.of(exc) from exc

    # -- schema -------------------------------------------------------------------------------

    def create_tables(self) -> None:
        """Create every table that does not exist yet, and add the columns that tables
        written by an earlier version lack (``upgrade``)."""
        with self._transaction() as s:
            Base.metadata.create_all(s.connection())
            add_missing_columns(s.connection(), Base.metadata)

    def destroy_tables(self) -> None:
        """Drop every table of the store, with its rows."""
        with self._transaction() as s:
            Base.metadata.drop_all(s.connection())

    def close(self) -> None:
        """Release the engine's connections (an in-memory database is gone afterwards)."""
        self._engine.dispose()

    # -- channels -----------------------------------------------------------------------------

    def load_channels(self) -> list[ChannelConfig]:
        """Every stored channel, in creation order."""
        with self._transaction() as s:
            appliers = {r.channel_name: r for r in s.scalars(select(SlaveRelayLogInfo))}
            masters = s.scalars(
                select(SlaveMasterInfo).order_by(
                    SlaveMasterInfo.created_seq, SlaveMasterInfo.channel_name
                )
            )
            return [_channel_of(m, appliers.get(m.channel_name)) for m in masters]

    def save_channel(self, config: ChannelConfig) -> None:
        """Insert or replace both metadata rows of one channel; an update keeps its place."""
        self.apply_channel_changes(ChannelChanges(save=(config,)))

    def delete_channel(self, name: str) -> None:
        """Remove the connection, applier and worker metadata of a channel."""
        self.apply_channel_changes(ChannelChanges(delete=(name,)))

    def apply_channel_changes(self, changes: ChannelChanges) -> None:
        """Deletes, then saves, then worker-row removals, all in one transaction."""
        with self._transaction() as s:
            for name in changes.delete:
                for model in (SlaveMasterInfo, SlaveRelayLogInfo, SlaveWorkerInfo):
                    s.execute(delete(model).where(model.channel_name == name))
            for config in changes.save:
                existing = s.get(SlaveMasterInfo, config.name)
                if existing is not None:
                    created_seq = existing.created_seq
                else:
                    last = s.scalar(select(func.max(SlaveMasterInfo.created_seq)))
                    created_seq = (last or 0) + 1
                s.merge(_master_row(config, created_seq))
                s.merge(_relay_row(config))
            for name in changes.clear_workers:
                s.execute(delete(SlaveWorkerInfo).where(SlaveWorkerInfo.channel_name == name))

    # -- workers ------------------------------------------------------------------------------

    def load_worker_info(self, channel: str) -> list[WorkerInfo]:
        """The worker rows of a channel, by worker id."""
        stmt = (
            select(SlaveWorkerInfo)
            .where(SlaveWorkerInfo.channel_name == channel)
            .order_by(SlaveWorkerInfo.id)
        )
        with self._transaction() as s:
            return [worker_of(row) for row in s.scalars(stmt)]

    def save_worker_info(self, channel: str, workers: Iterable[WorkerInfo]) -> None:
        """Replace the worker rows of a channel with ``workers``."""
        with self._transaction() as s:
            s.execute(delete(SlaveWorkerInfo).where(SlaveWorkerInfo.channel_name == channel))
            s.add_all(worker_row(channel, w) for w in workers)

    def save_checkpoint(self, config: ChannelConfig, workers: Sequence[WorkerInfo]) -> None:
        """The applier positions of ``config`` and the channel's worker rows, atomically."""
        a = config.applier
        with self._transaction() as s:
            s.execute(
                update(SlaveRelayLogInfo)
                .where(SlaveRelayLogInfo.channel_name == config.name)
                .values(
                    relay_log_name=a.relay_log_file,
                    relay_log_pos=a.relay_log_pos,
                    master_log_name=a.source_log_file,
                    master_log_pos=a.source_log_pos,
                )
            )
            s.execute(delete(SlaveWorkerInfo).where(SlaveWorkerInfo.channel_name == config.name))
            s.add_all(worker_row(config.name, w) for w in workers)

    def delete_worker_info(self, channel: str) -> None:
        """Remove the worker rows of a channel."""
        with self._transaction() as s:
            s.execute(delete(SlaveWorkerInfo).where(SlaveWorkerInfo.channel_name == channel))

    # -- executed GTIDs -----------------------------------------------------------------------

    def load_gtid_executed(self) -> list[GtidInterval]:
        """Every interval of the executed GTID set, ordered by uuid, tag and start."""
        stmt = select(
            GtidExecuted.source_uuid,
            GtidExecuted.gtid_tag,
            GtidExecuted.interval_start,
            GtidExecuted.interval_end,
        ).order_by(GtidExecuted.source_uuid, GtidExecuted.gtid_tag, GtidExecuted.interval_start)
        with self._transaction() as s:
            return [(r[0], r[1], r[2], r[3]) for r in s.execute(stmt)]

    def save_gtid_intervals(self, rows: Iterable[GtidInterval]) -> None:
        """Replace the whole executed GTID set with ``rows``."""
        values = [
            {"source_uuid": u, "gtid_tag": t, "interval_start": a, "interval_end": b}
            for u, t, a, b in rows
        ]
        with self._transaction() as s:
            s.execute(delete(GtidExecuted))
            if values:
                s.execute(insert(GtidExecuted), values)

    # -- variables ----------------------------------------------------------------------------

    def load_variables(self) -> dict[str, str]:
        """Every persisted variable, by lower-case name, as text."""
        stmt = select(ReplicaGlobalVariable.variable_name, ReplicaGlobalVariable.variable_value)
        with self._transaction() as s:
            return {row[0]: row[1] for row in s.execute(stmt)}

    def save_variables(self, values: Mapping[str, str]) -> None:
        """Insert or replace the given variables; names are stored in lower case."""
        now = datetime.now(UTC).replace(tzinfo=None)
        with self._transaction() as s:
            for name, value in values.items():
                s.merge(
                    ReplicaGlobalVariable(
                        variable_name=name.lower(), variable_value=value, set_time=now
                    )
                )

    # -- accounts -----------------------------------------------------------------------------

    def get_user(self, name: str) -> tuple[str, str] | None:
        """``(auth_string, role)`` of an account, or None when there is no such account."""
        with self._transaction() as s:
            row = s.get(ReplicaUser, name)
            return None if row is None else (row.auth_string, row.role)

    def put_user(self, name: str, auth_string: str, role: str) -> None:
        """Create or replace an account; ``role`` is ``'admin'`` or ``'read_only'``."""
        if role not in USER_ROLES:
            raise ValueError(f"unknown role {role!r}; expected one of {USER_ROLES}")
        with self._transaction() as s:
            s.merge(ReplicaUser(user=name, auth_string=auth_string, role=role))

    # -- mysql schema tables ------------------------------------------------------------------

    def rows(self, table_name: str) -> tuple[list[str], list[tuple[object, ...]]]:
        """MySQL's column names and every row of one ``mysql.*`` table, in primary-key order.

        ``table_name`` is one of :data:`MYSQL_TABLE_NAMES`, with or without ``mysql.``, in any
        case. Values are as stored: 0/1 for booleans, strings for enums.
        """
        name = table_name.lower().removeprefix("mysql.")
        if name not in MYSQL_TABLE_NAMES:
            raise ValueError(f"not a metadata table: {table_name!r}")
        table = Base.metadata.tables[name]
        columns = [c for c in table.columns if c.name not in PROJECT_COLUMNS]
        stmt = select(*columns).order_by(*table.primary_key.columns)
        with self._transaction() as s:
            found = [tuple(row) for row in s.execute(stmt)]
        return [c.name for c in columns], found


def _flag(value: bool) -> int:
    return 1 if value else 0


def _master_row(config: ChannelConfig, created_seq: int) -> SlaveMasterInfo:
    c = config.connection
    return SlaveMasterInfo(
        number_of_lines=MASTER_INFO_LINES,
        master_log_name=c.source_log_file,
        master_log_pos=c.source_log_pos,
        host=c.host,
        user_name=c.user,
        user_password=c.password,
        port=c.port,
        connect_retry=c.connect_retry,
        enabled_ssl=_flag(c.ssl),
        ssl_ca=c.ssl_ca,
        ssl_capath=c.ssl_capath,
        ssl_cert=c.ssl_cert,
        ssl_cipher=c.ssl_cipher,
        ssl_key=c.ssl_key,
        ssl_verify_server_cert=_flag(c.ssl_verify_server_cert),
        heartbeat=c.heartbeat_period,
        bind=c.bind,
        ignored_server_ids=pack_server_ids(c.ignore_server_ids),
        uuid=c.source_uuid,
        retry_count=c.retry_count,
        ssl_crl=c.ssl_crl,
        ssl_crlpath=c.ssl_crlpath,
        enabled_auto_position=_flag(c.auto_position),
        channel_name=config.name,
        tls_version=c.tls_version,
        public_key_path=c.public_key_path,
        get_public_key=_flag(c.get_public_key),
        network_namespace=c.network_namespace,
        master_compression_algorithm=c.compression_algorithms,
        master_zstd_compression_level=c.zstd_compression_level,
        tls_ciphersuites=c.tls_ciphersuites,
        source_connection_auto_failover=_flag(c.source_connection_auto_failover),
        gtid_only=_flag(c.gtid_only),
        created_seq=created_seq,
    )


def _relay_row(config: ChannelConfig) -> SlaveRelayLogInfo:
    a = config.applier
    csa = a.applier_version == ApplierVersion.CSA
    return SlaveRelayLogInfo(
        number_of_lines=RELAY_LOG_INFO_LINES,
        relay_log_name=a.relay_log_file,
        relay_log_pos=a.relay_log_pos,
        master_log_name=a.source_log_file,
        master_log_pos=a.source_log_pos,
        sql_delay=a.sql_delay,
        number_of_workers=a.applier_worker_count if csa else 0,
        id=RELAY_LOG_INFO_ID,
        channel_name=config.name,
        privilege_checks_username=a.privilege_checks_user,
        privilege_checks_hostname=a.privilege_checks_host,
        require_row_format=_flag(a.require_row_format),
        require_table_primary_key_check=a.require_table_primary_key_check.value,
        assign_gtids_to_anonymous_transactions_type=a.assign_gtids_type.value,
        assign_gtids_to_anonymous_transactions_value=a.assign_gtids_value,
        applier_version=int(a.applier_version),
        applier_worker_count=a.applier_worker_count,
        applier_event_memory_limit=a.applier_event_memory_limit,
    )


def _channel_of(m: SlaveMasterInfo, r: SlaveRelayLogInfo | None) -> ChannelConfig:
    connection = SourceConnection(
        host=m.host,
        port=m.port,
        user=m.user_name,
        password=m.user_password,
        connect_retry=m.connect_retry,
        retry_count=m.retry_count,
        heartbeat_period=round(m.heartbeat, 3),
        bind=m.bind,
        network_namespace=m.network_namespace,
        source_log_file=m.master_log_name,
        source_log_pos=m.master_log_pos,
        auto_position=bool(m.enabled_auto_position),
        ssl=bool(m.enabled_ssl),
        ssl_ca=m.ssl_ca,
        ssl_capath=m.ssl_capath,
        ssl_cert=m.ssl_cert,
        ssl_cipher=m.ssl_cipher,
        ssl_key=m.ssl_key,
        ssl_verify_server_cert=bool(m.ssl_verify_server_cert),
        ssl_crl=m.ssl_crl,
        ssl_crlpath=m.ssl_crlpath,
        tls_version=m.tls_version,
        tls_ciphersuites=m.tls_ciphersuites,
        public_key_path=m.public_key_path,
        get_public_key=bool(m.get_public_key),
        compression_algorithms=m.master_compression_algorithm,
        zstd_compression_level=m.master_zstd_compression_level,
        ignore_server_ids=unpack_server_ids(m.ignored_server_ids),
        source_uuid=m.uuid,
        source_connection_auto_failover=bool(m.source_connection_auto_failover),
        gtid_only=bool(m.gtid_only),
    )
    if r is None:
        return ChannelConfig(name=m.channel_name, connection=connection)
    applier = ApplierSettings(
        relay_log_file=r.relay_log_name,
        relay_log_pos=r.relay_log_pos,
        source_log_file=r.master_log_name,
        source_log_pos=r.master_log_pos,
        sql_delay=r.sql_delay,
        privilege_checks_user=r.privilege_checks_username,
        privilege_checks_host=r.privilege_checks_hostname,
        require_row_format=bool(r.require_row_format),
        require_table_primary_key_check=PrimaryKeyCheck(r.require_table_primary_key_check),
        assign_gtids_type=AnonymousGtids(r.assign_gtids_to_anonymous_transactions_type),
        assign_gtids_value=r.assign_gtids_to_anonymous_transactions_value,
        applier_version=ApplierVersion(r.applier_version),
        applier_worker_count=r.applier_worker_count,
        applier_event_memory_limit=r.applier_event_memory_limit,
    )
    return ChannelConfig(name=m.channel_name, connection=connection, applier=applier)
