"""An Iceberg catalog of type ``jdbc`` in the replica's metadata database (decision 0017).

Spark's ``SparkCatalog`` (Iceberg's ``JdbcCatalog``) and pyiceberg's ``SqlCatalog`` keep the
same two tables, ``iceberg_tables`` and ``iceberg_namespace_properties``, keyed by the
catalog's name: both use schema version 1 of them (the ``iceberg_type`` column, which
views need), so either may create them and both see the same tables.

``catalog_options`` gives the Spark settings of such a catalog for a metadata URL of
SQLAlchemy (SQLite in a file, or PostgreSQL); ``pyiceberg_properties`` the properties of
the matching ``SqlCatalog``. The jars (``jars.py``) must be on the session's class path.

The warehouse is a local directory, any path of a Hadoop file system, or a location on
S3-compatible object storage (``s3://bucket/prefix``, ``s3a://`` and ``s3n://`` alike): there
Iceberg's own ``S3FileIO`` (the ``iceberg-aws-bundle`` jar) reads and writes every file, and
the catalog's properties (``[spark.iceberg]`` of the configuration: ``s3.endpoint``,
``s3.path-style-access``, ``client.region``, credentials ...) are passed to both catalogs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: The Spark catalog class, and the extensions that add Iceberg's SQL (CALL, ALTER TABLE ...
#: SET IDENTIFIER FIELDS, WRITE ORDERED BY) to the parser.
SPARK_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
#: The catalog tables' schema version both implementations are told to use.
JDBC_SCHEMA_VERSION = "V1"
#: Warehouse URI schemes of S3-compatible object storage, and the file IO that serves them.
S3_SCHEMES = ("s3", "s3a", "s3n")
S3_FILE_IO = "org.apache.iceberg.aws.s3.S3FileIO"
#: Catalog properties only the JVM's catalog reads (pyiceberg has its own ``py-io-impl``).
_JVM_ONLY = ("io-impl",)
#: Parts of property names whose values are secrets: never logged or shown.
_SECRET_WORDS = ("secret", "password", "token", "credential", "key")


def warehouse_scheme(warehouse: str | Path) -> str:
    """The URI scheme of ``warehouse``, lower case; ``""`` for a local path."""
    text = str(warehouse)
    if "://" not in text:
        return ""
    return text.split("://", 1)[0].lower()


def is_local(warehouse: str | Path) -> bool:
    """Whether ``warehouse`` is a directory of this machine (a path or a ``file:`` URI)."""
    return warehouse_scheme(warehouse) in ("", "file")


def local_path(location: str | Path) -> str:
    """The path of a location on this machine: a path, or a ``file:`` URI (``file:/x``,
    ``file:///x``)."""
    text = str(location)
    return urlsplit(text).path if text.lower().startswith("file:") else text


def on_object_store(warehouse: str | Path) -> bool:
    """Whether ``warehouse`` is on S3-compatible object storage (Iceberg's ``S3FileIO``)."""
    return warehouse_scheme(warehouse) in S3_SCHEMES


def catalog_properties(
    warehouse: str | Path, properties: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The catalog's own properties: ``properties`` as given, and, for a warehouse on S3,
    ``io-impl`` ``S3FileIO`` unless another file IO is given."""
    found = dict(properties or {})
    if on_object_store(warehouse):
        found.setdefault("io-impl", S3_FILE_IO)
    return found


def redacted(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` fit for a log: the value of every key that names a secret (an access
    key, a password, a token ...) replaced by ``'<secret>'``."""
    return {
        key: "<secret>" if any(word in key.lower() for word in _SECRET_WORDS) else value
        for key, value in properties.items()
    }


def jdbc_connection(metadata_url: str) -> tuple[str, dict[str, str]]:
    """The JDBC URL of a metadata URL (SQLAlchemy's form), and the user and password as JDBC
    properties.

    ``sqlite:///path`` is ``jdbc:sqlite:/absolute/path``; ``postgresql[+driver]://user:pw@
    host:port/db`` is ``jdbc:postgresql://host:port/db``. A database in memory is refused:
    Spark and the metadata store would each see a different one.
    """
    url = urlsplit(metadata_url)
    backend = url.scheme.split("+", 1)[0]
    if backend == "sqlite":
        database = url.path[1:]  # sqlite:///relative/path, sqlite:////absolute/path
        if not database or database == ":memory:":
            raise ValueError("an Iceberg catalog needs a SQLite file, not a database in memory")
        return f"jdbc:sqlite:{Path(unquote(database)).resolve()}", {}
    if backend == "postgresql":
        host = url.hostname or "localhost"
        port = f":{url.port}" if url.port else ""
        properties = {}
        if url.username:
            properties["user"] = unquote(url.username)
        if url.password:
            properties["password"] = unquote(url.password)
        return f"jdbc:postgresql://{host}{port}{url.path}", properties
    raise ValueError(f"no Iceberg JDBC catalog for a {backend} metadata database")


def catalog_options(
    name: str,
    metadata_url: str,
    warehouse: str | Path,
    properties: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Spark settings that make ``name`` an Iceberg JDBC catalog in ``metadata_url``, its
    files under ``warehouse``, with the catalog ``properties`` (``catalog_properties``:
    those of object storage, for instance). SQL settings: they may be set on a running
    session."""
    uri, connection = jdbc_connection(metadata_url)
    prefix = f"spark.sql.catalog.{name}"
    options = {
        prefix: SPARK_CATALOG,
        f"{prefix}.type": "jdbc",
        f"{prefix}.uri": uri,
        f"{prefix}.warehouse": str(warehouse),
        f"{prefix}.jdbc.schema-version": JDBC_SCHEMA_VERSION,
    }
    options.update({f"{prefix}.jdbc.{key}": value for key, value in connection.items()})
    extra = catalog_properties(warehouse, properties)
    options.update({f"{prefix}.{key}": value for key, value in extra.items()})
    return options


def pyiceberg_properties(
    metadata_url: str, warehouse: str | Path, properties: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Properties of pyiceberg's ``SqlCatalog`` on the catalog ``catalog_options`` makes
    (``SqlCatalog(name, **pyiceberg_properties(...))``, with the same name and
    ``properties``).

    The catalog properties are passed as given (pyiceberg names ``s3.endpoint``,
    ``s3.access-key-id``, ``s3.secret-access-key``, ``s3.session-token`` and
    ``client.region`` as Iceberg's Java library does), but for the JVM's ``io-impl``;
    ``s3.path-style-access`` becomes pyiceberg's ``s3.force-virtual-addressing``.
    """
    extra = {k: v for k, v in (properties or {}).items() if k not in _JVM_ONLY}
    path_style = extra.pop("s3.path-style-access", None)
    if path_style is not None:
        virtual = "false" if path_style.strip().lower() == "true" else "true"
        extra.setdefault("s3.force-virtual-addressing", virtual)
    if not is_local(warehouse):
        location = str(warehouse).rstrip("/")
    elif warehouse_scheme(warehouse) == "file":
        location = str(warehouse)
    else:
        location = Path(warehouse).resolve().as_uri()
    return {
        **extra,
        "uri": metadata_url,
        "warehouse": location,
        "schema_version": JDBC_SCHEMA_VERSION.lower(),
    }
