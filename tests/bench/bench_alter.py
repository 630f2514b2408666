"""ALTER TABLE on a big replicated table: time and memory on the Spark engine, against a real
MariaDB running the same ALTER on the same rows in the same run.

A sysbench-shaped table (``id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60)``) of
``--rows`` rows goes into a ``SparkEngine`` (transactions of 1,000 rows, flushed) and, by
``LOAD DATA``, into a MariaDB started here. Then, on each side, two ALTERs:

* ``rewrite``: ``ADD COLUMN w INT NOT NULL DEFAULT 5, ALGORITHM=COPY``: every row is
  converted (the replica: streamed from the key index through the conversion into a stage of
  the index, then into a new Iceberg table; MariaDB: a table copy);
* ``evolve``: ``ADD COLUMN x BIGINT``, ``drop``: ``DROP COLUMN pad``, ``move``: ``MODIFY k
  INT AFTER c``: the replica changes the Iceberg schema and the key index's layout only
  (no row copied); MariaDB does them instantly;
* ``index``: ``ADD INDEX (k)``: the replica changes metadata only (rows and key kept: the
  table shares its content); MariaDB builds the index.

For each: the seconds from the ALTER's commit until it is durable (the flush returned), and
the growth of this process's peak RSS over its RSS before the ALTER (``VmHWM``, reset first;
it counts the key index's file pages the process maps, which the key index's memory bound
drops again) and of its anonymous RSS alone (sampled), and the driver JVM's peak.
``--whole`` runs the rewrite once more the way a table held in memory is altered (every
row read into Python, converted and handed over at once), for the ratio. Checks (exit code
1): both sides hold ``--rows`` rows with ``w = 5`` after the rewrite.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_alter.py [--rows 1000000] [--whole] [--json PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import pymysql  # noqa: E402
from tests.bench.bench_spark_engine import (  # noqa: E402
    LOAD_TRANSACTION_ROWS,
    NEVER,
    SbtestRows,
    _reset_peak,
    _status,
    _vm_hwm,
    commit_in_chunks,
    create_table,
    engine_at,
    jvm_pid,
)
from tests.bench.benchkit import load_average, machine_line, positive_int  # noqa: E402
from tests.helpers.mariadb import ROOT_PASSWORD, running_mariadb  # noqa: E402

from spark_replica.applier_core.storage import RowChange, TableRef  # noqa: E402
from spark_replica.applier_core.storage.memory_tables import CommittedTable  # noqa: E402
from spark_replica.applier_core.storage.spark.indexed_tables import IndexedTable  # noqa: E402

ALTERS = (
    ("rewrite", "ALTER TABLE {t} ADD COLUMN w INT NOT NULL DEFAULT 5, ALGORITHM=COPY"),
    ("evolve", "ALTER TABLE {t} ADD COLUMN x BIGINT"),
    ("drop", "ALTER TABLE {t} DROP COLUMN pad"),
    ("move", "ALTER TABLE {t} MODIFY k INT AFTER c"),
    ("index", "ALTER TABLE {t} ADD INDEX (k)"),
)
MB = 1024 * 1024


def rss(field: str = "VmRSS") -> int:
    """This process's ``field`` of /proc/self/status, in bytes."""
    value = _status(os.getpid()).get(field, "0 kB")
    return int(value.split()[0]) * 1024


