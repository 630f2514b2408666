"""Dependency adapters: from a source's ``(sequence_number, last_committed)`` to a clock time
(WL10500.DA.1, DES.CSA.0040-0042).

The scheduling layer sees only integers: a task id (counting from 0 across the whole stream),
a sequence number and the sequence number of the last transaction it depends on. What they
mean on the source is the service layer's business.

* ``LwmDependencyAdapter`` (the default) gives a delay on the ``LwmClock``: the task may start
  once every task up to the one it depends on has finished (WL10500.DA.LWM.1-3).
* ``SequentialClockAdapter`` gives a window on the ``LogicalClock`` (WL10500.DA.SEQ.1).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple, Protocol


class Solution(NamedTuple):
    """A task's time on the clock, and the task it was found to depend on (if one)."""

    delay: int
    """The clock time at which the task may start."""
    resolved_task_id: int | None
    """The task whose sequence number equals the dependency, or None (barrier, window)."""


#: Builds a ``Solution`` without its generated ``__new__``: one per transaction.
_new_solution = tuple.__new__


class DependencyAdapter(Protocol):
    def solve(self, task_id: int, sequence_number: int, last_committed: int) -> Solution: ...

    def reset(self) -> None: ...


class LwmDependencyAdapter:
    """Delays on the LWM clock: ``delay`` = (task id of the transaction whose sequence number is
    ``last_committed``) + 1, never below the barrier.

    The barrier is the first task id after a sequence restart: a ``sequence_number`` not above
    the previous one (a new source binlog file, a server restart), or ``reset()`` (called at a
    Format_description event). The first task after a restart therefore waits for every
    earlier task, and ``last_committed`` = 0 or older than anything seen since the restart
    means "the barrier" (T53).

    When ``last_committed`` names a sequence number the adapter never saw between two it did
    (a gap in the stream), the task depends on the last one seen below it. An invalid pair
    (``sequence_number`` <= 0, or ``last_committed`` >= ``sequence_number``) carries no usable
    dependency: the task waits for every earlier task and starts a new epoch, as a restart.

    Only the last ``history`` sequence numbers are remembered; a ``last_committed`` older than
    those gets the delay of the oldest forgotten one, which is never too early.
    """

    __slots__ = ("_barrier", "_floor", "_history", "_last_task", "_seqs", "_tids", "_restart")

    def __init__(self, history: int = 1 << 16) -> None:
        if history < 1:
            raise ValueError(f"history must be at least 1, not {history}")
        self._history = history
        self._barrier = 0
        #: The delay for a last_committed older than the remembered sequence numbers.
        self._floor = 0
        #: Sequence numbers of this epoch (increasing) and their task ids.
        self._seqs: list[int] = []
        self._tids: list[int] = []
        self._last_task: int | None = None
        self._restart = False

    @property
    def barrier(self) -> int:
        return self._barrier

    def reset(self) -> None:
        """Start a new epoch with the next task (its sequence numbers restart)."""
        self._restart = True

    def solve(self, task_id: int, sequence_number: int, last_committed: int) -> Solution:
        """The delay of ``task_id``. Task ids must increase from call to call."""
        if self._last_task is not None and task_id <= self._last_task:
            raise ValueError(f"task ids must increase: {task_id} after {self._last_task}")
        self._last_task = task_id
        seqs = self._seqs
        if sequence_number <= 0 or last_committed >= sequence_number:
            self._new_epoch(task_id + 1)
            return Solution(task_id, None)
        if self._restart or (seqs and sequence_number <= seqs[-1]):
            self._restart = False
            self._new_epoch(task_id)
        solution = self._lookup(last_committed)
        seqs.append(sequence_number)
        self._tids.append(task_id)
        if len(seqs) > 2 * self._history:
            self._forget(len(seqs) - self._history)
        return solution

    def _lookup(self, last_committed: int) -> Solution:
        barrier = self._barrier
        if last_committed <= 0:
            return _new_solution(Solution, (barrier, None))
        index = bisect_right(self._seqs, last_committed) - 1
        if index < 0:
            return _new_solution(Solution, (max(barrier, self._floor), None))
        resolved = self._tids[index]
        return _new_solution(Solution, (max(barrier, resolved + 1), resolved))

    def _new_epoch(self, barrier: int) -> None:
        self._barrier = barrier
        self._floor = barrier
        self._seqs.clear()
        self._tids.clear()

    def _forget(self, count: int) -> None:
        self._floor = self._tids[count - 1] + 1
        del self._seqs[:count]
        del self._tids[:count]

    def __repr__(self) -> str:
        return f"<LwmDependencyAdapter barrier={self._barrier} known={len(self._seqs)}>"


class SequentialClockAdapter:
    """Windows for the ``LogicalClock`` (WL10500.DA.SEQ.1): the clock value C and the smallest
    sequence number M of the current window. For each task (seq, last_committed):

    * ``last_committed == 0`` or ``last_committed >= M``: C += 1, M = seq (a new window);
    * otherwise (its dependency is in an earlier window): it joins window C.

    T55: (1,0),(2,1),(3,1),(4,3) give 1, 2, 2, 3. Unlike the seed's literal text (ambiguity
    43), joining a window leaves M alone: M stays the window's smallest sequence number, else a
    later task depending on a member of the window could join it. A sequence restart, an
    invalid pair or ``reset()`` opens a new window.
    """

    __slots__ = ("_clock", "_last_seq", "_min_seq", "_restart")

    def __init__(self) -> None:
        self._clock = 0
        self._min_seq = 0
        self._last_seq = 0
        self._restart = False

    def reset(self) -> None:
        """The next task opens a new window (a Format_description event)."""
        self._restart = True

    def solve(self, task_id: int, sequence_number: int, last_committed: int) -> Solution:
        restart = self._restart or sequence_number <= self._last_seq
        invalid = sequence_number <= 0 or last_committed >= sequence_number
        self._restart = False
        self._last_seq = sequence_number
        if restart or invalid or last_committed == 0 or last_committed >= self._min_seq:
            self._clock += 1
            self._min_seq = sequence_number
        return Solution(self._clock, None)

    def __repr__(self) -> str:
        return f"<SequentialClockAdapter C={self._clock} M={self._min_seq}>"
