"""How a flush writes row changes into a big Iceberg table, and what reads pay for it
afterwards: the engine's ``MERGE INTO`` (merge-on-read position deletes, format v2 and v3)
against equality deletes (a delete file of the changed keys, committed with Iceberg's
``RowDelta``, then an append of the new row images); ``matched_v3`` is a ``MERGE`` with
matched clauses only, ``delete_v3`` the engine's way: a ``MERGE`` that only deletes, then
an append of every new image.

Each way gets its own table of ``--rows`` sysbench-shaped rows (``id INT`` key, ``k INT``,
``c CHAR(120)``, ``pad CHAR(60)``) in one JDBC catalog on SQLite, then the same ``--flushes``
batches of ``--batch`` changed rows (random existing ids: updates), each timed. Then, on
each table, un-compacted: the best of ``--repeat`` runs of a full ``COUNT(*), SUM(k)`` and a
point lookup by id; ``rewrite_data_files`` (every file), timed; the same reads compacted.
The ratio un-compacted / compacted is what the engine's reads pay between compactions.

Checked (exit code 1): every table's answers, un-compacted and compacted, equal the
content the batches make (computed in Python).

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_row_deletes.py [--rows 1000000] [--batch 50000]
        [--flushes 8] [--repeat 3] [--ways merge_v2,merge_v3,equality_v2] [--json PATH]
"""

from __future__ import annotations

import argparse
import io
import json
import random
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

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from tests.bench.benchkit import load_average, machine_line, positive_int  # noqa: E402

from spark_replica.applier_core.storage.spark.iceberg import catalog_options  # noqa: E402
from spark_replica.applier_core.storage.spark.session import get_spark  # noqa: E402

CATALOG, NAMESPACE = "bench", "rows"
MERGE_ON_READ = ", ".join(
    f"'write.{kind}.mode' = 'merge-on-read'" for kind in ("delete", "update", "merge")
)
#: name → format version; how each table takes a batch is ``Bench.<way>``.
WAYS = {"merge_v2": 2, "merge_v3": 3, "matched_v3": 3, "delete_v3": 3, "equality_v2": 2}
QUERIES = {
    "count_sum": "SELECT COUNT(*), SUM(k) FROM {table}",
    "lookup": "SELECT id, k, c FROM {table} WHERE id = {id}",
}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=positive_int, default=1_000_000)
    parser.add_argument("--batch", type=positive_int, default=50_000)
    parser.add_argument("--flushes", type=positive_int, default=8)
    parser.add_argument("--repeat", type=positive_int, default=3)
    parser.add_argument(
        "--ways",
        default=",".join(WAYS),
        help=f"comma-separated ways to run (default {','.join(WAYS)})",
    )
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    args.ways = args.ways.split(",")
    unknown = sorted(set(args.ways) - set(WAYS))
    if unknown:
        parser.error(f"unknown ways: {', '.join(unknown)} (known: {', '.join(WAYS)})")
    return args


