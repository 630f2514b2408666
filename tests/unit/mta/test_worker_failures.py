"""A worker hands every failure to the channel as MySQL would report it: a failure of the
metadata store while the worker settles a transaction (publishing the executed set) stops the
channel with the store's own error (13117), whichever worker meets it first; only a bug gives
1105."""

from __future__ import annotations

from types import SimpleNamespace

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.mta.failure import WorkerFailed
from spark_replica.applier_core.mta.worker import Worker


class _Runner:
    def __init__(self, error: BaseException) -> None:
        self.execution = SimpleNamespace(channel="c1")
        self.error = error

    def run(self, work: object) -> None:
        raise self.error

    def give_up(self, work: object) -> None:  # pragma: no cover - never reached here
        raise AssertionError("nothing is given up")


def _failure_of(error: BaseException) -> WorkerFailed:
    reports: list[WorkerFailed] = []
    worker = Worker("mta-c1", 2, _Runner(error), failed=lambda: False,  # type: ignore[arg-type]
                    expired=lambda: False, report=reports.append)  # fmt: skip
    worker.start()
    worker.queue.put(SimpleNamespace(size=1))  # type: ignore[arg-type]
    worker.close()
    worker.join()
    [failure] = reports
    return failure


def test_a_metadata_store_failure_in_a_worker_is_13117_not_1105() -> None:
    reason = "the replication metadata store failed: no such table"
    error = ReplicaError.from_code(ErrorCode.REPLICA_FATAL_ERROR, reason)
    failure = _failure_of(error)
    assert failure.code == 13117
    assert failure.channel_message == (
        "Fatal error: the replication metadata store failed: no such table"
    )


def test_a_bug_in_a_worker_stops_the_channel_with_1105() -> None:
    failure = _failure_of(KeyError("x"))
    assert failure.code == ErrorCode.UNKNOWN_ERROR
    assert "Worker 2 failed: KeyError('x')" in failure.channel_message
