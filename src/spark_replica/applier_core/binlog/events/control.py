"""The control events: Format_description, Rotate, Xid, Stop, Incident, Heartbeat,
Rows_query, XA_prepare, and the events a replica refuses or skips (mysql-reference §7.2,
§7.6, §7.7, §7.11)."""

from __future__ import annotations

from dataclasses import dataclass, field

from spark_replica.applier_core.binlog.constants import (
    HEADER_LEN,
    POST_HEADER_LENGTHS_84,
    ChecksumAlg,
    EventType,
)
from spark_replica.applier_core.binlog.events.header import (
    DEFAULT_POST_HEADER_LENGTHS,
    ValueEvent,
    make_header,
)


@dataclass(slots=True)
class FormatDescription(ValueEvent):
    """FORMAT_DESCRIPTION_EVENT (15): describes every following event of the file.

    ``post_header_lengths[t - 1]`` is the post-header length of type ``t``, exactly as stored.
    ``checksum_alg`` is ``None`` for servers before 5.6.1, whose FDE has neither the algorithm
    byte nor a checksum.
    """

    binlog_version: int
    server_version: str
    create_timestamp: int
    header_length: int
    post_header_lengths: tuple[int, ...]
    checksum_alg: int | None
    #: ``post_header_len(t)`` for every type code 0-255, computed once for the decoder.
    post_header_by_type: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.post_header_by_type = tuple(self._post_header_len(t) for t in range(256))

    @property
    def checksums(self) -> bool:
        """Whether the events this FDE describes end with a CRC32."""
        return self.checksum_alg == ChecksumAlg.CRC32

    def post_header_len(self, type_code: int) -> int:
        """Post-header length of ``type_code``, correcting the type 40 quirk (always 0)."""
        if 0 <= type_code < len(self.post_header_by_type):
            return self.post_header_by_type[type_code]
        return 0

    def _post_header_len(self, type_code: int) -> int:
        if type_code == EventType.TRANSACTION_PAYLOAD:
            return 0
        if 0 < type_code <= len(self.post_header_lengths):
            return self.post_header_lengths[type_code - 1]
        if type_code < len(DEFAULT_POST_HEADER_LENGTHS):
            return DEFAULT_POST_HEADER_LENGTHS[type_code]
        return 0

    @classmethod
    def for_server(
        cls,
        server_version: str = "8.4.0",
        *,
        checksum: bool = True,
        server_id: int = 1,
        timestamp: int = 0,
        create_timestamp: int = 0,
        flags: int = 0,
    ) -> FormatDescription:
        """The FDE a MySQL 8.4 server writes (42 event types, the type 40 quirk included)."""
        lengths = list(POST_HEADER_LENGTHS_84[1:])
        lengths[EventType.FORMAT_DESCRIPTION - 1] = 57 + len(lengths)
        return cls(
            make_header(
                EventType.FORMAT_DESCRIPTION, timestamp=timestamp, server_id=server_id, flags=flags
            ),
            4,
            server_version,
            create_timestamp,
            HEADER_LEN,
            tuple(lengths),
            ChecksumAlg.CRC32 if checksum else ChecksumAlg.OFF,
        )


DEFAULT_FDE = FormatDescription.for_server()


@dataclass(slots=True)
class Rotate(ValueEvent):
    """ROTATE_EVENT (4): the next event is at ``position`` of ``next_file``."""

    position: int
    next_file: str


@dataclass(slots=True)
class Xid(ValueEvent):
    """XID_EVENT (16): commit of a transaction of a transactional engine."""

    xid: int


@dataclass(slots=True)
class Stop(ValueEvent):
    """STOP_EVENT (3): the server stopped."""


@dataclass(slots=True)
class Incident(ValueEvent):
    """INCIDENT_EVENT (26): the source lost events; a replica stops with an error."""

    incident_type: int
    message: str


@dataclass(slots=True)
class Heartbeat(ValueEvent):
    """HEARTBEAT_LOG_EVENT (27, position in the header) or HEARTBEAT_LOG_EVENT_V2 (41)."""

    log_file: str
    log_position: int


@dataclass(slots=True)
class RowsQuery(ValueEvent):
    """ROWS_QUERY_LOG_EVENT (29): the statement that produced the following rows events."""

    query: str


@dataclass(slots=True)
class XaPrepare(ValueEvent):
    """XA_PREPARE_LOG_EVENT (38): ends the first phase of an XA transaction."""

    one_phase: bool
    format_id: int
    gtrid: bytes
    bqual: bytes


@dataclass(slots=True)
class StatementOnlyEvent(ValueEvent):
    """An event only statement-based replication uses (Intvar, Rand, User_var, load events);
    a row-based applier refuses it. ``raw`` is the body after the header, without checksum."""

    type_code: int
    raw: bytes


@dataclass(slots=True)
class UnknownEvent(ValueEvent):
    """An event whose body is not decoded: an unknown type that carries the IGNORABLE flag, or
    Ignorable (28), Transaction_context (36) and View_change (37), which a replica skips."""

    type_code: int
    raw_body: bytes
