"""The jars the process's SparkSession loads besides Spark's own: Iceberg, its S3 file IO
and JDBC drivers.

``make install`` fetches them from Maven Central (``tools/fetch_jars.py``) into
``jar_dir()``, a folder of the virtualenv, each checked against the repository's SHA-1
and against the SHA-256 pinned here.
``get_spark`` puts the ones present on ``spark.jars``; a session is built as well without
them, and then simply has no Iceberg catalog.

The Iceberg runtime is built for one Spark line (``4.1`` in its artifact name): the pinned
``pyspark`` and ``ICEBERG_VERSION`` change together (decision 0017).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

#: The Spark line whose Iceberg runtime is used: pyspark is pinned to it in pyproject.toml.
SPARK_LINE = "4.1"
SCALA_VERSION = "2.13"
ICEBERG_VERSION = "1.12.0"


@dataclass(frozen=True)
class Jar:
    """One artifact of Maven Central."""

    group: str
    artifact: str
    version: str
    #: The digest the project expects (the repository's .sha1 file is checked as well).
    sha256: str

    @property
    def file_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    @property
    def path(self) -> str:
        """The artifact's path in a Maven repository."""
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"


ICEBERG_RUNTIME = Jar(
    "org.apache.iceberg",
    f"iceberg-spark-runtime-{SPARK_LINE}_{SCALA_VERSION}",
    ICEBERG_VERSION,
    "3123c3798af642dd537230923548e013ef41cc28b6626e5225808cf5670a0f82",
)
#: The JDBC drivers of the metadata databases the Iceberg catalog can live in.
SQLITE_JDBC = Jar(
    "org.xerial",
    "sqlite-jdbc",
    "3.54.1.0",
    "f8dce420a6016278497f4f0560f65602b9db858de141b541cf91a4644ebe4639",
)
POSTGRESQL_JDBC = Jar(
    "org.postgresql",
    "postgresql",
    "42.7.14",
    "73914527305a40cce504b0d3d90b23caf565136912d607ae8ae7c5895512332c",
)

#: Iceberg's ``S3FileIO`` with the AWS SDK it needs (shaded): a warehouse on S3-compatible
#: object storage (``s3://bucket/prefix``, docs/spark-engine.md).
ICEBERG_AWS_BUNDLE = Jar(
    "org.apache.iceberg",
    "iceberg-aws-bundle",
    ICEBERG_VERSION,
    "dd7e49ffa4ac9b215bed846581991259e3aec9bb2fa08d6cec029c46cd66d957",
)

JARS: tuple[Jar, ...] = (ICEBERG_RUNTIME, ICEBERG_AWS_BUNDLE, SQLITE_JDBC, POSTGRESQL_JDBC)


def jar_dir() -> Path:
    """Where the jars are installed: ``share/spark-replica/jars`` of the running Python's
    environment (the project's virtualenv)."""
    return Path(sys.prefix) / "share" / "spark-replica" / "jars"


def installed_jars(directory: Path | None = None) -> list[Path]:
    """The jars of ``JARS`` present in ``directory`` (``jar_dir()``), in ``JARS`` order."""
    folder = jar_dir() if directory is None else directory
    return [folder / jar.file_name for jar in JARS if (folder / jar.file_name).is_file()]


def available(jar: Jar, directory: Path | None = None) -> bool:
    """Whether ``jar`` is installed in ``directory`` (``jar_dir()``)."""
    folder = jar_dir() if directory is None else directory
    return (folder / jar.file_name).is_file()


def iceberg_available(directory: Path | None = None) -> bool:
    """Whether the Iceberg runtime is installed."""
    return available(ICEBERG_RUNTIME, directory)


def s3_available(directory: Path | None = None) -> bool:
    """Whether a warehouse on S3 can be used: the Iceberg runtime and its AWS bundle are
    installed."""
    return iceberg_available(directory) and available(ICEBERG_AWS_BUNDLE, directory)
