"""A component that runs a real thread and only waits to be stopped.

It exercises the channel plug-in contract (start, stop and join, report an exit) for the
front end's START/STOP/RESET semantics; it applies nothing.
"""

from __future__ import annotations

import threading

from spark_replica.applier_core.channels.components import Components, RunningThreads, ThreadContext
from spark_replica.applier_core.channels.config import ApplierVersion
from spark_replica.applier_core.channels.status import ErrorInfo


class IdleThreads:
    def __init__(self, context: ThreadContext, name: str) -> None:
        self.context = context
        self._stop = threading.Event()
        self._fail: ErrorInfo | None = None
        self._thread = threading.Thread(target=self._run, name=name)
        self._thread.start()

    def _run(self) -> None:
        self._stop.wait()
        if self._fail is not None:
            self.context.exited(self._fail)

    def fail(self, number: int, message: str) -> None:
        """End the group by itself with an error, as an applier that hit one does."""
        self._fail = ErrorInfo.now(number, message)
        self._stop.set()
        self._thread.join()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()


class IdleComponents:
    """Factories for both appliers and the receiver; remembers what it started."""

    def __init__(self) -> None:
        self.started: list[IdleThreads] = []

    def start_applier(self, context: ThreadContext) -> RunningThreads:
        handle = IdleThreads(context, f"test-applier-{context.config.name}")
        self.started.append(handle)
        return handle

    def start_receiver(self, context: ThreadContext) -> RunningThreads:
        handle = IdleThreads(context, f"test-receiver-{context.config.name}")
        self.started.append(handle)
        return handle

    def components(self) -> Components:
        return Components(
            appliers={ApplierVersion.MTA: self, ApplierVersion.CSA: self}, receiver=self
        )