class Bench:
    """One catalog, a table per way, the same batches for each."""

    def __init__(self, spark: Any, work: Path, rows: int) -> None:
        self.spark = spark
        self.rows = rows
        for key, value in catalog_options(
            CATALOG, f"sqlite:///{work / 'catalog.db'}", work / "warehouse"
        ).items():
            spark.conf.set(key, value)
        spark.sql(f"CREATE NAMESPACE {CATALOG}.{NAMESPACE}")
        spark.sql(f"SHOW NAMESPACES IN {CATALOG}").collect()  # the Java catalog is loaded
        manager = spark._jsparkSession.sessionState().catalogManager()
        self._catalog = manager.catalog(CATALOG).icebergCatalog()
        self._jvm = spark.sparkContext._jvm
        self._gateway = spark.sparkContext._gateway

    def create(self, name: str, version: int) -> None:
        table = f"{CATALOG}.{NAMESPACE}.{name}"
        # The engine's way with the engine's manifests: merged at each commit.
        merged = ", 'commit.manifest.min-count-to-merge' = '2'" if name == "delete_v3" else ""
        self.spark.sql(
            f"CREATE TABLE {table} (id INT NOT NULL, k INT, c STRING, pad STRING) USING iceberg "
            f"TBLPROPERTIES ('format-version' = '{version}', {MERGE_ON_READ}, "
            f"'write.parquet.row-group-size-bytes' = '16777216'{merged})"
        )
        self.spark.sql(
            f"INSERT INTO {table} SELECT CAST(id AS INT), CAST(id * 7 % 1000 AS INT), "
            f"repeat('c', 120), repeat('p', 60) FROM range({self.rows}) ORDER BY id"
        )

    def apply(self, name: str, batch: pa.Table) -> None:
        if name.startswith("merge"):
            self._merge(name, batch)
        elif name.startswith("matched"):
            self._matched(name, batch)
        elif name.startswith("delete"):
            self._delete_append(name, batch)
        else:
            self._equality(name, batch)

    def _merge(self, name: str, batch: pa.Table) -> None:
        view = f"changes_{name}"
        self.spark.createDataFrame(batch.to_pandas()).createOrReplaceTempView(view)
        self.spark.sql(
            f"MERGE INTO {CATALOG}.{NAMESPACE}.{name} t USING {view} s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
        )

    def _matched(self, name: str, batch: pa.Table) -> None:
        """The changed rows the table holds, in a ``MERGE INTO`` with matched clauses only:
        an inner join, so the changes are broadcast and the table is not shuffled (with a
        ``NOT MATCHED`` clause the join is an outer one that keeps the changes, and Spark
        can only broadcast the table). New rows would be appended in a second commit."""
        view = f"changes_{name}"
        self.spark.createDataFrame(batch.to_pandas()).createOrReplaceTempView(view)
        self.spark.sql(
            f"MERGE INTO {CATALOG}.{NAMESPACE}.{name} t "
            f"USING (SELECT /*+ BROADCAST */ * FROM {view}) s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET *"
        )

    def _delete_append(self, name: str, batch: pa.Table) -> None:
        """What the engine does: the rows of the changed keys deleted by a ``MERGE`` whose
        only clause is ``WHEN MATCHED THEN DELETE`` (deletion vectors, no data file), the
        keys broadcast; then every new image appended by one task, into one file."""
        view = f"changes_{name}"
        self.spark.createDataFrame(batch.to_pandas()).coalesce(1).createOrReplaceTempView(view)
        table = f"{CATALOG}.{NAMESPACE}.{name}"
        self.spark.sql(
            f"MERGE INTO {table} t USING (SELECT /*+ BROADCAST */ id FROM {view}) s "
            "ON t.id = s.id WHEN MATCHED THEN DELETE"
        )
        self.spark.sql(f"INSERT INTO {table} SELECT * FROM {view}")

    def _equality(self, name: str, batch: pa.Table) -> None:
        """A delete file of the batch's keys (Parquet with Iceberg's field id), committed
        first, then the new images appended: the append's sequence number is higher, so the
        deletes do not apply to it."""
        table = self._table(name)
        field_id = table.schema().findField("id").fieldId()
        key = pa.field("id", pa.int32(), nullable=False,
                       metadata={"PARQUET:field_id": str(field_id)})  # fmt: skip
        keys = pa.Table.from_arrays([batch["id"]], schema=pa.schema([key]))
        buffer = io.BytesIO()
        pq.write_table(keys, buffer)
        data = buffer.getvalue()
        location = table.locationProvider().newDataLocation(f"eq-{uuid.uuid4()}.parquet")
        stream = table.io().newOutputFile(location).create()
        stream.write(bytearray(data))
        stream.close()
        ids = self._gateway.new_array(self._jvm.int, 1)
        ids[0] = field_id
        deletes = (
            self._jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec())
            .ofEqualityDeletes(ids)
            .withPath(location)
            .withFormat("parquet")
            .withFileSizeInBytes(len(data))
            .withRecordCount(keys.num_rows)
            .build()
        )
        table.newRowDelta().addDeletes(deletes).commit()
        self.spark.createDataFrame(batch.to_pandas()).writeTo(
            f"{CATALOG}.{NAMESPACE}.{name}"
        ).append()

    def _table(self, name: str) -> Any:
        levels = self._gateway.new_array(self._jvm.String, 1)
        levels[0] = NAMESPACE
        namespace = self._jvm.org.apache.iceberg.catalog.Namespace.of(levels)
        identifier = self._jvm.org.apache.iceberg.catalog.TableIdentifier.of(namespace, name)
        return self._catalog.loadTable(identifier)

    def reads(self, name: str, lookup_id: int, repeat: int) -> dict[str, Any]:
        table = f"{CATALOG}.{NAMESPACE}.{name}"
        figures: dict[str, Any] = {}
        for query, text in QUERIES.items():
            sql = text.format(table=table, id=lookup_id)
            best, rows = _best(lambda sql=sql: self.spark.sql(sql).collect(), repeat)
            figures[query] = {"seconds": best, "rows": [tuple(row) for row in rows]}
        return figures

    def compact(self, name: str) -> float:
        started = time.perf_counter()
        self.spark.sql(
            f"CALL {CATALOG}.system.rewrite_data_files(table => '{CATALOG}.{NAMESPACE}.{name}', "
            "options => map('rewrite-all', 'true'))"
        ).collect()
        return time.perf_counter() - started


