"""Row-based replication events: Table_map and rows events, and the column value model.

``decode_table_map`` / ``decode_rows_event`` take an event body (after the 19-byte common
header, checksum removed); ``encode_table_map`` / ``encode_rows_event`` produce one. Rows are
decoded by per-table compiled decoders cached on the ``TableMapEvent``. Values follow the
model documented in ``values``; ``arrow_type`` maps a column to its Arrow/Spark type.
"""

from __future__ import annotations

from spark_replica.applier_core.binlog.rows.arrow import arrow_schema as arrow_schema
from spark_replica.applier_core.binlog.rows.arrow import arrow_type as arrow_type
from spark_replica.applier_core.binlog.rows.columns import ColumnSpec as ColumnSpec
from spark_replica.applier_core.binlog.rows.columns import make_column as make_column
from spark_replica.applier_core.binlog.rows.json_binary import JsonOpaque as JsonOpaque
from spark_replica.applier_core.binlog.rows.json_diff import DiffOperation as DiffOperation
from spark_replica.applier_core.binlog.rows.json_diff import JsonDiff as JsonDiff
from spark_replica.applier_core.binlog.rows.json_diff import PartialJson as PartialJson
from spark_replica.applier_core.binlog.rows.json_diff import apply_diffs as apply_diffs
from spark_replica.applier_core.binlog.rows.json_text import normalize_json as normalize_json
from spark_replica.applier_core.binlog.rows.rows import RowKind as RowKind
from spark_replica.applier_core.binlog.rows.rows import RowsEvent as RowsEvent
from spark_replica.applier_core.binlog.rows.rows import decode_rows_event as decode_rows_event
from spark_replica.applier_core.binlog.rows.rows import encode_rows_event as encode_rows_event
from spark_replica.applier_core.binlog.rows.table_map import TableMapEvent as TableMapEvent
from spark_replica.applier_core.binlog.rows.table_map import decode_table_map as decode_table_map
from spark_replica.applier_core.binlog.rows.table_map import encode_table_map as encode_table_map
from spark_replica.applier_core.binlog.rows.values import ABSENT as ABSENT
from spark_replica.applier_core.binlog.rows.values import Geometry as Geometry
from spark_replica.applier_core.binlog.rows.values import bit_bytes as bit_bytes

__all__ = [
    "ABSENT",
    "ColumnSpec",
    "DiffOperation",
    "Geometry",
    "JsonDiff",
    "JsonOpaque",
    "PartialJson",
    "RowKind",
    "RowsEvent",
    "TableMapEvent",
    "apply_diffs",
    "arrow_schema",
    "arrow_type",
    "bit_bytes",
    "decode_rows_event",
    "decode_table_map",
    "encode_rows_event",
    "encode_table_map",
    "make_column",
    "normalize_json",
]
