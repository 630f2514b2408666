"""The server's log: a client's failed statement is one INFO line (none at the default
WARNING level), mysql-mimic's per-connection chatter is DEBUG, and an internal error is one
ERROR line whose stack is kept for the DEBUG level."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import cast

import pytest
from mysql_mimic.errors import ErrorCode as MimicCode
from mysql_mimic.errors import MysqlError

from spark_replica.server import quiet_log
from spark_replica.server.wire import to_mysql_error


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def lines() -> Iterator[_Lines]:
    handler = _Lines()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    quiet_log.install()
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def _mimic_logs_a_failed_statement() -> None:
    logging.getLogger("mysql_mimic.connection").error(
        MysqlError("Table 'shop.t' doesn't exist", cast(MimicCode, 1146))
    )


def test_a_failed_statement_is_one_info_line(lines: _Lines) -> None:
    logging.getLogger().setLevel(logging.INFO)
    _mimic_logs_a_failed_statement()
    [record] = lines.records
    assert record.levelno == logging.INFO
    assert record.getMessage() == "statement failed: 1146: Table 'shop.t' doesn't exist"


def test_a_failed_statement_is_not_logged_at_the_default_level(lines: _Lines) -> None:
    logging.getLogger().setLevel(logging.WARNING)
    _mimic_logs_a_failed_statement()
    logging.getLogger("mysql_mimic.connection").info("Started new connection: %s", 7)
    assert lines.records == []


def test_connection_chatter_is_debug(lines: _Lines) -> None:
    logging.getLogger().setLevel(logging.INFO)
    logging.getLogger("mysql_mimic.connection").info("Started new connection: %s", 7)
    logging.getLogger("mysql_mimic.connection").info("Connection closed")
    assert lines.records == []
    logging.getLogger().setLevel(logging.DEBUG)
    logging.getLogger("mysql_mimic.connection").info("Connection closed")
    [record] = lines.records
    assert record.levelno == logging.DEBUG


@pytest.mark.parametrize(("level", "stack"), [(logging.WARNING, False), (logging.DEBUG, True)])
def test_an_internal_error_is_one_line_with_its_stack_only_at_debug(
    lines: _Lines, level: int, stack: bool
) -> None:
    logging.getLogger().setLevel(level)
    try:
        raise ValueError("boom\nsecond line")
    except ValueError as error:
        sent = to_mysql_error(error)
    assert int(sent.code) == 1105
    [record] = [r for r in lines.records if r.name == "spark_replica.server.wire"]
    assert record.getMessage() == "internal error: ValueError: boom"
    assert (record.exc_info is not None) is stack


def test_sqlglot_fallback_warnings_stay_out_of_the_log(lines: _Lines) -> None:
    from spark_replica.applier_core.storage.ddl_parser import parse_ddl

    logging.getLogger().setLevel(logging.WARNING)
    parser = logging.getLogger("sqlglot")
    level = parser.level
    try:
        quiet_log.install()
        parse_ddl("ALTER TABLE t DISABLE KEYS", "d")  # sqlglot reads it only as a command
        assert [r for r in lines.records if r.name.startswith("sqlglot")] == []
    finally:
        parser.setLevel(level)
