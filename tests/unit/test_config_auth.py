"""Server configuration precedence and account provisioning."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.metadata import open_store
from spark_replica.server.auth import native_hash, provision_users
from spark_replica.server.config import (
    DRIVER_DEFAULTS,
    ConfigError,
    ServerConfig,
    load_config,
)


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
        ('engine = "innodb"', "engine must be one of spark, memory"),
        ('[spark]\nflush_interval = "soon"', "invalid spark setting"),
        ('spark = "local"', "spark must be a table"),
        ('[spark]\noptions = "x"', "spark.options must be a table"),
        ('[spark]\niceberg = "x"', "spark.iceberg must be a table"),
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


def test_the_driver_defaults_give_way_to_configured_driver_options(tmp_path: Path) -> None:
    """The driver JVM's small defaults (the 1.5 GB memory target) stand unless the
    configuration sets the same options: then the configured values are the only ones."""
    config_file = tmp_path / "replica.toml"
    config_file.write_text(
        "[spark.options]\n"
        '"spark.driver.memory" = "4g"\n'
        '"spark.driver.extraJavaOptions" = "-XX:+UseG1GC"\n'
    )
    options = load_config(config_file=str(config_file), environ={}).spark.session_options()
    assert options["spark.driver.memory"] == "4g"
    assert options["spark.driver.extraJavaOptions"] == "-XX:+UseG1GC"


def test_spark_engine_settings_from_file_flags_and_environment(tmp_path: Path) -> None:
    """Issue 5 item 10: spark.master, the warehouse and Spark options come from the
    configuration; local[2] and <data_dir>/warehouse by default."""
    default = load_config(environ={}, data_dir=str(tmp_path))
    assert default.engine == "spark"
    assert default.spark.session_options() == {"spark.master": "local[2]", **DRIVER_DEFAULTS}
    assert DRIVER_DEFAULTS["spark.driver.memory"] == "512m"
    assert default.warehouse == str(tmp_path.resolve() / "warehouse")
    config_file = tmp_path / "replica.toml"
    config_file.write_text(
        'engine = "memory"\n'
        "[spark]\n"
        'master = "spark://10.0.0.9:7077"\n'
        'warehouse = "hdfs://nn/replica"\n'
        "flush_interval = 0.25\nflush_rows = 1000\ncompact_after = 4\nmax_queries = 2\n"
        'snapshot_retention = 60\ncatalog = "lake"\n'
        "[spark.options]\n"
        '"spark.executor.memory" = "2g"\n'
    )
    from_file = load_config(config_file=str(config_file), environ={})
    assert from_file.engine == "memory"
    assert from_file.warehouse == "hdfs://nn/replica"
    assert (from_file.spark.flush_interval, from_file.spark.flush_rows) == (0.25, 1000)
    assert (from_file.spark.compact_after, from_file.spark.max_queries) == (4, 2)
    assert (from_file.spark.snapshot_retention, from_file.spark.catalog) == (60.0, "lake")
    assert from_file.spark.session_options() == {
        "spark.master": "spark://10.0.0.9:7077",
        **DRIVER_DEFAULTS,
        "spark.executor.memory": "2g",
    }
    overridden = load_config(
        config_file=str(config_file),
        engine="spark",
        spark_master="yarn",
        environ={"SPARK_REPLICA_WAREHOUSE": "s3a://bucket/replica"},
    )
    assert (overridden.engine, overridden.spark.master) == ("spark", "yarn")
    assert overridden.warehouse == "s3a://bucket/replica"


def test_a_warehouse_on_object_storage_with_its_catalog_properties(tmp_path: Path) -> None:
    """``[spark.iceberg]``: the Iceberg catalog's properties, passed through as given (a TOML
    boolean as Iceberg spells it); kept out of the configuration's repr (secrets). Spark's
    own catalog directory and the key index stay in the data directory."""
    from spark_replica.server.spark_start import spark_catalog_dir

    config_file = tmp_path / "replica.toml"
    config_file.write_text(
        "[spark]\n"
        'warehouse = "s3://bucket/replica"\n'
        "[spark.iceberg]\n"
        '"s3.endpoint" = "http://127.0.0.1:9000"\n'
        '"s3.path-style-access" = true\n'
        '"s3.secret-access-key" = "hush-7"\n'
    )
    config = load_config(config_file=str(config_file), data_dir=str(tmp_path), environ={})
    assert config.warehouse == "s3://bucket/replica"
    assert config.spark.catalog_properties() == {
        "s3.endpoint": "http://127.0.0.1:9000",
        "s3.path-style-access": "true",
        "s3.secret-access-key": "hush-7",
    }
    assert "hush-7" not in repr(config)
    assert config.key_index == str(tmp_path.resolve() / "key-index")
    assert spark_catalog_dir(config) == str(tmp_path.resolve() / "spark-catalog")
    local = load_config(data_dir=str(tmp_path), environ={})
    assert local.spark.catalog_properties() == {}
    assert spark_catalog_dir(local) == f"{tmp_path.resolve() / 'warehouse'}/_spark_catalog"


def test_relay_log_space_limit_from_file_environment_and_flag(tmp_path: Path) -> None:
    """relay_log_space_limit is a startup option, as in MySQL (0, no limit, by default)."""
    toml = tmp_path / "replica.toml"
    toml.write_text("relay_log_space_limit = 1048576\n")
    assert load_config(environ={}).relay_log_space_limit == 0
    assert load_config(config_file=str(toml), environ={}).relay_log_space_limit == 1 << 20
    env = {"SPARK_REPLICA_RELAY_LOG_SPACE_LIMIT": "2097152"}
    assert load_config(config_file=str(toml), environ=env).relay_log_space_limit == 2 << 20
    flagged = load_config(config_file=str(toml), relay_log_space_limit=4096, environ=env)
    assert flagged.relay_log_space_limit == 4096
    for bad in ("-1", "lots", str(1 << 64)):
        with pytest.raises(ConfigError, match="relay_log_space_limit"):
            load_config(environ={"SPARK_REPLICA_RELAY_LOG_SPACE_LIMIT": bad})
