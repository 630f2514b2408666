"""Server configuration precedence and account provisioning."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.metadata import open_store
from spark_replica.server.auth import native_hash, provision_users
from spark_replica.server.config import ConfigError, ServerConfig, load_config


def test_defaults_bind_loopback() -> None:
    config = load_config(environ={})
    assert (config.bind, config.port, config.data_dir) == ("127.0.0.1", 3307, Path("./var"))
    assert config.effective_metadata_url.startswith("sqlite:///")
    assert config.effective_metadata_url.endswith("/var/metadata.db")


def test_flags_beat_environment_beat_file(tmp_path: Path) -> None:
    toml = tmp_path / "replica.toml"
    toml.write_text(
        'bind = "0.0.0.0"\nport = 4000\ndata_dir = "/srv/r"\n'
        '[[users]]\nname = "bi"\npassword = "pw"\nrole = "read_only"\n'
    )
    env = {"SPARK_REPLICA_PORT": "4100", "SPARK_REPLICA_ROOT_PASSWORD": "s"}
    config = load_config(config_file=str(toml), environ=env)
    assert (config.bind, config.port, str(config.data_dir)) == ("0.0.0.0", 4100, "/srv/r")
    assert config.root_password == "s"
    assert [(u.name, u.role) for u in config.users] == [("bi", "read_only")]
    assert load_config(config_file=str(toml), port=4200, environ=env).port == 4200


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('port = "x"', "port must be a number"),
        ("port = 70000", "port out of range"),
        ('[[users]]\nname = "u"\nrole = "god"', "role must be one of admin, read_only"),
        ('[[users]]\nname = "root"', "root is configured with SPARK_REPLICA_ROOT_PASSWORD"),
        ("port = ", "cannot read configuration file"),
    ],
)
def test_bad_configuration_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    toml = tmp_path / "bad.toml"
    toml.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(config_file=str(toml), environ={})


def test_first_start_generates_root_password_once_and_stores_only_its_hash() -> None:
    store = open_store("sqlite:///:memory:")
    generated = provision_users(store, ServerConfig())
    assert generated is not None and len(generated) >= 12
    auth_string, role = store.get_user("root") or ("", "")
    assert (auth_string, role) == (native_hash(generated), "admin")
    assert generated not in auth_string
    assert provision_users(store, ServerConfig()) is None  # the second start prints nothing
    assert store.get_user("root") == (native_hash(generated), "admin")
    store.close()


def test_environment_password_replaces_the_stored_one() -> None:
    store = open_store("sqlite:///:memory:")
    provision_users(store, ServerConfig())
    assert provision_users(store, ServerConfig(root_password="chosen")) is None
    assert store.get_user("root") == (native_hash("chosen"), "admin")
    store.close()


def test_native_hash_is_mysql_format() -> None:
    # SELECT PASSWORD('secret') on MySQL 5.7 gives this value.
    assert native_hash("secret") == "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"
    assert native_hash("") == ""
