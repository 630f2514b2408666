"""The group assignment queue and its low-water mark (WL5569.GAQ.1-3).

Every transaction the coordinator hands to a worker is a *group*, queued in relay-log order
with its place in the relay log and in the source's binary log. A worker that commits its
group marks it done; while the head of the queue is done it leaves the queue, so the head is
always the first group not committed (the next-to-low-water mark) and the last group that left
is the low-water mark (LWM): it and everything before it are committed, without a gap. The
groups done after the head are the gaps a stop may leave. Thread-safe: the coordinator assigns,
workers mark, the checkpoint reads.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Position:
    """Where a group ends, in the relay log and in the source's binary log."""

    relay_file: str
    relay_pos: int
    source_file: str
    source_pos: int


@dataclass(slots=True)
class Group:
    """One assigned transaction: its number (from 0, in assignment order), the worker that
    has it, where it ends (known once it is read whole) and when the source committed it
    (microseconds since the epoch; 0 when unknown)."""

    number: int
    worker: int
    end: Position | None = None
    done: bool = False
    commit_us: int = 0


class GroupQueue:
    """Groups assigned and not yet below the low-water mark."""

    def __init__(self) -> None:
        # _lock guards everything below.
        self._lock = threading.Lock()
        self._groups: deque[Group] = deque()
        self._next = 0
        self._lwm: Group | None = None
        self._removed = 0
        self._last: dict[int, Group] = {}  # by worker: the last group it committed

    def __len__(self) -> int:
        with self._lock:
            return len(self._groups)

    def assign(self, worker: int, commit_us: int = 0) -> int:
        """Queue a new group for ``worker``; returns its number."""
        with self._lock:
            group = Group(self._next, worker, commit_us=commit_us)
            self._next += 1
            self._groups.append(group)
            return group.number

    def done(self, number: int, end: Position | None) -> None:
        """Group ``number`` committed, ending at ``end``: the head moves past every group
        done in a row (WL5569.GAQ.2)."""
        with self._lock:
            group = self._groups[number - self._removed]
            group.done, group.end = True, end
            if end is not None:
                self._last[group.worker] = group
            while self._groups and self._groups[0].done:
                self._lwm = self._groups.popleft()
                self._removed += 1

    @property
    def lwm(self) -> Group | None:
        """The last group committed with every group before it; None before the first."""
        with self._lock:
            return self._lwm

    @property
    def head(self) -> Group | None:
        """The first group not committed (None when every assigned group is)."""
        with self._lock:
            return self._groups[0] if self._groups else None

    def last_done(self, worker: int) -> Group | None:
        """The last group ``worker`` committed (with a known end)."""
        with self._lock:
            return self._last.get(worker)

    def pending(self) -> list[Group]:
        """The groups not below the LWM, from the head: those done after it are gaps."""
        with self._lock:
            return [Group(g.number, g.worker, g.end, g.done, g.commit_us) for g in self._groups]

    def gaps(self) -> list[Group]:
        """The groups done after the head, which is not (empty when nothing is out of order)."""
        return [group for group in self.pending() if group.done]
