"""Iceberg tables in a JDBC catalog on SQLite: what the engine's write and read paths cost
(decision 0017).

Five measurements, each on tables of its own in one catalog (a SQLite file) of one run:

1. **Session start.** A new Python process builds the project's SparkSession and runs
   ``SELECT 1``: with the installed jars (Iceberg runtime, JDBC drivers, Iceberg's SQL
   extensions) and the driver JVM's class archive ``make install`` records; with the jars
   and no archive; without either. ``--starts`` times each, alternating, the median kept.
2. **Small appends.** ``--appends`` appends of 10 rows each (``writeTo().append()`` with a
   snapshot property), each timed: one commit's latency.
3. **MERGE vs DELETE + append.** A table of ``--rows`` rows, then ``--batches`` batches of
   ``--batch`` rows (four in five update an existing id, one in five is new), applied as one
   ``MERGE INTO`` each, or as ``DELETE ... WHERE id IN (batch)`` then an append of the batch
   (two commits), each on a table of its own; for each format version of
   ``--format-versions`` (2: position delete files; 3: deletion vectors), merge-on-read.
   MERGE copy-on-write (format 2) is timed as well.
4. **Reads after many merge-on-read commits.** A table of ``--rows`` rows, then ``--commits``
   MERGE commits of ``--batch`` rows each (not compacted): the median of ``--repeat`` runs of
   a full COUNT/SUM, a point lookup by id and a pyiceberg scan of the whole table; then
   ``rewrite_data_files`` (every file) and ``rewrite_position_delete_files``, timed, and the
   same reads again. The results must be equal.

The exit code is 1 when a check fails (a result differs from the expected rows).

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_iceberg_spike.py [--rows 100000] [--batch 1000]
        [--batches 5] [--commits 50] [--appends 20] [--starts 3] [--repeat 3]
        [--format-versions 2,3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.benchkit import load_average, machine_line, positive_int  # noqa: E402

from spark_replica.applier_core.storage.spark import iceberg  # noqa: E402

NAMESPACE = "bench"
MERGE_ON_READ = ", ".join(
    f"'write.{kind}.mode' = 'merge-on-read'" for kind in ("delete", "update", "merge")
)
COPY_ON_WRITE = ", ".join(
    f"'write.{kind}.mode' = 'copy-on-write'" for kind in ("delete", "update", "merge")
)

#: Run in a new process: build the project's session (with or without jars), time SELECT 1.
_START = """
import sys, time
start = time.perf_counter()
from pyspark.sql import SparkSession
from spark_replica.applier_core.storage.spark.session import spark_options
from pathlib import Path
kind = sys.argv[1]
options = spark_options({"spark.sql.warehouse.dir": sys.argv[2]},
                        jars=[] if kind == "none" else None,
                        archive=None if kind == "archive" else Path("/nonexistent.jsa"))
