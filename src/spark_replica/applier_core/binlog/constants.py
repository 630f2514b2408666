"""Numbers of the binary log format v4 (mysql-reference §7)."""

from __future__ import annotations

import enum

MAGIC = b"\xfebin"
HEADER_LEN = 19
CHECKSUM_LEN = 4
#: CRC32 of any event whose last four bytes are its own CRC32 (one call checks an event).
CRC32_RESIDUE = 0x2144DF1C
BINLOG_VERSION = 4


class EventType(enum.IntEnum):
    """Log_event_type, plus MariaDB's events (160-163)."""

    UNKNOWN = 0
    START_V3 = 1
    QUERY = 2
    STOP = 3
    ROTATE = 4
    INTVAR = 5
    SLAVE = 7
    APPEND_BLOCK = 9
    DELETE_FILE = 11
    RAND = 13
    USER_VAR = 14
    FORMAT_DESCRIPTION = 15
    XID = 16
    BEGIN_LOAD_QUERY = 17
    EXECUTE_LOAD_QUERY = 18
    TABLE_MAP = 19
    WRITE_ROWS_V1 = 23
    UPDATE_ROWS_V1 = 24
    DELETE_ROWS_V1 = 25
    INCIDENT = 26
    HEARTBEAT = 27
    IGNORABLE = 28
    ROWS_QUERY = 29
    WRITE_ROWS = 30
    UPDATE_ROWS = 31
    DELETE_ROWS = 32
    GTID = 33
    ANONYMOUS_GTID = 34
    PREVIOUS_GTIDS = 35
    TRANSACTION_CONTEXT = 36
    VIEW_CHANGE = 37
    XA_PREPARE = 38
    PARTIAL_UPDATE_ROWS = 39
    TRANSACTION_PAYLOAD = 40
    HEARTBEAT_V2 = 41
    GTID_TAGGED = 42
    MARIADB_ANNOTATE_ROWS = 160
    MARIADB_BINLOG_CHECKPOINT = 161
    MARIADB_GTID = 162
    MARIADB_GTID_LIST = 163
    MARIADB_START_ENCRYPTION = 164


ROWS_EVENTS = frozenset(
    {
        EventType.WRITE_ROWS_V1, EventType.UPDATE_ROWS_V1, EventType.DELETE_ROWS_V1,
        EventType.WRITE_ROWS, EventType.UPDATE_ROWS, EventType.DELETE_ROWS,
        EventType.PARTIAL_UPDATE_ROWS,
    }
)  # fmt: skip

#: Events that only statement-based streams carry; a row-only applier refuses them.
STATEMENT_ONLY_EVENTS = frozenset(
    {EventType.INTVAR, EventType.RAND, EventType.USER_VAR, EventType.BEGIN_LOAD_QUERY,
     EventType.EXECUTE_LOAD_QUERY, EventType.APPEND_BLOCK, EventType.DELETE_FILE}
)  # fmt: skip


class EventFlag(enum.IntFlag):
    BINLOG_IN_USE = 0x0001
    THREAD_SPECIFIC = 0x0004
    SUPPRESS_USE = 0x0008
    ARTIFICIAL = 0x0020
    RELAY_LOG = 0x0040
    IGNORABLE = 0x0080
    NO_FILTER = 0x0100
    MTS_ISOLATE = 0x0200


class ChecksumAlg(enum.IntEnum):
    OFF = 0
    CRC32 = 1
    UNDEF = 255


class ColumnType(enum.IntEnum):
    """enum_field_types, as column types appear in Table_map events."""

    DECIMAL = 0
    TINY = 1
    SHORT = 2
    LONG = 3
    FLOAT = 4
    DOUBLE = 5
    NULL = 6
    TIMESTAMP = 7
    LONGLONG = 8
    INT24 = 9
    DATE = 10
    TIME = 11
    DATETIME = 12
    YEAR = 13
    NEWDATE = 14
    VARCHAR = 15
    BIT = 16
    TIMESTAMP2 = 17
    DATETIME2 = 18
    TIME2 = 19
    TYPED_ARRAY = 20
    VECTOR = 242
    INVALID = 243
    BOOL = 244
    JSON = 245
    NEWDECIMAL = 246
    ENUM = 247
    SET = 248
    TINY_BLOB = 249
    MEDIUM_BLOB = 250
    LONG_BLOB = 251
    BLOB = 252
    VAR_STRING = 253
    STRING = 254
    GEOMETRY = 255


#: Post-header lengths MySQL 8.4 writes in its Format_description event (index = type).
#: Type 40 carries the value 40 instead of 0, as every 8.0-9.x server writes it.
POST_HEADER_LENGTHS_84: tuple[int, ...] = (
    0, 0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0,
    0, 10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0, 0,
)  # fmt: skip
