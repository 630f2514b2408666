"""Appends written as Parquet data files by pyarrow and committed through Iceberg's Java API.

An ``INSERT INTO ... SELECT`` of a flush's new rows hands Spark an Arrow table that its
JVM turns into rows, then into Parquet again: 0.43 s of JVM CPU for 50,000 employees
rows in a session alone, and in the server its JVM calls wait for the GIL behind the
applier's threads. Here pyarrow writes the file (C++, without the GIL, 0.02 s for the
same rows) in the layout Iceberg's writer gives it (each column's Iceberg field id, its
Iceberg type, Iceberg's compression, row group size and bloom filters of the primary key),
Iceberg reads the file's footer for its column metrics, and one ``AppendFiles`` commits
every file of the append with the snapshot summary the engine's SQL commits carry:
0.12 s of JVM CPU, 2.6x less wall time (``tests/bench/bench_data_files.py``).

It serves tables whose files are on this machine (a local warehouse): pyarrow writes
them where the table's location says. On another file system the SQL path stays.
A column type outside the mapping below (none the engine creates today) also leaves the
append to SQL: ``DataFileAppender.append`` returns False then and writes nothing.
"""

from __future__ import annotations

import functools
import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spark_replica.applier_core.storage.interface import TableDef
from spark_replica.applier_core.storage.spark.catalog import (
    TABLE_PROPERTIES,
    IcebergCatalog,
    namespace_name,
)
from spark_replica.applier_core.storage.spark.iceberg import is_local, local_path
from spark_replica.applier_core.storage.spark.state import StoredTable

#: Parquet field metadata that carries a column's Iceberg field id.
FIELD_ID = b"PARQUET:field_id"
#: The table properties the files follow: a row group holds about this many Arrow bytes,
#: a bloom filter takes at most this many bytes.
ROW_GROUP_BYTES = int(TABLE_PROPERTIES["write.parquet.row-group-size-bytes"])
BLOOM_FILTER_BYTES = int(TABLE_PROPERTIES["write.parquet.bloom-filter-max-bytes"])
#: Iceberg's default false-positive rate of a bloom filter.
BLOOM_FILTER_FPP = 0.01
#: Distinct values a bloom filter of ``BLOOM_FILTER_BYTES`` holds at ``BLOOM_FILTER_FPP``
#: (about 9.6 bits each).
BLOOM_FILTER_VALUES = BLOOM_FILTER_BYTES * 8 * 10 // 96
#: Iceberg's default codec of Parquet data files.
COMPRESSION = "zstd"

_PRIMITIVES: Mapping[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "string": pa.string(),
    "binary": pa.binary(),
}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")


class UnsupportedType(ValueError):
    """An Iceberg type this writer does not write."""


def arrow_field(field: Mapping[str, Any]) -> pa.Field:
    """The Arrow field of an Iceberg schema field (its JSON form), with its field id.

    Raises:
        UnsupportedType: the field's type is not one the engine maps MySQL types to.
    """
    return pa.field(
        field["name"],
        _arrow_type(field["type"]),
        nullable=not field["required"],
        metadata={FIELD_ID: str(field["id"]).encode()},
    )


def _arrow_type(kind: object) -> pa.DataType:
    if isinstance(kind, str):
        found = _PRIMITIVES.get(kind)
        if found is not None:
            return found
        match = _DECIMAL.fullmatch(kind)
        if match is not None:
            return pa.decimal128(int(match.group(1)), int(match.group(2)))
    elif isinstance(kind, Mapping) and kind.get("type") == "list":
        element = pa.field(
            "element",
            _arrow_type(kind["element"]),
            nullable=not kind["element-required"],
            metadata={FIELD_ID: str(kind["element-id"]).encode()},
        )
        return pa.list_(element)
    raise UnsupportedType(f"no Parquet writer for Iceberg type {kind!r}")


def file_schema(schema_json: str) -> pa.Schema:
    """The Arrow schema of a data file of an Iceberg table whose schema is ``schema_json``
    (``SchemaParser.toJson``).

    Raises:
        UnsupportedType: a column's type is not one this writer writes.
    """
    return pa.schema([arrow_field(field) for field in json.loads(schema_json)["fields"]])


