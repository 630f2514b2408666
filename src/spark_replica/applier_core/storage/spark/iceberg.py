"""An Iceberg catalog of type ``jdbc`` in the replica's metadata database (decision 0017).

Spark's ``SparkCatalog`` (Iceberg's ``JdbcCatalog``) and pyiceberg's ``SqlCatalog`` keep the
same two tables, ``iceberg_tables`` and ``iceberg_namespace_properties``, keyed by the
catalog's name: both use schema version 1 of them (the ``iceberg_type`` column, which
views need), so either may create them and both see the same tables.

``catalog_options`` gives the Spark settings of such a catalog for a metadata URL of
SQLAlchemy (SQLite in a file, or PostgreSQL); ``pyiceberg_properties`` the properties of
the matching ``SqlCatalog``. The jars (``jars.py``) must be on the session's class path.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

#: The Spark catalog class, and the extensions that add Iceberg's SQL (CALL, ALTER TABLE ...
#: SET IDENTIFIER FIELDS, WRITE ORDERED BY) to the parser.
SPARK_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
#: The catalog tables' schema version both implementations are told to use.
JDBC_SCHEMA_VERSION = "V1"


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


def catalog_options(name: str, metadata_url: str, warehouse: str | Path) -> dict[str, str]:
    """Spark settings that make ``name`` an Iceberg JDBC catalog in ``metadata_url``, its
    files under ``warehouse``. SQL settings: they may be set on a running session."""
    uri, properties = jdbc_connection(metadata_url)
    prefix = f"spark.sql.catalog.{name}"
    options = {
        prefix: SPARK_CATALOG,
        f"{prefix}.type": "jdbc",
        f"{prefix}.uri": uri,
        f"{prefix}.warehouse": str(warehouse),
        f"{prefix}.jdbc.schema-version": JDBC_SCHEMA_VERSION,
    }
    options.update({f"{prefix}.jdbc.{key}": value for key, value in properties.items()})
    return options


def pyiceberg_properties(metadata_url: str, warehouse: str | Path) -> dict[str, str]:
    """Properties of pyiceberg's ``SqlCatalog`` on the catalog ``catalog_options`` makes
    (``SqlCatalog(name, **pyiceberg_properties(...))``, with the same name)."""
    return {
        "uri": metadata_url,
        "warehouse": Path(warehouse).resolve().as_uri(),
        "schema_version": JDBC_SCHEMA_VERSION.lower(),
    }
