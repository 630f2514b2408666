"""The transaction conflict manager of a channel (DES.TCM.0010, WL10500.TCM.1–8).

With ``replica_preserve_commit_order=ON`` a later transaction may hold a row lock an earlier
one needs while it waits for its own commit turn, which comes only after the earlier one
commits: a deadlock no lock manager sees. The engine's lock manager reports every wait
(``on_wait(waiter, holder)``); ``ConflictRouter`` finds the two jobs, and when the holder is
later in commit order asks it to give the lock up (``Job.report_conflict``). A prepared job
has no worker, so the channel's ``ConflictManager`` thread rolls its session back; the job
applies again when its turn comes (TCM.6). A STOP waits for a rollback in progress (TCM.5).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from spark_replica.applier_core.concurrency import LockingQueue
from spark_replica.applier_core.csa.job import Job, JobState
from spark_replica.applier_core.storage import TransactionRef

logger = logging.getLogger(__name__)


class ConflictRouter:
    """Maps lock owners to the jobs running them, for the lock manager's ``on_wait`` hook.

    One router serves every channel applying to an engine: a lock conflict between two
    channels is not a commit-order conflict (the channels commit independently), so only jobs
    of the same channel are compared.
    """

    def __init__(self) -> None:
        # _lock guards _jobs.
        self._lock = threading.Lock()
        self._jobs: dict[TransactionRef, tuple[Job, ConflictManager]] = {}

    def register(self, job: Job, manager: ConflictManager) -> None:
        with self._lock:
            self._jobs[job.ref] = (job, manager)

    def jobs_of(self, manager: ConflictManager) -> list[Job]:
        """The registered jobs of one channel (the one ``manager`` serves)."""
        with self._lock:
            return [job for job, owner in self._jobs.values() if owner is manager]

    def unregister(self, job: Job) -> None:
        with self._lock:
            self._jobs.pop(job.ref, None)

    def on_wait(self, waiter: TransactionRef, holder: TransactionRef) -> None:
        """The lock manager's hook: ``waiter`` waits for a lock ``holder`` has."""
        with self._lock:
            waiting = self._jobs.get(waiter)
            holding = self._jobs.get(holder)
        if waiting is None or holding is None or waiting[1] is not holding[1]:
            return
        job, manager = holding
        if not manager.commit_order:
            return
        if job.task_id > waiting[0].task_id:
            manager.resolve(job)
        elif job.state is JobState.PREPARED:
            # A later transaction waits for an earlier one that waits for its commit turn,
            # which needs a worker: keep one free for it.
            manager.blocked_by_earlier()


class ConflictManager:
    """One channel's rollback thread, ``<name>-conflicts`` (TCM.2, TCM.8)."""

    def __init__(
        self,
        name: str,
        *,
        commit_order: bool,
        blocked_by_earlier: Callable[[], object] = lambda: None,
        abort_waits: Callable[[TransactionRef], object] = lambda ref: None,
    ) -> None:
        self.name = name
        self.commit_order = commit_order
        self.blocked_by_earlier = blocked_by_earlier
        """Called when a worker waits for a lock of an earlier transaction that waits for its
        commit turn: the service starts a spare worker, so the turn can be taken."""
        self.abort_waits = abort_waits
        """Fails a transaction's current or next lock wait with a deadlock error."""
        self.rollbacks = 0
        self._queue: LockingQueue[Job] = LockingQueue()
        self._end = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"{self.name}-conflicts")
        self._thread.start()

    def resolve(self, job: Job) -> None:
        """Make ``job`` give its locks up: now, by this thread, if it waits for its commit
        turn; if a worker applies it, its lock waits (now or next) fail with a deadlock, so
        it rolls back and applies again (``Job.report_conflict``)."""
        if job.report_conflict():
            self._queue.put(job)
        elif job.state is JobState.APPLYING:
            self.abort_waits(job.ref)

    def stop(self) -> None:
        """Finish the rollbacks queued, then end the thread. Idempotent."""
        self._end.set()
        self._queue.notify_all()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            job, found = self._queue.get(stop=self._end.is_set)
            if not found:
                if self._end.is_set():
                    return
                continue
            assert job is not None
            try:
                job.roll_back_for_conflict()
                self.rollbacks += 1
            except Exception:  # the job finds its session rolled back or not on its turn
                logger.exception("rolling back %r for a commit-order conflict", job)
