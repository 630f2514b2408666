"""A flush's appended rows written two ways: Spark's ``INSERT INTO`` of an Arrow table, and
Parquet data files written by pyarrow and committed through Iceberg's API
(``storage/spark/data_files.py``), the engine's way where the warehouse is local.

Two tables of the same shape in one JDBC catalog on SQLite take the same ``--flushes``
batches of ``--rows`` new rows each, through the engine's ``append_rows`` (engine rows to
Arrow included), the two ways alternating batch by batch after one untimed batch each (the
JVM compiles its write path during the first). Each batch is timed: wall time, the driver
JVM's CPU, and the flushing thread's CPU. With ``--busy`` a Python thread spins beside the
whole run, as the applier's workers do in the server: the GIL is theirs whenever the
flushing thread lets it go.

Shapes: ``salaries`` (the employees database's largest table: ``emp_no INT``, ``salary INT``,
``from_date DATE``, ``to_date DATE``, key ``(emp_no, from_date)``) and ``sbtest``
(``id INT`` key, ``k INT``, ``c CHAR(120)``, ``pad CHAR(60)``).

Checked (exit code 1): both tables hold the rows the batches made, row by row.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_data_files.py [--shape salaries] [--rows 50000]
        [--flushes 10] [--busy] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.bench_spark_engine import jvm_pid  # noqa: E402
from tests.bench.benchkit import load_average, machine_line, positive_int  # noqa: E402
from tests.bench.profile_split import cpu_seconds  # noqa: E402

from spark_replica.applier_core.storage.interface import (  # noqa: E402
    Column,
    Row,
    TableDef,
    TableRef,
)
from spark_replica.applier_core.storage.spark.catalog import IcebergCatalog  # noqa: E402
from spark_replica.applier_core.storage.spark.data_files import (  # noqa: E402
    data_file_appender,
)
from spark_replica.applier_core.storage.spark.iceberg import catalog_options  # noqa: E402
from spark_replica.applier_core.storage.spark.session import get_spark  # noqa: E402
from spark_replica.applier_core.storage.spark.state import StoredTable  # noqa: E402
from spark_replica.applier_core.storage.spark.table_writes import append_rows  # noqa: E402

WAYS = ("sql", "files")
SUMMARY = {"replica.batch": "1", "replica.gtids": ""}
_DAY0 = date(1985, 1, 1)


def _salaries(start: int, count: int, rng: random.Random) -> list[Row]:
    rows = []
    for number in range(start, start + count):
        since = _DAY0 + timedelta(days=rng.randrange(6000))
        since += timedelta(days=number % 10 * 400)
        salary = rng.randrange(38000, 160000)
        rows.append((10001 + number // 10, salary, since, since + timedelta(days=365)))
    return rows


def _sbtest(start: int, count: int, rng: random.Random) -> list[Row]:
    def digits(groups: int) -> str:
        return "-".join(f"{rng.randrange(10**11):011d}" for _ in range(groups))

    return [
        (n, rng.randrange(1, 1 << 20), digits(10), digits(5)) for n in range(start, start + count)
    ]


SHAPES: dict[str, tuple[TableDef, Callable[[int, int, random.Random], list[Row]]]] = {
    "salaries": (
        TableDef(
            (
                Column("emp_no", "INT", nullable=False),
                Column("salary", "INT", nullable=False),
                Column("from_date", "DATE", nullable=False),
                Column("to_date", "DATE"),
            ),
            primary_key=(0, 2),
        ),  # fmt: skip
        _salaries,
    ),
    "sbtest": (
        TableDef(
            (
                Column("id", "INT", nullable=False),
                Column("k", "INT", nullable=False),
                Column("c", "CHAR(120)", nullable=False),
                Column("pad", "CHAR(60)", nullable=False),
            ),
            primary_key=(0,),
        ),  # fmt: skip
        _sbtest,
    ),
}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="salaries")
    parser.add_argument("--rows", type=positive_int, default=50_000)
    parser.add_argument("--flushes", type=positive_int, default=10)
    parser.add_argument("--busy", action="store_true", help="a Python thread spins beside")
    parser.add_argument("--json", metavar="PATH")
    return parser.parse_args(argv)


@contextmanager
def busy_thread(enabled: bool) -> Iterator[None]:
    """A Python thread that spins (holding the GIL whenever it can) while the block runs."""
    stop = threading.Event()

    def spin() -> None:
        total = 0
        while not stop.is_set():
            for number in range(2000):
                total += number

    thread = threading.Thread(target=spin, name="bench-busy", daemon=True)
    if enabled:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        if enabled:
            thread.join()


def run(spark: Any, work: Path, args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    definition, make = SHAPES[args.shape]
    # A catalog stays loaded in a session once used: each run names its own.
    catalog = f"bench_files_{uuid.uuid4().hex[:8]}"
    options = catalog_options(catalog, f"sqlite:///{work / 'meta.db'}", work / "warehouse")
    options[f"spark.sql.catalog.{catalog}.cache-enabled"] = "false"
    for key, value in options.items():
        spark.conf.set(key, value)
    catalogs = {way: IcebergCatalog(spark, catalog, str(work / "warehouse")) for way in WAYS}
    data_file_appender(catalogs["sql"]).enabled = False  # the INSERT INTO path
    tables = {}
    for number, way in enumerate(WAYS, start=1):
        ref = TableRef("bench", f"{args.shape}_{way}")
        catalogs[way].create(ref, definition, number)
        tables[way] = StoredTable(number, ref, definition, catalogs[way].current_snapshot(ref))
    jvm = jvm_pid(spark)
    rng = random.Random(7)
    made: list[Row] = []
    figures: dict[str, dict[str, list[float]]] = {
        way: {"wall": [], "jvm_cpu": [], "thread_cpu": []} for way in WAYS
    }
    with busy_thread(args.busy):
        for flush in range(args.flushes + 1):
            rows = make(flush * args.rows, args.rows, rng)
            made += rows
            for way in WAYS if flush % 2 else reversed(WAYS):
                jvm_before = cpu_seconds(jvm) if jvm else 0.0
                thread_before, wall_before = time.thread_time(), time.perf_counter()
                append_rows(spark, catalogs[way], tables[way], rows, SUMMARY,
                            chunk_rows=len(rows))  # fmt: skip
                wall = time.perf_counter() - wall_before
                if flush:  # the first batch of each way warms the JVM up
                    figures[way]["wall"].append(wall)
                    figures[way]["thread_cpu"].append(time.thread_time() - thread_before)
                    figures[way]["jvm_cpu"].append(
                        cpu_seconds(jvm) - jvm_before if jvm else float("nan")
                    )
    failures = []
    want = sorted(made)
    for way in WAYS:
        got = [tuple(row) for row in spark.table(catalogs[way].sql_name(tables[way].ref))
               .collect()]  # fmt: skip
        if sorted(got) != want:
            failures.append(f"{way}: {len(got):,} rows read, not the {len(want):,} appended")
    for key in options:
        spark.conf.unset(key)
    return figures, failures


def report(figures: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    medians = {way: {name: statistics.median(values) for name, values in each.items()}
               for way, each in figures.items()}  # fmt: skip
    print(f"{args.shape}: {args.flushes} batches of {args.rows:,} new rows"
          f"{', a busy Python thread beside' if args.busy else ''} (medians)")  # fmt: skip
    print(f"{'way':8}{'wall ms':>10}{'JVM CPU ms':>12}{'thread CPU ms':>15}{'rows/s':>12}")
    for way, each in medians.items():
        print(f"{way:8}{each['wall'] * 1000:10.0f}{each['jvm_cpu'] * 1000:12.0f}"
              f"{each['thread_cpu'] * 1000:15.0f}{args.rows / each['wall']:12,.0f}")  # fmt: skip
    ratios = {name: medians["sql"][name] / max(1e-9, medians["files"][name])
              for name in ("wall", "jvm_cpu")}  # fmt: skip
    print(
        f"files vs sql: {ratios['wall']:.1f}x less wall time, {ratios['jvm_cpu']:.1f}x less JVM CPU"
    )
    return {"medians": medians, "ratios": ratios}


def main(argv: Sequence[str] | None = None, spark: Any | None = None) -> int:
    """``spark``: a session to use (by default the project's)."""
    args = parse_args(argv)
    print(machine_line(), f"load average {load_average()}", flush=True)
    session = get_spark() if spark is None else spark
    with tempfile.TemporaryDirectory(prefix="bench-data-files-") as tmp:
        figures, failures = run(session, Path(tmp), args)
    summary = report(figures, args)
    for failure in failures:
        print(f"CHECK FAILED: {failure}")
    if not failures:
        print("checks: both tables hold the rows the batches made")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "benchmark": "data_files", "machine": machine_line(),
            "load_average_end": load_average(), "arguments": vars(args),
            "figures": figures, **summary,
        }, indent=1))  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
