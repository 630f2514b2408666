"""Damaging a channel's relay log on disk, as a failing disk or a careless hand does, and what
the replica must make of it.

``read_layout`` lists every event of a stopped channel's relay log with the transaction
(GTID number) it belongs to. Each mutation of ``MUTATIONS`` damages the files at a random
place (a ``random.Random`` chooses) inside the transactions numbered from ``first_gno`` on,
and returns a ``Damage``: where the first changed byte is. ``expected`` says what the
replica must do when it starts on the damaged relay log (docs/binlog.md, "Relay logs"):

- opening the relay log cuts a partial or corrupt tail of the *last* file (what a crash
  mid-write leaves); when that cut removes every damaged byte, nothing is lost that the
  receiver does not fetch again, and replication goes on;
- a listed file that is missing keeps the relay log from opening at all;
- any other damage stops the applier with ER_REPLICA_RELAY_LOG_READ_FAILURE once it reaches
  it: the transactions before it are applied, none after.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from spark_replica.applier_core.binlog.constants import HEADER_LEN, EventType
from spark_replica.applier_core.binlog.events import Gtid, Query
from spark_replica.applier_core.binlog.relaylog import RelayLog, RelayLogReader
from spark_replica.applier_core.binlog.relaylog.seal import read_seal
from spark_replica.applier_core.binlog.stream import StreamDecoder

_LENGTH = slice(9, 13)
_GTID_TYPES = frozenset({EventType.GTID, EventType.GTID_TAGGED})
_BOUNDARIES = _GTID_TYPES | {EventType.QUERY, EventType.XID}
#: Events of a relay log file, not of a transaction: a file started inside a transaction
#: holds them between its events, and moving them changes nothing the applier applies.
_FILE_EVENTS = frozenset({EventType.FORMAT_DESCRIPTION, EventType.PREVIOUS_GTIDS, EventType.ROTATE})


class RelayEventAt(NamedTuple):
    """One event of the relay log: ``[start, end)`` of ``file``; ``gno`` is the transaction
    it belongs to (None for the relay log's and the source's control events)."""

    file: str
    start: int
    end: int
    type_code: int
    gno: int | None


@dataclass(frozen=True)
class Layout:
    """A stopped channel's relay log: its directory, files (in log order) and events."""

    directory: Path
    files: tuple[str, ...]
    events: tuple[RelayEventAt, ...]

    def path(self, file: str) -> Path:
        return self.directory / file

    def of_transactions(self, first_gno: int) -> list[RelayEventAt]:
        """The events of the transactions numbered ``first_gno`` and after."""
        return [e for e in self.events if e.gno is not None and e.gno >= first_gno]

    def applied_before(self, file: str, offset: int) -> int:
        """How many transactions (GTID numbers 1..n) lie whole before ``offset`` of ``file``."""
        where = (self.files.index(file), offset)
        last_event: dict[int, tuple[int, int]] = {}
        for event in self.events:
            if event.gno is not None:
                last_event[event.gno] = (self.files.index(event.file), event.end)
        count = 0
        while count + 1 in last_event and last_event[count + 1] <= where:
            count += 1
        return count


def read_layout(directory: Path, base_name: str) -> Layout:
    """Read a stopped channel's relay log (``relay-bin-<channel>`` in ``directory``)."""
    relay_log = RelayLog(directory, base_name)
    relay_log.open()
    decoder = StreamDecoder()
    events: list[RelayEventAt] = []
    gno: int | None = None
    body = False  # after BEGIN
    try:
        with RelayLogReader(relay_log) as reader:
            for relay in reader:
                type_code = relay.data[4]
                member: int | None = None
                if type_code == EventType.FORMAT_DESCRIPTION:
                    decoder.decode(relay.data)
                elif type_code in _GTID_TYPES:
                    event = decoder.decode(relay.data)
                    assert isinstance(event, Gtid)
                    gno, body, member = event.gno, False, event.gno
                elif gno is not None and type_code != EventType.ROTATE:
                    member = gno
                    if type_code == EventType.XID:
                        gno = None
                    elif type_code == EventType.QUERY:
                        query = decoder.decode(relay.data)
                        assert isinstance(query, Query)
                        if query.is_begin:
                            body = True
                        elif query.is_commit or not body:
                            gno = None  # COMMIT, or a DDL statement
                events.append(RelayEventAt(relay.file, relay.start, relay.end, type_code, member))
        files = tuple(relay_log.files())
    finally:
        relay_log.close()
    return Layout(directory, files, tuple(events))


