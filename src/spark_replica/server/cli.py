"""``spark-replica``: the command-line entry point.

spark-replica serve [--bind ADDR] [--port N] [--data-dir DIR] [--metadata-url URL] [--config F]
                    [--ssl-cert PEM --ssl-key PEM]
spark-replica sqltest --host H --port P [--user U] [--password P] [--record] FILES...
spark-replica source --data-dir DIR [--port N] [--user U --password P] [--generate N --rate TPS]
spark-replica demo [--rate TPS] [--engine spark|memory] [--duration S]
spark-replica check [--data-dir DIR] [--metadata-url URL] [--config F] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from spark_replica.server import check, secrets_filter
from spark_replica.server.cli_tools import add_commands
from spark_replica.server.cli_tools import run as run_tool
from spark_replica.server.collector import collect_less_often
from spark_replica.server.config import ConfigError, ServerConfig, load_config
from spark_replica.server.data_dir_lock import DataDirInUse, data_dir_lock
from spark_replica.server.native_memory import limit_malloc_arenas, trim_periodically
from spark_replica.server.spark_start import spark_started_early
from spark_replica.tools import demo
from spark_replica.tools.source import cli as source_args


def _serve(args: argparse.Namespace) -> int:
    try:
        config = load_config(
            config_file=args.config,
            bind=args.bind,
            port=args.port,
            data_dir=args.data_dir,
            metadata_url=args.metadata_url,
            engine=args.engine,
            spark_master=args.spark_master,
            ssl_cert=args.ssl_cert,
            ssl_key=args.ssl_key,
            skip_replica_start=args.skip_replica_start,
            relay_log_space_limit=args.relay_log_space_limit,
        )
    except ConfigError as e:
        print(f"spark-replica: {e}", file=sys.stderr)
        return 2
    limit_malloc_arenas()  # before the server's threads start
    collect_less_often()
    try:
        with data_dir_lock(config.data_dir), spark_started_early(config):
            return _run_server(config)
    except DataDirInUse as error:
        print(f"spark-replica: {error}", file=sys.stderr)
        return 2


def _run_server(config: ServerConfig) -> int:
    # Imported here: while Spark's JVM boots (``spark_started_early``).
    from spark_replica.server.app import ReplicaServer
    from spark_replica.server.storage import configured_components

    server = ReplicaServer(config, configured_components)

    async def run() -> int:
        await server.start()
        print(f"spark-replica: listening on {config.bind}:{server.port}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        serving = asyncio.create_task(server.serve_forever())
        stopping = asyncio.create_task(stop.wait())
        failing = asyncio.create_task(server.wait_failed())
        trimming = asyncio.create_task(trim_periodically())
        await asyncio.wait((stopping, failing), return_when=asyncio.FIRST_COMPLETED)
        for task in (serving, stopping, failing, trimming):
            task.cancel()
        await server.close()
        if server.failure is not None:
            print(f"spark-replica: stopping: {server.failure}", file=sys.stderr, flush=True)
            return 1
        return 0

    return asyncio.run(run())


def log_levels(option: str) -> tuple[str, dict[str, str]]:
    """``--log-level``: the root level, and the levels of single loggers."""
    root, levels = "WARNING", {}
    for item in filter(None, (part.strip() for part in option.split(","))):
        name, equals, level = item.rpartition("=")
        if equals:
            levels[name.strip()] = level.strip().upper()
        else:
            root = level.upper()
    return root, levels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spark-replica")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        help="the level of every logger, then LOGGER=LEVEL for single loggers, comma-separated "
        "(e.g. WARNING,spark_replica.applier_core.storage.spark.engine=DEBUG)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the replica server")
    serve.add_argument("--bind")
    serve.add_argument("--port", type=int)
    serve.add_argument("--data-dir")
    serve.add_argument("--metadata-url")
    serve.add_argument("--config")
    serve.add_argument("--engine", choices=("spark", "memory"))
    serve.add_argument("--spark-master", help="spark.master (default local[2])")
    serve.add_argument("--ssl-cert", help="TLS certificate (PEM) offered to clients")
    serve.add_argument("--ssl-key", help="the certificate's private key (PEM)")
    serve.add_argument("--skip-replica-start", action="store_true", default=None,
                       help="leave channels stopped at server start (MySQL's option)")  # fmt: skip
    serve.add_argument("--relay-log-space-limit", type=int, metavar="BYTES",
                       help="relay log bytes per channel before the receiver waits for the "
                            "applier to purge (MySQL's option; 0: no limit)")  # fmt: skip
    commands.add_parser("sqltest", help="run mysqltest-format scripts", add_help=False)
    source_args.add_arguments(commands.add_parser("source", help="run the built-in binlog server"))
    demo.add_arguments(commands.add_parser("demo", help="a source, a replica, replication"))
    check.add_arguments(commands.add_parser("check", help="compare the key index with the "
                                            "tables (server stopped)"))  # fmt: skip
    add_commands(commands)
    args, rest = parser.parse_known_args(argv)
    root_level, levels = log_levels(args.log_level)
    logging.basicConfig(
        level=root_level,
        format="%(asctime)s %(levelname)s [%(threadName)s] %(name)s: %(message)s",
    )
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    for handler in logging.getLogger().handlers:
        secrets_filter.protect(handler)
    if args.command == "sqltest":
        from spark_replica.tools.sqltest.cli import main as sqltest_main

        return sqltest_main(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "source":
        return source_args.run(args)
    if args.command == "demo":
        return demo.run(args)
    if args.command == "check":
        return check.run(args)
    if args.command in ("binlog", "generate"):
        return run_tool(args)
    return _serve(args)


if __name__ == "__main__":
    raise SystemExit(main())
