"""Server configuration: command-line flags over environment variables over a TOML file.

Environment: SPARK_REPLICA_BIND, SPARK_REPLICA_PORT, SPARK_REPLICA_DATA_DIR,
SPARK_REPLICA_METADATA_URL, SPARK_REPLICA_ROOT_PASSWORD, SPARK_REPLICA_CONFIG,
SPARK_REPLICA_ENGINE, SPARK_REPLICA_SPARK_MASTER, SPARK_REPLICA_WAREHOUSE,
SPARK_REPLICA_SSL_CERT, SPARK_REPLICA_SSL_KEY, SPARK_REPLICA_SKIP_REPLICA_START,
SPARK_REPLICA_RELAY_LOG_SPACE_LIMIT.

TOML::

    bind = "127.0.0.1"
    port = 3307
    data_dir = "./var"
    metadata_url = "sqlite:///var/metadata.db"
    engine = "spark"            # or "memory": tables kept in memory only
    ssl_cert = "server-cert.pem"    # TLS for clients (PEM); both or neither; empty: no TLS
    ssl_key = "server-key.pem"
    skip_replica_start = false  # true: channels wait for START REPLICA after a restart
    relay_log_space_limit = 0   # bytes of relay log per channel before the receiver waits

    [spark]
    master = "local[2]"         # or spark://host:7077, yarn, k8s://...
    warehouse = "./var/warehouse"   # or a path the cluster shares: hdfs://..., s3://bucket/prefix
    flush_interval = 0.5        # seconds between group commits
    flush_rows = 50000          # changed rows that start a group commit sooner
    max_unflushed_rows = 100000 # changed rows in memory before commits wait for a flush
    key_index_memory = 67108864 # bytes of the key index kept mapped between flushes
    compact_after = 16          # flushes per table before compaction
    snapshot_retention = 300    # seconds of Iceberg snapshots kept for time travel
    catalog = "replica"         # the Iceberg catalog's name (Spark and pyiceberg)
    max_queries = 4             # user queries Spark runs at once

    [spark.options]             # any Spark setting (over the driver's defaults: 512m, ...)
    "spark.driver.memory" = "2g"

    [spark.iceberg]             # properties of the Iceberg catalog, for Spark and pyiceberg
    "s3.endpoint" = "http://127.0.0.1:9000"     # with warehouse = "s3://bucket/prefix"
    "s3.path-style-access" = "true"
    "client.region" = "us-east-1"
    "s3.access-key-id" = "..."
    "s3.secret-access-key" = "..."

    [[users]]
    name = "bi"
    password = "secret"
    role = "read_only"    # or "admin"
"""

from __future__ import annotations

import os
import ssl
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

DEFAULT_BIND = "127.0.0.1"
DEFAULT_PORT = 3307
DEFAULT_DATA_DIR = "./var"
ROLES = ("admin", "read_only")
ENGINES = ("spark", "memory")


#: The driver JVM of ``serve`` unless ``[spark.options]`` sets these: Spark's smallest heap
#: (512 MiB; the driver checks for 450 MiB) and a JVM sized to it: the serial collector (two
#: cores), the client compiler alone with a smaller code cache, smaller thread stacks and
#: direct buffers capped. The server and its JVM then stay within 1.5 GB replicating into a
#: 5M-row table (docs/benchmarks.md, "Memory and restart with the server's defaults"); a
#: replica answering heavy queries gives the driver more (``spark.driver.memory``), and its
#: own ``spark.driver.extraJavaOptions`` replace these.
DRIVER_DEFAULTS: Mapping[str, str] = {
    "spark.driver.memory": "512m",
    "spark.driver.extraJavaOptions": (
        "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=48m -Xss512k "
        "-XX:MaxDirectMemorySize=128m"
    ),
}


@dataclass(frozen=True, slots=True)
class SparkConfig:
    """The Spark storage engine's settings (docs/spark-engine.md)."""

    master: str = "local[2]"
    #: Where table files go; ``<data_dir>/warehouse`` when empty.
    warehouse: str = ""
    flush_interval: float = 0.5
    flush_rows: int = 50_000
    #: Changed rows committed and not yet flushed (held in memory) before commits wait.
    max_unflushed_rows: int = 100_000
    #: Bytes of the key index's file kept mapped in the server's memory between flushes.
    key_index_memory: int = 64 * 1024 * 1024
    compact_after: int = 16
    snapshot_retention: float = 300.0
    catalog: str = "replica"
    max_queries: int = 4
    options: tuple[tuple[str, str], ...] = ()
    #: Properties of the Iceberg catalog (``[spark.iceberg]``), passed through as given: the
    #: object store's endpoint and credentials, for one. Not in the repr: secrets.
    iceberg: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def catalog_properties(self) -> dict[str, str]:
        """The Iceberg catalog's properties of ``[spark.iceberg]``."""
        return dict(self.iceberg)

    def session_options(self) -> dict[str, str]:
        """The Spark options: ``spark.master``, the driver's defaults (``DRIVER_DEFAULTS``)
        and the configured extras over them."""
        return {"spark.master": self.master, **DRIVER_DEFAULTS, **dict(self.options)}


