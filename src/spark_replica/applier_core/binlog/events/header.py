"""The common header every binary log event starts with, and the base classes of the events
(mysql-reference §7).

Every event derives from :class:`Event` and keeps the 19-byte common :class:`EventHeader` as
``header``; the codec's own events are slotted dataclasses (:class:`ValueEvent`).
The header keeps the values read from the stream; the encoder recomputes ``event_length`` and
takes ``log_pos`` as an argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from spark_replica.applier_core.binlog.constants import (
    POST_HEADER_LENGTHS_84,
    EventFlag,
    EventType,
)

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
