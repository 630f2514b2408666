"""QUERY_EVENT (2): a statement, with its status variables (mysql-reference §7.5)."""

from __future__ import annotations

import dataclasses
import functools
import struct
from dataclasses import dataclass
from typing import Literal

from spark_replica.applier_core.binlog.constants import HEADER_LEN
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import EventHeader, ValueEvent
from spark_replica.applier_core.binlog.packing import Reader

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_POST_HEADER = struct.Struct("<IIBHH")  # thread_id, exec_time, db_len, error_code, status_len
_POST_HEADER_V3 = struct.Struct("<IIBH")
_REST_HEAD = struct.Struct("<BHH")  # the post-header after thread_id and exec_time
_REST_HEAD_V3 = struct.Struct("<BH")

# Collation ids whose character set is utf8mb3/utf8mb4 (MySQL 8.x and MariaDB numbering).
_UTF8_COLLATIONS = frozenset(
    {33, 45, 46, 76, 83, 223, *range(192, 216), *range(224, 248), *range(255, 324)}
)
# latin1 (MySQL's latin1 is cp1252 with the five undefined bytes mapped to C1 controls) and
# ascii, which latin1 decodes correctly.
_LATIN1_COLLATIONS = frozenset({5, 8, 15, 31, 47, 48, 49, 94, 11, 65})


def _cp1252_tables() -> tuple[dict[int, str], dict[int, int]]:
    decode: dict[int, str] = {}
    for byte in range(0x80, 0xA0):
        try:
            decode[byte] = bytes((byte,)).decode("cp1252")
        except UnicodeDecodeError:
            decode[byte] = chr(byte)
    return decode, {ord(char): byte for byte, char in decode.items()}


_LATIN1_DECODE, _LATIN1_ENCODE = _cp1252_tables()

Charset = Literal["utf-8", "latin1"]


def decode_text(raw: bytes, charset: Charset) -> tuple[str, bytes | None]:
    """``(text, raw_if_lossy)``: ``raw`` is returned too when the text cannot re-encode to it."""
    if charset == "latin1":
        return raw.decode("latin-1").translate(_LATIN1_DECODE), None
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), raw


def encode_text(text: str, charset: Charset) -> bytes:
    try:
        if charset == "latin1":
            return text.translate(_LATIN1_ENCODE).encode("latin-1")
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BinlogError(f"text is not representable in {charset}: {exc.reason}") from exc


@dataclass(frozen=True, slots=True)
class QueryStatus:
    """The parsed status variables of a Query event; ``None`` = not present."""

    flags2: int | None = None
    sql_mode: int | None = None
    catalog: str | None = None
    auto_increment: tuple[int, int] | None = None  # (increment, offset)
    charset: tuple[int, int, int] | None = None  # (client, connection, server) collation ids
    time_zone: str | None = None
    catalog_nz: str | None = None
    lc_time_names: int | None = None
    charset_database: int | None = None
    table_map_for_update: int | None = None
    master_data_written: int | None = None
    invoker: tuple[str, str] | None = None  # (user, host)
    updated_db_names: tuple[str, ...] | None = None  # () with count 254 = too many to list
    microseconds: int | None = None
    explicit_defaults_for_timestamp: int | None = None
    ddl_xid: int | None = None
    default_collation_for_utf8mb4: int | None = None
    sql_require_primary_key: int | None = None
    default_table_encryption: int | None = None
    mariadb_hrnow: int | None = None
    mariadb_xid: int | None = None

    @property
    def text_charset(self) -> Charset:
        """How the statement text is decoded: per ``character_set_client``, else utf-8."""
        if self.charset is not None and self.charset[0] in _LATIN1_COLLATIONS:
            return "latin1"
        return "utf-8"

    def encode(self) -> bytes:
        """The status-variable block, in code order."""
        out = bytearray()
        for code, name, kind in _VARS:
            value = getattr(self, name)
            if value is None:
                continue
            out.append(code)
            out += _encode_var(kind, value)
        return bytes(out)


_Kind = Literal[
    "u8", "u16", "u24", "u32", "u64", "str", "catalog", "u16x2", "u16x3", "invoker", "dbs"
]
_VARS: tuple[tuple[int, str, _Kind], ...] = (
    (0, "flags2", "u32"),
    (1, "sql_mode", "u64"),
    (2, "catalog", "catalog"),
    (3, "auto_increment", "u16x2"),
    (4, "charset", "u16x3"),
    (5, "time_zone", "str"),
    (6, "catalog_nz", "str"),
    (7, "lc_time_names", "u16"),
    (8, "charset_database", "u16"),
    (9, "table_map_for_update", "u64"),
    (10, "master_data_written", "u32"),
    (11, "invoker", "invoker"),
    (12, "updated_db_names", "dbs"),
    (13, "microseconds", "u24"),
    (16, "explicit_defaults_for_timestamp", "u8"),
    (17, "ddl_xid", "u64"),
    (18, "default_collation_for_utf8mb4", "u16"),
    (19, "sql_require_primary_key", "u8"),
    (20, "default_table_encryption", "u8"),
    (128, "mariadb_hrnow", "u24"),
    (129, "mariadb_xid", "u64"),
)
_BY_CODE = {code: (name, kind) for code, name, kind in _VARS}
_OVER_MAX_DBS = 254


