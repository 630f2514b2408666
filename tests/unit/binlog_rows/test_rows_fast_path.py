"""The rows decoder's fast path: a rows event whose head (flags, width, bitmaps) a table has
seen before is decoded from the remembered plan, and must give exactly what the general
decoder gives, whatever the event's other bytes say."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.binlog.codecs import registry as codec_module
from spark_replica.applier_core.binlog.codecs.registry import decode_event
from spark_replica.applier_core.binlog.constants import ColumnType as T
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import DEFAULT_FDE
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.binlog.rows import ABSENT, RowsEvent, TableMapEvent, make_column
from spark_replica.applier_core.binlog.rows import rows as rows_module
from spark_replica.applier_core.binlog.rows.rows import STMT_END_F, encode_rows_event
from spark_replica.tools.generator.simulate import WorkloadSpec, simulate
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.binlog import FIXTURES
from tests.unit.binlog_rows.builders import rows_event, table

_HEADER = struct.Struct("<IBIIIH")
FDE = DEFAULT_FDE


def _columns() -> tuple[Any, ...]:
    return (
        make_column(0, T.LONG),
        make_column(1, T.VARCHAR, length=40, collation=255),
        make_column(2, T.LONGLONG, unsigned=True),
    )


def frame(type_code: int, body: bytes) -> bytes:
    """A whole event: header, body, CRC32."""
    head = _HEADER.pack(1_700_000_000, type_code, 1, 19 + len(body) + 4, 0, 0)
    return head + body + struct.pack("<I", zlib.crc32(head + body))


def encoded(event: RowsEvent, table_map: TableMapEvent) -> bytes:
    return frame(event.header.type_code, encode_rows_event(event, table_map))


def decode(data: bytes, table_map: TableMapEvent) -> RowsEvent:
    event = decode_event(data, FDE, checksum=True, table_maps={table_map.table_id: table_map})
    assert isinstance(event, RowsEvent)
    return event


@pytest.fixture
def t() -> TableMapEvent:
    """A table map with a definition of its own, so no plan exists yet."""
    table_map = table(_columns(), table_id=7)
    assert not table_map.definition.plans
    return table_map


def test_a_repeated_head_is_decoded_from_its_plan(t: TableMapEvent) -> None:
    first = rows_event(t, [((1, "a", 10), (1, "b", 11))], "update", flags=STMT_END_F)
    second = rows_event(t, [((2, "long text " * 3, 2**64 - 1), (2, None, 0))], "update",
                        flags=STMT_END_F)  # fmt: skip
    assert decode(encoded(first, t), t) == first
    assert EventType.UPDATE_ROWS in t.definition.plans
    again = decode(encoded(second, t), t)
    assert again == second
    assert again.rows == [((2, "long text " * 3, 2**64 - 1), (2, None, 0))]
    assert again.table_map is t and again.table_id == 7


def test_the_fast_path_gives_what_the_general_path_gives(t: TableMapEvent) -> None:
    events = [
        rows_event(t, [(i, f"row {i}", i * 3) for i in range(n)], kind, flags=STMT_END_F)
        for n in (1, 3, 5)
        for kind in ("insert", "delete")
    ]
    fast = [decode(encoded(e, t), t) for e in events + events]
    t.definition.plans.clear()
    general = [decode(encoded(e, t), t) for e in events + events][: len(events)]
    assert fast[len(events) :] == general == events


@pytest.mark.parametrize(
    "variant",
    [
        {"flags": 0},
        {"extra_data": b"\x00\x01\x02"},
        {"present": 0b101},
        {"kind": "insert_v1"},
    ],
    ids=["other flags", "extra data", "narrower image", "v1 event"],
)
def test_other_heads_of_a_planned_table_decode_in_full(
    t: TableMapEvent, variant: dict[str, Any]
) -> None:
    decode(encoded(rows_event(t, [(1, "x", 2)], "insert", flags=STMT_END_F), t), t)
    options = dict(variant)
    kind = options.pop("kind", "insert")
    options.setdefault("flags", STMT_END_F)
    row = (5, ABSENT, 6) if "present" in options else (5, "y", 6)
    other = rows_event(t, [row], kind, **options)
    assert decode(encoded(other, t), t) == other


def test_a_truncated_row_after_a_plan_is_a_binlog_error(t: TableMapEvent) -> None:
    event = rows_event(t, [(1, "abcdef", 2)], "insert", flags=STMT_END_F)
    decode(encoded(event, t), t)
    body = encode_rows_event(event, t)
    for cut in range(1, 14):
        with pytest.raises(BinlogError, match="row 1"):
            decode(frame(EventType.WRITE_ROWS, body[:-cut]), t)


def test_a_bad_checksum_after_a_plan_is_still_refused(t: TableMapEvent) -> None:
    event = rows_event(t, [(1, "abc", 2)], "insert", flags=STMT_END_F)
    data = encoded(event, t)
    decode(data, t)
    corrupt = bytearray(data)
    corrupt[-6] ^= 0x01
    with pytest.raises(BinlogError, match="checksum mismatch"):
        decode(bytes(corrupt), t)


def _rows_of(paths: list[Path]) -> Iterator[RowsEvent]:
    for path in paths:
        try:
            for _, _, event in BinlogFileReader(path):
                if isinstance(event, RowsEvent):
                    yield event
        except BinlogError:
            continue


def _inputs(tmp_path: Path) -> list[Path]:
    """Every fixture, and a generated stream of both schemas (many events per table)."""
    paths = [p for p in sorted(FIXTURES.iterdir()) if p.suffix not in (".md", ".txt")]
    for schema in ("sbtest", "alltypes"):
        spec = WorkloadSpec(schema=schema, transactions=60, rows_per_table=8, seed=3)
        transactions, _ = simulate(spec)
        paths += write_binlogs(transactions, tmp_path / schema, server_uuid=spec.server_uuid)
    return paths


def test_every_stream_decodes_the_same_on_the_general_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    paths = _inputs(tmp_path)
    fast = list(_rows_of(paths))
    with monkeypatch.context() as patch:
        patch.setattr(codec_module, "_ROWS_DECODER", rows_module._decode_rows_event)
        general = list(_rows_of(paths))
    assert len(fast) > 400
    assert fast == general
