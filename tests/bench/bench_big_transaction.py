"""One large transaction through the Change Stream Applier: the time, and where the memory goes.

Generates once (or reuses, with ``--dir``) a relay log of three transactions: ``CREATE
DATABASE big``, ``CREATE TABLE big.t1 (id BIGINT PRIMARY KEY, n INT, payload VARCHAR(1024))``
and ONE transaction of about ``--size-mb`` MiB of row events: inserts of rows with a
1,000-byte payload, split near 8 KiB per Write_rows event as a source does. The generator
encodes a transaction whole, so it runs in a child process (this script with
``--generate-only``): its memory is not this process's.

Then a channel with ``APPLIER_VERSION=2``, ``APPLIER_WORKER_COUNT=4``,
``APPLIER_EVENT_MEMORY_LIMIT=--limit-mb`` and ``replica_preserve_commit_order=ON`` applies it
into the ``--engine``: the in-memory engine, or a ``SparkEngine`` with its default settings.
The CSA enforces ``max(APPLIER_EVENT_MEMORY_LIMIT, replica_max_allowed_packet)`` (INT.0033);
``replica_max_allowed_packet`` is set to ``--packet-mb`` (by default the limit, so that the
limit asked for is the one enforced; the server's default is 1024, which makes any smaller
limit 1 GiB).

Measured:

* the time from START until the transaction's GTID is executed and, for Spark, durable
  (``engine.flush()`` returned);
* this process's memory: its peak RSS (``VmHWM``, reset just before START when the kernel
  allows it) and, sampled every ``--interval`` seconds from ``/proc/self/status``, its RSS
  per phase (applying: START until executed; flushing: executed until durable);
* the Spark driver JVM's the same way (``/proc/<pid>/status``), and its maximum heap;
* in the same samples: the CSA's event memory held (the channel's ``ResourceMonitor``), the
  row locks held (one per row the open transaction has staged) and the bytes Arrow has
  allocated; at the end the CSA's event-memory accounting (peak, waits, oversized grants);
* the committed rows as Python objects, and how many bytes of RSS each row added.

Checks (exit code 1 when one fails): the channel applies the transaction without error
within the time limit, and the engine makes it durable; the engine's rows (and, for Spark,
the rows recorded in Spark and the recorded GTIDs) have the generated count and checksum
(sums of ``id``, ``n`` and CRC32 of ``payload``); the event memory held never exceeded the
limit (no oversized grant) and is all released. A run whose RSS (this process and the
driver JVM) passes ``--max-rss-gib`` fails: while applying, the channel is stopped; while
flushing (nothing can interrupt a Spark write), and when the flush does not end within its
time limit (a driver JVM out of heap can leave it hanging), the figures are reported and the
process exits at once.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_big_transaction.py [--size-mb 1024] [--limit-mb 64]
        [--engine memory|spark] [--packet-mb MB] [--driver-memory 4g] [--dir CACHE_DIR]
        [--json PATH] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import shutil
import string
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.bench_spark_engine import jvm_pid  # noqa: E402
from tests.bench.benchkit import cache_root, load_average, machine_line  # noqa: E402
from tests.unit.csa_apply.harness import Replica, copy_into_relay_log  # noqa: E402

from spark_replica.applier_core.binlog.constants import ColumnType  # noqa: E402
from spark_replica.applier_core.channels.config import ChannelConfig  # noqa: E402
from spark_replica.applier_core.csa.service import CsaChannel  # noqa: E402
from spark_replica.applier_core.gtid import GtidSet  # noqa: E402
from spark_replica.applier_core.provider.resources import EVENT_MEMORY, ResourceStats  # noqa: E402
from spark_replica.applier_core.settings import SystemVariables  # noqa: E402
from spark_replica.applier_core.storage import InMemoryEngine, TableRef  # noqa: E402
from spark_replica.tools.generator.schema import ColumnDef, TableDef  # noqa: E402
from spark_replica.tools.generator.simulate import (  # noqa: E402
    BASE_TIME_US,
    SERVER_UUID,
    GeneratedTransaction,
    RowChange,
)
from spark_replica.tools.generator.writer import write_binlogs  # noqa: E402

MIB = 1 << 20
DEFAULT_SIZE_MB = 1024
DEFAULT_LIMIT_MB = 64
QUICK_SIZE_MB = 8
QUICK_LIMIT_MB = 1
WORKERS = 4
#: Bytes of each row's ``payload`` (ASCII: as many characters).
PAYLOAD = 1000
#: Bytes of one row in a Write_rows event: null bitmap, BIGINT, INT, 2-byte length, payload.
ROW_BYTES = 1 + 8 + 4 + 2 + PAYLOAD
DATABASE = "big"
TABLE = "t1"
CHANNEL = "bench"
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
BINLOG_BASE = "binlog"
#: The transaction's GTID: the third of the relay log, after the two DDL.
GNO = 3
#: How often the run looks whether its channel stopped while it waits for the GTID.
POLL = 0.2
DEFAULT_INTERVAL = 0.05
DEFAULT_MAX_RSS_GIB = 16.0
#: Points of the sampled timeline kept in the JSON file.
TIMELINE_POINTS = 400

Checksum = dict[str, int]


# -- the relay log ---------------------------------------------------------------------------
def table_def() -> TableDef:
    return TableDef(
        DATABASE,
        TABLE,
        (
            ColumnDef("id", "BIGINT", ColumnType.LONGLONG, nullable=False),
            ColumnDef("n", "INT", ColumnType.LONG, nullable=False),
            # utf8mb4: the Table_map carries the length in bytes, 4 per character.
            ColumnDef("payload", "VARCHAR(1024)", ColumnType.VARCHAR, nullable=False,
                      params=(4 * 1024,)),
        ),
    )  # fmt: skip


def row_count(size_mb: int) -> int:
    """Rows whose Write_rows images make about ``size_mb`` MiB."""
    return max(1, size_mb * MIB // ROW_BYTES)


def rows(count: int, seed: int = 1) -> Iterator[tuple[int, int, str]]:
    """Row ``id`` (1..count): its number ``n`` and a payload starting with the id, the rest
    taken from a pool of random texts (so that making a million rows costs little)."""
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits
    pool = ["".join(rng.choices(alphabet, k=PAYLOAD)) for _ in range(257)]
    for key in range(1, count + 1):
        head = f"{key:012d}:"
        yield key, key * 7919 % 1_000_003, head + pool[key % len(pool)][len(head) :]


def checksum(found: Iterable[Sequence[object]]) -> Checksum:
    """Row count and sums of ``id``, ``n`` and the CRC32 of ``payload`` (UTF-8)."""
    count = ids = numbers = crcs = 0
    for key, number, payload in found:
        assert isinstance(key, int) and isinstance(number, int) and isinstance(payload, str)
        count += 1
        ids += key
        numbers += number
        crcs += zlib.crc32(payload.encode())
    return {"rows": count, "sum_id": ids, "sum_n": numbers, "sum_crc32": crcs}


def transactions(count: int) -> list[GeneratedTransaction]:
    """CREATE DATABASE, CREATE TABLE, and one transaction inserting ``count`` rows."""
    table = table_def()
    changes = tuple(RowChange(table, "insert", None, row) for row in rows(count))

    def trx(gno: int, **kw: Any) -> GeneratedTransaction:
        return GeneratedTransaction(gno=gno, last_committed=gno - 1, sequence_number=gno,
                                    commit_time_us=BASE_TIME_US + gno * 1000, file_index=1,
                                    **kw)  # fmt: skip

    return [
        trx(1, ddl=f"CREATE DATABASE `{DATABASE}`", ddl_database=DATABASE),
        trx(2, ddl=table.create_statement(), ddl_database=DATABASE),
        trx(GNO, changes=changes),
    ]


@dataclass(frozen=True, slots=True)
class RelayLogSet:
    size_mb: int
    directory: Path
    files: tuple[Path, ...]
    rows: int
    expected: Checksum
    #: Seconds and peak RSS of the child process that generated it; None when reused.
    generate_seconds: float | None
    generate_peak: int | None

    @property
    def size(self) -> int:
        return sum(path.stat().st_size for path in self.files)

    @property
    def gtids(self) -> GtidSet:
        return GtidSet.parse(f"{SERVER_UUID}:1-{GNO}")


def _planned(size_mb: int) -> dict[str, Any]:
    return {"size_mb": size_mb, "rows": row_count(size_mb), "payload": PAYLOAD,
            "ddl": table_def().create_statement()}  # fmt: skip


def set_name(size_mb: int) -> str:
    """The cache directory of the set of ``size_mb``."""
    return f"big-transaction-{size_mb}mb"


def generate(root: Path, size_mb: int) -> None:
    """Write the relay log set of ``size_mb`` and its manifest into ``root/<name>`` (what the
    child process does)."""
    directory = root / set_name(size_mb)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MANIFEST).unlink(missing_ok=True)
    for path in directory.glob(f"{BINLOG_BASE}.*"):
        path.unlink()
    start = time.perf_counter()
    count = row_count(size_mb)
    files = write_binlogs(transactions(count), directory, server_uuid=SERVER_UUID,
                          base=BINLOG_BASE)  # fmt: skip
    manifest = {
        "format": MANIFEST_FORMAT,
        "planned": _planned(size_mb),
        "expected": checksum(rows(count)),
        "files": [{"name": p.name, "size": p.stat().st_size} for p in files],
        "generate_seconds": time.perf_counter() - start,
        "generate_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")


def _read(directory: Path, size_mb: int, reused: bool) -> RelayLogSet | None:
    """The complete set planned as ``size_mb`` in ``directory``, or None."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
        if manifest.get("format") != MANIFEST_FORMAT or manifest["planned"] != _planned(size_mb):
            return None
        files = tuple(directory / entry["name"] for entry in manifest["files"])
        sizes = [entry["size"] for entry in manifest["files"]]
        if [path.stat().st_size for path in files] != sizes:
            return None
        return RelayLogSet(
            size_mb=size_mb, directory=directory, files=files,
            rows=int(manifest["planned"]["rows"]), expected=dict(manifest["expected"]),
            generate_seconds=None if reused else float(manifest["generate_seconds"]),
            generate_peak=None if reused else int(manifest["generate_peak"]),
        )  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError):
        return None


