"""The Change Stream Applier service of one channel (DES.CSA.*, WL10500.SVC.INIT/LOOP/ERR).

``CsaChannel.start`` builds the channel's components (provider, dependency adapter, LWM
clock, scheduler and thread pool, commit-order phase clock when
``replica_preserve_commit_order=ON``, sessions, conflict manager, statistics) and starts the
service thread ``<channel>-csa``, which loops: take the next transaction from the provider
(right after its GTID event), compute its delay on the LWM clock, wrap it in a job and hand
it to the scheduler. Transactions whose GTID is executed become no-op tasks, so the clocks
see every transaction of the stream. Each transaction's source commit time is noted for
Seconds_Behind_Source (``lag.py``).

The loop ends on STOP (``stop``), on an UNTIL condition, or on an error (a job failed, the
relay log cannot be read): then every component stops, the transactions in flight end or are
rolled back, and the channel reports the error (WL10500.SVC.ERR); other channels go on
(CPT.0040).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from spark_replica.applier_core.apply.errors import channel_error
from spark_replica.applier_core.binlog.events import Gtid
from spark_replica.applier_core.binlog.relaylog.prefetch import Prefetcher
from spark_replica.applier_core.channels.components import ThreadContext
from spark_replica.applier_core.channels.config import Until, UntilKind
from spark_replica.applier_core.channels.lag import commit_time_us
from spark_replica.applier_core.channels.status import ErrorInfo
from spark_replica.applier_core.commit_order import CommitOrderGate
from spark_replica.applier_core.csa.conflicts import ConflictManager, ConflictRouter
from spark_replica.applier_core.csa.job import EVENT_WAIT, Job, JobEnvironment, JobFailed
from spark_replica.applier_core.csa.lag import BacklogClock
from spark_replica.applier_core.csa.monitor import ChannelMonitor
from spark_replica.applier_core.csa.sessions import SessionPool
from spark_replica.applier_core.csa.statistics import CsaStatistics
from spark_replica.applier_core.csa.workers import WorkerBoard
from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import PUBLISH_INTERVAL
from spark_replica.applier_core.provider.fetchable import FetchableTransaction, TransactionState
from spark_replica.applier_core.provider.providers import (
    AsyncTransactionProvider,
    SyncTransactionProvider,
    TransactionProvider,
)
from spark_replica.applier_core.provider.resources import (
    EVENT_MEMORY,
    ResourceMonitor,
    effective_event_memory_limit,
)
from spark_replica.applier_core.scheduler import Scheduler, SchedulerStopped
from spark_replica.applier_core.scheduler.adapters import LwmDependencyAdapter
from spark_replica.applier_core.scheduler.clocks import CommitOrderClock
from spark_replica.applier_core.scheduler.schedules import (
    DelayedSchedule,
    Schedule,
    Step,
    TransactionOrderSchedule,
)
from spark_replica.applier_core.scheduler.thread_pool import ThreadPool
from spark_replica.applier_core.storage import StorageEngine
from spark_replica.applier_core.storage.locks import deadlock_error

logger = logging.getLogger(__name__)

#: How long the service waits for the next transaction before it looks at its other duties.
NEXT_WAIT = 0.1


class _Skip:
    """The task of a transaction whose GTID is executed: it only moves the clocks on, and
    releases the transaction at its last step."""

    def __init__(
        self,
        trx: FetchableTransaction,
        task_id: int,
        gate: CommitOrderGate | None,
        *,
        commit_order: bool,
    ) -> None:
        self.trx = trx
        self.task_id = task_id
        self.gate = gate
        self.commit_order = commit_order

    def run(self, phase: int, step: Step) -> None:
        if step is Step.REST or not self.commit_order:
            self._wait_for_end()
            self.trx.finish(success=True)
            if self.gate is not None:
                self.gate.finished(self.task_id)

    def _wait_for_end(self) -> None:
        """A skipped transaction publishes no event; it may be released once the provider
        has read past its end (or cut it off)."""
        while True:
            try:
                if self.trx.next_event(EVENT_WAIT) is None:
                    return
            except TimeoutError:
                continue


@dataclass(slots=True)
class _Until:
    """START REPLICA UNTIL SQL_BEFORE_GTIDS / SQL_AFTER_GTIDS."""

    kind: UntilKind
    gtids: GtidSet
    seen: GtidSet

    def stops_before(self, gtid: Gtid) -> bool:
        return self.kind is UntilKind.SQL_BEFORE_GTIDS and self.gtids.contains(
            gtid.uuid, gtid.tag, gtid.gno
        )

    def saw(self, gtid: Gtid) -> bool:
        """Record ``gtid``; True once every GTID of an SQL_AFTER_GTIDS set is seen."""
        if self.kind is not UntilKind.SQL_AFTER_GTIDS:
            return False
        self.seen.add(gtid.uuid, gtid.tag, gtid.gno)
        return self.gtids.is_subset(self.seen)


class CsaChannel:
    """One channel's running Change Stream Applier (``stop`` is the one shutdown path)."""

    def __init__(
        self, context: ThreadContext, engine: StorageEngine, router: ConflictRouter
    ) -> None:
        config, settings = context.config, context.settings
        self.context = context
        self.name = config.name
        self.engine = engine
        self.router = router
        self.workers = max(1, config.applier.applier_worker_count)
        self.commit_order = bool(settings.get_int("replica_preserve_commit_order"))
        self.max_tasks = 4 * self.workers
        self.statistics = CsaStatistics(self.workers)
        self._stop = threading.Event()
        self._in_flight: dict[str, FetchableTransaction] = {}
        self._in_flight_lock = threading.Lock()
        self._until = _until(context.until, self.name)
        label = _label(self.name)
        self.memory = ResourceMonitor(self.name)
        limit = effective_event_memory_limit(
            config.applier.applier_event_memory_limit,
            settings.get_int("replica_max_allowed_packet"),
        )
        self.memory.register(EVENT_MEMORY, limit)
        self.relay_log = context.relay_logs.get(self.name)
        # Files a stopped or failed run left unapplied are applied by this one.
        self.relay_log.tracker.reset_failures()
        # Complete files are always read ahead (DES.PF.0010); the active one on request.
        self.prefetcher = Prefetcher(
            self.relay_log,
            name=f"{label}-prefetcher",
            active_files=bool(settings.get_int("replica_applier_prefetcher")),
        )
        provider: type[TransactionProvider] = SyncTransactionProvider
        if settings.get_int("replica_applier_async_provider"):
            provider = AsyncTransactionProvider  # its thread: csa-provider-<channel>
        self.provider = provider(
            self.relay_log,
            channel=self.name,
            monitor=self.memory,
            skip=self._executed,
            own_server_id=settings.get_int("server_id"),
            prefetcher=self.prefetcher,
            after_durable=engine.after_durable if engine.background_durability else None,
        )
        self.board = WorkerBoard(context.status, self.workers)
        self.pool = ThreadPool(label, self.workers, capacity=self.max_tasks)
        self.conflicts = ConflictManager(
            label,
            commit_order=self.commit_order,
            blocked_by_earlier=lambda: self.pool.add_spare(self.max_tasks),
            abort_waits=lambda ref: engine.locks.abort(ref, deadlock_error()),
        )
        self.scheduler = Scheduler(label, self.pool, max_tasks=self.max_tasks)
        if self.commit_order:
            self.commit_clock = self.scheduler.register_phase(CommitOrderClock())
        self.adapter = LwmDependencyAdapter()
        self.lag = BacklogClock(context.status, self.scheduler.clock_now)
        self.sessions = SessionPool(engine, label, self.max_tasks + 1)
        self.env = JobEnvironment(
            channel=self.name,
            sessions=self.sessions,
            executed=context.executed,
            statistics=self.statistics,
            workers=self.board,
            retries=settings.get_int("replica_transaction_retries"),
            commit_order=self.commit_order,
            request_rollback=self.conflicts.resolve,
            on_retry=lambda job, error: context.status.add_retries(),
            on_finish=self._finished,
            gate=CommitOrderGate(),
            spare=lambda: self.pool.add_spare(self.max_tasks),
        )
        self.channel_monitor = ChannelMonitor(allowed=self.max_tasks)
        self._next_task = 0
        self._dispatch_ns = 0  # the service's own work handing transactions to the scheduler
        self._thread = threading.Thread(target=self._run, name=f"{label}-csa")

    def scheduling_ns(self) -> float:
        """The scheduling cost per transaction so far, in nanoseconds: the service's dispatch
        (dependency adapter, schedule, job) and the scheduler's own work (``enqueue``, and
        around each job on its worker), waits apart; 0.0 before a transaction ends."""
        statistics = self.scheduler.statistics()
        if not statistics.ended:
            return 0.0
        return statistics.overhead_ns + self._dispatch_ns / statistics.ended

    def _scheduling_total_ns(self) -> int:
        """What ``scheduling_ns`` averages: the whole time spent scheduling so far."""
        statistics = self.scheduler.statistics()
        return self._dispatch_ns + statistics.enqueue_ns + statistics.callback_ns

    # -- life cycle --------------------------------------------------------------------------

    def start(self) -> None:
        self.conflicts.start()
        self.scheduler.start()
        self.prefetcher.start()
        self.provider.start()
        self.context.status.update(
            sql_state_text="Waiting for transactions from the relay log",
            source_commit_time=0.0,
            applier_caught_up=False,
        )
        self.context.status.add_source(self.lag.refresh)
        self._thread.start()

    def stop(self) -> None:
        """Stop reading, let the transactions in flight end (a streamed one is truncated and
        rolled back; a job that has not started applying, or must apply again after a
        conflict rollback, is given up), join every thread. Idempotent; not from the
        channel's own threads."""
        self._stop.set()
        self.env.stopping.set()
        self.provider.stop()
        self._thread.join()

    # -- the service thread ----------------------------------------------------------------

    def _run(self) -> None:
        error: ReplicaError | None = None
        try:
            self._loop()
        except ReplicaError as exc:
            error = exc
        except Exception as exc:  # a bug: stop the channel with it rather than hang
            logger.exception("Change Stream Applier of channel %r failed", self.name)
            error = ReplicaError(ErrorCode.UNKNOWN_ERROR, channel_error(self.name, str(exc)))
        error = self._shut_down() or error
        self.context.status.update(sql_state_text="")
        info = None if error is None else ErrorInfo.now(error.code, error.message)
        if info is not None:
            self.context.status.update(sql_error=info)
        if not self._stop.is_set() or info is not None:
            self.context.exited(info)

    def _loop(self) -> None:
        since_publish = 0.0
        while not self._stop.is_set():
            failure = self.scheduler.error
            if failure is not None:
                raise self._job_error(failure)
            trx = self.provider.next(NEXT_WAIT)
            self.lag.reading(idle=trx is None)
            if trx is None:
                if self.provider.error is not None:
                    raise self.provider.error
                self._publish()
                self._watch()
                continue
            if self._until is not None and self._until.stops_before(trx.gtid):
                trx.finish(success=False)
                self.scheduler.wait_idle()
                return
            self._dispatch(trx)
            if self._until is not None and self._until.saw(trx.gtid):
                self._read_until_idle()
                return
            since_publish += 1
            if since_publish >= 256:
                since_publish = 0
                self._publish()

    def _read_until_idle(self) -> None:
        """UNTIL SQL_AFTER_GTIDS is reached: keep reading (the synchronous provider publishes
        the last transactions' events as it reads) until they are applied; nothing after
        them is."""
        while not self.scheduler.wait_idle(0):
            failure = self.scheduler.error
            if failure is not None:
                raise self._job_error(failure)
            trx = self.provider.next(NEXT_WAIT)
            if trx is not None:
                trx.finish(success=False)

    def _dispatch(self, trx: FetchableTransaction) -> None:
        started = time.perf_counter_ns()
        task_id = self._next_task
        self._next_task += 1
        self.lag.dispatched(task_id, commit_time_us(trx.gtid))
        if trx.clock_reset:
            self.adapter.reset()
        delay = self.adapter.solve(task_id, trx.sequence_number, trx.last_committed).delay
        schedule: Schedule
        if self.commit_order:
            schedule = TransactionOrderSchedule(task_id, delay, task_id, self.commit_clock)
        else:
            schedule = DelayedSchedule(task_id, delay)
        task: Job | _Skip
        if trx.skip:
            task = _Skip(trx, task_id, self.env.gate, commit_order=self.commit_order)
        else:
            job = Job(trx, self.env, task_id)
            self.router.register(job, self.conflicts)
            with self._in_flight_lock:
                self._in_flight[trx.gtid_text] = trx
            task = job
        self._dispatch_ns += time.perf_counter_ns() - started
        try:
            self.scheduler.enqueue(task, schedule)
        except SchedulerStopped:
            if isinstance(task, Job):
                task.finish()
            else:
                trx.finish(success=False)
            failure = self.scheduler.error
            if failure is not None:
                raise self._job_error(failure) from failure
            raise

    def _executed(self, gtid: Gtid) -> bool:
        """Whether the provider may skip ``gtid``: executed, or applied right now by a copy
        that was not cut off."""
        if gtid.anonymous:
            return False
        if self.context.executed.contains(gtid.uuid, gtid.tag, gtid.gno):
            return True
        with self._in_flight_lock:
            current = self._in_flight.get(gtid.gtid_text)
        return current is not None and current.state is not TransactionState.TRUNCATED

    def _watch(self) -> None:
        """The channel monitor's turn: unblock the scheduler when the channel is stalled."""
        statistics = self.scheduler.statistics()
        committed = self.statistics.totals()["transactions_committed"]
        progress = (committed, self.scheduler.clock.now(), statistics.in_flight,
                    statistics.releases)  # fmt: skip
        if self.channel_monitor.check(time.monotonic(), progress, statistics.in_flight > 0):
            logger.warning("channel %r stalled; unblocking its scheduler", self.name)
            self.statistics.channel["unblock_requests"] += 1
            self.scheduler.unblock()

    def _finished(self, job: Job) -> None:
        """A job released its transaction: it no longer stands for its GTID."""
        self.router.unregister(job)
        with self._in_flight_lock:
            if self._in_flight.get(job.trx.gtid_text) is job.trx:
                del self._in_flight[job.trx.gtid_text]

    def _publish(self) -> None:
        channel = self.statistics.channel
        channel["transactions_ongoing"] = self.sessions.in_use
        channel["dependency_window_width"] = round(self.scheduler.statistics().mean_ready)
        channel["waits_for_memory"] = self.memory.stats(EVENT_MEMORY).waits
        channel["time_scheduling_ns"] = self._scheduling_total_ns()
        self.statistics.publish(self.context.status)
        self.context.executed.publish(at_most_every=PUBLISH_INTERVAL)

    def _job_error(self, failure: BaseException) -> ReplicaError:
        if isinstance(failure, JobFailed):
            self.board.failed(failure.worker, failure.code, failure.worker_message)
            message = failure.channel_message or channel_error(self.name, failure.worker_message)
            return ReplicaError(failure.code, message)
        if isinstance(failure, ReplicaError):
            return failure
        logger.error("a Change Stream Applier task failed", exc_info=failure)
        return ReplicaError(ErrorCode.UNKNOWN_ERROR, channel_error(self.name, str(failure)))

    def _shut_down(self) -> ReplicaError | None:
        """Stop every component (in the service thread, once); returns a job's error that
        surfaced while the tasks in flight ended."""
        self.provider.stop()
        self.prefetcher.stop()
        failure = self.scheduler.error
        if failure is not None:
            self._abandon_in_flight(failure)
        dropped = self.scheduler.stop()
        for task in dropped:
            if isinstance(task, Job):
                task.wait_settled()
                task.finish()
            elif isinstance(task, _Skip):
                task.trx.finish(success=False)
        for job in self.router.jobs_of(self.conflicts):  # a failed job: it left that to us
            job.finish()
        self.conflicts.stop()
        self.board.stopped()
        self.context.status.remove_source(self.lag.refresh)
        published = self._final_publish()
        failure = self.scheduler.error
        return published if failure is None else self._job_error(failure)

    def _final_publish(self) -> ReplicaError | None:
        """Publish the statistics and the executed set a last time; the error when the
        metadata store fails (the channel stops with it; what committed stays committed)."""
        try:
            self._publish()
            self.context.executed.publish()
        except ReplicaError as exc:
            logger.error("channel %r: %s", self.name, exc.message)
            return exc
        return None

    def _abandon_in_flight(self, failure: BaseException) -> None:
        """After a job failed: the transactions in flight end without committing. Waits for
        locks and commit turns fail, prepared transactions roll back, so the workers come
        back and the scheduler can stop."""
        self.env.stopping.set()
        assert self.env.gate is not None
        self.env.gate.fail(failure)
        for job in self.router.jobs_of(self.conflicts):
            if job.report_conflict():
                job.roll_back_for_conflict()
            else:
                self.engine.locks.abort(job.ref, deadlock_error())


def _label(channel: str) -> str:
    return f"csa-{channel}" if channel else "csa"


def _until(until: Until | None, channel: str) -> _Until | None:
    """The UNTIL condition to watch; START REPLICA refuses the others before, this is the
    applier's own check (ER_CSA_UNSUPPORTED_UNTIL_COND)."""
    if until is None:
        return None
    if until.kind not in (UntilKind.SQL_BEFORE_GTIDS, UntilKind.SQL_AFTER_GTIDS):
        raise ReplicaError.from_code(ErrorCode.CSA_UNSUPPORTED_UNTIL_COND, channel)
    return _Until(until.kind, GtidSet.parse(until.gtids), GtidSet())
