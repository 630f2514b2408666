"""A channel's Retrieved_Gtid_Set, read back from its relay log after a restart.

The receiver starts each relay log file with a Format_description and a Previous_gtids event
holding every GTID it had received whole before the file (as a MySQL replica does). At server
start the set is rebuilt as MySQL rebuilds it: the Previous_gtids of the last file that has
one, plus every transaction written whole from there to the end of the relay log, reading
from an earlier file when that one starts inside a transaction (files rotate at a size, not
at a transaction's end). A transaction the relay log holds only in part is not received: the
next dump asks for it again. A relay log its receiver sealed when it stopped, unchanged
since, is not read: the seal holds the set.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import PreviousGtids
from spark_replica.applier_core.binlog.file import read_raw_events
from spark_replica.applier_core.binlog.relaylog import RelayLog
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.convert import MysqlTracker

#: The events a file may start with before its first transaction.
_PREAMBLE = frozenset({EventType.FORMAT_DESCRIPTION, EventType.ROTATE, EventType.IGNORABLE})
_GTIDS = frozenset({EventType.GTID, EventType.GTID_TAGGED, EventType.ANONYMOUS_GTID})


def retrieved_gtids(relay_log: RelayLog) -> GtidSet:
    """The GTIDs of every transaction the relay log's receiver wrote whole (an open, and so
    recovered, relay log that nothing writes now).

    Raises:
        BinlogError: a file cannot be read or holds a corrupt event.
        OSError: a file cannot be read.
    """
    sealed = relay_log.sealed_retrieved
    if sealed is not None:  # as the receiver left it when it stopped (relaylog/seal.py)
        return GtidSet.parse(sealed)
    paths = [relay_log.path(entry.name) for entry in relay_log.index.entries()]
    received, first = GtidSet(), 0
    for number in range(len(paths) - 1, -1, -1):
        previous = previous_gtids(paths[number])
        if previous is not None:
            received, first = previous, number
            break
    while first > 0 and starts_inside_a_transaction(paths[first]):
        first -= 1  # the transaction under way began in a file before
    received.update(whole_transactions(paths[first:]))
    return received


def previous_gtids(path: Path) -> GtidSet | None:
    """The set of the file's Previous_gtids event; None when its preamble has none."""
    decoder = StreamDecoder()
    for _start, _end, data in read_raw_events(path):
        kind = data[4]
        if kind == EventType.PREVIOUS_GTIDS:
            event = decoder.decode(data)
            return event.gtids.copy() if isinstance(event, PreviousGtids) else None
        if kind not in _PREAMBLE:
            return None
        decoder.decode(data)  # a Format_description tells how the next events are checked
    return None


def starts_inside_a_transaction(path: Path) -> bool:
    """Whether the file's first event after its preamble belongs to a transaction begun in
    an earlier file (it is not a GTID event)."""
    for _start, _end, data in read_raw_events(path):
        kind = data[4]
        if kind not in _PREAMBLE and kind != EventType.PREVIOUS_GTIDS:
            return kind not in _GTIDS
    return False


def whole_transactions(paths: Sequence[Path]) -> GtidSet:
    """The GTIDs of the transactions whose GTID event and end are both in ``paths`` (read in
    order, as one stream)."""
    found = GtidSet()
    tracker = MysqlTracker()
    for path in paths:
        for _start, _end, data in read_raw_events(path):
            tracker.convert(data)
            if tracker.ended is not None:
                found.add(tracker.ended[0], "", tracker.ended[1])
    return found
