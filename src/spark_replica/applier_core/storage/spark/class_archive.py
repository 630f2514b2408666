"""The driver JVM's class-data sharing archive: Spark's classes mapped from a file at start
instead of loaded, verified and linked one by one.

A JVM that loads the classes of Spark, Iceberg and the JDBC drivers spends most of its
start doing so (about 6 s of a SparkSession's 8 on a two-core machine, and again at the
first query of Iceberg tables). ``make install`` records the classes a running replica
uses in an archive (``tools/make_class_archive.py``: the JVM's
``-XX:ArchiveClassesAtExit`` during a short replication into Iceberg tables), and every
later session maps it with ``-XX:SharedArchiveFile``: the session starts in about half
the time, its first query too (docs/benchmarks.md, "The driver JVM's start").

The archive belongs to one JVM build and one class path: a JVM that finds it made by
another (another Java, other jars) ignores it and loads its classes as usual, so a stale
archive costs time, never correctness. Java options that name an archive of their own, or
turn sharing off, are left as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from spark_replica.applier_core.storage.spark.jars import jar_dir

#: The archive's name beside the installed jars (``jar_dir()``).
ARCHIVE_NAME = "spark-driver.jsa"
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
#: Java options after which the JVM's own choice of archive stands.
_OWN_CHOICE = ("-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit", "-Xshare:off")


def archive_path(directory: Path | None = None) -> Path:
    """Where the archive is (``directory``, by default ``jar_dir()``)."""
    return (jar_dir() if directory is None else directory) / ARCHIVE_NAME


def with_archive(options: Mapping[str, str], archive: Path | None = None) -> dict[str, str]:
    """``options`` with ``archive`` (``archive_path()``) among the driver's Java options,
    when the file exists and the options make no choice of their own about archives."""
    path = archive_path() if archive is None else archive
    given = options.get(DRIVER_JAVA_OPTIONS, "")
    if not path.is_file() or any(choice in given for choice in _OWN_CHOICE):
        return dict(options)
    return {**options, DRIVER_JAVA_OPTIONS: f"{given} -XX:SharedArchiveFile={path}".strip()}


def recording_options(target: Path) -> dict[str, str]:
    """The Spark options of a session whose JVM writes its archive to ``target`` when it
    exits (quietly: the JVM warns of every class it leaves out, thousands of lines)."""
    return {DRIVER_JAVA_OPTIONS: f"-XX:ArchiveClassesAtExit={target} -Xlog:cds*=off"}
