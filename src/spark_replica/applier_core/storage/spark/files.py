"""Listing and deleting the engine's directories through Hadoop's FileSystem API (in the
Spark JVM), so the same code serves a local warehouse and one on HDFS (a bucket only through
a Hadoop file system such as ``s3a://`` with ``hadoop-aws``; the Iceberg tables themselves
reach object storage through Iceberg's own file IO)."""

from __future__ import annotations

from typing import Any


class WarehouseFiles:
    """Directory operations on the warehouse the Spark session writes to."""

    def __init__(self, spark: Any) -> None:
        self._jvm = spark.sparkContext._jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _fs(self, path: str) -> tuple[Any, Any]:
        jpath = self._jvm.org.apache.hadoop.fs.Path(path)
        return jpath.getFileSystem(self._conf), jpath

    def exists(self, path: str) -> bool:
        fs, jpath = self._fs(path)
        return bool(fs.exists(jpath))

    def children(self, path: str) -> list[str]:
        """The names of the entries directly in ``path`` (none when it does not exist)."""
        fs, jpath = self._fs(path)
        if not fs.exists(jpath):
            return []
        return [status.getPath().getName() for status in fs.listStatus(jpath)]

    def delete(self, path: str) -> None:
        """Delete ``path`` and everything below it (nothing when it does not exist)."""
        fs, jpath = self._fs(path)
        fs.delete(jpath, True)

    def make_dirs(self, path: str) -> None:
        fs, jpath = self._fs(path)
        fs.mkdirs(jpath)
