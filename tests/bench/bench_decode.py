"""Decode throughput of whole binary log files, next to mariadb-binlog on the same files.

Generates (or reuses, with ``--dir``) a binlog set of at least ``--rows`` row changes of
sysbench ``oltp_write_only`` shape (4 ``sbtest`` tables, transactions of 4 row changes from 8
clients: about 70% UPDATE, 15% INSERT, 15% DELETE, after a load of the tables in batches of
100 rows), and a smaller set over the ``alltypes`` schema (one column of every type, the
worst case per row). Each set is then read three ways, best of ``--repeat`` runs each:

* framing only: ``read_raw_events`` (the ceiling of our Python file I/O);
* full decode: ``BinlogFileReader`` (framing, CRC32 check, every event decoded, rows too);
* ``mariadb-binlog -v --base64-output=DECODE-ROWS FILES > /dev/null``: a C decoder that
  decodes sbtest rows fully, our practical ceiling. It stops at the first MySQL JSON
  column, so it runs on the sbtest set only.

The decoded row counts (ours, and mariadb-binlog's from one untimed run) must equal the
generated ones; the exit code is 1 when they do not.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_decode.py [--rows 1000000] [--alltypes-rows 100000]
        [--dir CACHE_DIR] [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.benchkit import cache_root, machine_line  # noqa: E402

from spark_replica.applier_core.binlog.constants import EventType  # noqa: E402
from spark_replica.applier_core.binlog.file import (  # noqa: E402
    BinlogFileReader,
    read_raw_events,
)
from spark_replica.applier_core.binlog.rows import RowsEvent  # noqa: E402
from spark_replica.tools.generator.schema import TABLE_FACTORIES  # noqa: E402
from spark_replica.tools.generator.simulate import (  # noqa: E402
    GeneratedTransaction,
    WorkloadSpec,
    simulate,
)
from spark_replica.tools.generator.writer import write_binlogs  # noqa: E402

DEFAULT_ROWS = 1_000_000
DEFAULT_ALLTYPES_ROWS = 100_000
QUICK_ROWS = 2_000
QUICK_ALLTYPES_ROWS = 300
TARGET_ROWS_PER_SECOND = 150_000
TABLES = 4
CHANGES_PER_TRANSACTION = 4
CLIENTS = 8
#: sysbench's default table size; the load is ~1% of the row changes below that.
MAX_ROWS_PER_TABLE = 10_000
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
BINLOG_BASE = "binlog"
MARIADB_BINLOG = "mariadb-binlog"
MARIADB_ARGS = ("-v", "--base64-output=DECODE-ROWS")
KINDS = ("insert", "update", "delete")
_KIND_OF_TYPE = {
    EventType.WRITE_ROWS: "insert", EventType.WRITE_ROWS_V1: "insert",
    EventType.UPDATE_ROWS: "update", EventType.UPDATE_ROWS_V1: "update",
    EventType.PARTIAL_UPDATE_ROWS: "update",
    EventType.DELETE_ROWS: "delete", EventType.DELETE_ROWS_V1: "delete",
}  # fmt: skip
#: Line prefixes of ``mariadb-binlog -v``'s pseudo-SQL, one per decoded row.
_MARIADB_ROW_LINES = {b"### INSERT INTO ": "insert", b"### UPDATE ": "update",
                      b"### DELETE FROM ": "delete"}  # fmt: skip
MB = 1_000_000

T = TypeVar("T")


# -- data sets -------------------------------------------------------------------------------
def plan_spec(schema: str, rows: int) -> WorkloadSpec:
    """A workload of at least ``rows`` row changes (load included) in sysbench's shape.

    Rows are picked uniformly (``conflict_share=0``): the generator's hot-row picks sort a
    whole table each time, which would dominate generation, and lock waits do not change the
    bytes to decode.
    """
    rows_per_table = max(1, min(MAX_ROWS_PER_TABLE, rows // (100 * TABLES)))
    load = rows_per_table * TABLES
    # A transaction can lose a change (a row picked twice); 1% spare covers it.
    transactions = max(1, math.ceil(max(0, rows - load) / CHANGES_PER_TRANSACTION * 1.01))
    return WorkloadSpec(
        schema=schema,
        tables=TABLES,
        rows_per_table=rows_per_table,
        transactions=transactions,
        changes_per_transaction=CHANGES_PER_TRANSACTION,
        clients=CLIENTS,
        conflict_share=0.0,
    )


def _spec_fields(spec: WorkloadSpec) -> dict[str, Any]:
    """The spec, and the tables its schema makes (a changed schema means a new set)."""
    values = {f.name: getattr(spec, f.name) for f in fields(spec)}
    values["tables_ddl"] = TABLE_FACTORIES[spec.schema](spec.database, 1).create_statement()
    return {k: v.value if isinstance(v, Enum) else v for k, v in values.items()}


def _change_counts(transactions: Sequence[GeneratedTransaction]) -> dict[str, int]:
    counts = Counter(change.kind for trx in transactions for change in trx.changes)
    return {kind: counts[kind] for kind in KINDS}


@dataclass(frozen=True, slots=True)
class DataSet:
    name: str
    spec: WorkloadSpec
    directory: Path
    files: tuple[Path, ...]
    #: Generated row changes by kind (insert, update, delete).
    changes: dict[str, int]
    transactions: int
    #: Seconds to simulate and to write, or None when reused from the cache.
    simulate_seconds: float | None
    write_seconds: float | None

    @property
    def rows(self) -> int:
        return sum(self.changes.values())

    @property
    def size(self) -> int:
        return sum(path.stat().st_size for path in self.files)


def _read_manifest(directory: Path, spec: WorkloadSpec) -> dict[str, Any] | None:
    """The manifest of a complete set planned as ``spec``, or None."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
        if manifest.get("format") != MANIFEST_FORMAT or manifest["planned"] != _spec_fields(spec):
            return None
        int(manifest["spec_transactions"])
        for entry in manifest["files"]:
            if (directory / entry["name"]).stat().st_size != entry["size"]:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return dict(manifest)


