"""MariaDB's own events (types 160-163)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from spark_replica.applier_core.binlog.events.header import ValueEvent


class MariadbGtidFlag(enum.IntFlag):
    STANDALONE = 1
    GROUP_COMMIT_ID = 2
    TRANSACTIONAL = 4
    ALLOW_PARALLEL = 8
    WAITED = 16
    DDL = 32
    PREPARED_XA = 64
    COMPLETED_XA = 128


@dataclass(slots=True)
class MariadbAnnotateRows(ValueEvent):
    """ANNOTATE_ROWS_EVENT (160): the statement behind the following rows events."""

    query: str


@dataclass(slots=True)
class MariadbBinlogCheckpoint(ValueEvent):
    """BINLOG_CHECKPOINT_EVENT (161)."""

    log_file: str


@dataclass(slots=True)
class MariadbGtid(ValueEvent):
    """GTID_EVENT (162): starts an event group, replacing BEGIN; ``server_id`` is the header's.

    ``commit_id`` is set when ``flags`` has GROUP_COMMIT_ID (2); ``extra`` keeps the bytes
    after the known fields (XA id, extra flags), without the zero padding.
    """

    domain_id: int
    seq_no: int
    flags: int
    commit_id: int | None = None
    extra: bytes = b""

    @property
    def server_id(self) -> int:
        return self.header.server_id

    @property
    def gtid_text(self) -> str:
        return f"{self.domain_id}-{self.header.server_id}-{self.seq_no}"

    @property
    def standalone(self) -> bool:
        return bool(self.flags & MariadbGtidFlag.STANDALONE)


@dataclass(slots=True)
class MariadbGtidList(ValueEvent):
    """GTID_LIST_EVENT (163): the binlog state, one ``(domain, server, seq)`` per domain."""

    gtids: tuple[tuple[int, int, int], ...]
    list_flags: int = 0
    extra: bytes = b""
