"""Dependency trackers: task-to-task end-to-start dependencies (DES.DT.0010-0030,
WL10500.DT.1-3).

The scheduler activates each task as it is enqueued, may link it to a predecessor, asks
``check_ready`` once the task's clock delay is reached, and calls ``mark_dependency_met`` when
a task ends; the successors returned then go to the pool. Trackers are plain state: the
scheduler calls them under its lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class DependencyTracker(Protocol):
    def activate_task(self, task_id: int) -> bool:
        """Start tracking ``task_id``; True if it was not active."""
        ...

    def add_dependency(self, predecessor: int, successor: int) -> bool:
        """``successor`` may start only after ``predecessor`` ended; True if recorded."""
        ...

    def check_ready(self, task_id: int) -> bool:
        """True when every dependency of ``task_id`` is met."""
        ...

    def mark_dependency_met(self, task_id: int) -> Sequence[int]:
        """``task_id`` ended: stop tracking it; returns the successors it made ready."""
        ...


class TrackerStub:
    """No task-to-task dependencies: every task is ready (the CSA default, WL10500.DT.2)."""

    __slots__ = ()

    def activate_task(self, task_id: int) -> bool:
        return True

    def add_dependency(self, predecessor: int, successor: int) -> bool:
        return False

    def check_ready(self, task_id: int) -> bool:
        return True

    def mark_dependency_met(self, task_id: int) -> Sequence[int]:
        return ()

    def __repr__(self) -> str:
        return "<TrackerStub>"


class SinglePredecessorTracker:
    """At most one predecessor per task, any number of successors (WL10500.DT.3).

    A link is recorded only while the predecessor is active (activated and not ended): a
    task that depends on one already ended is ready.
    """

    __slots__ = ("_active", "_predecessor", "_successors")

    def __init__(self) -> None:
        self._active: set[int] = set()
        self._predecessor: dict[int, int] = {}
        self._successors: dict[int, list[int]] = {}

    def activate_task(self, task_id: int) -> bool:
        if task_id in self._active:
            return False
        self._active.add(task_id)
        return True

    def add_dependency(self, predecessor: int, successor: int) -> bool:
        """Record the link; False if the predecessor is not active, is the successor itself,
        or the successor already has a predecessor."""
        if (
            predecessor == successor
            or predecessor not in self._active
            or successor in self._predecessor
        ):
            return False
        self._predecessor[successor] = predecessor
        self._successors.setdefault(predecessor, []).append(successor)
        return True

    def check_ready(self, task_id: int) -> bool:
        return task_id not in self._predecessor

    def mark_dependency_met(self, task_id: int) -> Sequence[int]:
        self._active.discard(task_id)
        self._predecessor.pop(task_id, None)
        successors = self._successors.pop(task_id, ())
        for successor in successors:
            del self._predecessor[successor]
        return successors

    def __repr__(self) -> str:
        return (
            f"<SinglePredecessorTracker active={len(self._active)} links={len(self._predecessor)}>"
        )
