"""The GTID events (33, 34, 42) and Previous_gtids (35), mysql-reference §7.3-7.4."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events.header import ValueEvent
from spark_replica.applier_core.gtid import GtidSet


@dataclass(slots=True)
class PreviousGtids(ValueEvent):
    """PREVIOUS_GTIDS_LOG_EVENT (35). ``tagged``: the 8.4+ tagged encoding was (or is to be) used;
    a set holding a tag is always written tagged."""

    gtids: GtidSet
    tagged: bool = False


class GtidFormat(enum.IntEnum):
    """How many of the optional trailing fields an untagged GTID event carries."""

    MYSQL_56 = 0  # flags, sid, gno
    LOGICAL_CLOCK = 1  # + lt_type, last_committed, sequence_number (5.7)
    COMMIT_TIMESTAMPS = 2  # + commit timestamps (8.0.1)
    TRANSACTION_LENGTH = 3  # + transaction length (8.0.2)
    SERVER_VERSION = 4  # + server versions, and the commit group ticket when set (8.0.14)


@dataclass(slots=True)
class Gtid(ValueEvent):
    """GTID_LOG_EVENT (33), ANONYMOUS_GTID_LOG_EVENT (34) and GTID_TAGGED_LOG_EVENT (42).

    Fields a server did not write are 0 (original values equal the immediate ones);
    ``format`` records which optional fields an untagged event carries.
    """

    flags: int
    uuid: str
    gno: int
    tag: str = ""
    last_committed: int = 0
    sequence_number: int = 0
    immediate_commit_timestamp: int = 0
    original_commit_timestamp: int = 0
    transaction_length: int = 0
    immediate_server_version: int = 0
    original_server_version: int = 0
    commit_group_ticket: int = 0
    format: GtidFormat = GtidFormat.SERVER_VERSION

    @property
    def anonymous(self) -> bool:
        return self.header.type_code == EventType.ANONYMOUS_GTID

    @property
    def gtid_text(self) -> str:
        """``uuid:gno``, ``uuid:tag:gno``, or ``ANONYMOUS``."""
        if self.anonymous:
            return "ANONYMOUS"
        if self.tag:
            return f"{self.uuid}:{self.tag}:{self.gno}"
        return f"{self.uuid}:{self.gno}"

    @property
    def may_have_sbr(self) -> bool:
        return bool(self.flags & 1)
