"""Running users' queries on Spark: snapshots, a bound on concurrent queries, streaming
results typed as MySQL types, and cancellation (KILL QUERY).

A query is built against a ``Snapshot`` (``build(resolve)`` gets the function that names the
view of each table at that snapshot), run under a Spark job group named by its tag, and read
back partition by partition (``toLocalIterator``) so a large result never sits whole in
memory. Every call that may run Spark work is blocking: callers on an event loop run it in a
thread.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.interface import EngineError
from spark_replica.applier_core.storage.spark.session import activate
from spark_replica.applier_core.storage.spark.snapshots import Snapshot

#: Queries Spark runs at once; more wait their turn.
DEFAULT_MAX_QUERIES = 4

#: Spark type name (``DataType.typeName()``) → MySQL result column type (mysql-mimic's
#: ``ColumnType`` member name): what a client's driver sees.
_RESULT_TYPES = {
    "byte": "TINY",
    "short": "SHORT",
    "integer": "LONG",
    "long": "LONGLONG",
    "float": "FLOAT",
    "double": "DOUBLE",
    "decimal": "NEWDECIMAL",
    "string": "VAR_STRING",
    "char": "STRING",
    "varchar": "VAR_STRING",
    "binary": "BLOB",
    "boolean": "TINY",
    "date": "DATE",
    "timestamp": "DATETIME",
    "timestamp_ntz": "DATETIME",
    "void": "NULL",
}
_JSON_TYPES = ("array", "map", "struct", "variant")

#: Turns a value Spark returns into the one the client gets (None: as it is).
Converter = Callable[[Any], object] | None


@dataclass(frozen=True, slots=True)
class ResultField:
    """A result column: its name and MySQL type (a mysql-mimic ``ColumnType`` name); a
    DECIMAL's ``precision`` and ``scale``; ``binary`` when its values are bytes;
    ``nullable`` as Spark knows it (False for a literal or a COUNT)."""

    name: str
    mysql_type: str
    precision: int = 0
    scale: int = 0
    binary: bool = False
    nullable: bool = True


class QueryResult:
    """A running query's columns and rows; ``fetch`` reads the next rows, ``close`` ends it
    (releasing its snapshot and its turn). Use from one thread at a time."""

    def __init__(
        self,
        fields: list[ResultField],
        rows: Iterator[Any],
        converters: list[Converter],
        on_close: Callable[[], None],
        prepare: Callable[[], None],
    ) -> None:
        self.fields = fields
        self._rows = rows
        self._converters = converters
        self._on_close = on_close
        self._prepare = prepare
        self._closed = False

    def fetch(self, count: int) -> list[tuple[object, ...]]:
        """Up to ``count`` more rows; an empty list at the end (blocking: Spark work).

        Raises:
            EngineError: Spark failed the query (1317 when it was cancelled)."""
        if self._closed:
            return []
        try:
            return self._fetch(count)
        except Exception as error:
            raise query_error(error) from error

    def _fetch(self, count: int) -> list[tuple[object, ...]]:
        self._prepare()
        converters = self._converters
        batch = []
        for row in itertools.islice(self._rows, count):
            values = tuple(row)
            if any(converters):
                values = tuple(
                    v if c is None or v is None else c(v)
                    for v, c in zip(values, converters, strict=True)
                )
            batch.append(values)
        return batch

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._on_close()


class SparkQueries:
    """Runs SELECTs on the engine's snapshots; at most ``max_queries`` at once."""

    def __init__(
        self,
        spark: Any,
        snapshot: Callable[[], Snapshot],
        max_queries: int = DEFAULT_MAX_QUERIES,
    ) -> None:
        self._spark = spark
        self._snapshot = snapshot
        self._turns = threading.BoundedSemaphore(max_queries)
        # _lock guards _cancelled: tags cancelled while their query still runs.
        self._lock = threading.Lock()
        self._cancelled: set[str] = set()

    def run(self, build: Callable[[Snapshot], str], tag: str) -> QueryResult:
        """Start the query ``build`` makes (given the snapshot it reads: each table's view)
        under job group ``tag``. Raises what ``build`` raises, or Spark's error."""
        self._turns.acquire()
        snapshot: Snapshot | None = None
        try:
            snapshot = self._snapshot()
            sql = build(snapshot)
            context = self._spark.sparkContext

            def prepare() -> None:
                activate(self._spark)
                context.setJobGroup(tag, sql[:200], interruptOnCancel=True)
                with self._lock:
                    if tag in self._cancelled:
                        raise EngineError.of(ErrorCode.QUERY_INTERRUPTED)

            prepare()
            try:
                frame = self._spark.sql(sql)
                fields, converters = _describe(frame.schema)
                rows = frame.toLocalIterator(prefetchPartitions=False)
            except Exception as error:
                raise query_error(error) from error
        except BaseException:
            if snapshot is not None:
                snapshot.__exit__(None, None, None)
            self._turns.release()
            with self._lock:
                self._cancelled.discard(tag)
            raise
        done = snapshot

        def finish() -> None:
            done.__exit__(None, None, None)
            self._turns.release()
            with self._lock:
                self._cancelled.discard(tag)

        return QueryResult(fields, rows, converters, finish, prepare)

    def cancel(self, tag: str) -> None:
        """Cancel the Spark jobs of the query running under ``tag`` (KILL QUERY); it starts no
        more. A job submitted at this very moment may escape: callers repeat the call until
        the query's thread has returned."""
        with self._lock:
            self._cancelled.add(tag)
        self._spark.sparkContext.cancelJobGroup(tag)