def prepare(root: Path, size_mb: int) -> RelayLogSet:
    """The set in ``root`` when its manifest matches, else generated there by a child."""
    directory = root / set_name(size_mb)
    cached = _read(directory, size_mb, reused=True)
    if cached is not None:
        return cached
    command = [sys.executable, str(Path(__file__).resolve()), "--generate-only",
               "--size-mb", str(size_mb), "--dir", str(root)]  # fmt: skip
    subprocess.run(command, check=True)
    made = _read(directory, size_mb, reused=False)
    if made is None:
        raise RuntimeError(f"the child process wrote no complete relay log in {directory}")
    return made


# -- memory ----------------------------------------------------------------------------------
def _status(pid: int | str) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return {}
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def status_bytes(pid: int | str, name: str) -> int | None:
    """``VmRSS``, ``VmHWM``, ... of ``/proc/<pid>/status`` in bytes (None: unreadable)."""
    number, _, unit = _status(pid).get(name, "").partition(" ")
    return int(number) * 1024 if number.isdigit() and unit == "kB" else None


def reset_peak(pid: int | str) -> bool:
    """Reset the process's ``VmHWM`` to its current RSS; False when the kernel refuses."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class Sample:
    seconds: float
    phase: str
    python_rss: int
    jvm_rss: int | None
    event_memory: int
    #: Row locks held: one per row the open transaction has staged.
    row_locks: int
    arrow_bytes: int


def _arrow_bytes() -> Callable[[], int]:
    """Bytes Arrow's default memory pool has allocated in this process (0 without Arrow)."""
    try:
        import pyarrow as pa
    except ImportError:
        return lambda: 0
    return lambda: int(pa.total_allocated_bytes())