@dataclass(frozen=True)
class Damage:
    """What a mutation did: the first byte it changed (``offset`` of ``file``)."""

    kind: str
    file: str
    offset: int
    detail: str
    #: The index lists a file that is gone: the relay log cannot be opened.
    unopenable: bool = False


@dataclass(frozen=True)
class Expected:
    """What starting the replica on the damaged relay log must do."""

    #: Opening the relay log cut the damage away: replication goes on with no error.
    recovered: bool
    #: Otherwise, the transactions applied before the applier stops (GTID numbers 1..n).
    applied: int
    #: The relay log cannot be opened: START REPLICA itself fails.
    unopenable: bool = False


def cut_at_open(data: bytes) -> int | None:
    """Where opening the relay log cuts its last file (``data``): at the first event whose
    declared length is below a header or runs past the end of the file; None when every
    event is whole."""
    offset = 4
    while offset < len(data):
        if len(data) - offset < HEADER_LEN:
            return offset
        length = int.from_bytes(data[offset + 9 : offset + 13], "little")
        if length < HEADER_LEN or offset + length > len(data):
            return offset
        offset += length
    return None


def sealed_as_found(layout: Layout, file: str) -> bool:
    """Whether the relay log's seal names ``file`` at its present length: opening the relay
    log then trusts the file as its receiver left it and cuts nothing (relaylog/seal.py)."""
    found = [seal for path in layout.directory.glob("*.seal")
             if (seal := read_seal(path)) is not None]  # fmt: skip
    size = layout.path(file).stat().st_size
    return any(seal.file == file and seal.end == size for seal in found)


def expected(layout: Layout, damage: Damage) -> Expected:
    """What the replica must do with ``damage`` done to ``layout``'s files (read before).
    Damage the opening cuts away (a partial or corrupt tail of the last file, unless the
    relay log is sealed at that file's length) is fetched again; any other stops the
    applier before the first damaged transaction."""
    if damage.unopenable:
        return Expected(recovered=False, applied=0, unopenable=True)
    if damage.file == layout.files[-1] and not sealed_as_found(layout, damage.file):
        cut = cut_at_open(layout.path(damage.file).read_bytes())
        if cut is not None and cut <= damage.offset:
            return Expected(recovered=True, applied=0)
    return Expected(recovered=False, applied=layout.applied_before(damage.file, damage.offset))


def _rewrite(layout: Layout, kind: str, file: str, new: bytes, detail: str) -> Damage:
    """Write ``new`` over ``file``; the damage starts at the first byte that changed."""
    path = layout.path(file)
    old = path.read_bytes()
    path.write_bytes(new)
    first = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), None)
    offset = min(len(old), len(new)) if first is None else first
    assert old != new, f"{kind} changed nothing"
    return Damage(kind, file, offset, detail)


def _event(layout: Layout, rng: random.Random, first_gno: int) -> RelayEventAt:
    return rng.choice(layout.of_transactions(first_gno))


def flip_header(layout: Layout, rng: random.Random, first_gno: int) -> Damage:
    """XOR a random non-zero value into one byte of an event's 19-byte common header."""
    event = _event(layout, rng, first_gno)
    at = event.start + rng.randrange(HEADER_LEN)
    data = bytearray(layout.path(event.file).read_bytes())
    data[at] ^= rng.randrange(1, 256)
    return _rewrite(layout, "flip_header", event.file, bytes(data),
                    f"type {event.type_code} at {event.start}: byte {at}")  # fmt: skip


def flip_body(layout: Layout, rng: random.Random, first_gno: int) -> Damage:
    """XOR a random non-zero value into one byte of an event after its header (its body or
    its checksum)."""
    event = _event(layout, rng, first_gno)
    at = rng.randrange(event.start + HEADER_LEN, event.end)
    data = bytearray(layout.path(event.file).read_bytes())
    data[at] ^= rng.randrange(1, 256)
    return _rewrite(layout, "flip_body", event.file, bytes(data),
                    f"type {event.type_code} at {event.start}: byte {at}")  # fmt: skip


