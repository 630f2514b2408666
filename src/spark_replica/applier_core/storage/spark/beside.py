"""Work on a thread of its own beside the caller's, joined before the caller goes on: the
flusher applies a batch to the key index while Spark writes the same batch into Iceberg (the
flusher's thread mostly waits on the JVM meanwhile)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Beside:
    """Runs ``work`` on a thread named ``name`` from construction; ``join`` waits for it and
    gives what it raised (None when it returned). Join it on every path: the caller owns
    the thread."""

    def __init__(self, name: str, work: Callable[[], object]) -> None:
        self._work = work
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._work()
        except BaseException as error:  # handed to the caller by join
            self._error = error

    def join(self) -> BaseException | None:
        self._thread.join()
        return self._error
