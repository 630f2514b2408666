"""TRANSACTION_PAYLOAD_EVENT (40): a whole transaction's events in one event (§7.10).

Its inner events are read with ``binlog.payload.payload_events``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from spark_replica.applier_core.binlog.events.header import ValueEvent


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
