"""The coordinator of the legacy multi-threaded applier (APPLIER_VERSION=1).

``MtaChannel.start`` starts the coordinator thread ``mta-<channel>-coordinator`` and, with
``replica_parallel_workers`` = N > 0 (read at START), N workers. The coordinator reads the
channel's relay log into transactions (the CSA's ``SyncTransactionProvider``: only
Format_description, GTID and Query events are decoded here; workers decode the rest), skips
those whose GTID is executed, waits on the logical clock until each may start (WL6314.SLAVE.2)
and hands it whole to a worker, an idle one first, else the least loaded (WL6314.SLAVE.3),
through the worker's bounded queue (WL5569.WQ.2), once the bytes queued and not yet taken by
the workers leave room for it under ``replica_pending_jobs_size_max`` (``pending.py``). With
0 workers the coordinator applies each transaction itself, single-threaded (WL5569.R0); it
then reads through the asynchronous provider (thread ``mta-<channel>-reader``) so that a
transaction whose end is not read yet can be applied while its events stream in.

With ``replica_parallel_type=DATABASE`` (read at START) and workers, the coordinator schedules
by database partitions instead (WL#5569, ``partitions.py``): it reads each transaction through
the asynchronous provider, finds the databases it changes (``databases.py``), waits until the
partition hash lets it start and hands it to the worker the hash chose. The START checks refuse
DATABASE with ``replica_preserve_commit_order=ON`` (error 3031).

Stopping (one path, ``stop``, idempotent): STOP REPLICA stops the reading and lets the
transactions already assigned finish for up to ``stop_limit`` seconds (60; the rest are given
up; a streamed one still being read is cut off and rolled back), then joins every thread. A
failed transaction stops the channel: the coordinator assigns nothing more, the queued
transactions are given up (rolled back under commit order, ERR.14), every thread is joined and
the channel exits with the first error (ERR.18); the multi-threaded applier also logs the stop
warning of WL5569.WARN.1.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from spark_replica.applier_core.apply.errors import channel_error
from spark_replica.applier_core.binlog.events import Gtid
from spark_replica.applier_core.channels.components import ThreadContext
from spark_replica.applier_core.channels.config import UntilKind
from spark_replica.applier_core.channels.lag import commit_time_us
from spark_replica.applier_core.channels.status import ErrorInfo
from spark_replica.applier_core.commit_order import CommitOrderGate
from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.mta.admission import Admission
from spark_replica.applier_core.mta.checkpoint import Checkpointer, end_position
from spark_replica.applier_core.mta.clock import Stamp
from spark_replica.applier_core.mta.conflicts import OrderConflicts
from spark_replica.applier_core.mta.databases import scan
from spark_replica.applier_core.mta.execute import Assignment, Execution, TransactionRunner
from spark_replica.applier_core.mta.failure import STOP_WARNING, FailureSlot, WorkerFailed
from spark_replica.applier_core.mta.gaq import GroupQueue, Position
from spark_replica.applier_core.mta.partitions import PartitionAdmission
from spark_replica.applier_core.mta.pending import STATE as PENDING_STATE
from spark_replica.applier_core.mta.pending import PendingBytes
from spark_replica.applier_core.mta.status import MtaStatus
from spark_replica.applier_core.mta.until import DONE as UNTIL_DONE
from spark_replica.applier_core.mta.until import UntilWatch
from spark_replica.applier_core.mta.worker import QUEUE_CAPACITY, Worker
from spark_replica.applier_core.progress import PUBLISH_INTERVAL
from spark_replica.applier_core.provider import (
    AsyncTransactionProvider,
    FetchableTransaction,
    SyncTransactionProvider,
    TransactionProvider,
    TransactionState,
)
from spark_replica.applier_core.storage import StorageEngine

logger = logging.getLogger(__name__)

NEXT_WAIT = 0.1
"""Seconds the coordinator waits for the next transaction before it publishes progress."""
PUT_WAIT = 0.05
"""Seconds between checks for a failure while a worker's queue is full."""
READING = "Waiting for transactions from the relay log"
"""The coordinator's state (Replica_SQL_Running_State) while it reads and assigns."""
STOP_LIMIT = 60.0
"""Seconds STOP REPLICA lets the assigned transactions run; those not started by then are
given up (WL5569.STOP.1: "for at most about 1 minute")."""


