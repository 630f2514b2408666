"""Receiver throughput: the built-in source's binary log pulled into a relay log on loopback,
beside the raw rate at which the source can send it.

Generates once (or reuses, with ``--dir``) a binary log of ``--transactions`` generated
transactions (the applier benchmark's sysbench shape: 4 row changes each over 8 tables), and
serves it with the built-in binlog server (``spark-replica source``, its own process, as in
production: it does not share this process's GIL). Then, ``--rounds`` times, in one run:

* **raw**: a bare client logs in, asks for everything (COM_BINLOG_DUMP_GTID, non-blocking) and
  reads the bytes until the source closes the connection, without even framing them: the
  rate at which the source can send;
* **receiver**: the replica's receiver thread (``Receiver``, as START REPLICA IO_THREAD starts
  it) dumps the same from an empty GTID set into a fresh relay log, tracking transactions,
  until the last GTID is in its Received_transaction_set.

Printed per round and as the best of the rounds: events/s, MB/s and the receiver's ratio to
the raw rate (both share the machine's two cores with the source's dump thread, so the ratio
is what matters; the absolute figures move with the machine's load), and the receiver
thread's CPU time per event, the steadiest figure of the three.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_receiver.py [--transactions 50000] [--rounds 3]
        [--dir CACHE_DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.benchkit import cache_root, load_average, machine_line  # noqa: E402
from tests.helpers.builtin_source import REPL_PASSWORD as PASSWORD  # noqa: E402
from tests.helpers.builtin_source import REPL_USER as USER  # noqa: E402
from tests.helpers.builtin_source import SourceProcess  # noqa: E402

from spark_replica.applier_core.channels.components import ThreadContext  # noqa: E402
from spark_replica.applier_core.channels.config import (  # noqa: E402
    ChannelConfig,
    SourceConnection,
)
from spark_replica.applier_core.channels.relay_logs import RelayLogs  # noqa: E402
from spark_replica.applier_core.channels.status import ErrorInfo, StatusBoard  # noqa: E402
from spark_replica.applier_core.gtid import GtidSet  # noqa: E402
from spark_replica.applier_core.progress import ExecutedGtids  # noqa: E402
from spark_replica.applier_core.receiver.client import Security, SourceClient  # noqa: E402
from spark_replica.applier_core.receiver.dump import dump_gtid, prepare_mysql  # noqa: E402
from spark_replica.applier_core.receiver.thread import Receiver  # noqa: E402
from spark_replica.applier_core.settings import SystemVariables  # noqa: E402
from spark_replica.tools.generator.simulate import (  # noqa: E402
    WorkloadSpec,
    simulate,
)
from spark_replica.tools.generator.writer import TransactionEncoder  # noqa: E402
from spark_replica.tools.source import SourceBinlog  # noqa: E402

CHANNEL = "bench"
POLL = 0.002


@dataclass(frozen=True)
class Figures:
    events: int
    size: int
    seconds: float
    cpu: float = 0.0  # the receiver thread's CPU seconds (user + system)

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds

    @property
    def megabytes_per_second(self) -> float:
        return self.size / self.seconds / 1e6

    @property
    def cpu_per_event(self) -> float:
        """The receiver thread's CPU µs per event: steadier than the rate on a loaded VM."""
        return self.cpu / self.events * 1e6


