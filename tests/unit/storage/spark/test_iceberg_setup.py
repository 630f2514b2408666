"""How the session gets Iceberg: the jars ``make install`` fetches and checks, the settings
of a JDBC catalog in the metadata database (decision 0017). No JVM."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from spark_replica.applier_core.storage.spark import iceberg
from spark_replica.applier_core.storage.spark.jars import ICEBERG_RUNTIME, JARS, SQLITE_JDBC, Jar
from spark_replica.applier_core.storage.spark.session import spark_options

FETCH_JARS = Path(__file__).resolve().parents[4] / "tools" / "fetch_jars.py"


def _fetch_jars() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_jars", FETCH_JARS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sqlite_file_is_a_jdbc_url_with_an_absolute_path(tmp_path: Path) -> None:
    uri, properties = iceberg.jdbc_connection(f"sqlite:///{tmp_path / 'm.db'}")
    assert (uri, properties) == (f"jdbc:sqlite:{tmp_path / 'm.db'}", {})
    relative, _ = iceberg.jdbc_connection("sqlite:///var/metadata.db")
    assert relative == f"jdbc:sqlite:{Path('var/metadata.db').resolve()}"


def test_postgresql_url_keeps_host_port_database_and_credentials() -> None:
    uri, properties = iceberg.jdbc_connection("postgresql+psycopg://rep:s%40cret@db:5433/meta")
    assert uri == "jdbc:postgresql://db:5433/meta"
    assert properties == {"user": "rep", "password": "s@cret"}
    assert iceberg.jdbc_connection("postgresql://h/m") == ("jdbc:postgresql://h/m", {})


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite://", "mysql+pymysql://h/m"])
def test_catalogs_spark_cannot_share_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        iceberg.jdbc_connection(url)


def test_catalog_options_name_a_jdbc_catalog_with_the_shared_schema_version() -> None:
    options = iceberg.catalog_options("ice", "postgresql://u:p@h/m", "/w")
    assert options == {
        "spark.sql.catalog.ice": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.ice.type": "jdbc",
        "spark.sql.catalog.ice.uri": "jdbc:postgresql://h/m",
        "spark.sql.catalog.ice.warehouse": "/w",
        "spark.sql.catalog.ice.jdbc.schema-version": "V1",
        "spark.sql.catalog.ice.jdbc.user": "u",
        "spark.sql.catalog.ice.jdbc.password": "p",
    }
    properties = iceberg.pyiceberg_properties("postgresql://u:p@h/m", "/w")
    assert properties == {"uri": "postgresql://u:p@h/m", "warehouse": "file:///w",
                          "schema_version": "v1"}  # fmt: skip


def test_a_warehouse_on_s3_uses_iceberg_s3_file_io_and_the_given_properties() -> None:
    given = {
        "s3.endpoint": "http://127.0.0.1:9000",
        "s3.path-style-access": "true",
        "s3.access-key-id": "AK",
        "s3.secret-access-key": "SK",
        "client.region": "eu-west-1",
    }
    options = iceberg.catalog_options("ice", "postgresql://h/m", "s3://b/w", given)
    assert options["spark.sql.catalog.ice.warehouse"] == "s3://b/w"
    assert options["spark.sql.catalog.ice.io-impl"] == iceberg.S3_FILE_IO
    assert {k: options[f"spark.sql.catalog.ice.{k}"] for k in given} == given
    own = iceberg.catalog_options("ice", "postgresql://h/m", "s3a://b/w", {"io-impl": "my.IO"})
    assert own["spark.sql.catalog.ice.io-impl"] == "my.IO"
    # A local warehouse gets the properties given, and Iceberg's default file IO.
    local = iceberg.catalog_options("ice", "sqlite:///m", "/w")
    assert "spark.sql.catalog.ice.io-impl" not in local

    properties = iceberg.pyiceberg_properties("postgresql://h/m", "s3://b/w/", given)
    assert properties == {
        "uri": "postgresql://h/m",
        "warehouse": "s3://b/w",
        "schema_version": "v1",
        "s3.endpoint": "http://127.0.0.1:9000",
        "s3.force-virtual-addressing": "false",
        "s3.access-key-id": "AK",
        "s3.secret-access-key": "SK",
        "client.region": "eu-west-1",
    }
    assert "io-impl" not in iceberg.pyiceberg_properties("sqlite:///m", "s3://b/w", own)
    assert iceberg.pyiceberg_properties("sqlite:///m", "file:///w")["warehouse"] == "file:///w"


@pytest.mark.parametrize(
    ("warehouse", "local", "s3"),
    [("/w", True, False), ("var/w", True, False), ("file:///w", True, False),
     ("s3://b/w", False, True), ("S3A://b/w", False, True), ("hdfs://nn/w", False, False)],
)  # fmt: skip
def test_where_a_warehouse_is(warehouse: str, local: bool, s3: bool) -> None:
    assert (iceberg.is_local(warehouse), iceberg.on_object_store(warehouse)) == (local, s3)


def test_secrets_are_redacted_for_logs() -> None:
    given = {"s3.endpoint": "http://e", "s3.access-key-id": "AK", "s3.secret-access-key": "SK",
             "s3.session-token": "T", "client.region": "r"}  # fmt: skip
    assert iceberg.redacted(given) == {
        "s3.endpoint": "http://e",
        "s3.access-key-id": "<secret>",
        "s3.secret-access-key": "<secret>",
        "s3.session-token": "<secret>",
        "client.region": "r",
    }


def test_the_key_index_is_beside_a_local_warehouse_only() -> None:
    from spark_replica.applier_core.storage.spark.engine import default_key_index_path

    assert default_key_index_path("/data/warehouse/") == "/data/key-index"
    assert default_key_index_path("file:///data/warehouse") == "/data/key-index"
    assert default_key_index_path("file:/data/warehouse") == "/data/key-index"
    with pytest.raises(ValueError, match="key index must be a local directory"):
        default_key_index_path("s3://bucket/warehouse")


def test_installed_jars_go_on_spark_jars_with_iceberg_extensions(tmp_path: Path) -> None:
    jars = [tmp_path / jar.file_name for jar in JARS]
    options = spark_options({"spark.jars": "/opt/other.jar"}, jars=jars)
    assert options["spark.jars"] == ",".join(["/opt/other.jar", *map(str, jars)])
    assert options["spark.sql.extensions"] == iceberg.EXTENSIONS
    assert "spark.jars.packages" not in options
    mine = spark_options({"spark.sql.extensions": "my.Extensions"}, jars=jars)
    assert mine["spark.sql.extensions"] == "my.Extensions"


def test_without_jars_the_session_is_as_before() -> None:
    options = spark_options({}, jars=[])
    assert "spark.jars" not in options
    assert "spark.sql.extensions" not in options
    drivers_only = spark_options({}, jars=[Path("/j") / SQLITE_JDBC.file_name])
    assert "spark.sql.extensions" not in drivers_only


def test_the_iceberg_runtime_matches_the_pinned_spark_line() -> None:
    import pyspark

    line = ".".join(pyspark.__version__.split(".")[:2])
    assert ICEBERG_RUNTIME.artifact.startswith(f"iceberg-spark-runtime-{line}_")


def _repository(root: Path, jar: Jar, content: bytes, sha1: str | None = None) -> str:
    path = root / jar.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    digest = sha1 or hashlib.sha1(content).hexdigest()  # noqa: S324
    (root / f"{jar.path}.sha1").write_text(f"{digest}  {jar.file_name}\n")
    return root.as_uri()


def test_fetch_checks_the_published_sha1_and_the_pinned_sha256(tmp_path: Path) -> None:
    fetch_jars = _fetch_jars()
    content = b"PK\x03\x04 a jar"
    jar = Jar("org.example", "thing", "1.0", hashlib.sha256(content).hexdigest())
    repository = _repository(tmp_path / "repo", jar, content)
    target = tmp_path / "jars"
    target.mkdir()
    fetched = fetch_jars.fetch(jar, target, repository)
    assert fetched == target / "thing-1.0.jar" and fetched.read_bytes() == content
    assert fetch_jars.fetch(jar, target, repository) == fetched  # kept: digests match

    fetched.write_bytes(b"truncated")  # a damaged copy is fetched again
    assert fetch_jars.fetch(jar, target, repository).read_bytes() == content

    wrong_pin = Jar("org.example", "thing", "1.0", "0" * 64)
    with pytest.raises(SystemExit, match="SHA-256"):
        fetch_jars.fetch(wrong_pin, tmp_path / "jars", repository)
    tampered = _repository(tmp_path / "bad", jar, content, sha1="1" * 40)
    with pytest.raises(SystemExit, match="SHA-1"):
        fetch_jars.fetch(jar, tmp_path / "jars", tampered)
    assert sorted(path.name for path in target.iterdir()) == ["thing-1.0.jar"]
