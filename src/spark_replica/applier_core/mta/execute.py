"""Applying one assigned transaction, as a worker (or the single-threaded coordinator) does.

The transaction's events go through a ``TransactionApplier`` into the runner's engine
session; then it prepares and, with ``replica_preserve_commit_order=ON``, waits for its turn
in relay-log order (WL#7846) before it commits and its GTID is added to
``@@global.gtid_executed``. Whatever happens, the transaction is *settled* afterwards: its
turn is passed on, the logical clock (or, under DATABASE scheduling, the partition hash)
learns it ended, and its relay log files are let go.

Transient errors (lock wait timeout, deadlock) are retried up to
``replica_transaction_retries`` times (FAIL.RETRY.2); any other error is a ``WorkerFailed``.
Under commit order a failing transaction first waits until every earlier one has committed,
then fails the gate, so its waiting followers roll back (WL#7846 FR8/W8, ERR.14) and the
committed transactions stay a prefix of the relay log. A transaction cut off in the relay log
(a stop, or a GTID that restarts it) commits nothing and is not an error (FAIL.STREAM.1).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from spark_replica.applier_core.apply.errors import SourcePosition
from spark_replica.applier_core.apply.transaction import ApplyError, TransactionApplier
from spark_replica.applier_core.binlog.versions import SourceVersion
from spark_replica.applier_core.channels.status import NO_TRANSACTION
from spark_replica.applier_core.commit_order import (
    CommitOrderDeadlock,
    CommitOrderFailed,
    CommitOrderGate,
)
from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.mta.admission import Admission
from spark_replica.applier_core.mta.checkpoint import end_position
from spark_replica.applier_core.mta.clock import Stamp
from spark_replica.applier_core.mta.conflicts import OrderConflicts
from spark_replica.applier_core.mta.failure import (
    ChannelStopped,
    WorkerFailed,
    transaction_failed,
)
from spark_replica.applier_core.mta.gaq import GroupQueue
from spark_replica.applier_core.mta.partitions import Claim, PartitionAdmission
from spark_replica.applier_core.mta.status import MtaStatus
from spark_replica.applier_core.progress import PUBLISH_INTERVAL, ExecutedGtids
from spark_replica.applier_core.provider import FetchableTransaction, TransactionState
from spark_replica.applier_core.storage import EngineError, EngineSession, TransactionRef
from spark_replica.applier_core.storage.locks import deadlock_error

EVENT_WAIT = 0.5
"""Seconds between checks while a streamed transaction's next event is not read yet (a stop
truncates the transaction, which ends the wait anyway)."""


class Outcome(enum.Enum):
    COMMITTED = "committed"
    TRUNCATED = "truncated"
    """Cut off in the relay log: nothing to commit; the next copy of it applies it."""
    GIVEN_UP = "given up"
    """Not committed because the channel stops after a failure."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """A transaction the coordinator handed out: ``ticket`` is its place among the assigned
    transactions (its commit-order turn and engine transaction order); ``claim`` its hold on
    the database partitions (DATABASE scheduling), else None (LOGICAL_CLOCK)."""

    trx: FetchableTransaction
    ticket: int
    stamp: Stamp
    claim: Claim | None = None
    #: Its number in the group assignment queue.
    group: int = 0
    #: The bytes counted against replica_pending_jobs_size_max while it is queued.
    size: int = 0


@dataclass(frozen=True, slots=True)
class Execution:
    """What every runner of a channel shares."""

    channel: str
    executed: ExecutedGtids
    admission: Admission
    retries: int
    #: The channel has failed: retry nothing more (the work is given up).
    failed: Callable[[], bool]
    #: The channel's status rows.
    status: MtaStatus
    #: The group assignment queue (WL5569.GAQ).
    groups: GroupQueue
    #: Orders the commits (replica_preserve_commit_order=ON with workers), else None.
    gate: CommitOrderGate | None = None
    #: The database partitions (replica_parallel_type=DATABASE with workers), else None.
    partitions: PartitionAdmission | None = None
    #: Finds commit-order deadlocks (with ``gate``), else None.
    conflicts: OrderConflicts | None = None


class TransactionRunner:
    """Applies assigned transactions through one engine session; one thread at a time.

    ``worker`` is the worker's number (1..N), or 0 for the single-threaded applier.
    """

    def __init__(self, execution: Execution, session: EngineSession, worker: int) -> None:
        self.execution = execution
        self.session = session
        self.worker = worker
        self._info = NO_TRANSACTION  # the APPLYING_TRANSACTION values of the current run

    def __repr__(self) -> str:
        return f"<TransactionRunner worker={self.worker} {self.session.state.value}>"

    def run(self, work: Assignment) -> Outcome:
        """Apply and commit ``work``, then settle it.

        Raises:
            WorkerFailed: it cannot be applied; it is rolled back and settled.
        """
        outcome = Outcome.GIVEN_UP
        self._info = self.execution.status.applying(self.worker, work.trx)
        try:
            outcome = self._execute(work)
        finally:
            self._settle(work, outcome)
        return outcome

    def give_up(self, work: Assignment) -> None:
        """Settle ``work`` without applying it (the channel failed, or the stop's time limit
        passed, before it started). Under commit order no later transaction commits either,
        so the committed ones stay a prefix of the relay log."""
        gate = self.execution.gate
        if gate is not None:
            gate.fail(ChannelStopped(work.trx.gtid_text), from_ticket=work.ticket)
        self._settle(work, Outcome.GIVEN_UP)

    # -- applying ------------------------------------------------------------------------------

    def _execute(self, work: Assignment) -> Outcome:
        gate = self.execution.gate
        while True:
            if not self._apply(work):
                return Outcome.TRUNCATED
            if gate is None:
                self._commit(work, durable=True)
                return Outcome.COMMITTED
            try:
                gate.wait_turn(work.ticket)
                break
            except CommitOrderDeadlock:  # an earlier one needs a lock of this one (DL.1)
                deadlock = deadlock_error()
                self._retry(work, ApplyError(deadlock.code, str(deadlock), transient=True))
            except CommitOrderFailed as exc:  # an earlier one failed or was given up (W8)
                self.session.rollback()
                if not isinstance(exc.cause, ChannelStopped):
                    self._stopped_by_previous(work)
                return Outcome.GIVEN_UP
        # Commit in turn without waiting for the flush, let the next one commit, then wait
        # for durability: commits that follow each other share a flush (WL7846.GC.1).
        try:
            self._commit(work, durable=False)
        finally:
            gate.finished(work.ticket)
        self.session.wait_durable()
        return Outcome.COMMITTED

    def _commit(self, work: Assignment, *, durable: bool) -> None:
        try:
            self.session.commit(durable=durable)
        except EngineError as exc:
            self.session.rollback()
            raise self._failure(work, ApplyError(exc.code, str(exc))) from exc
        gtid = work.trx.gtid
        if not gtid.anonymous:
            self.execution.executed.add(gtid.uuid, gtid.tag, gtid.gno)
        self.execution.status.applied(self.worker, self._info)

    def _apply(self, work: Assignment) -> bool:
        """Apply and prepare, retrying transient errors; False when the transaction was cut
        off. Raises ``WorkerFailed``."""
        while True:
            try:
                return self._apply_once(work)
            except ApplyError as error:
                self._retry(work, error)

    def _retry(self, work: Assignment, error: ApplyError) -> None:
        """Roll back after ``error`` and rewind for another attempt, or raise ``WorkerFailed``
        when ``error`` is not transient or the retries are used up."""
        self.session.rollback()
        gate = self.execution.gate
        if gate is not None:
            gate.clear_deadlock(work.ticket)  # the rollback released every lock
        retry = (
            error.transient
            and self._info.retries < self.execution.retries
            and not self.execution.failed()
            and work.trx.state in (TransactionState.OPEN, TransactionState.COMPLETE)
        )
        if not retry:
            raise self._failure(work, error) from error
        self._info = self.execution.status.retried(self.worker, self._info, error.code,
                                                   error.detail)  # fmt: skip
        work.trx.rewind()

    def _apply_once(self, work: Assignment) -> bool:
        trx, session = work.trx, self.session
        ref = TransactionRef(trx.gtid_text, work.ticket)
        session.begin(ref)
        if self.execution.conflicts is not None:
            self.execution.conflicts.register(ref, work.ticket)
        version = SourceVersion.of_gtid_event(trx.gtid.original_server_version)
        applier = TransactionApplier(session, trx.gtid_text, trx.start.file, version)
        if applier.apply_all(trx, EVENT_WAIT) is None:
            session.rollback()
            return self._ended_early(work)
        return True

    def _ended_early(self, work: Assignment) -> bool:
        """No more events and no end: cut off (False), or the relay log cannot be read."""
        trx = work.trx
        if trx.state is not TransactionState.FAILED:
            return False
        error = trx.error
        assert error is not None
        self._fail_followers(work, error)
        self.execution.status.failed(self.worker, error.code, error.message)
        raise WorkerFailed(error.code, error.message, error.message)

    # -- failing and settling ------------------------------------------------------------------

    def _failure(self, work: Assignment, error: ApplyError) -> WorkerFailed:
        self._fail_followers(work, error)
        trx = work.trx
        where = SourcePosition(trx.start.file, trx.gtid.header.log_pos)
        worker_message, channel_message = transaction_failed(
            self.execution.channel, self.worker, trx.gtid_text, where, error.detail
        )
        code = error.code or ErrorCode.UNKNOWN_ERROR
        self.execution.status.failed(self.worker, code, worker_message)
        return WorkerFailed(code, worker_message, channel_message)

    def _stopped_by_previous(self, work: Assignment) -> None:
        """Rolled back at its turn because an earlier transaction failed (WL#7846 W8): the
        worker's row shows ER_REPLICA_WORKER_STOPPED_PREVIOUS_THD_ERROR (3030)."""
        trx = work.trx
        where = SourcePosition(trx.start.file, trx.gtid.header.log_pos)
        code = ErrorCode.REPLICA_WORKER_STOPPED_PREVIOUS_THD_ERROR
        detail = ReplicaError.from_code(code).message
        message, _ = transaction_failed(self.execution.channel, self.worker, trx.gtid_text,
                                        where, detail)  # fmt: skip
        self.execution.status.failed(self.worker, code, message)

    def _fail_followers(self, work: Assignment, error: BaseException) -> None:
        """Under commit order: let every earlier transaction commit first, then make the
        later ones roll back."""
        gate = self.execution.gate
        if gate is None:
            return
        while True:
            try:
                gate.wait_turn(work.ticket)
            except CommitOrderDeadlock:
                continue  # it holds no lock any more: rolled back already
            except CommitOrderFailed:
                pass  # an earlier one failed first
            break
        gate.fail(error, from_ticket=work.ticket)

    def _settle(self, work: Assignment, outcome: Outcome) -> None:
        if outcome is not Outcome.COMMITTED:
            self.session.rollback()
            self.execution.status.abandoned(self.worker)
        if outcome is not Outcome.GIVEN_UP:  # committed, or cut off: no gap either way
            end = end_position(work.trx) if outcome is Outcome.COMMITTED else None
            self.execution.groups.done(work.group, end)
        if self.execution.conflicts is not None:
            self.execution.conflicts.unregister(TransactionRef(work.trx.gtid_text, work.ticket))
        if self.execution.gate is not None:
            self.execution.gate.finished(work.ticket)
        partitions = self.execution.partitions
        if work.claim is not None and partitions is not None:
            partitions.ended(work.claim)  # WL5569.CGEP.1
        else:
            self.execution.admission.ended(work.stamp.sequence_number)
        work.trx.finish(success=outcome is not Outcome.GIVEN_UP)
        if outcome is Outcome.COMMITTED:  # the coordinator may be waiting on the clock
            self.execution.executed.publish(at_most_every=PUBLISH_INTERVAL, wait=False)