def thread_cpu(native_id: int | None) -> float:
    """CPU seconds (user + system) a thread of this process has used, from /proc."""
    fields = Path(f"/proc/self/task/{native_id}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def prepare(directory: Path, transactions: int) -> tuple[list[tuple[str, int]], GtidSet]:
    """The source's binary log (generated on first use): its files and sizes, and every GTID
    in it."""
    spec = WorkloadSpec(tables=8, rows_per_table=1000, transactions=transactions, clients=16)
    marker = directory / f"ready-{transactions}"
    if not marker.exists():
        shutil.rmtree(directory / "binlog", ignore_errors=True)
        binlog = SourceBinlog(directory / "binlog")
        binlog.open()
        encoder = TransactionEncoder(spec.server_uuid)
        for trx in simulate(spec)[0]:
            binlog.append(encoder.encode(trx), (spec.server_uuid, trx.gno))
        binlog.close()
        marker.touch()
    binlog = SourceBinlog(directory / "binlog")
    binlog.open()
    try:
        return binlog.files(), binlog.executed()
    finally:
        binlog.close()


def raw_rate(port: int) -> Figures:
    client = SourceClient.connect("127.0.0.1", port, USER, PASSWORD,
                                  security=Security(get_public_key=True))  # fmt: skip
    try:
        prepare_mysql(client)
        chunks = []
        sock = client.stream.sock
        start = time.perf_counter()
        dump_gtid(client, 99, GtidSet(), blocking=False)
        while chunk := sock.recv(1 << 20):  # the source closes the connection after EOF
            chunks.append(chunk)
        seconds = time.perf_counter() - start
    finally:
        client.close()
    data = b"".join(chunks)
    count = size = position = 0
    while position < len(data):  # framed afterwards, outside the measurement
        length = int.from_bytes(data[position : position + 3], "little")
        if data[position + 4] == 0x00:
            count, size = count + 1, size + length - 1
        position += 4 + length
    return Figures(count, size, seconds)


def receiver_rate(port: int, work: Path, everything: GtidSet, expected: Figures) -> Figures:
    shutil.rmtree(work, ignore_errors=True)
    settings = SystemVariables({})
    settings.set_internal("server_id", 2)
    relay_logs = RelayLogs(work)
    status = StatusBoard()
    exits: list[ErrorInfo | None] = []
    connection = SourceConnection(host="127.0.0.1", port=port, user=USER, password=PASSWORD,
                                  auto_position=True, get_public_key=True)  # fmt: skip
    context = ThreadContext(
        config=ChannelConfig(name=CHANNEL, connection=connection), status=status,
        settings=settings, data_dir=str(work), exited=exits.append,
        executed=ExecutedGtids(settings=settings), relay_logs=relay_logs,
    )  # fmt: skip
    target = everything.format(",")
    receiver = Receiver(context)
    start = time.perf_counter()
    receiver.start()
    try:
        while status.snapshot().received_transaction_set != target:
            if exits:
                raise RuntimeError(f"the receiver stopped: {exits[-1]}")
            time.sleep(POLL)  # a measurement's polling, not an ordering of threads
        seconds = time.perf_counter() - start
        cpu = thread_cpu(receiver._thread.native_id)
    finally:
        receiver.stop()
        relay_logs.close_all()
    return Figures(expected.events, expected.size, seconds, cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transactions", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir")
    args = parser.parse_args(argv)
    before = set(threading.enumerate())
    print(machine_line())
    with cache_root(args.dir, "bench-receiver-") as root:
        source_dir = root / f"source-{args.transactions}"
        files, everything = prepare(source_dir, args.transactions)
        size = sum(size for _, size in files)
        print(f"source: {args.transactions:,} transactions, {len(files)} files, "
              f"{size / 1e6:.1f} MB")  # fmt: skip
        best_raw: Figures | None = None
        best_receiver: Figures | None = None
        source = SourceProcess(source_dir / "binlog").start()
        try:
            for number in range(1, args.rounds + 1):
                raw = raw_rate(source.port)
                received = receiver_rate(source.port, root / "replica", everything, raw)
                print(f"round {number}: raw {raw.events_per_second:,.0f} events/s "
                      f"{raw.megabytes_per_second:.1f} MB/s; receiver "
                      f"{received.events_per_second:,.0f} events/s "
                      f"{received.megabytes_per_second:.1f} MB/s; ratio "
                      f"{raw.seconds / received.seconds:.2f}; receiver thread CPU "
                      f"{received.cpu_per_event:.2f} µs/event")  # fmt: skip
                if best_raw is None or raw.seconds < best_raw.seconds:
                    best_raw = raw
                if best_receiver is None or received.seconds < best_receiver.seconds:
                    best_receiver = received
        finally:
            source.stop()
        assert best_raw is not None and best_receiver is not None
        print(f"best: raw {best_raw.events_per_second:,.0f} events/s "
              f"({best_raw.megabytes_per_second:.1f} MB/s), receiver "
              f"{best_receiver.events_per_second:,.0f} events/s "
              f"({best_receiver.megabytes_per_second:.1f} MB/s): receiver/raw "
              f"{best_raw.seconds / best_receiver.seconds:.2f}")  # fmt: skip
        print(f"load average at the end: {load_average()}")
    left = [t for t in threading.enumerate() if t not in before]
    assert not left, f"threads left behind: {left}"
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
