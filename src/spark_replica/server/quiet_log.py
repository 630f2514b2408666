"""A quiet server log: one line per event worth a line, stacks only at the DEBUG level.

mysql-mimic logs the error of every failed statement at ERROR, though the fault is the
client's (a typo, a missing table) and MySQL's error log says nothing of it. ``install``
puts a filter on its connection logger that turns those records into INFO lines, kept only
when the server logs at INFO or below. Connections that end before or during the handshake
(health probes, port scanners, a wrong password) are logged by ``ReplicaConnection`` in one
INFO line; Spark's own stacks are left to ``storage.spark.session``.
"""

from __future__ import annotations

import logging

from mysql_mimic.errors import MysqlError

#: mysql-mimic's logger of failed statements.
STATEMENT_ERRORS = "mysql_mimic.connection"


#: mysql-mimic's INFO lines of every connection's start and end: DEBUG here, as the
#: connection's one line (if any) comes from ``ReplicaConnection``.
_CONNECTION_CHATTER = frozenset({"Started new connection: %s", "Connection closed"})


class ClientErrorFilter(logging.Filter):
    """A statement's error sent to the client becomes an INFO line (or none); mysql-mimic's
    lines on each connection's start and end become DEBUG lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.ERROR and isinstance(record.msg, MysqlError):
            error = record.msg
            record.msg, record.args = "statement failed: %d: %s", (int(error.code), error.msg)
            return _demoted(record, logging.INFO)
        if record.levelno == logging.INFO and record.msg in _CONNECTION_CHATTER:
            return _demoted(record, logging.DEBUG)
        return True


def _demoted(record: logging.LogRecord, level: int) -> bool:
    """``record`` at ``level``; False (dropped) when its logger does not log that level."""
    if not logging.getLogger(record.name).isEnabledFor(level):
        return False
    record.levelno, record.levelname = level, logging.getLevelName(level)
    return True


_FILTER = ClientErrorFilter()


#: sqlglot warns for every statement it reads only as a command ("contains unsupported
#: syntax. Falling back to parsing as a 'Command'"): replicated DDL such as ALTER TABLE ...
#: DISABLE KEYS, read here by other means. Its warnings show at DEBUG only.
PARSER = "sqlglot"


def install() -> None:
    """Filter mysql-mimic's statement errors and quiet sqlglot's fallbacks. Idempotent."""
    logger = logging.getLogger(STATEMENT_ERRORS)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    if not logging.getLogger("spark_replica").isEnabledFor(logging.DEBUG):
        logging.getLogger(PARSER).setLevel(logging.ERROR)


def exc_info_if_debug(logger: logging.Logger, error: BaseException) -> BaseException | None:
    """``error`` for a log call's ``exc_info`` when ``logger`` logs DEBUG, else None: stacks
    only with the debug setting."""
    return error if logger.isEnabledFor(logging.DEBUG) else None
