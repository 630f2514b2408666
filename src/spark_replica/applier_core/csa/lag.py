"""Seconds_Behind_Source of a Change Stream Applier channel (``channels/lag.py``).

The service thread notes the source commit time of every transaction it hands to the
scheduler, under the transaction's task id (task ids count up from 0, in relay log order).
The scheduler's LWM clock is the id of the first task that has not ended, so the oldest
transaction not committed is the one noted under it. Nothing is computed per transaction: the
status fields are made from the notes when the status board is read (``refresh``), which
gives a DBA the value of the moment, however long the applier waits in between.

Caught up means the provider had nothing more to read and every task has ended.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from spark_replica.applier_core.channels.status import StatusBoard

#: Notes kept before the service thread forgets those of ended tasks itself: at most
#: ``max_tasks`` tasks are in flight, so only the notes of ended tasks pass this.
_TRIM_ABOVE = 1024


class BacklogClock:
    """The source commit times of the tasks that have not ended, for the status board."""

    def __init__(self, status: StatusBoard, first_not_ended: Callable[[], int]) -> None:
        self._status = status
        self._first_not_ended = first_not_ended
        # _lock guards _times and _first: the service thread appends, readers drop.
        self._lock = threading.Lock()
        self._times: deque[float] = deque()  # source commit times (epoch seconds)
        self._first = 0  # the task id of _times[0]
        # Written by the service thread alone; a reader may see it a moment late.
        self._idle = False

    def reading(self, *, idle: bool) -> None:
        """(Service thread) Whether the provider's last answer was 'nothing to read'."""
        self._idle = idle

    def dispatched(self, task_id: int, commit_us: int) -> None:
        """(Service thread) Task ``task_id``, whose transaction the source committed at
        ``commit_us`` (microseconds since the epoch), is handed to the scheduler."""
        with self._lock:
            if not self._times:
                self._first = task_id
            self._times.append(commit_us / 1e6)
            full = len(self._times) > _TRIM_ABOVE
        if full:  # nobody has read the status for a while: forget the ended tasks
            self._oldest()

    def refresh(self) -> None:
        """Bring the channel's Seconds_Behind_Source fields up to date."""
        idle = self._idle
        oldest = self._oldest()
        self._status.update(
            source_commit_time=oldest or 0.0, applier_caught_up=idle and oldest is None
        )

    def _oldest(self) -> float | None:
        """Forget the tasks that have ended; the commit time of the first that has not
        (None when every task noted has ended)."""
        first_not_ended = self._first_not_ended()
        with self._lock:
            times = self._times
            while times and self._first < first_not_ended:
                times.popleft()
                self._first += 1
            return times[0] if times else None