def to_file_schema(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """``data`` (columns in the table's order, as ``types.to_arrow_table`` makes them) cast
    to a data file's ``schema``: same values, Iceberg's physical types (a TINYINT column's
    int8 becomes int32), field ids attached.

    Raises:
        ValueError: the columns are not the table's, or a required column holds NULL.
    """
    if data.num_columns != len(schema) or [f.name for f in schema] != data.column_names:
        raise ValueError(
            f"columns {data.column_names} do not match the Iceberg table's {schema.names}"
        )
    for field, column in zip(schema, data.columns, strict=True):
        if not field.nullable and column.null_count:
            raise ValueError(f"column {field.name!r} is NOT NULL but a value is NULL")
    return data.cast(schema)


def rows_per_group(data: pa.Table) -> int:
    """Rows of ``data`` per Parquet row group: about ``ROW_GROUP_BYTES`` of it each."""
    return max(1, ROW_GROUP_BYTES * data.num_rows // max(1, data.nbytes))


def bloom_filters(definition: TableDef, rows: int) -> dict[str, dict[str, float]]:
    """pyarrow's ``bloom_filter_options`` for a file of ``rows`` rows per row group: a
    filter of every primary key column (``catalog.key_properties``), sized for the row
    group's values up to ``BLOOM_FILTER_BYTES``. pyarrow reads a dot in a name as a path
    into a nested column: a key column with a dot in its name goes without one (a lookup
    by it reads the file's rows instead)."""
    names = [definition.columns[index].name for index in definition.primary_key]
    values = max(1, min(rows, BLOOM_FILTER_VALUES))
    return {n: {"ndv": values, "fpp": BLOOM_FILTER_FPP} for n in names if "." not in n}


def write_files(data: pa.Table, path: str, definition: TableDef, *, file_bytes: int) -> list[str]:
    """Write ``data`` (cast by ``to_file_schema``) at ``path`` (a local path, or a
    ``file:`` URI) as one or more Parquet files of about ``file_bytes`` Arrow bytes each
    (``path``, then ``-1``, ``-2``... before its suffix); their paths as given."""
    paths = []
    per_file = max(1, file_bytes * data.num_rows // max(1, data.nbytes))
    group = min(rows_per_group(data), per_file)
    for number, start in enumerate(range(0, max(1, data.num_rows), per_file)):
        part = data.slice(start, per_file)
        name = path if number == 0 else path.replace(".parquet", f"-{number}.parquet")
        local = local_path(name)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        pq.write_table(
            part,
            local,
            row_group_size=group,
            compression=COMPRESSION,
            store_decimal_as_integer=True,
            bloom_filter_options=bloom_filters(definition, group) or None,
        )
        paths.append(name)
    return paths


class DataFileAppender:
    """Appends to the tables of ``catalog`` by writing their data files (module doc)."""

    def __init__(self, catalog: IcebergCatalog) -> None:
        self.catalog = catalog
        self.enabled = is_local(catalog.root)
        jvm = catalog.spark._jvm
        self._application = str(catalog.spark.sparkContext.applicationId)
        self._schema_parser = jvm.org.apache.iceberg.SchemaParser
        self._parquet_util = jvm.org.apache.iceberg.parquet.ParquetUtil
        self._metrics_config = jvm.org.apache.iceberg.MetricsConfig
        self._data_files = jvm.org.apache.iceberg.DataFiles
        self._schemas: dict[str, pa.Schema] = {}

    def append(
        self, stored: StoredTable, data: pa.Table, summary: Mapping[str, str], *, file_bytes: int
    ) -> bool:
        """Append the rows of ``data`` to ``stored``'s table, its snapshot's summary carrying
        ``summary``; False when this writer cannot (nothing written: the SQL path must)."""
        if not self.enabled:
            return False
        table = self.catalog.load(namespace_name(stored.ref.schema), stored.ref.table)
        try:
            schema = self._file_schema(table)
        except UnsupportedType:
            return False
        written = to_file_schema(data, schema)
        name = f"{self.catalog.location(stored.id)}/data/{uuid.uuid4()}.parquet"
        paths = write_files(written, name, stored.definition, file_bytes=file_bytes)
        self._commit(table, paths, summary)
        return True

    def _file_schema(self, table: Any) -> pa.Schema:
        text = str(self._schema_parser.toJson(table.schema()))
        found = self._schemas.get(text)
        if found is None:
            if len(self._schemas) >= SCHEMAS_KEPT:
                self._schemas.clear()
            found = self._schemas[text] = file_schema(text)
        return found

    def _commit(self, table: Any, paths: Sequence[str], summary: Mapping[str, str]) -> None:
        io, config, spec = table.io(), self._metrics_config.forTable(table), table.spec()
        append = table.newAppend()
        for path in paths:
            file = io.newInputFile(path)
            metrics = self._parquet_util.fileMetrics(file, config)
            append.appendFile(
                self._data_files.builder(spec).withInputFile(file).withMetrics(metrics).build()
            )
        for key, value in {**summary, SPARK_APP_ID: self._application}.items():
            append.set(key, value)
        append.commit()


#: The summary property naming the writing application: the engine's own commits carry
#: its SparkContext's (``IcebergCatalog.committed_since`` tells them from other writers').
SPARK_APP_ID = "spark.app.id"
#: Iceberg schemas kept converted.
SCHEMAS_KEPT = 256


@functools.lru_cache(maxsize=4)
def data_file_appender(catalog: IcebergCatalog) -> DataFileAppender:
    """The ``DataFileAppender`` of ``catalog`` (its JVM classes looked up once)."""
    return DataFileAppender(catalog)