def _clear(directory: Path) -> None:
    """Remove a previous set's files (only the names this script writes)."""
    for path in directory.glob(f"{BINLOG_BASE}.*"):
        if path.is_file():
            path.unlink()
    (directory / MANIFEST).unlink(missing_ok=True)


def _simulate_enough(
    spec: WorkloadSpec, rows: int
) -> tuple[WorkloadSpec, list[GeneratedTransaction]]:
    """Simulate ``spec``, with more transactions if it yields fewer than ``rows`` changes."""
    while True:
        transactions, _content = simulate(spec)
        missing = rows - sum(len(trx.changes) for trx in transactions)
        if missing <= 0:
            return spec, transactions
        extra = math.ceil(missing / (CHANGES_PER_TRANSACTION - 1))
        spec = replace(spec, transactions=spec.transactions + extra)


def prepare(name: str, planned: WorkloadSpec, rows: int, root: Path) -> DataSet:
    """Reuse the set in ``root/<name>-<rows>`` when its manifest matches, else generate it."""
    directory = root / f"{name}-{rows}"
    directory.mkdir(parents=True, exist_ok=True)
    manifest = _read_manifest(directory, planned)
    if manifest is not None:
        spec = replace(planned, transactions=int(manifest["spec_transactions"]))
        return DataSet(
            name=name, spec=spec, directory=directory,
            files=tuple(directory / e["name"] for e in manifest["files"]),
            changes={kind: int(manifest["changes"][kind]) for kind in KINDS},
            transactions=int(manifest["transactions"]),
            simulate_seconds=None, write_seconds=None,
        )  # fmt: skip
    _clear(directory)
    start = time.perf_counter()
    spec, transactions = _simulate_enough(planned, rows)
    simulated = time.perf_counter()
    files = write_binlogs(transactions, directory, server_uuid=spec.server_uuid, base=BINLOG_BASE)
    written = time.perf_counter()
    changes = _change_counts(transactions)
    count = len(transactions)
    del transactions
    manifest = {
        "format": MANIFEST_FORMAT,
        "planned": _spec_fields(planned),
        # The spec used differs from the planned one in its transaction count at most.
        "spec_transactions": spec.transactions,
        "changes": changes,
        "transactions": count,
        "files": [{"name": p.name, "size": p.stat().st_size} for p in files],
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return DataSet(
        name=name, spec=spec, directory=directory, files=tuple(files), changes=changes,
        transactions=count, simulate_seconds=simulated - start, write_seconds=written - simulated,
    )  # fmt: skip


# -- decoders --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Counts:
    events: int
    #: Decoded rows by kind; None when the reader does not decode rows.
    rows: dict[str, int] | None = None

    @property
    def total_rows(self) -> int | None:
        return None if self.rows is None else sum(self.rows.values())


def frame_files(files: Sequence[Path]) -> Counts:
    """Frame every event (magic, header, length), decoding nothing."""
    events = 0
    for path in files:
        for _event in read_raw_events(path):
            events += 1
    return Counts(events)


def decode_files(files: Sequence[Path]) -> Counts:
    """Decode every event with the replica's reader, counting rows by rows event type."""
    events = 0
    by_type: Counter[int] = Counter()
    for path in files:
        for _pos, _end, event in BinlogFileReader(path):
            events += 1
            if isinstance(event, RowsEvent):
                by_type[event.header.type_code] += len(event.rows)
    rows = dict.fromkeys(KINDS, 0)
    for type_code, count in by_type.items():
        rows[_KIND_OF_TYPE[EventType(type_code)]] += count
    return Counts(events, rows)


def mariadb_command(binary: str, files: Sequence[Path]) -> list[str]:
    return [binary, *MARIADB_ARGS, *(str(path) for path in files)]


def run_mariadb(binary: str, files: Sequence[Path]) -> Counts:
    """``mariadb-binlog ... > /dev/null`` (the timed run); events and rows are not counted."""
    subprocess.run(
        mariadb_command(binary, files), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        check=True,
    )  # fmt: skip
    return Counts(0)


def mariadb_rows(binary: str, files: Sequence[Path]) -> dict[str, int]:
    """Rows mariadb-binlog prints as pseudo-SQL, by kind (an untimed verification run)."""
    rows = dict.fromkeys(KINDS, 0)
    with subprocess.Popen(
        mariadb_command(binary, files), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(b"### "):
                for prefix, kind in _MARIADB_ROW_LINES.items():
                    if line.startswith(prefix):
                        rows[kind] += 1
                        break
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, process.args)
    return rows


def mariadb_version(binary: str) -> str:
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or done.stderr.strip()


# -- measurement -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Measurement:
    data: str
    label: str
    seconds: float
    #: Rows decoded, or None for framing only.
    rows: int | None
    events: int | None
    size: int

    def rate(self, count: int | None) -> str:
        return "-" if count is None else f"{count / self.seconds:,.0f}"

    @property
    def mb_per_second(self) -> float:
        return self.size / MB / self.seconds


def best_of(function: Callable[[], T], repeat: int) -> tuple[float, T]:
    """The shortest wall time of ``repeat`` runs, and the last run's result (all equal)."""
    best = math.inf
    result: T | None = None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - start)
        if result is not None and value != result:
            raise RuntimeError(f"runs disagree: {result} then {value}")
        result = value
    assert result is not None
    return best, result


