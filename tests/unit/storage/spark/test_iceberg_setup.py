"""How the session gets Iceberg: the jars ``make install`` fetches and checks, the settings
of a JDBC catalog in the metadata database (decision 0017). No JVM."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from spark_replica.applier_core.storage.spark import iceberg
from spark_replica.applier_core.storage.spark.jars import ICEBERG_RUNTIME, JARS, Jar
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
    drivers_only = spark_options({}, jars=[Path("/j") / JARS[1].file_name])
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
