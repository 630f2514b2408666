"""The statistics monitor of a channel (DES.STM.*): counters the workers bump as they go.

Each worker writes only its own counters, so no lock is taken on the hot path; the channel's
figures are sums over the workers plus a few the service keeps itself. ``publish`` copies
them into the channel's status board, where ``performance_schema.replication_applier_metrics``
and ``replication_applier_progress_by_worker`` read them (column names in lower case).
"""

from __future__ import annotations

from spark_replica.applier_core.channels.status import StatusBoard

#: Counters of one worker (the columns of replication_applier_progress_by_worker).
WORKER_COUNTERS = (
    "transactions_committed",
    "transactions_retried",
    "events_applied",
    "bytes_applied",
    "waits_for_memory",
    "waits_for_commit_order",
    "time_applying_ns",
    "time_waiting_ns",
)
#: Counters the service keeps for the whole channel (waits for memory are the provider's:
#: it is the one that waits).
CHANNEL_COUNTERS = (
    "transactions_ongoing",
    "dependency_window_width",
    "unblock_requests",
    "waits_for_memory",
    "time_scheduling_ns",
)


class WorkerCounters(dict[str, int]):
    """One worker's counters; only that worker's thread changes them."""

    def __init__(self) -> None:
        super().__init__(dict.fromkeys(WORKER_COUNTERS, 0))


class CsaStatistics:
    """Every counter of one channel's Change Stream Applier."""

    def __init__(self, workers: int) -> None:
        self.workers = [WorkerCounters() for _ in range(workers)]
        self.channel = dict.fromkeys(CHANNEL_COUNTERS, 0)

    def totals(self) -> dict[str, int]:
        """The channel's figures: worker counters summed, and the channel's own."""
        totals = dict.fromkeys(WORKER_COUNTERS, 0)
        for counters in self.workers:
            for name, value in list(counters.items()):
                totals[name] += value
        totals.update(self.channel)
        return totals

    def publish(self, status: StatusBoard) -> None:
        """Copy the figures into the channel's status board (worker ids count from 1)."""
        status.update(metrics=self.totals())
        for number, counters in enumerate(self.workers, start=1):
            try:
                status.update_worker(number, metrics=dict(counters))
            except KeyError:  # the worker row is not there (yet)
                continue
