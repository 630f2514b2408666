"""The status variables of a Query event (mysql-reference §7.5): their parsed form,
:class:`QueryStatus`, and the layout of the block that carries them."""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from typing import Literal

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.packing import Reader
from spark_replica.applier_core.binlog.text import Charset

_U16 = struct.Struct("<H")

# Collation ids whose character set is utf8mb3/utf8mb4 (MySQL 8.x and MariaDB numbering).
_UTF8_COLLATIONS = frozenset(
    {33, 45, 46, 76, 83, 223, *range(192, 216), *range(224, 248), *range(255, 324)}
)
# latin1 (MySQL's latin1 is cp1252 with the five undefined bytes mapped to C1 controls) and
# ascii, which latin1 decodes correctly.
_LATIN1_COLLATIONS = frozenset({5, 8, 15, 31, 47, 48, 49, 94, 11, 65})


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
