"""QUERY_EVENT (2): body codec (mysql-reference §7.5)."""

from __future__ import annotations

import functools
import struct

from spark_replica.applier_core.binlog.constants import HEADER_LEN
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events.header import EventHeader
from spark_replica.applier_core.binlog.events.query import Query
from spark_replica.applier_core.binlog.status_vars import QueryStatus, parse_status_vars
from spark_replica.applier_core.binlog.text import decode_text, encode_text

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_POST_HEADER = struct.Struct("<IIBHH")  # thread_id, exec_time, db_len, error_code, status_len
_POST_HEADER_V3 = struct.Struct("<IIBH")
_REST_HEAD = struct.Struct("<BHH")  # the post-header after thread_id and exec_time
_REST_HEAD_V3 = struct.Struct("<BH")


def decode_query_at(header: EventHeader, data: bytes, end: int, post_header_len: int) -> Query:
    """Decode the Query event whose body is ``data[HEADER_LEN:end]``.

    Everything after the thread id and execution time repeats from event to event for short
    statements (BEGIN, COMMIT), so their parsed form is cached.
    """
    if post_header_len < _POST_HEADER_V3.size:
        raise BinlogError(f"invalid Query post-header length {post_header_len}")
    size = end - HEADER_LEN
    if size < post_header_len:
        raise BinlogError(f"event is too short: {size} bytes of body")
    thread_id, exec_time = _IDS.unpack_from(data, HEADER_LEN)
    rest = data[HEADER_LEN + _IDS.size : end]
    if len(rest) <= _CACHED_STATEMENT_MAX:
        parsed = _parse_statement(rest, post_header_len)
    else:
        parsed = _parse_statement.__wrapped__(rest, post_header_len)
    return Query(header, thread_id, exec_time, *parsed)


#: Parsed Query event bodies are cached up to this size (after thread id and execution time).
_CACHED_STATEMENT_MAX = 512
_IDS = struct.Struct("<II")  # thread_id, exec_time
_Statement = tuple[int, str, str, QueryStatus, bytes, bytes | None, bytes | None]


@functools.lru_cache(maxsize=1024)
def _parse_statement(rest: bytes, post_header_len: int) -> _Statement:
    """A Query body after its thread id and execution time: the error code, database,
    statement, status variables (parsed and raw) and the raw bytes of lossy texts."""
    head = post_header_len - _IDS.size  # db_len, error_code[, status_len, ...]
    size = len(rest) + _IDS.size
    if post_header_len >= _POST_HEADER.size:
        db_len, error_code, status_len = _REST_HEAD.unpack_from(rest)
    else:
        db_len, error_code = _REST_HEAD_V3.unpack_from(rest)
        status_len = 0
    db_start = head + status_len
    db_end = db_start + db_len
    if db_end >= len(rest):
        raise BinlogError(
            f"event is too short: {size} bytes of body, the status variables and "
            f"database name need {db_end + _IDS.size + 1}"
        )
    if rest[db_end] != 0:
        raise BinlogError("Query event: database name is not NUL-terminated")
    status_vars = rest[head:db_start]
    status = parse_status_vars(status_vars)
    db, raw_db = decode_text(rest[db_start:db_end], "utf-8")
    query, raw_query = decode_text(rest[db_end + 1 :], status.text_charset)
    return error_code, db, query, status, status_vars, raw_db, raw_query


def encode_query(event: Query) -> bytes:
    db = event.raw_db if event.raw_db is not None else encode_text(event.db, "utf-8")
    if event.raw_query is not None:
        text = event.raw_query
    else:
        text = encode_text(event.query, event.status.text_charset)
    if len(db) > 255 or len(event.status_vars) > 0xFFFF:
        raise BinlogError("Query event: database name or status block too long")
    head = (
        _U32.pack(event.thread_id)
        + _U32.pack(event.exec_time)
        + bytes((len(db),))
        + _U16.pack(event.error_code)
        + _U16.pack(len(event.status_vars))
    )
    return b"".join((head, event.status_vars, db, b"\x00", text))