def truncate_tail(layout: Layout, rng: random.Random, first_gno: int) -> Damage:
    """Cut a file inside one of its events."""
    event = _event(layout, rng, first_gno)
    at = rng.randrange(event.start + 1, event.end)
    data = layout.path(event.file).read_bytes()
    return _rewrite(layout, "truncate_tail", event.file, data[:at], f"cut at {at}")


def truncate_middle(layout: Layout, rng: random.Random, first_gno: int) -> Damage:
    """Remove 1 to 4096 bytes from inside a file, starting inside one of its events."""
    event = _event(layout, rng, first_gno)
    data = layout.path(event.file).read_bytes()
    at = rng.randrange(event.start, event.end)
    end = min(len(data), at + rng.randrange(1, 4097))
    return _rewrite(layout, "truncate_middle", event.file, data[:at] + data[end:],
                    f"removed [{at}, {end})")  # fmt: skip


def append_garbage(layout: Layout, rng: random.Random, first_gno: int) -> Damage:
    """Append random bytes framed as one whole event (its length field says its size) to a
    file: opening the relay log keeps them, so the applier meets them."""
    event = _event(layout, rng, first_gno)
    garbage = bytearray(rng.randbytes(rng.randrange(HEADER_LEN + 4, 300)))
    garbage[_LENGTH] = len(garbage).to_bytes(4, "little")
    data = layout.path(event.file).read_bytes()
    return _rewrite(layout, "append_garbage", event.file, data + bytes(garbage),
                    f"{len(garbage)} bytes at {len(data)}")  # fmt: skip


def zero_block(layout: Layout, rng: random.Random, first_gno: int) -> Damage:
    """Overwrite 1 to 4096 bytes with zeros, from inside an event (a lost disk block)."""
    while True:
        event = _event(layout, rng, first_gno)
        data = layout.path(event.file).read_bytes()
        at = rng.randrange(event.start, event.end)
        end = min(len(data), at + rng.randrange(1, 4097))
        if data[at:end].count(0) != end - at:  # it must change something
            new = data[:at] + bytes(end - at) + data[end:]
            return _rewrite(layout, "zero_block", event.file, new, f"zeroed [{at}, {end})")


def swap_events(layout: Layout, rng: random.Random, first_gno: int) -> Damage:
    """Swap two adjacent whole events of one file, one of them a transaction's GTID, BEGIN
    or Xid event (the other may be the next transaction's GTID event), neither a file's own
    event (Previous_gtids between the events of a transaction that spans two files: swapped
    with its Xid, the transaction is unchanged): each event stays whole, with a valid
    checksum. (Swaps among Table_map and rows events may mean the same changes: two rows
    events change different rows, and a Table_map may repeat an earlier one of the
    transaction.)"""
    pairs = [
        (a, b)
        for a, b in zip(layout.events, layout.events[1:], strict=False)
        if a.gno is not None and b.gno is not None and a.gno >= first_gno and a.file == b.file
        and a.type_code != b.type_code
        and a.type_code not in _FILE_EVENTS and b.type_code not in _FILE_EVENTS
        and (a.type_code in _BOUNDARIES or b.type_code in _BOUNDARIES)
    ]  # fmt: skip
    a, b = rng.choice(pairs)
    data = layout.path(a.file).read_bytes()
    new = data[: a.start] + data[b.start : b.end] + data[a.start : a.end] + data[b.end :]
    return _rewrite(layout, "swap_events", a.file, new,
                    f"types {a.type_code} at {a.start} and {b.type_code} at {b.start}")  # fmt: skip


def remove_file(layout: Layout, rng: random.Random, first_gno: int) -> Damage:
    """Delete a file the index lists."""
    event = _event(layout, rng, first_gno)
    layout.path(event.file).unlink()
    return Damage("remove_file", event.file, 0, "deleted", unopenable=True)


Mutation = Callable[[Layout, random.Random, int], Damage]
MUTATIONS: dict[str, Mutation] = {
    "flip_header": flip_header,
    "flip_body": flip_body,
    "truncate_tail": truncate_tail,
    "truncate_middle": truncate_middle,
    "append_garbage": append_garbage,
    "zero_block": zero_block,
    "swap_events": swap_events,
    "remove_file": remove_file,
}
