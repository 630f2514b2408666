"""Decoding one transaction's events, as its consumer takes them.

The provider publishes events raw; the consumer decodes them in order with an
``EventDecoder``, which keeps the transaction's Table_map events and the Format_description
each event is decoded under. Unlike ``StreamDecoder``, a Format_description inside the
transaction (a new relay log file) does not forget the Table_map events: the transaction goes
on. A Transaction_payload event decodes to the events it holds.
"""

from __future__ import annotations

from typing import cast

from spark_replica.applier_core.binlog.codecs.registry import decode_bytes
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    DEFAULT_FDE,
    Event,
    FormatDescription,
    Query,
    TransactionPayload,
)
from spark_replica.applier_core.binlog.payload import payload_events
from spark_replica.applier_core.binlog.relaylog import RelayEvent
from spark_replica.applier_core.binlog.rows.table_map import TableMapEvent

_TABLE_MAP = int(EventType.TABLE_MAP)
_PAYLOAD = int(EventType.TRANSACTION_PAYLOAD)
_XID = int(EventType.XID)
_ENDS = frozenset({_XID, int(EventType.XA_PREPARE)})


class EventDecoder:
    """Decodes the events of one transaction, in order. Owned by one thread at a time."""

    __slots__ = ("_checksum", "_fde", "_known", "_post_header", "table_maps")

    def __init__(self) -> None:
        self.table_maps: dict[int, object] = {}
        self._fde: FormatDescription | None = None
        self._known = False
        self._checksum = False
        self._post_header: tuple[int, ...] = DEFAULT_FDE.post_header_by_type

    def decode(self, relay: RelayEvent, fde: FormatDescription | None) -> tuple[Event, ...]:
        """``relay`` decoded under ``fde``: one event, or a payload's inner events.

        Raises:
            BinlogError: located at ``relay``'s file and position.
        """
        if fde is not self._fde or not self._known:
            self._fde, self._known = fde, True
            self._checksum = fde is not None and fde.checksums
            self._post_header = (fde or DEFAULT_FDE).post_header_by_type
        try:
            event = decode_bytes(relay.data, self._checksum, self._post_header, self.table_maps)
            type_code = event.header[1]
            if type_code == _TABLE_MAP:
                self.table_maps[cast(TableMapEvent, event).table_id] = event
            elif type_code == _PAYLOAD:
                return payload_events(cast(TransactionPayload, event), fde, self.table_maps)
        except BinlogError as exc:
            raise exc.at(relay.file, relay.start) from exc
        return (event,)


def is_commit(events: tuple[Event, ...]) -> bool:
    """Whether ``events`` is a commit event (Xid, XA_prepare, or a COMMIT/ROLLBACK query): its
    memory is never counted (WL10500.RM.2)."""
    if len(events) != 1:
        return False
    event = events[0]
    return event.header[1] in _ENDS or (isinstance(event, Query) and event.is_commit)
