"""The cyclic garbage collector's thresholds for a server that holds many live objects.

CPython collects its youngest generation after 700 net allocations of container objects
(tuples, lists, dicts, instances), and the older ones after 10 young collections each, so
the whole heap is walked again and again while it grows. The replica's heap grows by design:
a flush's pending rows, the decoded events of the transactions in flight, the key index's
staged changes are hundreds of thousands of containers, alive until the flush, and none of
them garbage. Catching up with 1.3 M rows, the collector took 7.3 s of the Python process's
21.6 s of CPU, with the default thresholds (measured: `gc.callbacks`, thread CPU time).

The thresholds here collect the young generation after ``YOUNG`` allocations and the older
ones after ``OLDER`` collections of the one below: the same run spent 0.8 s collecting, and
the process 12.9 s of CPU in all. What the collector is for, reference cycles, is rare in
the replica's hot paths; the ones that occur (exceptions with their tracebacks, closures) are
collected a little later, not kept.
"""

from __future__ import annotations

import gc

#: Net allocations of containers between two collections of the youngest generation.
YOUNG = 50_000
#: Collections of a generation between two collections of the next older one.
OLDER = 10


def collect_less_often() -> None:
    """Raise the collector's thresholds for the server's process (before its threads start)."""
    gc.set_threshold(YOUNG, OLDER, OLDER)
