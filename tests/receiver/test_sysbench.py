"""sysbench's oltp_read_write (Debian's sysbench) against a real MariaDB source while a
replica follows it: prepare (tables with a secondary index, bulk inserts, CREATE INDEX), then
transactions of point and range reads, index and non-index updates, and a delete with an
insert of the same key, from several client threads. Both appliers end with the channel
running and every sbtest table equal to the source's, row by row. The short form runs for
some seconds on a few small tables; the long form (SPARK_REPLICA_SOAK=1) for 60 s on more and
larger tables."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from spark_replica.applier_core.storage import InMemoryEngine
from tests.helpers.live_source import caught_up, following, fresh_source
from tests.helpers.mariadb import ROOT_PASSWORD, MariaDB
from tests.helpers.soak import soak_size
from tests.helpers.source_compare import assert_same_databases

DATABASE = "sbtest"
#: sysbench's tables: a primary key and a secondary index on k; or, with --secondary, no
#: primary key at all (id and k are both secondary indexes).
KEYS = ("--create_secondary=on", "--secondary=on")


def sysbench(
    source: MariaDB, command: str, *options: str, tables: int, rows: int, seconds: int
) -> str:
    """Run ``sysbench oltp_read_write <command>`` against ``source``; its output."""
    done = subprocess.run(
        ["sysbench", "oltp_read_write", "--db-driver=mysql", f"--mysql-host={source.host}",
         f"--mysql-port={source.port}", "--mysql-user=root", f"--mysql-password={ROOT_PASSWORD}",
         f"--mysql-db={DATABASE}", f"--tables={tables}", f"--table-size={rows}",
         "--threads=2", f"--time={seconds}", "--events=0",
         "--rand-seed=1", "--report-interval=0", *options, command],
        capture_output=True, text=True, timeout=seconds + 300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def committed(report: str) -> int:
    """The transactions sysbench's report counts (``transactions: 5301 (441.6 per sec.)``)."""
    found = re.search(r"^\s*transactions:\s+(\d+)", report, re.M)
    assert found, report
    return int(found.group(1))


@pytest.mark.soak
@pytest.mark.parametrize("applier", ["csa", "mta"])
@pytest.mark.parametrize("keys", KEYS, ids=["primary-key", "no-primary-key"])
def test_sysbench_oltp_read_write(
    own_mariadb: MariaDB, port: int, engine: InMemoryEngine, applier: str, keys: str
) -> None:
    assert shutil.which("sysbench"), "Debian's sysbench is needed (`.ci/run` installs it)"
    tables = soak_size(short=3, long=8)
    rows = soak_size(short=2000, long=20000)
    seconds = soak_size(short=8, long=60)
    fresh_source(own_mariadb, DATABASE)
    own_mariadb.sql(f"CREATE DATABASE {DATABASE}")
    with following(port, own_mariadb, applier) as cursor:
        sysbench(own_mariadb, "prepare", keys, tables=tables, rows=rows, seconds=seconds)
        out = sysbench(own_mariadb, "run", keys, tables=tables, rows=rows, seconds=seconds)
        assert committed(out) > 0, out
        caught_up(cursor, own_mariadb, 120.0 + 10 * seconds)
    assert assert_same_databases(own_mariadb, engine, DATABASE) >= tables * rows // 2