def _best(action: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
    return min(times), result


def batches(rows: int, size: int, count: int) -> list[pa.Table]:
    """``count`` batches of ``size`` distinct random existing ids with new values."""
    chooser = random.Random(20261128)
    made = []
    for number in range(count):
        ids = chooser.sample(range(rows), size)
        made.append(pa.table({
            "id": pa.array(ids, pa.int32()),
            "k": pa.array([(i + number) % 997 for i in ids], pa.int32()),
            "c": pa.array([f"{number}-{i}".ljust(120, "x") for i in ids]),
            "pad": pa.array(["y" * 60] * size),
        }))  # fmt: skip
    return made


def run(
    spark: Any, work: Path, args: argparse.Namespace
) -> tuple[dict[str, Any], dict[str, list[tuple[Any, ...]]]]:
    """Every way's figures, and the answers the queries must give."""
    bench = Bench(spark, work, args.rows)
    made = batches(args.rows, args.batch, args.flushes)
    lookup_id = made[-1]["id"][0].as_py()
    results: dict[str, Any] = {}
    for name in args.ways:
        version = WAYS[name]
        started = time.perf_counter()
        bench.create(name, version)
        created = time.perf_counter() - started
        flushes = []
        for batch in made:
            started = time.perf_counter()
            bench.apply(name, batch)
            flushes.append(time.perf_counter() - started)
        print(f"  {name}: flushes {', '.join(f'{s:.2f}' for s in flushes)} s", flush=True)
        results[name] = {"create_seconds": created, "flush_seconds": flushes}
    for name in args.ways:
        before = bench.reads(name, lookup_id, args.repeat)
        compaction = bench.compact(name)
        after = bench.reads(name, lookup_id, args.repeat)
        results[name].update(uncompacted=before, compaction_seconds=compaction, compacted=after)
    return results, expected(args.rows, made, lookup_id)


def expected(rows: int, made: list[pa.Table], lookup_id: int) -> dict[str, list[tuple[Any, ...]]]:
    """What the queries must answer after the batches."""
    k = {i: i * 7 % 1000 for i in range(rows)}
    c: dict[int, str] = {}
    for batch in made:
        for i, new_k, new_c in zip(*(batch[name].to_pylist() for name in ("id", "k", "c")),
                                   strict=True):  # fmt: skip
            k[i], c[i] = new_k, new_c
    return {
        "count_sum": [(rows, sum(k.values()))],
        "lookup": [(lookup_id, k[lookup_id], c.get(lookup_id, "c" * 120))],
    }


def check(results: dict[str, Any], want: dict[str, list[tuple[Any, ...]]]) -> list[str]:
    failures = []
    for name, figures in results.items():
        for state in ("uncompacted", "compacted"):
            for query, rows in want.items():
                got = [tuple(row) for row in figures[state][query]["rows"]]
                if got != rows:
                    failures.append(f"{name} {state} {query}: {got} != {rows}")
    return failures


def report(results: dict[str, Any]) -> None:
    print(f"{'way':12} {'flush median':>13} {'count/sum un→compacted':>26} "
          f"{'lookup un→compacted':>24} {'compaction':>11}")  # fmt: skip
    for name, figures in results.items():
        flushes = sorted(figures["flush_seconds"])
        median = flushes[len(flushes) // 2]
        cells = []
        for query in QUERIES:
            un, co = (figures[s][query]["seconds"] for s in ("uncompacted", "compacted"))
            cells.append(f"{un * 1000:.0f}→{co * 1000:.0f} ms ({un / co:.1f}×)")
        print(f"{name:12} {median:12.2f}s {cells[0]:>26} {cells[1]:>24} "
              f"{figures['compaction_seconds']:10.1f}s")  # fmt: skip


def main(argv: Sequence[str] | None = None, spark: Any | None = None) -> int:
    """``spark``: a session to use (by default the project's, with a 1g driver)."""
    args = parse_args(argv)
    print(machine_line(), f"load average {load_average()}", flush=True)
    print(f"{args.rows:,} rows, {args.flushes} flushes of {args.batch:,} updates", flush=True)
    session = get_spark({"spark.driver.memory": "1g"}) if spark is None else spark
    with tempfile.TemporaryDirectory(prefix="bench-row-deletes-") as tmp:
        results, want = run(session, Path(tmp), args)
    report(results)
    failures = check(results, want)
    for failure in failures:
        print(f"CHECK FAILED: {failure}")
    if not failures:
        print("checks: every answer equals the content the batches make")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "benchmark": "row_deletes", "machine": machine_line(),
            "load_average_end": load_average(), "arguments": vars(args), "results": results,
        }, indent=1, default=str))  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
