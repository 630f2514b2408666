"""A channel's configuration: what CHANGE REPLICATION SOURCE TO sets and the metadata keeps.

``SourceConnection`` is the connection metadata (``mysql.slave_master_info``), ``ApplierSettings``
the applier metadata (``mysql.slave_relay_log_info``). Both are frozen: a statement builds the
new value with ``dataclasses.replace``, validates it against the old one, and only then stores
it, so a rejected statement changes nothing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

DEFAULT_PORT = 3306
DEFAULT_CONNECT_RETRY = 60
DEFAULT_RETRY_COUNT = 10
DEFAULT_ZSTD_LEVEL = 3
DEFAULT_COMPRESSION = "uncompressed"
MAX_CHANNELS = 256
MAX_CHANNEL_NAME = 64
DEFAULT_CHANNEL = ""


class ApplierVersion(enum.IntEnum):
    """APPLIER_VERSION: the legacy multi-threaded applier or the Change Stream Applier."""

    MTA = 1
    CSA = 2


class PrimaryKeyCheck(enum.Enum):
    """REQUIRE_TABLE_PRIMARY_KEY_CHECK."""

    STREAM = "STREAM"
    ON = "ON"
    OFF = "OFF"
    GENERATE = "GENERATE"


class AnonymousGtids(enum.Enum):
    """ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS type."""

    OFF = "OFF"
    LOCAL = "LOCAL"
    UUID = "UUID"


class ThreadType(enum.Enum):
    """START/STOP REPLICA thread_type; IO_THREAD and RELAY_THREAD are one token."""

    IO = "IO_THREAD"
    SQL = "SQL_THREAD"


BOTH_THREADS = frozenset({ThreadType.IO, ThreadType.SQL})


class UntilKind(enum.Enum):
    """START REPLICA UNTIL conditions, named as Until_Condition shows them."""

    SQL_BEFORE_GTIDS = "SQL_BEFORE_GTIDS"
    SQL_AFTER_GTIDS = "SQL_AFTER_GTIDS"
    SQL_AFTER_MTS_GAPS = "SQL_AFTER_MTS_GAPS"
    SOURCE_POS = "Source"
    RELAY_POS = "Relay"


@dataclass(frozen=True, slots=True)
class Until:
    kind: UntilKind
    gtids: str = ""
    log_file: str = ""
    log_pos: int = 0


@dataclass(frozen=True, slots=True)
class SourceConnection:
    """Connection metadata of one channel (one row of ``mysql.slave_master_info``)."""

    host: str = ""
    port: int = DEFAULT_PORT
    user: str = ""
    password: str = ""
    connect_retry: int = DEFAULT_CONNECT_RETRY
    retry_count: int = DEFAULT_RETRY_COUNT
    heartbeat_period: float = 0.0
    bind: str = ""
    network_namespace: str = ""
    source_log_file: str = ""
    source_log_pos: int = 4
    auto_position: bool = False
    ssl: bool = False
    ssl_ca: str = ""
    ssl_capath: str = ""
    ssl_cert: str = ""
    ssl_cipher: str = ""
    ssl_key: str = ""
    ssl_verify_server_cert: bool = False
    ssl_crl: str = ""
    ssl_crlpath: str = ""
    tls_version: str = ""
    tls_ciphersuites: str | None = None
    public_key_path: str = ""
    get_public_key: bool = False
    compression_algorithms: str = DEFAULT_COMPRESSION
    zstd_compression_level: int = DEFAULT_ZSTD_LEVEL
    ignore_server_ids: tuple[int, ...] = ()
    source_uuid: str = ""
    source_server_id: int = 0
    source_connection_auto_failover: bool = False
    gtid_only: bool = False

    @property
    def configured(self) -> bool:
        """A channel shows in the status tables once SOURCE_HOST is set."""
        return self.host != ""


@dataclass(frozen=True, slots=True)
class ApplierSettings:
    """Applier metadata of one channel (one row of ``mysql.slave_relay_log_info``)."""

    relay_log_file: str = ""
    relay_log_pos: int = 4
    source_log_file: str = ""
    source_log_pos: int = 0
    sql_delay: int = 0
    privilege_checks_user: str | None = None
    privilege_checks_host: str | None = None
    require_row_format: bool = False
    require_table_primary_key_check: PrimaryKeyCheck = PrimaryKeyCheck.STREAM
    assign_gtids_type: AnonymousGtids = AnonymousGtids.OFF
    assign_gtids_value: str = ""
    applier_version: ApplierVersion = ApplierVersion.MTA
    applier_worker_count: int = 4
    applier_event_memory_limit: int = 0


@dataclass(frozen=True, slots=True)
class ChannelConfig:
    """Everything persisted about one channel."""

    name: str
    connection: SourceConnection = field(default_factory=SourceConnection)
    applier: ApplierSettings = field(default_factory=ApplierSettings)


def valid_channel_name(name: str) -> bool:
    """Channel names follow MySQL's identifier rules: at most 64 characters, no trailing space.

    >>> valid_channel_name("c1"), valid_channel_name("x" * 65), valid_channel_name("a ")
    (True, False, False)
    """
    if len(name) > MAX_CHANNEL_NAME or name.endswith(" "):
        return False
    return all(ch.isprintable() and ch not in "/\\.\x00" for ch in name)


def normalize_channel_name(name: str) -> str:
    """Channel names compare case-insensitively (utf8mb3_general_ci); they are kept lower case."""
    return name.lower()