builder = SparkSession.builder
for key, value in options.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
spark.sql("SELECT 1").collect()
print(time.perf_counter() - start)
spark.stop()
"""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    for name, default, what in (
        ("--rows", 100_000, "rows of the tables of parts 3 and 4"),
        ("--batch", 1_000, "rows of one MERGE or DELETE + append batch"),
        ("--batches", 5, "batches of part 3, per write path"),
        ("--commits", 50, "MERGE commits of part 4 before compaction"),
        ("--appends", 20, "small appends of part 2"),
        ("--starts", 3, "session starts of part 1, each way"),
        ("--repeat", 3, "runs of each read of part 4"),
    ):
        parser.add_argument(name, type=positive_int, default=default, help=f"{what} ({default})")
    parser.add_argument("--format-versions", default="2,3", help="format versions of part 3")
    parser.add_argument("--json", help="also write the figures to this file")
    return parser.parse_args(argv)


def _median_time(action: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def session_starts(work: Path, runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"archive": [], "jars": [], "none": []}
    for _ in range(runs):
        for kind in times:
            done = subprocess.run(
                [sys.executable, "-c", _START, kind, str(work / f"start-{kind}")],
                capture_output=True, text=True, check=True, cwd=_REPO,
                env={**os.environ, "PYTHONPATH": str(_REPO / "src")},
            )  # fmt: skip
            times[kind].append(float(done.stdout.strip().splitlines()[-1]))
    return {kind: statistics.median(values) for kind, values in times.items()}


class Spike:
    """One catalog (SQLite file) in the running session, and the tables made in it."""

    def __init__(self, spark: Any, work: Path) -> None:
        self.spark = spark
        # A catalog stays loaded in the session once used: a name of its own for each run.
        self.catalog = f"bench_ice_{uuid.uuid4().hex[:8]}"
        self.url = f"sqlite:///{work / 'metadata.db'}"
        self.warehouse = work / "warehouse"
        for key, value in iceberg.catalog_options(self.catalog, self.url, self.warehouse).items():
            spark.conf.set(key, value)
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {self.catalog}.{NAMESPACE}")

    def table(self, name: str, rows: int, version: int = 2, modes: str = MERGE_ON_READ) -> str:
        """A new table of ``rows`` rows (``id`` 0 .. rows-1) in one commit; its full name."""
        full = f"{self.catalog}.{NAMESPACE}.{name}"
        self.spark.sql(
            f"CREATE TABLE {full} (id BIGINT NOT NULL, k INT, c STRING) USING iceberg "
            f"TBLPROPERTIES ('format-version' = '{version}', {modes})"
        )
        self.spark.sql(f"ALTER TABLE {full} SET IDENTIFIER FIELDS id")
        if rows:
            self.rows(0, rows, 0).writeTo(full).append()
        return full

    def rows(self, first: int, count: int, k: int) -> Any:
        return self.spark.range(first, first + count).selectExpr(
            "id", f"CAST(id % 1000 + {k} AS INT) AS k", "repeat(CAST(id AS STRING), 4) AS c"
        )

    def batch(self, number: int, rows: int, size: int) -> Any:
        """``size`` rows: 4 in 5 update existing ids (spread over the table), 1 in 5 new."""
        updates = size * 4 // 5
        stride = max(1, rows // updates)
        old = self.spark.range(0, updates).selectExpr(
            f"(id * {stride} + {number}) % {rows} AS id", f"CAST(id % 1000 + {number} AS INT) AS k",
            f"concat('u', {number}) AS c",
        )  # fmt: skip
        new = self.rows(rows + number * size, size - updates, number)
        return old.unionByName(new)

    def merge(self, table: str, batch: Any) -> None:
        batch.createOrReplaceTempView("bench_batch")
        self.spark.sql(
            f"MERGE INTO {table} t USING bench_batch s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
        )

    def delete_append(self, table: str, batch: Any) -> None:
        batch.createOrReplaceTempView("bench_batch")
        self.spark.sql(f"DELETE FROM {table} WHERE id IN (SELECT id FROM bench_batch)")
        batch.writeTo(table).append()

    def files(self, table: str) -> tuple[int, int]:
        row = self.spark.sql(
            f"SELECT count_if(content = 0) AS data, count_if(content <> 0) AS deletes "
            f"FROM {table}.files"
        ).first()
        return int(row.data), int(row.deletes)

    def reads(self, table: str, rows: int, repeat: int) -> dict[str, Any]:
        from pyiceberg.catalog.sql import SqlCatalog

        probe = rows // 2 + 1
        full = f"SELECT count(*) AS n, sum(k) AS s FROM {table}"
        point = f"SELECT * FROM {table} WHERE id = {probe}"
        self.spark.sql(full).collect()  # warm-up
        full_s, full_row = _median_time(lambda: tuple(self.spark.sql(full).first()), repeat)
        point_s, point_rows = _median_time(
            lambda: sorted(tuple(r) for r in self.spark.sql(point).collect()), repeat
        )
        reader = SqlCatalog(self.catalog, **iceberg.pyiceberg_properties(self.url, self.warehouse))
        try:
            loaded = reader.load_table(tuple(table.split(".")[1:]))
            py_s, arrow = _median_time(lambda: loaded.scan().to_arrow(), repeat)
        finally:
            reader.engine.dispose()
        data, deletes = self.files(table)
        return {
            "full_scan_s": full_s, "point_lookup_s": point_s, "pyiceberg_scan_s": py_s,
            "result": [list(full_row), point_rows], "pyiceberg_rows": arrow.num_rows,
            "data_files": data, "delete_files": deletes,
        }  # fmt: skip


def small_appends(spike: Spike, appends: int) -> dict[str, float]:
    table = spike.table("appends", 0)
    times = []
    for number in range(appends):
        batch = spike.rows(number * 10, 10, number)
        start = time.perf_counter()
        batch.writeTo(table).option("snapshot-property.replica.batch", str(number)).append()
        times.append(time.perf_counter() - start)
    times.sort()
    return {"median_s": statistics.median(times), "p90_s": times[int(len(times) * 0.9) - 1]}


def write_paths(spike: Spike, args: argparse.Namespace, versions: list[int]) -> dict[str, Any]:
    paths: list[tuple[str, int, str, Callable[[str, Any], None]]] = []
    for version in versions:
        paths.append((f"merge_v{version}", version, MERGE_ON_READ, spike.merge))
        paths.append((f"delete_append_v{version}", version, MERGE_ON_READ, spike.delete_append))
    paths.append(("merge_v2_copy_on_write", 2, COPY_ON_WRITE, spike.merge))
    figures: dict[str, Any] = {}
    for name, version, modes, apply in paths:
        table = spike.table(name, args.rows, version, modes)
        times = []
        for number in range(args.batches):
            batch = spike.batch(number, args.rows, args.batch).cache()
            batch.count()
            start = time.perf_counter()
            apply(table, batch)
            times.append(time.perf_counter() - start)
            batch.unpersist()
        count = spike.spark.table(table).count()
        data, deletes = spike.files(table)
        figures[name] = {
            "median_s": statistics.median(times), "first_s": times[0], "rows": count,
            "data_files": data, "delete_files": deletes,
        }  # fmt: skip
    return figures


def degraded_reads(spike: Spike, args: argparse.Namespace) -> dict[str, Any]:
    table = spike.table("degraded", args.rows)
    start = time.perf_counter()
    for number in range(args.commits):
        spike.merge(table, spike.batch(number, args.rows, args.batch))
    commits_s = time.perf_counter() - start
    before = spike.reads(table, args.rows, args.repeat)
    short = f"{spike.catalog}.{NAMESPACE}.degraded"
    start = time.perf_counter()
    spike.spark.sql(
        f"CALL {spike.catalog}.system.rewrite_data_files(table => '{short}', "
        "options => map('rewrite-all', 'true'))"
    ).collect()
    data_s = time.perf_counter() - start
    start = time.perf_counter()
    spike.spark.sql(
        f"CALL {spike.catalog}.system.rewrite_position_delete_files(table => '{short}', "
        "options => map('rewrite-all', 'true'))"
    ).collect()
    deletes_s = time.perf_counter() - start
    after = spike.reads(table, args.rows, args.repeat)
    return {
        "merge_commits_s": commits_s, "before": before, "after": after,
        "rewrite_data_files_s": data_s, "rewrite_position_delete_files_s": deletes_s,
    }  # fmt: skip


def run(spark: Any, work: Path, args: argparse.Namespace, starts: bool) -> dict[str, Any]:
    versions = [int(part) for part in args.format_versions.split(",")]
    figures: dict[str, Any] = {"errors": []}
    if starts:
        figures["session_start_s"] = session_starts(work, args.starts)
        print("1. session start (median of {}): jars and class archive {archive:.1f} s, "
              "jars {jars:.1f} s, neither {none:.1f} s"
              .format(args.starts, **figures["session_start_s"]))  # fmt: skip
    spike = Spike(spark, work)
    figures["append_commit_s"] = appends = small_appends(spike, args.appends)
    print(f"2. append of 10 rows: median {appends['median_s'] * 1000:.0f} ms, "
          f"p90 {appends['p90_s'] * 1000:.0f} ms per commit")  # fmt: skip
    figures["write_paths"] = paths = write_paths(spike, args, versions)
    print(f"3. {args.batch:,}-row batches on a {args.rows:,}-row table (median of {args.batches}):")
    for name, path in paths.items():
        print(f"   {name:24s} {path['median_s']:6.2f} s (first {path['first_s']:.2f} s); "
              f"{path['data_files']} data, {path['delete_files']} delete files")  # fmt: skip
    expected = args.rows + args.batches * (args.batch - args.batch * 4 // 5)
    figures["errors"] += [
        f"{name}: {path['rows']} rows, expected {expected}"
        for name, path in paths.items() if path["rows"] != expected
    ]  # fmt: skip
    figures["reads"] = reads = degraded_reads(spike, args)
    print(f"4. {args.commits} MERGE commits of {args.batch:,} rows in "
          f"{reads['merge_commits_s']:.1f} s; rewrite_data_files "
          f"{reads['rewrite_data_files_s']:.1f} s, rewrite_position_delete_files "
          f"{reads['rewrite_position_delete_files_s']:.1f} s")  # fmt: skip
    for when in ("before", "after"):
        part = reads[when]
        print(f"   {when:6s} compaction: full scan {part['full_scan_s'] * 1000:.0f} ms, "
              f"point lookup {part['point_lookup_s'] * 1000:.0f} ms, pyiceberg scan "
              f"{part['pyiceberg_scan_s'] * 1000:.0f} ms; {part['data_files']} data, "
              f"{part['delete_files']} delete files")  # fmt: skip
    before, after = reads["before"], reads["after"]
    if before["result"] != after["result"] or before["pyiceberg_rows"] != after["pyiceberg_rows"]:
        figures["errors"].append("reads differ after compaction")
    if before["pyiceberg_rows"] != before["result"][0][0]:
        figures["errors"].append("pyiceberg and Spark count different rows")
    return figures


def main(argv: Sequence[str] | None = None, spark: Any | None = None) -> int:
    """Run the benchmark; ``spark``: a SparkSession to use (default: this process's own,
    created here, with the jars, and stopped at the end; part 1 runs only then)."""
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-iceberg-") as tmp:
        work = Path(tmp)
        own = spark is None
        print(f"{machine_line()}; load average {load_average()}")
        if own:
            from spark_replica.applier_core.storage.spark.session import get_spark, stop_spark

            spark = get_spark({"spark.sql.warehouse.dir": str(work / "spark-warehouse")})
        try:
            print(f"spark {spark.version}")
            figures = run(spark, work, args, starts=own)
        finally:
            if own:
                stop_spark()
    figures["load_average_end"] = load_average()
    print(f"load average at the end: {figures['load_average_end']}")
    if args.json is not None:
        Path(args.json).write_text(json.dumps(figures, indent=1, default=str) + "\n")
    if figures["errors"]:
        print(f"checks: {len(figures['errors'])} FAILED: {figures['errors']}")
        return 1
    print("checks: every result as expected")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
