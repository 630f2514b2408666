"""``spark-replica check``: compare the Spark engine's key index with its Iceberg tables.

The engine starts as the server's would (same configuration, same recovery), flushes
nothing new (no channel runs), reads every table at its recorded snapshot in slices and
compares it with the key index (``SparkEngine.check_index``). Run it while the server is
stopped: it holds the data directory's lock, so it refuses to run beside a server and a
server refuses to start beside it. Exit status 0 when they agree, 1 when some table
differs (each difference printed), 2 when the check could not run.
"""

from __future__ import annotations

import argparse
import sys

from spark_replica.server.config import ConfigError, load_config
from spark_replica.server.data_dir_lock import DataDirInUse, data_dir_lock


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir")
    parser.add_argument("--metadata-url")
    parser.add_argument("--config")
    parser.add_argument("--limit", type=int, default=20,
                        help="differences shown per table (default 20)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(
            config_file=args.config,
            data_dir=args.data_dir,
            metadata_url=args.metadata_url,
            engine="spark",
        )
    except ConfigError as error:
        print(f"spark-replica: {error}", file=sys.stderr)
        return 2
    from spark_replica.applier_core.storage.spark.engine import SparkEngine
    from spark_replica.metadata import open_store
    from spark_replica.server.storage import build_engine

    try:
        with data_dir_lock(config.data_dir):
            store = open_store(config.effective_metadata_url)
            try:
                engine = build_engine(config, store)
                assert isinstance(engine, SparkEngine)  # engine="spark"
                try:
                    found = engine.check_index(limit=args.limit)
                    tables = len(engine.tables())
                finally:
                    engine.close()
            finally:
                store.close()
    except DataDirInUse as error:
        print(f"spark-replica: {error}", file=sys.stderr)
        return 2
    for table, differences in sorted(found.items()):
        print(f"{table}: {len(differences)} difference(s)")
        for difference in differences:
            print(f"  {difference}")
    verdict = "differ" if found else "agree"
    print(f"key index and tables {verdict}: {len(found)} of {tables} table(s) differ")
    return 1 if found else 0
