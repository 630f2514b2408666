"""Server configuration: command-line flags over environment variables over a TOML file.

Environment: SPARK_REPLICA_BIND, SPARK_REPLICA_PORT, SPARK_REPLICA_DATA_DIR,
SPARK_REPLICA_METADATA_URL, SPARK_REPLICA_ROOT_PASSWORD, SPARK_REPLICA_CONFIG.

TOML::

    bind = "127.0.0.1"
    port = 3307
    data_dir = "./var"
    metadata_url = "sqlite:///var/metadata.db"

    [[users]]
    name = "bi"
    password = "secret"
    role = "read_only"    # or "admin"
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_BIND = "127.0.0.1"
DEFAULT_PORT = 3307
DEFAULT_DATA_DIR = "./var"
ROLES = ("admin", "read_only")


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
    return ServerConfig(
        bind=str(pick(bind, "SPARK_REPLICA_BIND", "bind", DEFAULT_BIND)),
        port=port_value,
        data_dir=Path(str(pick(data_dir, "SPARK_REPLICA_DATA_DIR", "data_dir", DEFAULT_DATA_DIR))),
        metadata_url=str(pick(metadata_url, "SPARK_REPLICA_METADATA_URL", "metadata_url", "")),
        root_password=env.get("SPARK_REPLICA_ROOT_PASSWORD"),
        users=_users(file_values.get("users", [])),
    )


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
