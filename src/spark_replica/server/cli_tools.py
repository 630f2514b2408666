"""``spark-replica binlog show|rows FILE...`` and ``spark-replica generate``.

``generate`` writes MySQL 8.4 binary logs of a simulated workload into ``--out`` (an index
file lists them, so the directory can be used as a channel's relay log directory), plus
``expected/<db>.<table>.jsonl`` with the final content of every table (one JSON object per
row, in key order; values as ``spark-replica binlog rows`` prints them).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from spark_replica.applier_core.binlog.describe import (
    SHOW_EVENTS_COLUMNS,
    json_value,
    row_changes,
    show_events,
)
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.tools.generator.schema import TABLE_FACTORIES
from spark_replica.tools.generator.simulate import (
    Dependency,
    GeneratedTransaction,
    WorkloadSpec,
    simulate_with_tables,
)
from spark_replica.tools.generator.writer import write_binlogs


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    binlog = commands.add_parser("binlog", help="inspect binary log or relay log files")
    actions = binlog.add_subparsers(dest="binlog_command", required=True)
    show = actions.add_parser("show", help="events, as SHOW BINLOG EVENTS lists them")
    show.add_argument("files", nargs="+", type=Path)
    rows = actions.add_parser("rows", help="row changes, one JSON object per line")
    rows.add_argument("files", nargs="+", type=Path)

    gen = commands.add_parser("generate", help="write binary logs of a simulated workload")
    defaults = WorkloadSpec()
    gen.add_argument("--out", type=Path, required=True)
    gen.add_argument("--schema", choices=sorted(TABLE_FACTORIES), default=defaults.schema)
    gen.add_argument("--database", default=defaults.database)
    for name in ("tables", "rows_per_table", "transactions", "changes_per_transaction",
                 "clients", "large_size", "ddl_every", "rotate_every", "seed"):  # fmt: skip
        gen.add_argument(f"--{name.replace('_', '-')}", type=int, default=getattr(defaults, name))
    gen.add_argument("--conflict-share", type=float, default=defaults.conflict_share)
    gen.add_argument("--large-share", type=float, default=defaults.large_share)
    gen.add_argument(
        "--dependency", choices=[d.value for d in Dependency], default=defaults.dependency.value
    )
    gen.add_argument("--compression", action="store_true", help="zstd transaction payloads")
    gen.add_argument("--base", default="binlog", help="file base name (default: binlog)")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        if args.command == "binlog":
            return _binlog(args, out)
        return _generate(args, out)
    except BinlogError as e:
        print(f"spark-replica: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, as Unix tools do.
        sys.stdout = None
        return 0


def _binlog(args: argparse.Namespace, out: TextIO) -> int:
    for path in args.files:
        if args.binlog_command == "show":
            print("\t".join(SHOW_EVENTS_COLUMNS), file=out)
            for line in show_events(path):
                print("\t".join(str(v).replace("\n", " ") for v in line.as_row()), file=out)
        else:
            for change in row_changes(path):
                print(change, file=out)
    return 0


def _generate(args: argparse.Namespace, out: TextIO) -> int:
    spec = WorkloadSpec(
        tables=args.tables, rows_per_table=args.rows_per_table,
        transactions=args.transactions, changes_per_transaction=args.changes_per_transaction,
        clients=args.clients, conflict_share=args.conflict_share, large_share=args.large_share,
        large_size=args.large_size, ddl_every=args.ddl_every, rotate_every=args.rotate_every,
        schema=args.schema, database=args.database, dependency=Dependency(args.dependency),
        seed=args.seed,
    )  # fmt: skip
    started = time.monotonic()
    transactions, content, tables = simulate_with_tables(spec)
    progress = _progress(transactions, sys.stderr)
    files = write_binlogs(
        progress, args.out, server_uuid=spec.server_uuid, base=args.base,
        compression=args.compression,
    )  # fmt: skip
    expected = args.out / "expected"
    expected.mkdir(exist_ok=True)
    names = {name: [c.name for c in t.columns] for name, t in tables.items()}
    for table, rows in content.items():
        with (expected / f"{table}.jsonl").open("w") as handle:
            for row in rows:
                record = dict(zip(names[table], (json_value(v) for v in row), strict=True))
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    changes = sum(len(t.changes) for t in transactions)
    print(
        f"wrote {len(transactions)} transactions ({changes} row changes) into {len(files)} "
        f"files in {args.out} in {time.monotonic() - started:.1f} s",
        file=out,
    )
    return 0


def _progress(
    transactions: list[GeneratedTransaction], stream: TextIO
) -> Iterator[GeneratedTransaction]:
    """Yield the transactions, drawing a progress bar on a terminal for long runs."""
    total = len(transactions)
    show = stream.isatty() and total >= 10_000
    step = max(1, total // 100)
    for index, trx in enumerate(transactions, 1):
        if show and (index % step == 0 or index == total):
            done = index * 40 // total
            stream.write(f"\r[{'#' * done}{'.' * (40 - done)}] {index}/{total}")
            stream.flush()
        yield trx
    if show:
        stream.write("\n")