def _show(measurement: Measurement) -> None:
    m = measurement
    print(f"  {m.label:<28} {m.seconds:>9.3f} s  {m.rate(m.rows):>11} rows/s  "
          f"{m.rate(m.events):>11} events/s  {m.mb_per_second:>8.1f} MB/s")  # fmt: skip


def _kinds(counts: dict[str, int]) -> str:
    return ", ".join(f"{kind} {counts[kind]:,}" for kind in KINDS)


def describe(data: DataSet) -> None:
    print(f"{data.name}: {data.spec!r}")
    print(f"  {data.rows:,} row changes ({_kinds(data.changes)}) in {data.transactions:,} "
          f"transactions; {len(data.files)} file(s), {data.size / MB:,.1f} MB "
          f"({data.size / max(1, data.rows):.0f} bytes/row) in {data.directory}")  # fmt: skip
    if data.simulate_seconds is None or data.write_seconds is None:
        print("  generation: reused from the cache directory")
    else:
        total = data.simulate_seconds + data.write_seconds
        print(f"  generation: {total:.1f} s (simulate {data.simulate_seconds:.1f} s, "
              f"write {data.write_seconds:.1f} s; {data.rows / total:,.0f} rows/s)")  # fmt: skip


def check_rows(label: str, found: dict[str, int], data: DataSet) -> bool:
    if found == data.changes:
        return True
    print(f"  ERROR: {label} found {sum(found.values()):,} rows ({_kinds(found)}), "
          f"generated {data.rows:,} ({_kinds(data.changes)})")  # fmt: skip
    return False