class ConfigError(Exception):
    """Raised when the configuration file or a setting is invalid."""


@dataclass(frozen=True, slots=True)
class UserConfig:
    name: str
    password: str
    role: str


@dataclass(frozen=True, slots=True)
class ServerConfig:
    bind: str = DEFAULT_BIND
    port: int = DEFAULT_PORT
    data_dir: Path = Path(DEFAULT_DATA_DIR)
    metadata_url: str = ""
    root_password: str | None = None
    users: tuple[UserConfig, ...] = field(default_factory=tuple)
    #: The storage engine: "spark" (tables in Spark) or "memory" (in memory, for tests).
    engine: str = "spark"
    spark: SparkConfig = field(default_factory=SparkConfig)
    #: TLS for clients: the server's certificate chain and private key (PEM files);
    #: both empty: no TLS.
    ssl_cert: str = ""
    ssl_key: str = ""
    #: MySQL's skip_replica_start: False starts every configured channel with the server.
    skip_replica_start: bool = False
    #: MySQL's relay_log_space_limit (bytes; 0: no limit), read-only once the server runs.
    relay_log_space_limit: int = 0

    def ssl_context(self) -> ssl.SSLContext | None:
        """The server-side TLS context (TLS 1.2 or later); None without TLS.

        Raises ``ConfigError`` when only one of the two files is set or they cannot be loaded.
        """
        if not self.ssl_cert and not self.ssl_key:
            return None
        if not self.ssl_cert or not self.ssl_key:
            given, missing = ("ssl_cert", "ssl_key") if self.ssl_cert else ("ssl_key", "ssl_cert")
            raise ConfigError(f"{given} is set but {missing} is not: TLS needs both")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(self.ssl_cert, self.ssl_key)
        except (OSError, ssl.SSLError) as e:
            raise ConfigError(
                f"cannot load TLS certificate {self.ssl_cert} and key {self.ssl_key}: {e}"
            ) from e
        return context

    @property
    def warehouse(self) -> str:
        """Where the Spark engine keeps table files."""
        return self.spark.warehouse or str(self.data_dir.resolve() / "warehouse")

    @property
    def key_index(self) -> str:
        """Where the Spark engine keeps its key index (a local directory, whatever the
        warehouse's file system): ``<data_dir>/key-index``."""
        return str(self.data_dir.resolve() / "key-index")

    @property
    def effective_metadata_url(self) -> str:
        """The metadata URL; a SQLite file in the data directory by default."""
        return self.metadata_url or f"sqlite:///{self.data_dir.resolve() / 'metadata.db'}"


def load_config(
    *,
    config_file: str | None = None,
    bind: str | None = None,
    port: int | None = None,
    data_dir: str | None = None,
    metadata_url: str | None = None,
    engine: str | None = None,
    spark_master: str | None = None,
    ssl_cert: str | None = None,
    ssl_key: str | None = None,
    skip_replica_start: bool | None = None,
    relay_log_space_limit: int | None = None,
    environ: dict[str, str] | None = None,
) -> ServerConfig:
    """Merge flags (highest), environment, and the TOML file (lowest)."""
    env = os.environ if environ is None else environ
    path = config_file or env.get("SPARK_REPLICA_CONFIG")
    file_values: dict[str, object] = {}
    if path:
        try:
            file_values = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"cannot read configuration file {path}: {e}") from e

    def pick(flag: object, env_name: str, key: str, default: object) -> object:
        if flag is not None:
            return flag
        if env_name in env:
            return env[env_name]
        return file_values.get(key, default)

    try:
        port_value = int(str(pick(port, "SPARK_REPLICA_PORT", "port", DEFAULT_PORT)))
    except ValueError as e:
        raise ConfigError(f"port must be a number: {e}") from e
    if not 0 <= port_value <= 65535:
        raise ConfigError(f"port out of range: {port_value}")
    space_limit = _bytes(
        pick(relay_log_space_limit, "SPARK_REPLICA_RELAY_LOG_SPACE_LIMIT",
             "relay_log_space_limit", 0),
        "relay_log_space_limit",
    )  # fmt: skip
    engine_name = str(pick(engine, "SPARK_REPLICA_ENGINE", "engine", "spark"))
    if engine_name not in ENGINES:
        raise ConfigError(f"engine must be one of {', '.join(ENGINES)}: {engine_name!r}")
    spark = _spark(file_values.get("spark", {}))
    master = spark_master or env.get("SPARK_REPLICA_SPARK_MASTER")
    warehouse = env.get("SPARK_REPLICA_WAREHOUSE")
    if master or warehouse:
        spark = replace(spark, master=master or spark.master,
                        warehouse=warehouse or spark.warehouse)  # fmt: skip
    config = ServerConfig(
        bind=str(pick(bind, "SPARK_REPLICA_BIND", "bind", DEFAULT_BIND)),
        port=port_value,
        data_dir=Path(str(pick(data_dir, "SPARK_REPLICA_DATA_DIR", "data_dir", DEFAULT_DATA_DIR))),
        metadata_url=str(pick(metadata_url, "SPARK_REPLICA_METADATA_URL", "metadata_url", "")),
        root_password=env.get("SPARK_REPLICA_ROOT_PASSWORD"),
        users=_users(file_values.get("users", [])),
        engine=engine_name,
        spark=spark,
        ssl_cert=str(pick(ssl_cert, "SPARK_REPLICA_SSL_CERT", "ssl_cert", "")),
        ssl_key=str(pick(ssl_key, "SPARK_REPLICA_SSL_KEY", "ssl_key", "")),
        skip_replica_start=_boolean(
            pick(
                skip_replica_start, "SPARK_REPLICA_SKIP_REPLICA_START", "skip_replica_start", False
            ),
            "skip_replica_start",
        ),
        relay_log_space_limit=space_limit,
    )
    config.ssl_context()  # a clear error now rather than at the first TLS client
    return config


