"""Spark DataFrames of Arrow tables in two calls to the JVM.

``SparkSession.createDataFrame`` of a ``pyarrow.Table`` makes about twenty round trips to
the JVM: the session's settings read one at a time (each through two or three objects), the
utility classes looked up by name. After each, the calling thread waits to take the GIL back
from the applier's threads, so a flush of a few changed rows spent more time in them than
in Spark (a flush of one table made 148 calls, 42 of them for its two frames, measured).

``ArrowFrames`` does what ``createDataFrame`` does for an Arrow table (the same cast to
Spark's Arrow types and timestamp localisation, the same Arrow stream file handed to
``PythonSQLUtils``), with the classes and settings looked up once for the session: the
file's read and the DataFrame's creation are the only round trips. The settings it keeps
(time zone, Arrow batch size, large variable-width types) are fixed for the engine's
session; with I/O encryption on, it leaves the work to ``createDataFrame``.
"""

from __future__ import annotations

import functools
import os
import tempfile
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.serializers import ArrowStreamSerializer
from pyspark.sql.pandas.types import _check_arrow_table_timestamps_localize, to_arrow_schema
from pyspark.sql.types import StructType


class ArrowFrames:
    """DataFrames of Arrow tables in ``spark``'s session."""

    def __init__(self, spark: Any) -> None:
        self._spark = spark
        context = spark.sparkContext
        self._encrypted = bool(context._encryption_enabled)
        self._temp_dir = context._temp_dir
        self._utils = spark._jvm.PythonSQLUtils
        self._session = spark._jsparkSession
        conf = self._session.sessionState().conf()
        self._timezone = str(conf.sessionLocalTimeZone())
        self._large_types = bool(conf.arrowUseLargeVarTypes())
        self._batch_rows = int(conf.arrowMaxRecordsPerBatch())

    def frame(self, data: pa.Table, schema: StructType) -> DataFrame:
        """``spark.createDataFrame(data, schema=schema)``."""
        if self._encrypted:
            return self._spark.createDataFrame(data, schema=schema)
        arrow_schema = to_arrow_schema(
            schema, error_on_duplicated_field_names_in_struct=True,
            prefers_large_types=self._large_types,
        )  # fmt: skip
        table = _check_arrow_table_timestamps_localize(data, schema, True, self._timezone)
        batches = table.cast(arrow_schema).to_batches(max_chunksize=self._batch_rows)
        handle, path = tempfile.mkstemp(dir=self._temp_dir)
        try:
            with os.fdopen(handle, "wb") as stream:
                ArrowStreamSerializer().dump_stream(batches, stream)
            rows = self._utils.readArrowStreamFromFile(path)  # read whole: the file can go
        finally:
            os.unlink(path)
        frame = DataFrame(self._utils.toDataFrame(rows, schema.json(), self._session), self._spark)
        frame._schema = schema
        return frame


@functools.lru_cache(maxsize=4)
def arrow_frames(spark: Any) -> ArrowFrames:
    """The ``ArrowFrames`` of a session (one per session: its settings are read once)."""
    return ArrowFrames(spark)
