"""GTID sets: ``uuid:1-5:7`` and tagged ``uuid:tag:1-3``, as MySQL 8.4 writes them.

A set maps each (uuid, tag) to a sorted list of disjoint, non-adjacent closed intervals.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator

from spark_replica.applier_core.errors import ErrorCode, ReplicaError

_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_TAG = re.compile(r"^[a-z_][a-z0-9_]{0,31}$")
MAX_GNO = (1 << 63) - 1

Interval = tuple[int, int]
Sid = tuple[str, str]  # (uuid, tag); tag '' when untagged


def canonical_uuid(text: str) -> str | None:
    text = text.strip().lower()
    if not _UUID.match(text):
        return None
    hexits = text.replace("-", "")
    return f"{hexits[:8]}-{hexits[8:12]}-{hexits[12:16]}-{hexits[16:20]}-{hexits[20:]}"


class GtidSet:
    """A mutable set of GTIDs."""

    __slots__ = ("_sids",)

    def __init__(self) -> None:
        self._sids: dict[Sid, list[Interval]] = {}

    @classmethod
    def parse(cls, text: str) -> GtidSet:
        """Parse MySQL's text form; raise 1772 on malformed input.

        >>> u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
        >>> str(GtidSet.parse(f"{u.upper()}:1-5:7, {u}:6"))
        '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7'
        """
        result = cls()
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            fields = [f.strip() for f in part.split(":")]
            uuid = canonical_uuid(fields[0])
            if uuid is None:
                raise _malformed(text)
            tag = ""
            for field in fields[1:]:
                if field and (field[0].isalpha() or field[0] == "_"):
                    if not _TAG.match(field.lower()):
                        raise _malformed(text)
                    tag = field.lower()
                    continue
                start, sep, end = field.partition("-")
                if not _is_number(start) or (sep and not _is_number(end)):
                    raise _malformed(text)
                first, last = int(start), int(end) if sep else int(start)
                if first < 1 or last < first or last > MAX_GNO:
                    raise _malformed(text)
                result.add_interval(uuid, tag, first, last)
        return result

    def add_interval(self, uuid: str, tag: str, first: int, last: int) -> None:
        """Add ``first..last`` (inclusive), merging with neighbours."""
        intervals = self._sids.setdefault((uuid, tag), [])
        index = bisect.bisect_left(intervals, (first, first))
        if index > 0 and intervals[index - 1][1] >= first - 1:
            index -= 1
            first = intervals[index][0]
        end = index
        while end < len(intervals) and intervals[end][0] <= last + 1:
            last = max(last, intervals[end][1])
            end += 1
        intervals[index:end] = [(first, last)]

    def add(self, uuid: str, tag: str, gno: int) -> None:
        intervals = self._sids.get((uuid, tag))
        if intervals and intervals[-1][1] == gno - 1:  # the usual case: the next GTID
            intervals[-1] = (intervals[-1][0], gno)
            return
        self.add_interval(uuid, tag, gno, gno)

    def count(self) -> int:
        """The number of GTIDs in the set."""
        return sum(last - first + 1 for runs in self._sids.values() for first, last in runs)

    def contains(self, uuid: str, tag: str, gno: int) -> bool:
        intervals = self._sids.get((uuid, tag))
        if not intervals:
            return False
        index = bisect.bisect_right(intervals, (gno, MAX_GNO + 1)) - 1
        return index >= 0 and intervals[index][0] <= gno <= intervals[index][1]

    def update(self, other: GtidSet) -> None:
        """Union in place."""
        for (uuid, tag), intervals in other._sids.items():
            for first, last in intervals:
                self.add_interval(uuid, tag, first, last)

    def union(self, other: GtidSet) -> GtidSet:
        result = self.copy()
        result.update(other)
        return result

    def subtract(self, other: GtidSet) -> GtidSet:
        """The GTIDs of ``self`` that are not in ``other``."""
        result = GtidSet()
        for sid, intervals in self._sids.items():
            holes = other._sids.get(sid, [])
            for first, last in intervals:
                for start, end in _minus(first, last, holes):
                    result.add_interval(sid[0], sid[1], start, end)
        return result

    def is_subset(self, other: GtidSet) -> bool:
        return not self.subtract(other)

    def intersection(self, other: GtidSet) -> GtidSet:
        """The GTIDs in both sets."""
        return self.subtract(self.subtract(other))

    def copy(self) -> GtidSet:
        result = GtidSet()
        result._sids = {sid: list(intervals) for sid, intervals in self._sids.items()}
        return result

    def intervals(self) -> Iterator[tuple[str, str, int, int]]:
        """``(uuid, tag, first, last)`` in text order."""
        for uuid, tag in sorted(self._sids):
            for first, last in self._sids[(uuid, tag)]:
                yield uuid, tag, first, last

    @classmethod
    def from_intervals(cls, rows: Iterable[tuple[str, str, int, int]]) -> GtidSet:
        result = cls()
        for uuid, tag, first, last in rows:
            result.add_interval(uuid, tag, first, last)
        return result

    def __bool__(self) -> bool:
        return any(self._sids.values())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GtidSet):
            return NotImplemented
        return {k: v for k, v in self._sids.items() if v} == {
            k: v for k, v in other._sids.items() if v
        }

    __hash__ = None  # type: ignore[assignment]

    def format(self, separator: str = ",\n") -> str:
        """MySQL's text form; ``gtid_executed`` separates UUIDs with a comma and a newline."""
        parts: list[str] = []
        by_uuid: dict[str, list[str]] = {}
        for uuid, tag in sorted(self._sids):
            intervals = self._sids[(uuid, tag)]
            if not intervals:
                continue
            text = ":".join(f"{a}" if a == b else f"{a}-{b}" for a, b in intervals)
            by_uuid.setdefault(uuid, []).append(f"{tag}:{text}" if tag else text)
        for uuid, groups in by_uuid.items():
            parts.append(uuid + ":" + ":".join(groups))
        return separator.join(parts)

    def __str__(self) -> str:
        return self.format(",")

    def __repr__(self) -> str:
        return f"GtidSet({self.format(',')!r})"