def _short_str(reader: Reader) -> str:
    return reader.bytes(reader.u8()).decode("utf-8", errors="replace")


def _read_var(reader: Reader, kind: _Kind) -> object:
    if kind == "u8":
        return reader.u8()
    if kind == "u16":
        return reader.u16()
    if kind == "u24":
        return reader.u24()
    if kind == "u32":
        return reader.u32()
    if kind == "u64":
        return reader.u64()
    if kind == "str":
        return _short_str(reader)
    if kind == "catalog":
        text = _short_str(reader)
        reader.skip(1)
        return text
    if kind == "u16x2":
        return reader.u16(), reader.u16()
    if kind == "u16x3":
        return reader.u16(), reader.u16(), reader.u16()
    if kind == "invoker":
        return _short_str(reader), _short_str(reader)
    count = reader.u8()
    if count == _OVER_MAX_DBS:
        return ()
    return tuple(reader.cstring().decode("utf-8", errors="replace") for _ in range(count))


def _short(text: str) -> bytes:
    raw = text.encode("utf-8")
    if len(raw) > 255:
        raise BinlogError("status variable string longer than 255 bytes")
    return bytes((len(raw),)) + raw


def _encode_var(kind: _Kind, value: object) -> bytes:
    if kind in ("u8", "u16", "u24", "u32", "u64"):
        size = {"u8": 1, "u16": 2, "u24": 3, "u32": 4, "u64": 8}[kind]
        assert isinstance(value, int)
        return value.to_bytes(size, "little")
    if kind == "str":
        assert isinstance(value, str)
        return _short(value)
    if kind == "catalog":
        assert isinstance(value, str)
        return _short(value) + b"\x00"
    if kind in ("u16x2", "u16x3"):
        assert isinstance(value, tuple)
        return b"".join(_U16.pack(part) for part in value)
    if kind == "invoker":
        assert isinstance(value, tuple)
        return _short(value[0]) + _short(value[1])
    assert isinstance(value, tuple)
    if not value:
        return bytes((_OVER_MAX_DBS,))
    return bytes((len(value),)) + b"".join(name.encode("utf-8") + b"\x00" for name in value)


@functools.lru_cache(maxsize=1024)
def parse_status_vars(raw: bytes) -> QueryStatus:
    """Parse a status-variable block; an unknown code ends parsing, as in MySQL.

    Blocks repeat from statement to statement, so parsed ones are cached.
    """
    reader = Reader(raw)
    values: dict[str, object] = {}
    while reader.remaining > 0:
        entry = _BY_CODE.get(reader.u8())
        if entry is None:
            break
        values[entry[0]] = _read_var(reader, entry[1])
    return QueryStatus(**values)  # type: ignore[arg-type]


@dataclass(slots=True)
class Query(ValueEvent):
    """QUERY_EVENT (2).

    ``status_vars`` is the raw status block (written back as is); ``status`` its parsed form.
    ``query`` is decoded per ``character_set_client`` (utf8/latin1), else as utf-8 with
    replacement characters; ``raw_query``/``raw_db`` keep the original bytes only when the
    text could not be decoded losslessly.
    """

    thread_id: int
    exec_time: int
    error_code: int
    db: str
    query: str
    status: QueryStatus = QueryStatus()
    status_vars: bytes = b""
    raw_db: bytes | None = None
    raw_query: bytes | None = None

    @classmethod
    def build(
        cls,
        header: EventHeader,
        query: str,
        *,
        db: str = "",
        status: QueryStatus | None = None,
        thread_id: int = 0,
        exec_time: int = 0,
        error_code: int = 0,
    ) -> Query:
        """A Query event whose raw status block is encoded from ``status``."""
        status = status or QueryStatus()
        return cls(header, thread_id, exec_time, error_code, db, query, status, status.encode())

    def with_query(self, query: str) -> Query:
        return dataclasses.replace(self, query=query, raw_query=None)

    @property
    def is_begin(self) -> bool:
        return _keyword(self.query) == "BEGIN"

    @property
    def is_commit(self) -> bool:
        return _keyword(self.query) in ("COMMIT", "ROLLBACK")


def _keyword(text: str) -> str:
    stripped = text.strip()
    return stripped.upper() if len(stripped) <= 8 else ""


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
