"""A runner for a subset of MySQL's mysqltest language (``.test`` / ``.result`` files).

``run_file`` / ``run_files`` run scripts over pymysql; ``cli.main`` is the command line.
"""

from __future__ import annotations

from spark_replica.tools.sqltest.connection import ConnectParams
from spark_replica.tools.sqltest.errors import (
    ExpectedError,
    ScriptError,
    resolve_error,
    resolve_error_name,
)
from spark_replica.tools.sqltest.output import ServerError, format_result, format_value
from spark_replica.tools.sqltest.runner import Outcome, run_file, run_files
from spark_replica.tools.sqltest.script import Command, parse_file, parse_script, substitute

__all__ = [
    "Command",
    "ConnectParams",
    "ExpectedError",
    "Outcome",
    "ScriptError",
    "ServerError",
    "format_result",
    "format_value",
    "parse_file",
    "parse_script",
    "resolve_error",
    "resolve_error_name",
    "run_file",
    "run_files",
    "substitute",
]
