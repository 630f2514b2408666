"""Decoded binary log events (mysql-reference §7): plain values, with no codec.

``header`` holds the common header and the base classes; each other module one family of
events. Table_map and Rows events live with their column codecs in ``binlog.rows``. The codecs
are in ``binlog.codecs``.
"""

from __future__ import annotations

from spark_replica.applier_core.binlog.events.control import DEFAULT_FDE as DEFAULT_FDE
from spark_replica.applier_core.binlog.events.control import (
    FormatDescription as FormatDescription,
)
from spark_replica.applier_core.binlog.events.control import Heartbeat as Heartbeat
from spark_replica.applier_core.binlog.events.control import Incident as Incident
from spark_replica.applier_core.binlog.events.control import Rotate as Rotate
from spark_replica.applier_core.binlog.events.control import RowsQuery as RowsQuery
from spark_replica.applier_core.binlog.events.control import (
    StatementOnlyEvent as StatementOnlyEvent,
)
from spark_replica.applier_core.binlog.events.control import Stop as Stop
from spark_replica.applier_core.binlog.events.control import UnknownEvent as UnknownEvent
from spark_replica.applier_core.binlog.events.control import XaPrepare as XaPrepare
from spark_replica.applier_core.binlog.events.control import Xid as Xid
from spark_replica.applier_core.binlog.events.gtid import Gtid as Gtid
from spark_replica.applier_core.binlog.events.gtid import GtidFormat as GtidFormat
from spark_replica.applier_core.binlog.events.gtid import PreviousGtids as PreviousGtids
from spark_replica.applier_core.binlog.events.header import (
    DEFAULT_POST_HEADER_LENGTHS as DEFAULT_POST_HEADER_LENGTHS,
)
from spark_replica.applier_core.binlog.events.header import Event as Event
from spark_replica.applier_core.binlog.events.header import EventHeader as EventHeader
from spark_replica.applier_core.binlog.events.header import ValueEvent as ValueEvent
from spark_replica.applier_core.binlog.events.header import make_header as make_header
from spark_replica.applier_core.binlog.events.mariadb import (
    MariadbAnnotateRows as MariadbAnnotateRows,
)
from spark_replica.applier_core.binlog.events.mariadb import (
    MariadbBinlogCheckpoint as MariadbBinlogCheckpoint,
)
from spark_replica.applier_core.binlog.events.mariadb import MariadbGtid as MariadbGtid
from spark_replica.applier_core.binlog.events.mariadb import MariadbGtidFlag as MariadbGtidFlag
from spark_replica.applier_core.binlog.events.mariadb import MariadbGtidList as MariadbGtidList
from spark_replica.applier_core.binlog.events.payload import CompressionType as CompressionType
from spark_replica.applier_core.binlog.events.payload import (
    TransactionPayload as TransactionPayload,
)
from spark_replica.applier_core.binlog.events.query import Query as Query
from spark_replica.applier_core.binlog.status_vars import QueryStatus as QueryStatus

__all__ = [
    "DEFAULT_FDE",
    "DEFAULT_POST_HEADER_LENGTHS",
    "CompressionType",
    "Event",
    "EventHeader",
    "FormatDescription",
    "Gtid",
    "GtidFormat",
    "Heartbeat",
    "Incident",
    "MariadbAnnotateRows",
    "MariadbBinlogCheckpoint",
    "MariadbGtid",
    "MariadbGtidFlag",
    "MariadbGtidList",
    "PreviousGtids",
    "Query",
    "QueryStatus",
    "Rotate",
    "RowsQuery",
    "StatementOnlyEvent",
    "Stop",
    "TransactionPayload",
    "UnknownEvent",
    "ValueEvent",
    "Xid",
    "XaPrepare",
    "make_header",
]