class AnonPeak:
    """The peak of this process's anonymous RSS (``RssAnon``: its own memory, not the key
    index's file pages the kernel maps and drops), sampled every 20 ms on a thread."""

    def __init__(self) -> None:
        self.peak = rss("RssAnon")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="bench-anon-peak")

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss("RssAnon"))

    def __enter__(self) -> AnonPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def replica_alters(
    spark: Any, work: Path, rows: list[tuple[Any, ...]], whole: bool
) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    jvm = jvm_pid(spark)
    with engine_at(spark, work / "replica", flush_interval=NEVER) as (engine, committer):
        names = ["t"] + (["u"] if whole else [])
        for name in names:
            table = create_table(committer, name)
            changes = [RowChange.insert(row) for row in rows]
            start = time.perf_counter()
            commit_in_chunks(committer, table, changes, LOAD_TRANSACTION_ROWS)
            engine.flush()
            figures[f"load {name} s"] = round(time.perf_counter() - start, 1)
            del changes
        runs = [(label, statement, "t") for label, statement in ALTERS]
        if whole:
            runs.append(("rewrite whole", ALTERS[0][1], "u"))
        for label, statement, name in runs:
            gc.collect()
            before, anon_before = rss(), rss("RssAnon")
            sampler = AnonPeak().__enter__()
            _reset_peak("self")
            if jvm is not None:
                _reset_peak(jvm)
            start = time.perf_counter()
            if label == "rewrite whole":
                original = IndexedTable.altered
                IndexedTable.altered = CommittedTable.altered  # type: ignore[method-assign]
            try:
                committer.ddl(statement.format(t=name))
            finally:
                if label == "rewrite whole":
                    IndexedTable.altered = original  # type: ignore[method-assign]
            staged = time.perf_counter() - start
            engine.flush()
            seconds = time.perf_counter() - start
            sampler.__exit__()
            peak = _vm_hwm(os.getpid()) or 0
            figures[label] = {
                "seconds": round(seconds, 2),
                "commit seconds": round(staged, 2),
                "rows/s": round(len(rows) / seconds),
                "python peak growth MB": round((peak - before) / MB),
                "python anonymous peak growth MB": round((sampler.peak - anon_before) / MB),
                "jvm peak MB": round((_vm_hwm(jvm) or 0) / MB) if jvm is not None else None,
            }
            print(label, figures[label], flush=True)
        with engine.snapshot() as snapshot:
            view = snapshot.view(TableRef("bench", "t"))
            found = engine.spark.sql(f"SELECT COUNT(*), MIN(w), MAX(w) FROM `{view}`").collect()[0]
        figures["check"] = tuple(found) == (len(rows), 5, 5)
    return figures


def mariadb_alters(work: Path, rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    data = work / "rows.tsv"
    with data.open("w", encoding="ascii") as out:
        for row in rows:
            out.write("\t".join(map(str, row)) + "\n")
    with running_mariadb(work / "mariadb", binlog=False) as server:
        server.sql("CREATE DATABASE bench")
        server.sql("CREATE TABLE bench.t (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))")
        server.sql("SET GLOBAL local_infile = 1")
        start = time.perf_counter()
        connection = pymysql.connect(host=server.host, port=server.port, user="root",
                                     password=ROOT_PASSWORD, local_infile=True)  # fmt: skip
        with connection, connection.cursor() as cursor:
            cursor.execute(f"LOAD DATA LOCAL INFILE '{data}' INTO TABLE bench.t")
            connection.commit()
        figures["load s"] = round(time.perf_counter() - start, 1)
        for label, statement in ALTERS:
            start = time.perf_counter()
            server.sql(statement.format(t="bench.t"))
            seconds = time.perf_counter() - start
            figures[label] = {"seconds": round(seconds, 2), "rows/s": round(len(rows) / seconds)}
            print("mariadb", label, figures[label], flush=True)
        found = server.sql("SELECT COUNT(*), MIN(w), MAX(w) FROM bench.t").split()
        figures["check"] = found == [str(len(rows)), "5", "5"]
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=positive_int, default=1_000_000)
    parser.add_argument("--whole", action="store_true", help="also alter a table read whole")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    print(machine_line(), load_average(), flush=True)
    maker = SbtestRows(seed=1)
    rows = [maker.row(key) for key in range(1, args.rows + 1)]
    with tempfile.TemporaryDirectory(prefix="bench-alter-") as tmp:
        work = Path(tmp)
        mariadb = mariadb_alters(work, rows)
        from spark_replica.applier_core.storage.spark.session import get_spark, stop_spark

        spark = get_spark({"spark.sql.warehouse.dir": str(work / "spark-warehouse")})
        try:
            replica = replica_alters(spark, work, rows, args.whole)
        finally:
            stop_spark()
    ratios = {
        label: round(replica[label]["seconds"] / mariadb[label]["seconds"], 1)
        for label, _ in ALTERS
    }
    figures = {"rows": args.rows, "replica": replica, "mariadb": mariadb,
               "replica/mariadb seconds": ratios, "load": load_average()}  # fmt: skip
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if replica["check"] and mariadb["check"] else 1


if __name__ == "__main__":
    sys.exit(main())
