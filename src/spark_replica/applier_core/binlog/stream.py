"""Decoding a stream of events in order, as a replica reads a relay log.

An event is decoded under the Format_description event before it, and a rows event with the
Table_map events of its own transaction. ``StreamDecoder`` keeps both: it is the state every
reader of a binary log or relay log carries from one event to the next.
"""

from __future__ import annotations

from spark_replica.applier_core.binlog.codecs.registry import decode_bytes
from spark_replica.applier_core.binlog.constants import EventType as T
from spark_replica.applier_core.binlog.events import DEFAULT_FDE, Event, FormatDescription, Query
from spark_replica.applier_core.binlog.rows.table_map import TableMapEvent

#: Events after which no earlier Table_map is referred to again. Not Format_description:
#: a relay log file can start in the middle of a transaction, with the replica's own one.
_TABLE_MAP_RESET_TYPES = frozenset(
    int(t) for t in (T.GTID, T.ANONYMOUS_GTID, T.GTID_TAGGED, T.MARIADB_GTID, T.XID)
)  # fmt: skip
_FORMAT_DESCRIPTION = int(T.FORMAT_DESCRIPTION)
#: Events that change the decoder's state (the reset types, Table_map, and BEGIN queries).
_TABLE_MAP = int(T.TABLE_MAP)
_TRACKED_TYPES = _TABLE_MAP_RESET_TYPES | {_TABLE_MAP, int(T.QUERY), _FORMAT_DESCRIPTION}


class StreamDecoder:
    """Decode the events of one stream in order; owned by one reader.

    ``fde`` is the Format_description event in force (``None`` before the first one: MySQL
    8.x layouts without checksums); ``table_maps`` the Table_map events of the current
    transaction by table id.
    """

    __slots__ = ("fde", "table_maps", "_checksum", "_post_header_by_type")

    def __init__(self, fde: FormatDescription | None = None) -> None:
        self.table_maps: dict[int, object] = {}
        self._use(fde)

    def _use(self, fde: FormatDescription | None) -> None:
        self.fde = fde
        self._checksum = fde is not None and fde.checksums
        self._post_header_by_type = (fde or DEFAULT_FDE).post_header_by_type

    def decode(self, data: bytes) -> Event:
        """Decode the whole event ``data`` and follow it.

        Raises:
            BinlogError: as ``decode_event``.
        """
        event = decode_bytes(data, self._checksum, self._post_header_by_type, self.table_maps)
        if event.header[1] in _TRACKED_TYPES:
            self.follow(event)
        return event

    def follow(self, event: Event) -> None:
        """Take the state ``event`` sets: a new Format_description, a Table_map, or the
        start or end of a transaction, which forgets the Table_map events before it."""
        type_code = event.header[1]
        if type_code == _TABLE_MAP:
            assert isinstance(event, TableMapEvent)
            self.table_maps[event.table_id] = event
        elif type_code in _TABLE_MAP_RESET_TYPES:
            self.table_maps.clear()
        elif isinstance(event, FormatDescription):
            self._use(event)
        elif isinstance(event, Query) and (event.query == "BEGIN" or event.is_begin):
            self.table_maps.clear()
