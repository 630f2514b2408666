"""A job: one transaction of the relay log as a scheduler task (DES.JOB.*, WL10500.JOB.PH).

A job applies its transaction's events through an engine session, then prepares and commits
it. With ``replica_preserve_commit_order=ON`` it runs in separate dispatches
(DES.JOB.0120): phase 0 (global LWM clock) applies and prepares, then the job waits for its
commit turn with no worker; phase 1 (commit-order clock, start-to-start) registers for commit
(``Step.START``, which releases the next transaction's registration) and commits
(``Step.REST``, in parallel with other commits). Otherwise one dispatch does it all
(DES.JOB.0130).

Retries (DES.JOB.0140, WL10500.RETRY.1/2): a transient error (lock wait timeout, deadlock)
rolls back and applies again, up to ``replica_transaction_retries`` times; a transient error
while committing replays the apply and commits in the same dispatch, without registering
again. A truncated transaction (WL10500.STREAM.4) rolls back silently: it commits nothing and
is not an error; the next copy of it in the relay log applies it.

Conflicts under commit order (WL10500.TCM.*): when an earlier transaction waits for a row
lock this job holds, the job must give it up. While a worker applies it, the lock manager
aborts its waits and the job rolls back and applies again once it has prepared
(``set_applied``). While it waits for its turn with no worker (PREPARED), the conflict manager
rolls its session back; when its turn comes, the job sees it and applies again before it
registers. Once it has claimed its commit turn (COMMITTING) nobody rolls it back.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from spark_replica.applier_core.apply.errors import SourcePosition, channel_error
from spark_replica.applier_core.apply.transaction import ApplyError, TransactionApplier
from spark_replica.applier_core.binlog.versions import SourceVersion
from spark_replica.applier_core.commit_order import CommitOrderFailed, CommitOrderGate
from spark_replica.applier_core.csa.sessions import SessionPool
from spark_replica.applier_core.csa.statistics import CsaStatistics
from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.provider.fetchable import FetchableTransaction, TransactionState
from spark_replica.applier_core.scheduler.schedules import Step
from spark_replica.applier_core.storage import EngineError, EngineSession, TransactionRef

#: Errors an earlier transaction still in flight may cause (a row it inserts, deletes).
#: Errors an earlier transaction may cause or cure under wrong dependency data: a row missing
#: or already there, a table or database not created yet.
_ORDER_ERRORS = frozenset(
    {ErrorCode.KEY_NOT_FOUND, ErrorCode.DUP_ENTRY, ErrorCode.NO_SUCH_TABLE, ErrorCode.BAD_DB_ERROR}
)

#: How long a worker waits for the next event of a streamed transaction before it checks
#: whether the channel is stopping (the provider truncates the transaction on stop anyway).
EVENT_WAIT = 0.5


class JobState(enum.Enum):
    QUEUED = "queued"
    APPLYING = "applying"
    """A worker applies it (MySQL's ``preparing``)."""
    PREPARED = "prepared"
    """Applied and prepared; waits for its commit turn with no worker."""
    ROLLING_BACK = "rolling back"
    """The conflict manager is rolling it back."""
    ROLLED_BACK = "rolled back"
    """Rolled back by the conflict manager: applied again when its commit turn comes."""
    COMMITTING = "committing"
    """It has claimed its commit turn: nobody rolls it back any more."""
    DONE = "done"
    TRUNCATED = "truncated"
    """Cut off in the relay log: commits nothing; the next copy of it applies it."""
    ABANDONED = "abandoned"
    """Given up, not committed, because the channel stops (STOP REPLICA, or another job's
    failure): applied again after the next START."""


class ChannelStopping(Exception):
    """Why a job was given up: the channel stops (the commit-order gate's cause)."""


class JobFailed(Exception):
    """A job failed for good: the channel stops with ``code`` and these texts."""

    def __init__(
        self,
        code: int,
        worker_message: str,
        detail: str,
        gtid: str,
        worker: int,
        *,
        channel_message: str | None = None,
    ) -> None:
        super().__init__(worker_message)
        self.code = code
        self.worker_message = worker_message
        self.detail = detail
        self.gtid = gtid
        self.worker = worker
        self.channel_message = channel_message
        """The channel's Last_SQL_Error when it is not the worker's text with the prefix."""


class Workers(Protocol):
    """Who runs a job: the worker number of the current thread, and its status row."""

    def current(self) -> int: ...

    def applying(self, worker: int, job: Job) -> None: ...

    def applied(self, worker: int, job: Job, *, committed: bool) -> None: ...


@dataclass(slots=True)
class JobEnvironment:
    """What every job of a channel shares."""

    channel: str
    sessions: SessionPool
    executed: ExecutedGtids
    statistics: CsaStatistics
    workers: Workers
    retries: int
    commit_order: bool
    #: Called with a job whose rollback the conflict manager must do (it is PREPARED).
    request_rollback: RollbackRequest
    stopping: threading.Event = field(default_factory=threading.Event)
    #: Called with the job and the error each time it retries (for the status tables).
    on_retry: RetryHook | None = None
    #: Called with the job once it has released its transaction (``Job.finish``).
    on_finish: FinishHook | None = None
    #: Tickets are task ids. With ``commit_order`` the gate orders the commits (WL#7846);
    #: without, it only tells a job when every earlier one has ended.
    gate: CommitOrderGate | None = None
    #: Starts a spare worker while this one waits for others (they may need a worker).
    spare: Callable[[], object] = lambda: None


class RollbackRequest(Protocol):
    def __call__(self, job: Job) -> None: ...


class RetryHook(Protocol):
    def __call__(self, job: Job, error: ApplyError) -> None: ...


class FinishHook(Protocol):
    def __call__(self, job: Job) -> None: ...


class Job:
    """One transaction, applied and committed through the scheduler (see the module text)."""

    def __init__(self, trx: FetchableTransaction, env: JobEnvironment, task_id: int) -> None:
        self.trx = trx
        self.env = env
        self.task_id = task_id
        self.ref = TransactionRef(trx.gtid_text, task_id)
        self.retries = 0
        self.started = 0.0
        # _lock guards _state, _conflict, _settling and the hand-over of _session between a
        # worker and the conflict manager; _settling, made when the conflict manager starts a
        # rollback, is set when it ends.
        self._lock = threading.Lock()
        self._state = JobState.QUEUED
        self._conflict = False
        self._settling: threading.Event | None = None
        self._session: EngineSession | None = None
        self._durable_session: EngineSession | None = None
        self._source_log = trx.start.file

    def __repr__(self) -> str:
        return f"<Job {self.task_id} {self.trx.gtid_text} {self._state.value}>"

    @property
    def state(self) -> JobState:
        with self._lock:
            return self._state

    # -- the scheduler's entry point -----------------------------------------------------------

    def run(self, phase: int, step: Step) -> None:
        """Run ``step`` of ``phase`` on the current worker (see the module text). After the
        job's last step it releases its transaction; a job that raises ``JobFailed`` leaves
        that to the service, which stops the channel."""
        worker = self.env.workers.current()
        if not self.env.commit_order:
            if self._start_applying() and self._apply(worker):
                self._commit(worker)
            self.finish()
        elif phase == 0:
            if self._start_applying() and self._apply(worker):
                self._set_applied(worker)
        elif step is Step.START:
            self._claim_commit_turn(worker)
        else:
            self._commit_in_order(worker)
            self.finish()

    # -- applying ------------------------------------------------------------------------------

    def _start_applying(self) -> bool:
        """False (the job is given up) when the channel stops before it starts: STOP REPLICA
        lets the jobs that have started end, and starts no new one."""
        if self.env.stopping.is_set():
            self._abandon()
            return False
        return True

    def _abandon(self) -> None:
        """Give the job up because the channel stops: roll back, commit nothing; under
        commit order none after it commits either, so the committed ones stay a prefix of
        the relay log (the next START applies the rest)."""
        self._rollback()
        with self._lock:
            self._state = JobState.ABANDONED
        if self.env.commit_order and self.env.gate is not None:
            self.env.gate.fail(ChannelStopping(self.trx.gtid_text), from_ticket=self.task_id)

    def _apply(self, worker: int) -> bool:
        """Apply and prepare, retrying transient errors; False when the transaction was cut
        off (nothing to commit). Raises ``JobFailed``."""
        self.env.workers.applying(worker, self)
        if not self.started:
            self.started = time.time()
        waited_for_head = False
        while True:
            with self._lock:
                self._state = JobState.APPLYING
                self._conflict = False
            started = time.perf_counter_ns()
            try:
                return self._apply_once(worker)
            except ApplyError as error:
                if self.env.stopping.is_set():  # the channel stops: give the work up
                    self._abandon()
                    return False
                self._rollback()
                if error.transient and self.retries < self.env.retries:
                    self._retry(worker, error)
                    continue
                if error.code in _ORDER_ERRORS and not waited_for_head:
                    # May be an earlier transaction's doing (wrong dependency data): try
                    # again once every earlier one has ended.
                    waited_for_head = True
                    if self._wait_for_head():
                        self._retry(worker, error)
                        continue
                    if self.env.stopping.is_set():  # the head never comes: stopping
                        self._abandon()
                        return False
                if self.env.commit_order and not waited_for_head:
                    # Fail at the head: every earlier transaction commits first, so the
                    # channel stops right before this one (WL#7846 FR8).
                    self._wait_for_head()
                raise self._failure(worker, error) from error
            finally:
                counters = self.env.statistics.workers[worker - 1]
                counters["time_applying_ns"] += time.perf_counter_ns() - started

    def _apply_once(self, worker: int) -> bool:
        session = self._session
        if session is None:
            session = self._session = self.env.sessions.acquire()
        session.begin(self.ref)
        version = SourceVersion.of_gtid_event(self.trx.gtid.original_server_version)
        applier = TransactionApplier(session, self.trx.gtid_text, self._source_log, version)
        events = applier.apply_all(self.trx, EVENT_WAIT)
        if events is None:
            return self._ended_early()
        self.env.statistics.workers[worker - 1]["events_applied"] += events
        return True

    def _wait_for_head(self) -> bool:
        """Wait until every earlier transaction has ended; False when that cannot happen (the
        channel failed). A spare worker takes over meanwhile: the earlier ones may need one."""
        gate = self.env.gate
        if gate is None:
            return False
        if gate.next_ticket < self.task_id:
            self.env.spare()
        try:
            gate.wait_turn(self.task_id)
        except CommitOrderFailed:
            return False
        return True

    def _ended_early(self) -> bool:
        """The transaction has no more events and no end: truncated, or unreadable."""
        self._rollback()
        if self.trx.state is TransactionState.FAILED:  # the relay log cannot be read (ERR.10)
            error = self.trx.error
            assert error is not None
            if self.env.commit_order:
                self._wait_for_head()  # every earlier transaction commits first (FR8)
            detail = error.message.removeprefix(channel_error(self.env.channel, ""))
            if self.env.gate is not None:
                self.env.gate.fail(error)
            raise JobFailed(error.code, detail, detail, self.trx.gtid_text,
                            self.env.workers.current(), channel_message=error.message)  # fmt: skip
        with self._lock:
            self._state = JobState.TRUNCATED
        return False

    def _retry(self, worker: int, error: ApplyError) -> None:
        self.retries += 1
        self.env.statistics.workers[worker - 1]["transactions_retried"] += 1
        if self.env.on_retry is not None:
            self.env.on_retry(self, error)
        self.trx.rewind()

    def _set_applied(self, worker: int) -> None:
        """Prepared: from now on only the conflict manager may roll it back, until its turn.

        A conflict reported while a worker applied it (an earlier transaction waits for one of
        its locks) is handled here: roll back and apply again, so the earlier one goes on.
        """
        while True:
            with self._lock:
                if not self._conflict:
                    self._state = JobState.PREPARED
                    return
                self._conflict = False
            self._rollback()
            self.trx.rewind()
            if not self._apply(worker):
                return

    # -- committing ----------------------------------------------------------------------------

    def _claim_commit_turn(self, worker: int) -> None:
        """Step.START of the commit phase: take the turn (nobody rolls the job back after);
        a job the conflict manager rolled back applies again first."""
        self.wait_settled()
        with self._lock:
            state = self._state
            if state in (JobState.TRUNCATED, JobState.ABANDONED):
                return
            if state is JobState.PREPARED:
                self._state = JobState.COMMITTING
                return
            assert state is JobState.ROLLED_BACK, state
        if not self._start_applying():  # rolled back for an earlier one, and now stopping
            return
        self.env.statistics.workers[worker - 1]["waits_for_commit_order"] += 1
        self.trx.rewind()
        if self._apply(worker):
            with self._lock:
                self._state = JobState.COMMITTING

    def _commit_in_order(self, worker: int) -> None:
        """Step.REST: commit once every earlier transaction has (WL#7846 through the
        channel's gate), then wait for durability in parallel with the others (group
        commit). A job that commits nothing still passes its turn on."""
        gate = self.env.gate
        assert gate is not None
        if self.state is not JobState.COMMITTING:
            gate.finished(self.task_id)
            return
        try:
            if not gate.wait_turn(self.task_id):
                raise AssertionError("an unbounded wait_turn returned")
        except CommitOrderFailed:  # an earlier transaction failed or was given up
            self._rollback()
            with self._lock:
                self._state = JobState.ABANDONED
            return
        try:
            self._commit(worker, durable=False)
        finally:
            gate.finished(self.task_id)
        self._wait_durable()

    def _wait_durable(self) -> None:
        session = self._durable_session
        if session is not None:
            self._durable_session = None
            session.wait_durable()
            self.env.sessions.release(session)

    def _commit(self, worker: int, *, durable: bool = True) -> None:
        """Commit, record the GTID, release everything. A transient commit error replays
        the apply and commits again at once (WL10500.RETRY.2)."""
        session = self._session
        assert session is not None
        while True:
            try:
                session.commit(durable=durable)
                break
            except EngineError as exc:
                self._rollback()
                error = ApplyError(exc.code, str(exc), transient=exc.transient)
                if not (error.transient and self.retries < self.env.retries):
                    raise self._failure(worker, error) from exc
                self._retry(worker, error)
                if not self._apply(worker):
                    return
                session = self._session
                assert session is not None
        gtid = self.trx.gtid
        if not gtid.anonymous:
            self.env.executed.add(gtid.uuid, gtid.tag, gtid.gno)
        with self._lock:
            self._state = JobState.DONE
        if durable:
            self._release_session()
        else:  # released once durable (``_wait_durable``)
            self._durable_session, self._session = session, None
        self.env.statistics.workers[worker - 1]["transactions_committed"] += 1
        self.env.workers.applied(worker, self, committed=True)

    def finish(self) -> None:
        """After the last phase (or when the job will not run again): release the
        transaction (its memory and relay log files) and the session."""
        state = self.state
        self._rollback()
        self._release_session()
        self.trx.finish(success=state in (JobState.DONE, JobState.TRUNCATED))
        if self.env.gate is not None:
            self.env.gate.finished(self.task_id)
        if self.env.on_finish is not None:
            self.env.on_finish(self)

    # -- the conflict manager's side -------------------------------------------------------------

    def report_conflict(self) -> bool:
        """An earlier transaction waits for a lock this job holds. Returns True when the
        conflict manager must roll the job back now (it is PREPARED); otherwise the job
        handles it itself (applying: once prepared; committing: it releases the lock soon).
        """
        with self._lock:
            if self._state is JobState.APPLYING:
                self._conflict = True
                return False
            if self._state is not JobState.PREPARED:
                return False
            self._state = JobState.ROLLING_BACK
            self._settling = threading.Event()
        return True

    def roll_back_for_conflict(self) -> None:
        """Run by the conflict manager's thread for a job ``report_conflict`` marked."""
        try:
            self._rollback()
        finally:
            with self._lock:
                self._state = JobState.ROLLED_BACK
                settling = self._settling
            assert settling is not None
            settling.set()

    def wait_settled(self, timeout: float | None = None) -> bool:
        """Wait until no rollback by the conflict manager is in progress (TCM.5)."""
        with self._lock:
            settling = self._settling
        return settling is None or settling.wait(timeout)

    # -- helpers -----------------------------------------------------------------------------------

    def _rollback(self) -> None:
        session = self._session
        if session is not None:
            session.rollback()

    def _release_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            self.env.sessions.release(session)

    def _failure(self, worker: int, error: ApplyError) -> JobFailed:
        if self.env.gate is not None:
            self.env.gate.fail(error)
        where = SourcePosition(self._source_log, self.trx.gtid.header.log_pos)
        message = error.for_worker(worker, self.trx.gtid_text, where)
        code = error.code or ErrorCode.UNKNOWN_ERROR
        return JobFailed(code, message, error.detail, self.trx.gtid_text, worker)
