"""Whether the Spark driver JVM this process launched still runs.

In local mode (and client mode) the driver is a child of this process, reached over Py4J.
If it dies (out of memory, killed), every later Spark call fails and nothing can be made
durable in this process again: the engine stops flushing and reports it (``DriverGone``),
so the server exits with that error instead of applying into memory it can never write.
"""

from __future__ import annotations

import signal
from typing import Any


class DriverGone(RuntimeError):
    """The Spark driver JVM exited: no Spark call can succeed in this process any more."""


def driver_gone(spark: Any) -> DriverGone | None:
    """The error to report when ``spark``'s driver JVM has exited; None while it runs, or
    when it is not a child of this process."""
    gateway = getattr(spark.sparkContext, "_gateway", None)
    process = getattr(gateway, "proc", None)
    if process is None:
        return None
    status = process.poll()
    if status is None:
        return None
    if status < 0:
        try:
            how = f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            how = f"was killed by signal {-status}"
    else:
        how = f"exited with status {status}"
    return DriverGone(
        f"the Spark driver JVM (process {process.pid}) {how}: nothing more can be made "
        "durable in this process; start the server again (what was not flushed is applied "
        "again from the relay log)"
    )
