"""``spark-replica sqltest``: run mysqltest-style ``.test`` files against a server."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from spark_replica.tools.sqltest.runner import Outcome, run_file

_NAME_WIDTH = 60


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spark-replica sqltest",
        description="Run mysqltest-style .test files and compare with their .result files.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="server host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=3306, help="server port (default 3306)")
    parser.add_argument("--user", default="root", help="user name (default root)")
    parser.add_argument("--password", default="", help="password (default empty)")
    parser.add_argument("--database", default=None, help="default database")
    parser.add_argument(
        "--record", action="store_true", help="write the .result files instead of comparing"
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help=".test files")
    return parser


def report(outcome: Outcome, out: TextIO) -> None:
    """One mysql-test-run style line, then the failure's message and diff."""
    status = "[ pass ]" if outcome.passed else "[ fail ]"
    out.write(f"{str(outcome.path):<{_NAME_WIDTH}} {status}\n")
    if outcome.error:
        out.write(outcome.error.rstrip("\n") + "\n")
    if outcome.diff:
        out.write(outcome.diff if outcome.diff.endswith("\n") else outcome.diff + "\n")


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None) -> int:
    """Entry point; returns 0 only if every file passed."""
    args = build_parser().parse_args(argv)
    stream = out if out is not None else sys.stdout
    passed = failed = 0
    for path in args.files:
        outcome = run_file(
            path,
            host=args.host,
            port=args.port,
            user=args.user,
            password=args.password,
            database=args.database,
            record=args.record,
        )
        report(outcome, stream)
        stream.flush()
        if outcome.passed:
            passed += 1
        else:
            failed += 1
    stream.write(f"{passed} passed, {failed} failed\n")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