def parse_gtid(text: str) -> tuple[str, str, int] | None:
    """One GTID, ``uuid:number`` or ``uuid:tag:number`` (any case, as MySQL reads
    ``SET GTID_NEXT``), as ``(uuid, tag, number)`` in canonical form; None when malformed.

    >>> parse_gtid("3E11FA47-71CA-11E1-9E33-C80AA9429562:Repair:7")
    ('3e11fa47-71ca-11e1-9e33-c80aa9429562', 'repair', 7)
    """
    fields = [field.strip() for field in text.split(":")]
    if len(fields) not in (2, 3):
        return None
    uuid = canonical_uuid(fields[0])
    tag = fields[1].lower() if len(fields) == 3 else ""
    if uuid is None or (len(fields) == 3 and not _TAG.match(tag)) or not _is_number(fields[-1]):
        return None
    number = int(fields[-1])
    if not 1 <= number <= MAX_GNO:
        return None
    return uuid, tag, number


def format_gtid(uuid: str, tag: str, number: int) -> str:
    """MySQL's text of one GTID."""
    return f"{uuid}:{tag}:{number}" if tag else f"{uuid}:{number}"


def _is_number(text: str) -> bool:
    return bool(text) and text.isascii() and text.isdigit()


def _minus(first: int, last: int, holes: list[Interval]) -> Iterator[Interval]:
    index = max(0, bisect.bisect_right(holes, (first, MAX_GNO + 1)) - 1)
    start = first
    for hole_first, hole_last in holes[index:]:
        if hole_first > last:
            break
        if hole_last < start:
            continue
        if hole_first > start:
            yield start, hole_first - 1
        start = hole_last + 1
        if start > last:
            return
    if start <= last:
        yield start, last


def _malformed(text: str) -> ReplicaError:
    return ReplicaError(
        ErrorCode.MALFORMED_GTID_SET_SPECIFICATION,
        f"Malformed GTID set specification '{text[:200]}'.",
    )
