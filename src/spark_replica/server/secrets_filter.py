"""Keeping passwords out of the server's logs.

mysql-mimic logs every statement it receives (at DEBUG) and every error it sends (at
ERROR); a statement or a syntax error may carry a replication password. ``install`` puts a
filter on those loggers that rewrites each record's message with ``redact_secrets`` (the
quoted value of every ``PASSWORD =`` becomes '<secret>'), and ``protect`` puts the same
filter on a handler, for everything that reaches it.
"""

from __future__ import annotations

import logging

from spark_replica.applier_core.errors import redact_secrets

#: The loggers that may see statement text.
STATEMENT_LOGGERS = ("mysql_mimic.connection", "mysql_mimic.server", "mysql_mimic.auth")


class SecretFilter(logging.Filter):
    """Rewrites a record's message without passwords; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact_secrets(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_FILTER = SecretFilter()


def install() -> None:
    """Filter the loggers that see statements. Idempotent."""
    for name in STATEMENT_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


def protect(handler: logging.Handler) -> None:
    """Filter everything ``handler`` writes. Idempotent."""
    if _FILTER not in handler.filters:
        handler.addFilter(_FILTER)
