"""``spark-replica source``: run the built-in binlog server.

    spark-replica source --data-dir DIR [--bind 127.0.0.1] [--port 3307]
        [--user repl] [--password SECRET] [--auth caching_sha2_password|mysql_native_password]
        [--server-id 1] [--max-binlog-size BYTES] [--ssl-cert F --ssl-key F]
        [--generate N [--rate TPS] [--prepare] [--tables 8] [--rows-per-table 1000] [--seed 1]]

It serves the binary log in ``DIR`` (created empty, or continued after a stop or a crash).
With ``--generate`` it appends a generated workload of N transactions (after its setup) at
TPS transactions per second (0: as fast as it can), continuing after the GTIDs the binary log
already holds when restarted. With ``--prepare`` it encodes the whole workload first, then
appends it at the rate (each append only restamps the commit time): higher rates on a busy
machine, at the cost of memory. It prints ``listening on HOST:PORT`` once it accepts
connections, and stops cleanly on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import ssl
import threading
from pathlib import Path

from spark_replica.tools.generator.simulate import WorkloadSpec, simulate
from spark_replica.tools.source.auth import CACHING_SHA2, NATIVE, Account
from spark_replica.tools.source.binlog import DEFAULT_MAX_SIZE, SourceBinlog
from spark_replica.tools.source.live import LiveWorkload
from spark_replica.tools.source.server import SourceOptions, SourceServer

DEFAULT_PORT = 3307


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--user", default="repl")
    parser.add_argument("--password", default="")
    parser.add_argument("--auth", choices=(CACHING_SHA2, NATIVE), default=CACHING_SHA2)
    parser.add_argument("--server-id", type=int, default=1)
    parser.add_argument("--max-binlog-size", type=int, default=DEFAULT_MAX_SIZE)
    parser.add_argument("--ssl-cert")
    parser.add_argument("--ssl-key")
    parser.add_argument("--generate", type=int, default=0, metavar="N")
    parser.add_argument("--rate", type=float, default=0.0, metavar="TPS")
    parser.add_argument("--prepare", action="store_true",
                        help="encode the workload before appending it")  # fmt: skip
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--rows-per-table", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)


def run(args: argparse.Namespace) -> int:
    spec = WorkloadSpec(tables=args.tables, rows_per_table=args.rows_per_table,
                        transactions=args.generate, seed=args.seed)  # fmt: skip
    context = None
    if args.ssl_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.ssl_cert, args.ssl_key)
    binlog = SourceBinlog(args.data_dir, server_id=args.server_id,
                          max_size=args.max_binlog_size)  # fmt: skip
    binlog.open()
    options = SourceOptions(
        server_id=args.server_id, server_uuid=spec.server_uuid, bind=args.bind, port=args.port,
        accounts=[Account(args.user, args.password, args.auth)], ssl_context=context,
    )  # fmt: skip
    server = SourceServer(binlog, options).start()
    live = None
    if args.generate:
        executed = binlog.executed()
        transactions, _ = simulate(spec)
        pending = [t for t in transactions if not executed.contains(spec.server_uuid, "", t.gno)]
        live = LiveWorkload(binlog, pending, server_uuid=spec.server_uuid, rate=args.rate,
                            prepare=args.prepare)  # fmt: skip
        live.start()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"spark-replica source: listening on {args.bind}:{server.port}", flush=True)
    stop.wait()
    if live is not None:
        live.stop()
    server.close()
    return 0