class MtaChannel:
    """One channel's running legacy applier (see the module text)."""

    def __init__(
        self, context: ThreadContext, engine: StorageEngine, *, capacity: int = QUEUE_CAPACITY
    ) -> None:
        settings = context.settings
        self.context = context
        self.engine = engine
        self.name = context.config.name
        self.label = f"mta-{self.name}" if self.name else "mta"
        self.worker_count = settings.get_int("replica_parallel_workers")
        self.commit_order = bool(settings.get_int("replica_preserve_commit_order"))
        self.by_database = (
            settings.get_str("replica_parallel_type") == "DATABASE" and self.worker_count > 0
        )
        self.admission = Admission()
        self.partitions = PartitionAdmission(self.worker_count) if self.by_database else None
        self.failures = FailureSlot(self._interrupt)
        # _stop is set by ``stop`` (STOP REPLICA). Coordinator thread only: _skipped (executed
        # transactions to release once read to their end), _next_ticket, _next_worker.
        self._stop = threading.Event()
        self.stop_limit = STOP_LIMIT
        self._give_up_at: float | None = None  # set once, by the first stop()
        self._skipped: list[tuple[FetchableTransaction, int]] = []
        self._next_ticket = 0
        self._next_worker = 0
        gate = CommitOrderGate() if self.commit_order and self.worker_count > 0 else None
        self.conflicts = None if gate is None else OrderConflicts(gate, engine)
        self.status = MtaStatus(
            context.status, self.worker_count, context.status.snapshot().sql_thread_id
        )
        self.groups = GroupQueue()
        self.pending = PendingBytes(settings.get_int("replica_pending_jobs_size_max"))
        applier = context.config.applier
        origin = Position(applier.relay_log_file, applier.relay_log_pos,
                          applier.source_log_file, applier.source_log_pos)  # fmt: skip
        self.until = None if context.until is None else UntilWatch(
            context.until, context.executed, origin=origin, workers=context.workers
        )  # fmt: skip
        self.checkpointer = Checkpointer(
            self.groups,
            context.status,
            context.checkpoint,
            workers=list(range(1, self.worker_count + 1)),
            every=settings.get_int("replica_checkpoint_group"),
            period_ms=settings.get_int("replica_checkpoint_period"),
            origin=origin,
        )
        self.execution = Execution(
            channel=self.name,
            executed=context.executed,
            admission=self.admission,
            retries=settings.get_int("replica_transaction_retries"),
            failed=self.failures.is_set,
            status=self.status,
            groups=self.groups,
            gate=gate,
            partitions=self.partitions,
            conflicts=self.conflicts,
        )
        self.relay_log = context.relay_logs.get(self.name)
        self.relay_log.tracker.reset_failures()  # files a failed run left are applied now
        self.provider = self._provider(settings.get_int("server_id"))
        self.workers = [
            Worker(
                self.label,
                number,
                self._runner(number),
                failed=self.failures.is_set,
                expired=self._expired,
                report=self.failures.record,
                taken=self.pending.taken,
                capacity=capacity,
            )  # fmt: skip
            for number in range(1, self.worker_count + 1)
        ]
        self._inline = None if self.workers else self._runner(0)
        # The transactions assigned and not yet finished, by GTID (see ``_executed``).
        self._assigned_lock = threading.Lock()
        self._assigned: dict[str, FetchableTransaction] = {}
        # _lock guards _started and the start of the threads against a concurrent stop.
        self._lock = threading.Lock()
        self._started = False
        self._thread = threading.Thread(target=self._run, name=f"{self.label}-coordinator")

    def __repr__(self) -> str:
        state = "stopping" if self._stop.is_set() else "running" if self._started else "new"
        return f"<MtaChannel '{self.name}' {state} workers={self.worker_count}>"

    @property
    def stop_requested(self) -> threading.Event:
        """Set once ``stop`` was called."""
        return self._stop

    def _provider(self, server_id: int) -> TransactionProvider:
        if self.worker_count == 0 or self.by_database:  # the coordinator reads the events
            return AsyncTransactionProvider(
                self.relay_log, channel=self.name, skip=self._executed,
                own_server_id=server_id, thread_name=f"{self.label}-reader",
                after_durable=self._after_durable(),
            )  # fmt: skip
        return SyncTransactionProvider(
            self.relay_log, channel=self.name, skip=self._executed, own_server_id=server_id,
            after_durable=self._after_durable(),
        )  # fmt: skip

    def _after_durable(self) -> Callable[[Callable[[], None]], None] | None:
        """Relay log files are released once their transactions are durable, when the engine
        makes commits durable in the background (docs/decisions/0006)."""
        engine = self.engine
        return engine.after_durable if engine.background_durability else None

    def _runner(self, number: int) -> TransactionRunner:
        session = self.engine.session(f"{self.label}-worker-{number}")
        return TransactionRunner(self.execution, session, number)

    def _executed(self, gtid: Gtid) -> bool:
        """Whether the provider may skip ``gtid``: executed, or assigned right now by a copy
        that was not cut off (a relay log may hold a transaction twice after a restart)."""
        if gtid.anonymous:
            return False
        if self.context.executed.contains(gtid.uuid, gtid.tag, gtid.gno):
            return True
        with self._assigned_lock:
            current = self._assigned.get(gtid.gtid_text)
        return current is not None and current.state is not TransactionState.TRUNCATED

    # -- life cycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the workers, the reader (0 workers) and the coordinator."""
        with self._lock:
            if self._started or self._stop.is_set():
                return
            self._started = True
            if self.conflicts is not None:
                self.engine.locks.add_wait_hook(self.conflicts.on_wait)
            for worker in self.workers:
                worker.start()
            self.provider.start()
            self.context.status.update(
                sql_state_text=READING, source_commit_time=0.0, applier_caught_up=False
            )
            self._thread.start()

    def stop(self) -> None:
        """STOP REPLICA: read no more, let the assigned transactions finish, join every
        thread. Idempotent; not from the channel's own threads. Transactions not started
        within ``stop_limit`` seconds are given up (the next START applies them)."""
        with self._lock:
            if self._give_up_at is None:
                self._give_up_at = time.monotonic() + self.stop_limit
        self._stop.set()
        self._interrupt()
        self.provider.stop()
        with self._lock:
            started = self._started
        if started:
            self._thread.join()

    # -- the coordinator thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._loop()
        except WorkerFailed as exc:  # the single-threaded applier's own
            self.failures.record(exc)
        except ReplicaError as exc:  # the relay log cannot be read
            self.failures.record(WorkerFailed(exc.code, exc.message, exc.message))
        except Exception as exc:  # a bug: stop the channel with it rather than hang
            logger.exception("the coordinator of channel %r failed", self.name)
            message = channel_error(self.name, str(exc))
            self.failures.record(WorkerFailed(ErrorCode.UNKNOWN_ERROR, message, message))
        finally:
            self._shut_down()
        first = self.failures.failure
        if first is not None and self.workers:
            logger.warning("%s", STOP_WARNING)
        info = None if first is None else ErrorInfo.now(first.code, first.channel_message)
        self.context.status.update(sql_state_text="")
        if info is not None:
            self.context.status.update(sql_error=info)
        if not self._stop.is_set() or info is not None:
            self.context.exited(info)

    def _loop(self) -> None:
        until = self.until
        if until is not None and until.at_start():
            self._until_reached()
            return
        dispatched = 0
        watched: FetchableTransaction | None = None  # the last one read, for UNTIL
        while not self._stop.is_set() and not self.failures.is_set():
            trx = self.provider.next(NEXT_WAIT)
            self._release_skipped(final=False)
            if watched is not None and watched.state is not TransactionState.OPEN:
                assert until is not None
                reached, watched = until.reached_after(watched), None
                if reached:
                    if trx is not None:
                        trx.finish(success=False)
                    self._until_reached()
                    return
            if trx is None:
                if self.provider.error is not None:
                    raise self.provider.error
                self.context.executed.publish(at_most_every=PUBLISH_INTERVAL)
                self._maybe_checkpoint()
                self.checkpointer.caught_up()
                continue
            if until is not None:
                if until.stops_before(trx):
                    trx.finish(success=False)
                    self._until_reached()
                    return
                watched = trx
            stamp = Stamp(trx.last_committed, trx.sequence_number, trx.clock_reset)
            if trx.skip:
                self.admission.skip(stamp)
                self._skipped.append((trx, self._assign(0, trx)))
                continue
            if self.partitions is not None:
                claim = self.partitions.admit(scan(trx, self._stopping))
                if claim is None:  # stopping, or a worker failed
                    trx.finish(success=False)
                    return
                worker: Worker | None = self.workers[claim.worker]
            else:
                if not self.admission.admit(stamp):  # stopping, or a worker failed
                    trx.finish(success=False)
                    return
                claim, worker = None, self._choose() if self.workers else None
            group = self._assign(0 if worker is None else worker.number, trx)
            size = max(trx.gtid.transaction_length, trx.size)
            work = Assignment(trx, self._next_ticket, stamp, claim, group, size)
            self._next_ticket += 1
            with self._assigned_lock:
                self._assigned[trx.gtid_text] = trx
            self._dispatch(work, worker)
            dispatched += 1
            if dispatched % 64 == 0:
                with self._assigned_lock:
                    self._assigned = {k: t for k, t in self._assigned.items() if not t.abandoned}
            if dispatched % 256 == 0:
                self.context.executed.publish(at_most_every=PUBLISH_INTERVAL)
            self._maybe_checkpoint()

    def _assign(self, worker: int, trx: FetchableTransaction) -> int:
        """Queue ``trx`` as a group of ``worker`` (0: none); returns the group's number."""
        commit_us = commit_time_us(trx.gtid)
        self.checkpointer.assigned(commit_us)
        return self.groups.assign(worker, commit_us)

    def _until_reached(self) -> None:
        """START REPLICA UNTIL is met: assign nothing more; the workers finish what they have
        and the applier stops without an error."""
        assert self.until is not None
        logger.info("channel %r: START REPLICA UNTIL %s reached", self.name, self.until.kind.value)
        if self.until.kind is UntilKind.SQL_AFTER_MTS_GAPS:
            self.context.status.update(until_condition=UNTIL_DONE)

    def _dispatch(self, work: Assignment, worker: Worker | None) -> None:
        """Run ``work`` here (0 workers) or queue it to ``worker``."""
        if self._inline is not None or worker is None:
            assert self._inline is not None
            self._inline.run(work)  # raises WorkerFailed
            return
        self.status.processing(work.trx)
        if not self._admit_bytes(work.size):
            worker.runner.give_up(work)
            return
        while not worker.queue.put(work, PUT_WAIT):
            if self.failures.is_set() or self._stop.is_set():
                self.pending.taken(work.size)
                worker.runner.give_up(work)
                return
        self.status.processed()

    def _admit_bytes(self, size: int) -> bool:
        """Count ``size`` queued bytes, first waiting for the workers to take enough
        (replica_pending_jobs_size_max); False when stopping."""
        if not self.pending.must_wait(size):
            return self.pending.admit(size, self._stopping)
        self.context.status.update(sql_state_text=PENDING_STATE)
        try:
            return self.pending.admit(size, self._stopping)
        finally:
            self.context.status.update(sql_state_text=READING)

    def _choose(self) -> Worker:
        """An idle worker, looking round-robin from the one after the last chosen; else the
        least loaded."""
        count = len(self.workers)
        order = [self.workers[(self._next_worker + i) % count] for i in range(count)]
        chosen = next((w for w in order if w.load == 0), None)
        if chosen is None:
            chosen = min(order, key=lambda w: w.load)
        self._next_worker = chosen.number % count  # the index of the one after it
        return chosen

    def _interrupt(self) -> None:
        """Wake the coordinator from any admission wait, for good (a stop, a failure)."""
        self.admission.interrupt()
        if self.partitions is not None:
            self.partitions.interrupt()

    def _expired(self) -> bool:
        """Whether STOP REPLICA's time limit has passed."""
        give_up_at = self._give_up_at
        return give_up_at is not None and time.monotonic() >= give_up_at

    def _stopping(self) -> bool:
        return self._stop.is_set() or self.failures.is_set()

    def _release_skipped(self, *, final: bool) -> None:
        """Release the executed transactions read to their end (or all, at the end); those
        read whole count as done groups, so the low-water mark passes them."""
        keep: list[tuple[FetchableTransaction, int]] = []
        for trx, group in self._skipped:
            ended = trx.state is not TransactionState.OPEN
            if ended or final:
                if ended:
                    self.groups.done(group, end_position(trx))
                trx.finish(success=ended)
            else:
                keep.append((trx, group))
        self._skipped = keep

    def _maybe_checkpoint(self) -> None:
        if self.checkpointer.due(self._next_ticket):
            self.checkpointer.checkpoint(self._next_ticket)

    def _shut_down(self) -> None:
        """(Coordinator thread, once) Stop reading, let the workers end, release the rest."""
        self._interrupt()
        self.provider.stop()
        self._release_skipped(final=True)
        for worker in self.workers:
            worker.close()
        for worker in self.workers:
            worker.join()
        if self.conflicts is not None:
            self.engine.locks.remove_wait_hook(self.conflicts.on_wait)
        try:
            self.checkpointer.checkpoint(self._next_ticket, final=True)
        except ReplicaError as exc:  # the metadata store failed: the channel stops with it
            self.failures.record(WorkerFailed(exc.code, exc.message, exc.message))
        self.status.stopped()
        try:
            self.context.executed.publish()
        except ReplicaError as exc:
            self.failures.record(WorkerFailed(exc.code, exc.message, exc.message))