class Sampler:
    """Samples RSS, the CSA's event memory, the row locks and Arrow's memory every
    ``interval`` seconds in its own thread; ``exceeded`` is set once this process's and the
    JVM's RSS together pass ``ceiling`` bytes."""

    def __init__(self, interval: float, jvm: int | None, engine: InMemoryEngine,
                 ceiling: int) -> None:  # fmt: skip
        self.interval = interval
        self.jvm = jvm
        self.engine = engine
        self.ceiling = ceiling
        self.phase = "apply"
        self.samples: list[Sample] = []
        self.exceeded = threading.Event()
        self.channel: CsaChannel | None = None
        self._arrow = _arrow_bytes()
        self._stop = threading.Event()
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="bench-memory-sampler")

    def start(self) -> None:
        self._start = time.perf_counter()
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling (idempotent), with a last sample when the thread ran."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
            self.take()

    def take(self) -> Sample:
        """One sample now (also called by the run at the ends of its phases)."""
        channel = self.channel
        sample = Sample(
            seconds=time.perf_counter() - self._start,
            phase=self.phase,
            python_rss=status_bytes("self", "VmRSS") or 0,
            jvm_rss=None if self.jvm is None else status_bytes(self.jvm, "VmRSS"),
            event_memory=0 if channel is None else channel.memory.held(EVENT_MEMORY),
            row_locks=self.engine.locks.stats().held,
            arrow_bytes=self._arrow(),
        )
        self.samples.append(sample)
        if sample.python_rss + (sample.jvm_rss or 0) > self.ceiling:
            self.exceeded.set()
        return sample

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.take()

    def most(self, metric: str, phase: str | None = None) -> int | None:
        """The largest sampled value of ``metric`` (in ``phase``, or in any)."""
        values = [getattr(s, metric) for s in self.samples if phase in (None, s.phase)]
        values = [v for v in values if v is not None]
        return max(values) if values else None

    def timeline(self) -> list[dict[str, Any]]:
        """At most ``TIMELINE_POINTS`` samples, evenly spread (the last one included)."""
        step = max(1, -(-len(self.samples) // TIMELINE_POINTS))
        kept = self.samples[::step]
        if self.samples and kept[-1] is not self.samples[-1]:
            kept.append(self.samples[-1])
        return [asdict(sample) for sample in kept]


def python_objects_bytes(found: Iterable[Sequence[object]]) -> int:
    """Bytes of the rows as Python objects: each tuple and its values (the key index, a dict
    of one-value key tuples, comes on top)."""
    size = sys.getsizeof
    return sum(size(row) + sum(size(value) for value in row) for row in found)


# -- the run ---------------------------------------------------------------------------------
@dataclass
class LimitedReplica(Replica):
    """The harness's channel with an ``APPLIER_EVENT_MEMORY_LIMIT``."""

    memory_limit: int = 0

    def config(self) -> ChannelConfig:
        config = super().config()
        applier = replace(config.applier, applier_event_memory_limit=self.memory_limit)
        return ChannelConfig(name=config.name, applier=applier)


@dataclass(slots=True)
class RunResult:
    engine: str
    limit: int
    packet: int
    workers: int
    executed_seconds: float | None = None
    durable_seconds: float | None = None
    event_memory: ResourceStats | None = None
    #: Peak RSS (VmHWM) and what it covers: "the run" (reset before START) or "the process".
    python_peak: int | None = None
    python_peak_scope: str = "the process"
    python_rss_start: int = 0
    python_rss_executed: int | None = None
    python_rss_durable: int | None = None
    jvm_peak: int | None = None
    jvm_peak_scope: str = "the process"
    jvm_rss_start: int | None = None
    jvm_max_heap: int | None = None
    table_objects: int | None = None
    prefetched: int = 0
    prefetch_batches: int = 0
    #: The flush was still running when the run gave up on it.
    hung: bool = False
    checks: dict[str, str | None] = field(default_factory=dict)

    @property
    def errors(self) -> list[str]:
        return [f"{name}: {error}" for name, error in self.checks.items() if error is not None]


def _open_engine(kind: str, spark: Any, work: Path) -> tuple[InMemoryEngine, Callable[[], None]]:
    """The engine, and what closes it."""
    if kind == "memory":
        return InMemoryEngine(), lambda: None
    from spark_replica.applier_core.storage.spark.engine import SparkEngine
    from spark_replica.metadata.factory import open_store

    store = open_store(f"sqlite:///{work / 'metadata.db'}")
    engine = SparkEngine(spark, str(work / "warehouse"), store)

    def close() -> None:
        engine.close()
        store.close()

    return engine, close


def _wait_executed(replica: Replica, target: GtidSet, sampler: Sampler, limit: float) -> str | None:
    """Wait until ``target`` is executed; what went wrong, or None."""
    deadline = time.perf_counter() + limit
    while not replica.executed.wait_for(target, POLL):
        if replica.exited.is_set():
            return f"the channel stopped: {replica.exits[-1] if replica.exits else None}"
        if sampler.exceeded.is_set():
            return f"the RSS passed the ceiling of {sampler.ceiling / (1 << 30):.1f} GiB"
        if time.perf_counter() > deadline:
            return f"the transaction was not executed within {limit:.0f} s"
    return None


def _flush(engine: InMemoryEngine, sampler: Sampler, limit: float) -> tuple[str | None, bool]:
    """``engine.flush()`` in a thread of its own, watched: what went wrong (or None), and
    whether the flush is still running (a Spark write that hangs, or the RSS ceiling
    passed: nothing can interrupt it)."""
    errors: list[RuntimeError] = []

    def flush() -> None:
        try:
            engine.flush()
        except RuntimeError as exc:  # the Spark write failed: the engine says why
            errors.append(exc)

    thread = threading.Thread(target=flush, name="bench-flush", daemon=True)
    thread.start()
    deadline = time.perf_counter() + limit
    while thread.is_alive():
        thread.join(POLL)
        if sampler.exceeded.is_set() and thread.is_alive():
            return f"the RSS passed the ceiling of {sampler.ceiling / (1 << 30):.1f} GiB", True
        if time.perf_counter() > deadline and thread.is_alive():
            return f"the flush did not end within {limit:.0f} s", True
    return (f"the flush failed: {errors[0]}" if errors else None), False


def _spark_checksum(spark: Any, engine: Any) -> Checksum:
    ref = TableRef(DATABASE, TABLE)
    with engine.snapshot() as snapshot:
        view = snapshot.view(ref)
        row = engine.spark.sql(
            f"SELECT COUNT(*), SUM(id), SUM(n), SUM(CAST(crc32(CAST(payload AS BINARY)) "
            f"AS BIGINT)) FROM `{view}`"
        ).collect()[0]
    return {"rows": int(row[0]), "sum_id": int(row[1] or 0), "sum_n": int(row[2] or 0),
            "sum_crc32": int(row[3] or 0)}  # fmt: skip


def _differs(found: Checksum, expected: Checksum) -> str | None:
    return None if found == expected else f"found {found}, generated {expected}"


def run(
    relay: RelayLogSet, args: argparse.Namespace, spark: Any, work: Path
) -> tuple[RunResult, Sampler]:
    """Apply the relay log set with the CSA into a fresh engine in ``work``."""
    limit, packet = args.limit_mb * MIB, args.packet_mb * MIB
    result = RunResult(args.engine, limit, packet, args.workers)
    data_dir = work / "data"
    copy_into_relay_log(relay.files, data_dir, CHANNEL)
    engine, close_engine = _open_engine(args.engine, spark, work)
    settings = SystemVariables({})
    settings.set_internal("replica_max_allowed_packet", packet)
    replica = LimitedReplica(data_dir, workers=args.workers, commit_order=True, channel=CHANNEL,
                             engine=engine, settings=settings, memory_limit=limit)  # fmt: skip
    jvm = jvm_pid(spark) if spark is not None else None
    if spark is not None:
        result.jvm_max_heap = int(
            spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()
        )
    sampler = Sampler(args.interval, jvm, engine, int(args.max_rss_gib * (1 << 30)))
    time_limit = 120.0 + 2.0 * relay.size_mb
    try:
        gc.collect()
        if reset_peak("self"):
            result.python_peak_scope = "the run"
        if jvm is not None and reset_peak(jvm):
            result.jvm_peak_scope = "the run"
        result.python_rss_start = sampler.take().python_rss
        result.jvm_rss_start = sampler.samples[-1].jvm_rss
        start = time.perf_counter()
        replica.start()
        assert isinstance(replica.handle, CsaChannel)
        sampler.channel = replica.handle
        sampler.start()
        failure = _wait_executed(replica, relay.gtids, sampler, time_limit)
        result.checks["applied"] = failure
        if failure is None:
            result.executed_seconds = time.perf_counter() - start
            result.python_rss_executed = sampler.take().python_rss
            sampler.phase = "flush"
            unflushed, result.hung = _flush(engine, sampler, 120.0 + 0.5 * relay.size_mb)
            result.checks["durable"] = unflushed
            if unflushed is None:
                result.durable_seconds = time.perf_counter() - start
                result.python_rss_durable = sampler.take().python_rss
        sampler.stop()
        channel = replica.handle
        replica.stop()
        result.event_memory = channel.memory.stats(EVENT_MEMORY)
        result.prefetched = channel.prefetcher.stats.bytes_read
        result.prefetch_batches = channel.prefetcher.stats.batches
        result.python_peak = status_bytes("self", "VmHWM")
        result.jvm_peak = None if jvm is None else status_bytes(jvm, "VmHWM")
        if replica.exits and failure is None:
            result.checks["applied"] = f"the channel stopped: {replica.exits[-1]}"
        if result.durable_seconds is not None:
            _check_content(result, relay, engine, spark)
        _check_event_memory(result)
    finally:
        sampler.stop()
        replica.close()
        if not result.hung:  # else closing would wait for the flush forever
            close_engine()
    return result, sampler


def _check_content(result: RunResult, relay: RelayLogSet, engine: InMemoryEngine,
                   spark: Any) -> None:  # fmt: skip
    found = engine.rows(TableRef(DATABASE, TABLE))
    result.checks["content in the engine"] = _differs(checksum(found), relay.expected)
    result.table_objects = python_objects_bytes(found)
    del found
    if spark is None:
        return
    result.checks["content in Spark"] = _differs(_spark_checksum(spark, engine), relay.expected)
    durable: Any = engine
    recorded = GtidSet.from_intervals(durable.durable_state().gtids)
    result.checks["GTIDs recorded"] = (
        None if recorded == relay.gtids else f"recorded {recorded.format()}"
    )


def _check_event_memory(result: RunResult) -> None:
    stats = result.event_memory
    if stats is None:
        result.checks["event memory"] = "not measured"
        return
    problems = []
    if stats.peak > stats.limit:
        problems.append(f"peak {stats.peak:,} B above the limit {stats.limit:,} B")
    if stats.oversized:
        problems.append(f"{stats.oversized} oversized grant(s)")
    if stats.held:
        problems.append(f"{stats.held:,} B still held")
    result.checks["event memory"] = "; ".join(problems) or None


# -- report ----------------------------------------------------------------------------------
def mib(value: int | None) -> str:
    return "—" if value is None else f"{value / MIB:,.0f} MiB"


def describe(relay: RelayLogSet) -> None:
    generated = (
        "reused from the cache directory"
        if relay.generate_seconds is None
        else f"generated in {relay.generate_seconds:.1f} s by a child process "
        f"(its peak RSS {mib(relay.generate_peak)})"
    )
    print(f"relay log: CREATE DATABASE, CREATE TABLE, then 1 transaction of {relay.rows:,} "
          f"row inserts ({PAYLOAD:,}-byte payloads, about {relay.size_mb:,} MiB of row "
          f"images); {relay.size / MIB:,.1f} MiB in {len(relay.files)} file(s); "
          f"{generated}")  # fmt: skip


def show(result: RunResult, relay: RelayLogSet, sampler: Sampler) -> None:
    r = result
    print(f"CSA: APPLIER_VERSION=2, APPLIER_WORKER_COUNT={r.workers}, "
          f"APPLIER_EVENT_MEMORY_LIMIT={mib(r.limit)}, replica_max_allowed_packet="
          f"{mib(r.packet)}: effective event memory limit {mib(max(r.limit, r.packet))}; "
          f"commit order on; engine {r.engine}")  # fmt: skip
    if r.executed_seconds is not None:
        rate = relay.rows / r.executed_seconds
        print(f"time: executed after {r.executed_seconds:.1f} s ({rate:,.0f} rows/s, "
              f"{relay.size / MIB / r.executed_seconds:,.1f} MiB/s)", end="")  # fmt: skip
        if r.engine == "spark" and r.durable_seconds is not None:
            print(f"; durable after {r.durable_seconds:.1f} s", end="")
        print()
    stats = r.event_memory
    if stats is not None:
        print(f"event memory (CSA accounting): peak {mib(stats.peak)} of the "
              f"{mib(stats.limit)} limit, {stats.acquisitions:,} acquisitions, "
              f"{stats.waits:,} waits ({stats.wait_seconds:.1f} s), {stats.oversized} "
              f"oversized grants, {stats.held:,} B held at the end")  # fmt: skip
    print(f"rows staged at once (row locks held): at most {sampler.most('row_locks') or 0:,} "
          f"of {relay.rows:,}")  # fmt: skip
    print(f"prefetcher: read {mib(r.prefetched)} in {r.prefetch_batches:,} batches")
    apply_rss, flush_rss = sampler.most("python_rss", "apply"), sampler.most("python_rss", "flush")
    print(f"python process: RSS {mib(r.python_rss_start)} at START, {mib(r.python_rss_executed)} "
          f"when executed, {mib(r.python_rss_durable)} when durable; peak {mib(r.python_peak)} "
          f"(VmHWM over {r.python_peak_scope}); sampled max {mib(apply_rss)} applying, "
          f"{mib(flush_rss)} flushing")  # fmt: skip
    if r.python_rss_executed is not None:
        grown = (r.python_rss_executed - r.python_rss_start) / relay.rows
        print(f"  RSS added per row once executed: {grown:,.0f} B (row image "
              f"{ROW_BYTES:,} B); committed rows as Python objects {mib(r.table_objects)}"
              f"{'' if r.table_objects is None else f' ({r.table_objects / relay.rows:,.0f} B/row)'}")  # noqa: E501  # fmt: skip
    print(f"  Arrow allocated at most {mib(sampler.most('arrow_bytes'))}; event memory "
          f"sampled at most {mib(sampler.most('event_memory'))}")  # fmt: skip
    if r.engine == "spark":
        print(f"spark driver JVM: RSS {mib(r.jvm_rss_start)} at START; peak {mib(r.jvm_peak)} "
              f"(VmHWM over {r.jvm_peak_scope}); sampled max "
              f"{mib(sampler.most('jvm_rss', 'apply'))} applying, "
              f"{mib(sampler.most('jvm_rss', 'flush'))} flushing; max heap "
              f"{mib(r.jvm_max_heap)}")  # fmt: skip
    for name, error in r.checks.items():
        print(f"check {name}: {'ok' if error is None else 'FAILED: ' + error}")


def figures(result: RunResult, relay: RelayLogSet, sampler: Sampler) -> dict[str, Any]:
    r = result
    return {
        "relay_log": {"size_mb": relay.size_mb, "bytes": relay.size, "rows": relay.rows,
                      "payload": PAYLOAD, "expected": relay.expected,
                      "generate_seconds": relay.generate_seconds,
                      "generate_peak": relay.generate_peak},
        "run": asdict(r) | {"effective_limit": max(r.limit, r.packet), "errors": r.errors},
        "sampled": {
            "interval": sampler.interval,
            "python_rss_apply": sampler.most("python_rss", "apply"),
            "python_rss_flush": sampler.most("python_rss", "flush"),
            "jvm_rss_apply": sampler.most("jvm_rss", "apply"),
            "jvm_rss_flush": sampler.most("jvm_rss", "flush"),
            "event_memory": sampler.most("event_memory"),
            "row_locks": sampler.most("row_locks"),
            "arrow_bytes": sampler.most("arrow_bytes"),
        },
        "timeline": sampler.timeline(),
    }  # fmt: skip


# -- main ------------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=None,
                        help=f"MiB of row images in the transaction (default {DEFAULT_SIZE_MB}, "
                        f"{QUICK_SIZE_MB} with --quick)")  # fmt: skip
    parser.add_argument("--limit-mb", type=int, default=None,
                        help=f"APPLIER_EVENT_MEMORY_LIMIT in MiB (default {DEFAULT_LIMIT_MB}, "
                        f"{QUICK_LIMIT_MB} with --quick)")  # fmt: skip
    parser.add_argument("--packet-mb", type=int, default=None,
                        help="replica_max_allowed_packet in MiB, 1..1024 (default: the limit, "
                        "capped at 1024)")  # fmt: skip
    parser.add_argument("--engine", choices=("memory", "spark"), default="spark",
                        help="the storage engine (default spark)")  # fmt: skip
    parser.add_argument(
        "--workers", type=int, default=WORKERS, help=f"APPLIER_WORKER_COUNT (default {WORKERS})"
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL,
        help=f"seconds between memory samples (default {DEFAULT_INTERVAL})",
    )
    parser.add_argument("--max-rss-gib", type=float, default=DEFAULT_MAX_RSS_GIB,
                        help="stop the run when this process and the driver JVM together pass "
                        f"this RSS, in GiB (default {DEFAULT_MAX_RSS_GIB:g})")  # fmt: skip
    parser.add_argument("--driver-memory", default=None,
                        help="spark.driver.memory of the SparkSession this script starts "
                        "(default: Spark's)")  # fmt: skip
    parser.add_argument("--dir", default=None,
                        help="cache directory for the generated relay log (default: a "
                        "temporary one)")  # fmt: skip
    parser.add_argument(
        "--json", metavar="PATH", default=None, help="also write every figure to PATH as JSON"
    )
    parser.add_argument("--quick", action="store_true", help="a small transaction, for smoke tests")
    parser.add_argument("--generate-only", action="store_true",
                        help="write the relay log into --dir and exit (what the child process "
                        "does)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.size_mb is None:
        args.size_mb = QUICK_SIZE_MB if args.quick else DEFAULT_SIZE_MB
    if args.limit_mb is None:
        args.limit_mb = QUICK_LIMIT_MB if args.quick else DEFAULT_LIMIT_MB
    if args.packet_mb is None:
        args.packet_mb = min(max(1, args.limit_mb), 1024)
    if args.size_mb < 1 or args.limit_mb < 0 or not 1 <= args.packet_mb <= 1024:
        parser.error("--size-mb must be at least 1, --limit-mb at least 0, --packet-mb "
                     "within 1..1024")  # fmt: skip
    if args.workers < 1 or args.interval <= 0 or args.max_rss_gib <= 0:
        parser.error("--workers must be at least 1, --interval and --max-rss-gib above 0")
    if args.generate_only and args.dir is None:
        parser.error("--generate-only needs --dir")
    return args


@contextmanager
def spark_session(args: argparse.Namespace, given: Any, work: Path) -> Iterator[Any]:
    """``given``, or for the Spark engine a session started here (stopped afterwards)."""
    if args.engine != "spark" or given is not None:
        yield given
        return
    from spark_replica.applier_core.storage.spark.session import get_spark, stop_spark

    options = {"spark.sql.warehouse.dir": str(work / "spark-warehouse")}
    if args.driver_memory is not None:
        options["spark.driver.memory"] = args.driver_memory
    start = time.perf_counter()
    session = get_spark(options)
    print(f"SparkSession started in {time.perf_counter() - start:.1f} s")
    try:
        yield session
    finally:
        stop_spark()


def main(argv: Sequence[str] | None = None, spark: Any | None = None) -> int:
    """Run the benchmark; ``spark``: a SparkSession for the Spark engine (default: one started
    here). 1 when a check fails."""
    args = parse_args(argv)
    if args.generate_only:
        generate(Path(args.dir), args.size_mb)
        return 0
    machine = machine_line()
    print(f"{machine}; load average {load_average()}", flush=True)
    with cache_root(args.dir, "bench-big-transaction-") as root:
        relay = prepare(root, args.size_mb)
        describe(relay)
        with tempfile.TemporaryDirectory(prefix="bench-big-transaction-run-") as tmp:
            work = Path(tmp)
            with spark_session(args, spark, work) as session:
                result, sampler = run(relay, args, session, work)
                if result.hung:
                    abandon(result, relay, sampler, machine, args, [work, root])
        return report(result, relay, sampler, machine, args.json)


def abandon(result: RunResult, relay: RelayLogSet, sampler: Sampler, machine: str,
            args: argparse.Namespace, directories: Sequence[Path]) -> None:  # fmt: skip
    """Report a run whose flush cannot be stopped, remove its files (the cache directory
    only when it is a temporary one) and exit at once: closing the engine or the
    SparkSession would wait for the flush."""
    report(result, relay, sampler, machine, args.json)
    print("the flush is still running and cannot be stopped: exiting now", flush=True)
    for directory in directories[: None if args.dir is None else 1]:
        shutil.rmtree(directory, ignore_errors=True)
    os._exit(1)


def report(result: RunResult, relay: RelayLogSet, sampler: Sampler, machine: str,
           json_path: str | None) -> int:  # fmt: skip
    """Print the figures (and write them to ``json_path``); the exit code."""
    show(result, relay, sampler)
    written = {"machine": machine, "load_average_end": load_average(),
               **figures(result, relay, sampler)}  # fmt: skip
    print(f"load average at the end: {written['load_average_end']} (other processes share "
          "the CPUs)")  # fmt: skip
    if json_path is not None:
        Path(json_path).write_text(json.dumps(written, indent=1, default=str) + "\n")
        print(f"figures written to {json_path}")
    if result.errors:
        print(f"checks: {len(result.errors)} FAILED")
        return 1
    print("checks: every check passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
