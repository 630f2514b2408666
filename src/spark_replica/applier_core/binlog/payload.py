"""A transaction's events in one TRANSACTION_PAYLOAD_EVENT (§7.10): reading the inner events
of a payload and building a payload from events, through the codec registry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import zstandard

from spark_replica.applier_core.binlog.codecs.payload import decompress_payload, split_events
from spark_replica.applier_core.binlog.codecs.registry import (
    decode_event,
    encode_event,
    remember_table_map,
)
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    CompressionType,
    Event,
    EventHeader,
    FormatDescription,
    TransactionPayload,
)


def payload_events(
    event: TransactionPayload,
    fde: FormatDescription | None = None,
    table_maps: Mapping[int, object] | None = None,
) -> tuple[Event, ...]:
    """Decompress and decode the inner events of ``event`` (log_pos 0, no checksums).

    Raises:
        BinlogError: the payload does not decompress to the declared size, exceeds the
            hard cap, or holds an invalid event.
    """
    maps = dict(table_maps or {})
    events: list[Event] = []
    for offset, raw in split_events(decompress_payload(event)):
        try:
            inner = decode_event(raw, fde, checksum=False, table_maps=maps)
        except BinlogError as exc:
            raise BinlogError(f"in compressed transaction at offset {offset}: {exc.cause}") from exc
        if inner.header.type_code in (EventType.TRANSACTION_PAYLOAD, EventType.FORMAT_DESCRIPTION):
            raise BinlogError(f"compressed transaction holds a {inner.header.type_name} event")
        remember_table_map(inner, maps)
        events.append(inner)
    return tuple(events)


def make_transaction_payload(
    header: EventHeader,
    events: Iterable[Event],
    *,
    compression: CompressionType = CompressionType.ZSTD,
    level: int = 3,
    table_maps: Mapping[int, object] | None = None,
) -> TransactionPayload:
    """Encode ``events`` (log_pos 0, no checksums) into a payload event, as a source does."""
    maps = dict(table_maps or {})
    parts: list[bytes] = []
    for inner in events:
        parts.append(encode_event(inner, checksum=False, log_pos=0, table_maps=maps))
        remember_table_map(inner, maps)
    raw = b"".join(parts)
    if compression == CompressionType.NONE:
        return TransactionPayload(header, compression, 0, raw)
    data = zstandard.ZstdCompressor(level=level).compress(raw)
    return TransactionPayload(header, compression, len(raw), data)