def query_error(error: Exception) -> EngineError:
    """The MySQL error for a Spark failure of a user query, in the words of its root cause
    (a task's failure reaches Python wrapped in "An error occurred while calling ...")."""
    text, condition = _root_cause(error)
    if "cancelled" in text.lower() and (
        "job group" in text.lower() or "cancel" in condition.lower()
    ):
        return EngineError.of(ErrorCode.QUERY_INTERRUPTED)
    if condition.startswith("UNRESOLVED_COLUMN"):
        found = re.search(r"name `?([^`\s]+)`? cannot be resolved", text)
        name = found.group(1) if found else "?"
        return EngineError.of(ErrorCode.BAD_FIELD_ERROR, name, "field list")
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return EngineError.of(ErrorCode.UNKNOWN_ERROR, f"Spark: {first}")


def _root_cause(error: Exception) -> tuple[str, str]:
    """The message and error condition of the exception at the root of ``error``'s chain of
    JVM causes (``error`` itself when it has none)."""
    text = str(error)
    condition = getattr(error, "getCondition", lambda: None)() or ""
    cause = getattr(error, "java_exception", None)  # py4j's Py4JJavaError
    try:
        while cause is not None:
            message = cause.getMessage()
            if message:
                text, condition = str(message), _condition(cause) or condition
            cause = cause.getCause()
    except Exception:  # the JVM is gone: keep what was read
        pass
    return text, str(condition)


def _condition(java_exception: Any) -> str:
    """The error condition of a JVM exception; "" for one that is not a SparkThrowable."""
    try:
        return str(java_exception.getCondition() or "")
    except Exception:
        return ""


def _describe(schema: Any) -> tuple[list[ResultField], list[Converter]]:
    fields: list[ResultField] = []
    converters: list[Converter] = []
    for field in schema.fields:
        name = field.dataType.typeName()
        nullable = bool(field.nullable)
        if name in _JSON_TYPES:
            fields.append(ResultField(field.name, "JSON", nullable=nullable))
            converters.append(_json)
        elif name == "boolean":
            fields.append(ResultField(field.name, "TINY", nullable=nullable))
            converters.append(int)
        else:
            precision = int(getattr(field.dataType, "precision", 0) or 0)
            scale = int(getattr(field.dataType, "scale", 0) or 0)
            mysql_type = _RESULT_TYPES.get(name, "VAR_STRING")
            fields.append(ResultField(field.name, mysql_type, precision, scale,
                                      name == "binary", nullable))  # fmt: skip
            converters.append(None if name in _RESULT_TYPES else str)
    return fields, converters


def _json(value: Any) -> str:
    return json.dumps(_plain(value), separators=(", ", ": "))


def _plain(value: Any) -> object:
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime):
        return value.isoformat(" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value