_TRUE = ("1", "true", "on", "yes")
_FALSE = ("0", "false", "off", "no")


def _boolean(value: object, name: str) -> bool:
    """A boolean setting: a TOML boolean, or (from a flag or the environment) any spelling
    MySQL's option files accept for one."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ConfigError(f"{name} must be true or false: {value!r}")


def _bytes(value: object, name: str) -> int:
    """A size in bytes, 0 to 2**64-1 (MySQL's range for relay_log_space_limit)."""
    try:
        number = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise ConfigError(f"{name} must be a number of bytes: {value!r}") from None
    if isinstance(number, bool) or not 0 <= number < 1 << 64:
        raise ConfigError(f"{name} out of range: {value!r}")
    return number


def _spark(raw: object) -> SparkConfig:
    if not isinstance(raw, dict):
        raise ConfigError("spark must be a table")
    options = raw.get("options", {})
    if not isinstance(options, dict):
        raise ConfigError("spark.options must be a table")
    iceberg = raw.get("iceberg", {})
    if not isinstance(iceberg, dict):
        raise ConfigError("spark.iceberg must be a table")
    defaults = SparkConfig()
    try:
        return SparkConfig(
            master=str(raw.get("master", defaults.master)),
            warehouse=str(raw.get("warehouse", defaults.warehouse)),
            flush_interval=float(raw.get("flush_interval", defaults.flush_interval)),
            flush_rows=int(raw.get("flush_rows", defaults.flush_rows)),
            max_unflushed_rows=int(raw.get("max_unflushed_rows", defaults.max_unflushed_rows)),
            key_index_memory=_bytes(
                raw.get("key_index_memory", defaults.key_index_memory), "spark.key_index_memory"
            ),
            compact_after=int(raw.get("compact_after", defaults.compact_after)),
            snapshot_retention=float(raw.get("snapshot_retention", defaults.snapshot_retention)),
            catalog=str(raw.get("catalog", defaults.catalog)),
            max_queries=int(raw.get("max_queries", defaults.max_queries)),
            options=tuple((str(k), str(v)) for k, v in options.items()),
            iceberg=tuple((str(k), _property(v)) for k, v in iceberg.items()),
        )
    except (TypeError, ValueError) as e:
        raise ConfigError(f"invalid spark setting: {e}") from e


def _property(value: object) -> str:
    """A catalog property's value as Iceberg reads it: a TOML boolean as ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _users(raw: object) -> tuple[UserConfig, ...]:
    if not isinstance(raw, list):
        raise ConfigError("users must be an array of tables")
    users: list[UserConfig] = []
    for entry in raw:
        if not isinstance(entry, dict) or "name" not in entry:
            raise ConfigError(f"each user needs a name: {entry!r}")
        role = str(entry.get("role", "read_only"))
        if role not in ROLES:
            raise ConfigError(f"user {entry['name']}: role must be one of {', '.join(ROLES)}")
        if entry["name"] == "root":
            raise ConfigError("root is configured with SPARK_REPLICA_ROOT_PASSWORD")
        users.append(UserConfig(str(entry["name"]), str(entry.get("password", "")), role))
    return tuple(users)
