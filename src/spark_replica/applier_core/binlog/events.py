"""Decoded binary log events (mysql-reference §7): the common header and the control events.

Every event derives from :class:`Event` and keeps the 19-byte common :class:`EventHeader` as
``header``; the codec's own events are slotted dataclasses (:class:`ValueEvent`).
The header keeps the values read from the stream; the encoder recomputes ``event_length`` and
takes ``log_pos`` as an argument.

MariaDB's events live in ``events_mariadb``; the Query event in ``events_query``; Table_map and
Rows events in ``rows``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple

from spark_replica.applier_core.binlog.constants import (
    HEADER_LEN,
    POST_HEADER_LENGTHS_84,
    ChecksumAlg,
    EventFlag,
    EventType,
)
from spark_replica.applier_core.gtid import GtidSet

#: Post-header lengths used when no Format_description event describes a type (index = type).
#: MySQL 8.0-9.x values, with MariaDB's 160-163 appended and type 40 fixed to its real 0.
DEFAULT_POST_HEADER_LENGTHS: tuple[int, ...] = (
    POST_HEADER_LENGTHS_84[:40]
    + (0,)
    + POST_HEADER_LENGTHS_84[41:]
    + (0,) * (160 - 43)
    + (0, 4, 19, 4)
)


class EventHeader(NamedTuple):
    """The common header: 19 bytes in front of every v4 event.

    A named tuple rather than a frozen dataclass: one is built for every event read, and a
    tuple is built four times faster.
    """

    timestamp: int
    type_code: int
    server_id: int
    event_length: int
    log_pos: int
    flags: int

    @property
    def type_name(self) -> str:
        """``EventType`` member name, or ``UNKNOWN_<n>``."""
        try:
            return EventType(self.type_code).name
        except ValueError:
            return f"UNKNOWN_{self.type_code}"

    @property
    def artificial(self) -> bool:
        return bool(self.flags & EventFlag.ARTIFICIAL)


def make_header(
    type_code: int, *, timestamp: int = 0, server_id: int = 1, flags: int = 0
) -> EventHeader:
    """A header for an event to be encoded (length and position are filled in by the encoder)."""
    return EventHeader(timestamp, type_code, server_id, 0, 0, flags)


class Event:
    """Base of every decoded event; each keeps its common header as ``header``.

    A plain class, so that any dataclass can derive from it: a subclass declares
    ``header: EventHeader`` as its own field.
    """

    __slots__ = ()
    header: EventHeader


@dataclass(slots=True)
class ValueEvent(Event):
    """Base of the codec's own events: the header is the first field.

    Events are values: nothing changes one after it is decoded or built. They are not frozen
    dataclasses because the decoder builds one per event read and a frozen dataclass takes
    about four times as long to build (docs/decisions/0005).
    """

    header: EventHeader


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


class CompressionType(enum.IntEnum):
    ZSTD = 0
    NONE = 255


@dataclass(slots=True)
class TransactionPayload(ValueEvent):
    """TRANSACTION_PAYLOAD_EVENT (40): a whole transaction's events, usually zstd-compressed.

    ``uncompressed_size`` is 0 when the stream did not declare it (no compression).
    """

    compression_type: int
    uncompressed_size: int
    payload: bytes

    def events(
        self, fde: FormatDescription | None = None, table_maps: dict[int, object] | None = None
    ) -> tuple[Event, ...]:
        """Decompress and decode the inner events (log_pos 0, no checksums).

        Raises:
            BinlogError: the payload does not decompress to the declared size, exceeds the
                hard cap, or holds an invalid event.
        """
        from spark_replica.applier_core.binlog.codec_payload import payload_events

        return payload_events(self, fde, table_maps)


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
