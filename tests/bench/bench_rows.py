"""Row decoding throughput of the compiled row decoders.

Encodes N rows of sysbench's ``sbtest`` shape (id INT, k INT, c CHAR(120), pad CHAR(60),
utf8mb4) and of a table with one column of every type into WRITE_ROWS events of about 8 KiB
(as a source writes them), then decodes them with ``decode_rows_event`` and prints rows/s,
next to the same rows decoded by the plain interpreter (one generic read per value) and the
encoder's rate.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_rows.py [--rows 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO / "src") not in sys.path:
    sys.path.insert(0, str(_REPO / "src"))

from spark_replica.applier_core.binlog.constants import ColumnType as T  # noqa: E402
from spark_replica.applier_core.binlog.constants import EventType  # noqa: E402
from spark_replica.applier_core.binlog.events import make_header  # noqa: E402
from spark_replica.applier_core.binlog.packing import Reader  # noqa: E402
from spark_replica.applier_core.binlog.rows import (  # noqa: E402
    RowsEvent,
    TableMapEvent,
    decode_rows_event,
    encode_rows_event,
    make_column,
)
from spark_replica.applier_core.binlog.rows.partial import read_image  # noqa: E402
from spark_replica.applier_core.binlog.rows.values import codec_for  # noqa: E402

UTF8MB4 = 255
EVENT_BYTES = 8192


def sbtest_table() -> TableMapEvent:
    columns = (
        make_column(0, T.LONG, nullable=False, name="id"),
        make_column(1, T.LONG, nullable=False, name="k"),
        make_column(2, T.STRING, length=480, collation=UTF8MB4, nullable=False, name="c"),
        make_column(3, T.STRING, length=240, collation=UTF8MB4, nullable=False, name="pad"),
    )
    return TableMapEvent(
        header=make_header(EventType.TABLE_MAP), table_id=1, schema="sbtest", table="sbtest1",
        columns=columns, primary_key=(0,),
    )  # fmt: skip


def _digits(rng: random.Random, groups: int) -> str:
    return "-".join(f"{rng.randrange(10**11):011d}" for _ in range(groups))


def sbtest_rows(rng: random.Random, count: int) -> list[tuple[Any, ...]]:
    return [
        (i + 1, rng.randrange(1, 10**6), _digits(rng, 10), _digits(rng, 5)) for i in range(count)
    ]


def all_types_table() -> TableMapEvent:
    specs: list[tuple[int, dict[str, Any]]] = [
        (T.LONGLONG, {"nullable": False}), (T.TINY, {}), (T.SHORT, {"unsigned": True}),
        (T.INT24, {}), (T.LONG, {"unsigned": True}), (T.LONGLONG, {"unsigned": True}),
        (T.YEAR, {}), (T.FLOAT, {}), (T.DOUBLE, {}),
        (T.NEWDECIMAL, {"precision": 12, "scale": 3}), (T.BIT, {"bits": 12}), (T.DATE, {}),
        (T.TIME2, {"fsp": 6}), (T.DATETIME2, {"fsp": 6}), (T.TIMESTAMP2, {"fsp": 3}),
        (T.STRING, {"length": 40, "collation": UTF8MB4}),
        (T.VARCHAR, {"length": 256, "collation": UTF8MB4}),
        (T.STRING, {"length": 4, "collation": 63}),
        (T.VARCHAR, {"length": 16, "collation": 63}), (T.BLOB, {"collation": UTF8MB4}),
        (T.BLOB, {"collation": 63}),
        (T.STRING, {"real_type": T.ENUM, "members": ("new", "paid", "shipped"),
                    "collation": UTF8MB4}),
        (T.STRING, {"real_type": T.SET, "members": ("a", "b", "c"), "collation": UTF8MB4}),
        (T.JSON, {}),
    ]  # fmt: skip
    columns = tuple(make_column(i, t, name=f"c{i}", **kw) for i, (t, kw) in enumerate(specs))
    return TableMapEvent(
        header=make_header(EventType.TABLE_MAP), table_id=2, schema="bench", table="all_types",
        columns=columns, primary_key=(0,),
    )  # fmt: skip


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _text(rng: random.Random, size: int) -> str:
    return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz0123456789 -", k=size))


def all_types_row(rng: random.Random, key: int) -> tuple[Any, ...]:
    moment = datetime(2000, 1, 1) + timedelta(seconds=rng.randrange(10**9))
    return (
        key, rng.randrange(-128, 128), rng.randrange(65536), rng.randrange(-(1 << 23), 1 << 23),
        rng.randrange(1 << 32), rng.randrange(1 << 64), rng.randrange(1901, 2156),
        rng.randrange(-(1 << 20), 1 << 20) / 4.0, rng.uniform(-1e9, 1e9),
        Decimal(rng.randrange(-(10**12) + 1, 10**12)).scaleb(-3), rng.randrange(4096),
        date(2000, 1, 1) + timedelta(days=rng.randrange(10000)),
        timedelta(microseconds=rng.randrange(-(10**12), 10**12)),
        moment.replace(microsecond=rng.randrange(10**6)),
        EPOCH + timedelta(seconds=rng.randrange(1, 2**31), milliseconds=rng.randrange(1000)),
        _text(rng, rng.randrange(10)), _text(rng, rng.randrange(64)), rng.randbytes(4),
        rng.randbytes(rng.randrange(16)), _text(rng, rng.randrange(200)),
        rng.randbytes(rng.randrange(200)), rng.choice(("new", "paid", "shipped")),
        ",".join(m for m in "abc" if rng.random() < 0.5),
        f'{{"id": {key}, "ok": true, "tags": ["{_text(rng, 5)}", "{_text(rng, 3)}"]}}',
    )  # fmt: skip


def write_events(table: TableMapEvent, rows: list[tuple[Any, ...]]) -> list[bytes]:
    """WRITE_ROWS bodies of about EVENT_BYTES each."""
    width = len(table.columns)
    probe = _event(table, rows[:1], width)
    per_row = max(1, len(encode_rows_event(probe, table)) - 12)
    batch = max(1, EVENT_BYTES // per_row)
    return [
        encode_rows_event(_event(table, rows[i : i + batch], width), table)
        for i in range(0, len(rows), batch)
    ]


def _event(table: TableMapEvent, rows: list[tuple[Any, ...]], width: int) -> RowsEvent:
    return RowsEvent(
        header=make_header(EventType.WRITE_ROWS), table_id=table.table_id, extra_data=b"",
        width=width, columns_present=(1 << width) - 1, rows=rows, table_map=table,
    )  # fmt: skip


def decode_all(table: TableMapEvent, bodies: list[bytes]) -> int:
    header = make_header(EventType.WRITE_ROWS)
    maps = {table.table_id: table}
    count = 0
    for body in bodies:
        count += len(decode_rows_event(header, memoryview(body), 10, maps).rows)
    return count


def interpret_all(table: TableMapEvent, bodies: list[bytes]) -> int:
    """The same rows through the generic, uncompiled reader (a baseline)."""
    width = len(table.columns)
    codecs = {i: codec_for(c) for i, c in enumerate(table.columns)}
    count = 0
    for body in bodies:
        reader = Reader(body, 10 + 1 + (width + 7) // 8)
        while reader.remaining:
            read_image(reader, codecs, width)
            count += 1
    return count


def _best(function: Callable[[], int], repeat: int) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = function()
        best = min(best, time.perf_counter() - start)
    return best, count


def bench(name: str, table: TableMapEvent, rows: list[tuple[Any, ...]], repeat: int) -> None:
    encode_time, bodies = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        bodies = write_events(table, rows)
        encode_time = min(encode_time, time.perf_counter() - start)
    size = sum(len(b) for b in bodies)
    compiled, count = _best(lambda: decode_all(table, bodies), repeat)
    assert count == len(rows)
    interpreted, _ = _best(lambda: interpret_all(table, bodies), repeat)
    print(f"{name}: {len(rows)} rows in {len(bodies)} events, {size / len(rows):.0f} bytes/row")
    rate, per_row, mib = len(rows) / compiled, compiled / len(rows) * 1e6, size / compiled / 2**20
    print(f"  compiled decoder   {rate:>12,.0f} rows/s  ({per_row:.2f} us/row, {mib:.0f} MiB/s)")
    print(f"  interpreter        {len(rows) / interpreted:>12,.0f} rows/s  "
          f"(compiled is {interpreted / compiled:.1f}x faster)")  # fmt: skip
    print(f"  encoder            {len(rows) / encode_time:>12,.0f} rows/s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows per table (default 200000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if args.rows < 1 or args.repeat < 1:
        parser.error("--rows and --repeat must be at least 1")
    rng = random.Random(args.seed)
    print(f"machine: nproc={os.cpu_count()} python={platform.python_version()} "
          f"({platform.python_implementation()}) {platform.machine()}")  # fmt: skip
    bench("sbtest (INT, INT, CHAR(120), CHAR(60))", sbtest_table(), sbtest_rows(rng, args.rows),
          args.repeat)  # fmt: skip
    all_rows = [all_types_row(rng, i) for i in range(max(1, args.rows // 4))]
    bench(f"all types ({len(all_types_table().columns)} columns)", all_types_table(), all_rows,
          args.repeat)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