def measure(data: DataSet, repeat: int, mariadb: str | None, results: list[Measurement]) -> bool:
    """Time the three readers on ``data``; False when a row count is wrong."""
    size = data.size
    print(f"{data.name}: best of {repeat} run(s)")
    seconds, framed = best_of(lambda: frame_files(data.files), repeat)
    results.append(Measurement(data.name, "framing only", seconds, None, framed.events, size))
    _show(results[-1])
    seconds, decoded = best_of(lambda: decode_files(data.files), repeat)
    assert decoded.rows is not None
    results.append(
        Measurement(data.name, "full decode", seconds, decoded.total_rows, decoded.events, size)
    )
    _show(results[-1])
    ok = check_rows("full decode", decoded.rows, data)
    if decoded.events != framed.events:
        print(f"  ERROR: full decode read {decoded.events:,} events, framing {framed.events:,}")
        ok = False
    if mariadb is None:
        return ok
    seconds, _ = best_of(lambda: run_mariadb(mariadb, data.files), repeat)
    results.append(Measurement(data.name, MARIADB_BINLOG, seconds, data.rows, None, size))
    _show(results[-1])
    ok = (
        check_rows(f"{MARIADB_BINLOG} (untimed run)", mariadb_rows(mariadb, data.files), data)
        and ok
    )
    ours = next(m for m in results if m.data == data.name and m.label == "full decode")
    print(f"  ours/{MARIADB_BINLOG}: {results[-1].seconds / ours.seconds:.3f} "
          f"(rows/s {ours.rate(ours.rows)} vs {results[-1].rate(data.rows)})")  # fmt: skip
    return ok


def summary(results: Sequence[Measurement], mariadb: str | None) -> None:
    print()
    print("summary")
    print(f"  {'set':<9} {'reader':<16} {'wall s':>9} {'rows/s':>11} {'events/s':>11} "
          f"{'MB/s':>8}")  # fmt: skip
    for m in results:
        print(f"  {m.data:<9} {m.label:<16} {m.seconds:>9.3f} {m.rate(m.rows):>11} "
              f"{m.rate(m.events):>11} {m.mb_per_second:>8.1f}")  # fmt: skip
    ours = next((m for m in results if m.data == "sbtest" and m.label == "full decode"), None)
    theirs = next((m for m in results if m.data == "sbtest" and m.label == MARIADB_BINLOG), None)
    if ours is not None and theirs is not None:
        print(f"  ours/{MARIADB_BINLOG} (sbtest rows/s): {theirs.seconds / ours.seconds:.3f}")
    elif mariadb is None:
        print(f"  ours/{MARIADB_BINLOG}: not measured ({MARIADB_BINLOG} not found)")
    if ours is not None and ours.rows is not None:
        rate = ours.rows / ours.seconds
        verdict = "met" if rate >= TARGET_ROWS_PER_SECOND else "NOT met"
        print(f"  target >= {TARGET_ROWS_PER_SECOND:,} rows/s (sbtest full decode): {verdict} "
              f"({rate:,.0f} rows/s)")  # fmt: skip


# -- main ------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rows",
        type=int,
        default=None,
        help=f"sbtest row changes, at least (default {DEFAULT_ROWS})",
    )
    parser.add_argument(
        "--alltypes-rows",
        type=int,
        default=None,
        help=f"alltypes row changes, at least (default {DEFAULT_ALLTYPES_ROWS})",
    )
    parser.add_argument(
        "--dir",
        default=None,
        help="cache directory for the generated sets (default: a temporary one)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="runs per measurement, the best kept (default 3, 1 with --quick)",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for smoke tests")
    args = parser.parse_args(argv)  # fmt: skip
    quick = bool(args.quick)
    rows = args.rows if args.rows is not None else QUICK_ROWS if quick else DEFAULT_ROWS
    alltypes_rows = (
        args.alltypes_rows
        if args.alltypes_rows is not None
        else QUICK_ALLTYPES_ROWS
        if quick
        else DEFAULT_ALLTYPES_ROWS
    )
    repeat = args.repeat if args.repeat is not None else 1 if quick else 3
    if rows < 1 or alltypes_rows < 0 or repeat < 1:
        parser.error("--rows and --repeat must be at least 1, --alltypes-rows at least 0")

    mariadb = shutil.which(MARIADB_BINLOG)
    print(machine_line())
    print(f"{MARIADB_BINLOG}: {mariadb_version(mariadb) if mariadb else 'not found, skipped'}")
    print(f"{MARIADB_BINLOG} runs on the sbtest set only: it cannot decode MySQL JSON columns "
          "(alltypes has one)")  # fmt: skip
    results: list[Measurement] = []
    ok = True
    with cache_root(args.dir, "bench-decode-") as root:
        sets = [("sbtest", rows, mariadb)]
        if alltypes_rows:
            sets.append(("alltypes", alltypes_rows, None))
        prepared: list[tuple[DataSet, str | None]] = []
        for name, count, decoder in sets:
            data = prepare(name, plan_spec(name, count), count, root)
            describe(data)
            prepared.append((data, decoder))
        for data, decoder in prepared:
            ok = measure(data, repeat, decoder, results) and ok
    summary(results, mariadb)
    print("row counts: " + ("all match the generated ones" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
