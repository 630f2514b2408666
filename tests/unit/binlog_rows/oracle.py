"""``mysqlbinlog -v --base64-output=DECODE-ROWS`` (MariaDB 10.11's) as an independent oracle.

``run_mysqlbinlog`` parses its ``### INSERT/UPDATE/DELETE`` blocks into rows of
``{column number: printed value}``; ``printed`` renders one of the codec's decoded values the
way that program prints the column, so the two can be compared byte for byte. What it prints
(``log_event_print_value`` in MariaDB's ``sql/log_event_client.cc``), and so the
normalisation applied here:

* TINYINT..BIGINT: the signed reading, then `` (unsigned)`` when that is negative; it ignores
  the SIGNEDNESS metadata, so both readings are derived from the decoded value and its width.
* FLOAT ``%-20g`` (6 significant digits, padded: trailing blanks are stripped), DOUBLE
  ``%-.20g``, DECIMAL with its scale.
* YEAR ``%04d`` of byte + 1900 (the zero year prints as 1900).
* DATE ``'YYYY:MM:DD'`` (colons), DATETIME/TIME quoted with the column's fraction digits,
  TIMESTAMP as seconds since the epoch (``.fraction`` when fsp > 0), unquoted.
* BIT ``b'0101'`` with one digit per bit; ENUM the 1-based index; SET its stored
  (little-endian) bytes as ``b'...'``, 8 digits per byte, first byte first.
* old TIMESTAMP with ``%d`` (seconds above 2**31-1 print negative).
* Strings, BLOBs and GEOMETRY (SRID included) as quoted raw bytes, bytes 0x00-0x1F as
  ``\\xNN``.
* JSON and VECTOR columns are not understood: it stops at the first such rows event.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from spark_replica.applier_core.binlog.constants import ColumnType as T
from spark_replica.applier_core.binlog.rows import ABSENT, ColumnSpec, Geometry, RowKind
from spark_replica.applier_core.binlog.rows.charsets import TEXT_CODECS
from spark_replica.applier_core.binlog.rows.temporal import EPOCH

MYSQLBINLOG = shutil.which("mysqlbinlog") or shutil.which("mariadb-binlog")


@dataclass
class OracleRow:
    kind: str
    table: str
    before: dict[int, bytes] = field(default_factory=dict)
    after: dict[int, bytes] = field(default_factory=dict)


_STATEMENT = re.compile(rb"^### (INSERT INTO|UPDATE|DELETE FROM) (\S+)$")
_VALUE = re.compile(rb"^###   @(\d+)=(.*)$")


def run_mysqlbinlog(path: Path) -> tuple[list[OracleRow], int]:
    """(rows printed, exit status)."""
    assert MYSQLBINLOG is not None
    done = subprocess.run(
        [MYSQLBINLOG, "-v", "--base64-output=DECODE-ROWS", str(path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    rows: list[OracleRow] = []
    target: dict[int, bytes] | None = None
    kinds = {b"INSERT INTO": "insert", b"UPDATE": "update", b"DELETE FROM": "delete"}
    for line in done.stdout.split(b"\n"):
        if match := _STATEMENT.match(line):
            rows.append(OracleRow(kinds[match[1]], match[2].decode()))
            target = rows[-1].after if match[1] == b"INSERT INTO" else rows[-1].before
        elif line == b"### WHERE" and rows:
            target = rows[-1].before
        elif line == b"### SET" and rows:
            target = rows[-1].after
        elif (match := _VALUE.match(line)) and target is not None:
            target[int(match[1])] = match[2].rstrip(b" ")
    return rows, done.returncode


def _quoted(raw: bytes) -> bytes:
    out = bytearray(b"'")
    for byte in raw:
        out += b"\\x%02x" % byte if byte <= 0x1F else bytes((byte,))
    return bytes(out) + b"'"


_INT_BITS: dict[int, int] = {T.TINY: 8, T.SHORT: 16, T.INT24: 24, T.LONG: 32, T.LONGLONG: 64}


def _integer(value: int, bits: int) -> bytes:
    unsigned = value & ((1 << bits) - 1)
    signed = unsigned - (1 << bits) if unsigned >> (bits - 1) else unsigned
    return f"{signed} ({unsigned})".encode() if signed < 0 else str(signed).encode()


def _frac(micro: int, fsp: int) -> str:
    return f".{micro:06d}"[: fsp + 1] if fsp else ""


def _time(value: timedelta, fsp: int) -> str:
    total = value // timedelta(microseconds=1)
    sign = "-" if total < 0 else ""
    seconds, micro = divmod(abs(total), 1000000)
    hours, rest = divmod(seconds, 3600)
    return f"{sign}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}{_frac(micro, fsp)}"


def _datetime_text(value: Any, fsp: int) -> str:
    if isinstance(value, str):
        return value
    return f"{value.year:04d}-{value:%m-%d %H:%M:%S}{_frac(value.microsecond, fsp)}"


def printed(spec: ColumnSpec, value: Any) -> bytes:
    """How mysqlbinlog prints ``value`` (a decoded value of column ``spec``)."""
    if value is None:
        return b"NULL"
    kind = spec.real_type
    fsp = spec.fsp or 0
    if kind in _INT_BITS:
        return _integer(value, _INT_BITS[kind])
    if kind == T.YEAR:
        return b"%04d" % (value if value else 1900)
    if kind == T.FLOAT:
        return b"%g" % value
    if kind == T.DOUBLE:
        return b"%.20g" % value
    if kind == T.NEWDECIMAL:
        assert isinstance(value, Decimal)
        return format(value, "f").encode()
    if kind == T.BIT:
        return b"b'" + format(value, f"0{spec.bits}b").encode() + b"'"
    if kind == T.ENUM:
        names = spec.members
        return str(value if names is None else ("", *names).index(value)).encode()
    if kind == T.SET:
        names = spec.members
        bits = value if names is None else sum(1 << names.index(m) for m in value.split(",") if m)
        stored = bits.to_bytes(spec.pack_length or 1, "little")
        return b"b'" + "".join(format(byte, "08b") for byte in stored).encode() + b"'"
    if kind == T.DATE:
        if isinstance(value, date):
            return b"'%04d:%02d:%02d'" % (value.year, value.month, value.day)
        return b"'" + value.replace("-", ":").encode() + b"'"
    if kind in (T.TIME, T.TIME2):
        return _quoted(_time(value, fsp).encode())
    if kind in (T.DATETIME, T.DATETIME2):
        return _quoted(_datetime_text(value, fsp).encode())
    if kind in (T.TIMESTAMP, T.TIMESTAMP2):
        if isinstance(value, str):
            return b"0" + _frac(0, fsp).encode()
        micro = (value - EPOCH) // timedelta(microseconds=1)
        seconds = micro // 1000000
        if kind == T.TIMESTAMP and seconds >= 1 << 31:  # printed with %d
            seconds -= 1 << 32
        return f"{seconds}{_frac(micro % 1000000, fsp)}".encode()
    if kind == T.GEOMETRY:
        assert isinstance(value, Geometry)
        return _quoted(value.srid.to_bytes(4, "little") + value.wkb)
    if isinstance(value, str):
        return _quoted(TEXT_CODECS[spec.charset or ""][1](value))
    if isinstance(value, bytes):
        return _quoted(value)
    raise AssertionError(f"no mysqlbinlog form for {spec.describe()} value {value!r}")


def image(columns: tuple[ColumnSpec, ...], row: tuple[Any, ...]) -> dict[int, bytes]:
    return {i + 1: printed(columns[i], v) for i, v in enumerate(row) if v is not ABSENT}


def expected_rows(events: list[Any]) -> list[OracleRow]:
    """The rows of decoded rows events in the oracle's shape."""
    out: list[OracleRow] = []
    for event in events:
        table = event.table_map
        name = f"`{table.schema}`.`{table.table}`"
        for row in event.rows:
            entry = OracleRow(event.kind.value, name)
            if event.kind is RowKind.UPDATE:
                entry.before = image(table.columns, row[0])
                entry.after = image(table.columns, row[1])
            elif event.kind is RowKind.INSERT:
                entry.after = image(table.columns, row)
            else:
                entry.before = image(table.columns, row)
            out.append(entry)
    return out
