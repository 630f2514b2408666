"""Definitions of the virtual tables the server answers, and their registry.

The column lists live in :mod:`.performance_schema`, :mod:`.mysql_schema` and
:mod:`.replica_status`; the descriptors in :mod:`.columns`. Everything is re-exported
here, and ``TABLES`` maps ``(schema, name)`` (lower case) to each table.

Row rules MySQL applies to the performance_schema replication tables, which the code
producing rows must follow:

* A channel has rows only once it is configured, i.e. after a CHANGE REPLICATION
  SOURCE TO that set SOURCE_HOST. Rows come in channel order.
* ``replication_applier_status_by_coordinator`` has rows only for channels with a
  multi-threaded applier (worker count > 0). ``replication_applier_status_by_worker``
  has one row with ``WORKER_ID`` 0 for a single-threaded channel, otherwise one row per
  worker with ``WORKER_ID`` 1..N.
* ``TIMESTAMP(6) NOT NULL`` columns that were never set show ``TIMESTAMP_ZERO``
  (``0000-00-00 00:00:00.000000``).
* GTID columns (``CHAR(57)`` / ``CHAR(90)``) are ``''`` when there is no transaction.
* ``THREAD_ID`` is NULL while the thread is not running.
* ``REMAINING_DELAY`` is NULL unless the applier is waiting out SOURCE_DELAY.
"""

from __future__ import annotations

from .columns import (
    TIMESTAMP_ZERO,
    Column,
    TableDef,
    ValueKind,
    value_kind_for,
)
from .mysql_schema import (
    GTID_EXECUTED,
    MYSQL_TABLES,
    SLAVE_MASTER_INFO,
    SLAVE_RELAY_LOG_INFO,
    SLAVE_WORKER_INFO,
)
from .performance_schema import (
    PERFORMANCE_SCHEMA_TABLES,
    REPLICATION_APPLIER_CONFIGURATION,
    REPLICATION_APPLIER_FILTERS,
    REPLICATION_APPLIER_GLOBAL_FILTERS,
    REPLICATION_APPLIER_METRICS,
    REPLICATION_APPLIER_PROGRESS_BY_WORKER,
    REPLICATION_APPLIER_STATUS,
    REPLICATION_APPLIER_STATUS_BY_COORDINATOR,
    REPLICATION_APPLIER_STATUS_BY_WORKER,
    REPLICATION_CONNECTION_CONFIGURATION,
    REPLICATION_CONNECTION_STATUS,
)
from .replica_status import (
    SHOW_REPLICA_STATUS,
    SLAVE_STATUS_NAMES,
    show_slave_status_columns,
)

__all__ = [
    "GTID_EXECUTED",
    "REPLICATION_APPLIER_CONFIGURATION",
    "REPLICATION_APPLIER_FILTERS",
    "REPLICATION_APPLIER_GLOBAL_FILTERS",
    "REPLICATION_APPLIER_METRICS",
    "REPLICATION_APPLIER_PROGRESS_BY_WORKER",
    "REPLICATION_APPLIER_STATUS",
    "REPLICATION_APPLIER_STATUS_BY_COORDINATOR",
    "REPLICATION_APPLIER_STATUS_BY_WORKER",
    "REPLICATION_CONNECTION_CONFIGURATION",
    "REPLICATION_CONNECTION_STATUS",
    "SHOW_REPLICA_STATUS",
    "SLAVE_MASTER_INFO",
    "SLAVE_RELAY_LOG_INFO",
    "SLAVE_STATUS_NAMES",
    "SLAVE_WORKER_INFO",
    "TABLES",
    "TIMESTAMP_ZERO",
    "Column",
    "TableDef",
    "ValueKind",
    "get_table",
    "show_slave_status_columns",
    "value_kind_for",
]

TABLES: dict[tuple[str, str], TableDef] = {
    (t.schema, t.name): t for t in (*PERFORMANCE_SCHEMA_TABLES, *MYSQL_TABLES)
}


def get_table(schema: str, name: str) -> TableDef | None:
    """The table ``schema.name`` (any case), or None if the server has no such table."""
    return TABLES.get((schema.lower(), name.lower()))
