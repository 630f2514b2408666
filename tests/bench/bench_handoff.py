"""The floor under any two-thread applier in this Python: the cost of handing items over.

The Change Stream Applier with one worker is a pipeline of two threads: the service thread
reads a transaction and hands it to the scheduler, a worker applies it. At most 4 tasks per
worker are in flight (WL10500.SCHED.8), so with one worker the service waits for room every
few transactions and the worker for work, and under CPython's GIL each of those waits is a
wake-up of a thread that then waits for the interpreter lock: kernel round trips whose cost
depends on the machine, not on the applier.

This script measures that floor with no applier at all. Each item costs ``--reader-us`` of
pure Python work in one thread and ``--worker-us`` in the other (defaults: the CSA's measured
shares for a 4-row transaction), and it runs, in one process and alternately:

* ``serial``: both pieces of work in one thread (what the serial applier does);
* ``pipeline cap N``: the first piece in a producer thread, the second in a consumer, with a
  bounded hand-over of N items (a lock and two conditions, as the scheduler's): N = 4 is one
  worker's limit, N = 64 shows what a larger buffer would change.

Printed per configuration: µs per item (the best of ``--repeat`` rounds), the difference to
serial (the hand-off floor per item), user and system CPU per item, and voluntary context
switches per item. Then the round trip of one wake-up each way between two threads.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_handoff.py [--items 20000] [--reader-us 50]
        [--worker-us 120] [--caps 4,64] [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import resource
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.benchkit import load_average, machine_line, positive_int, worker_counts  # noqa: E402

DEFAULT_ITEMS = 20_000
QUICK_ITEMS = 500
#: The service thread's and the worker's CPU per transaction in the CSA with one worker.
DEFAULT_READER_US = 50.0
DEFAULT_WORKER_US = 120.0
DEFAULT_CAPS = (4, 64)


def spin(rounds: int) -> int:
    """Pure Python work: ``rounds`` iterations of arithmetic."""
    total = 0
    for number in range(rounds):
        total += number * number
    return total


def calibrate(microseconds: float) -> int:
    """The ``spin`` rounds that take about ``microseconds`` here."""
    rounds = 10_000
    while True:
        start = time.perf_counter()
        spin(rounds)
        elapsed = time.perf_counter() - start
        if elapsed > 0.05:
            return max(1, round(rounds * microseconds * 1e-6 / elapsed))
        rounds *= 2


@dataclass(frozen=True, slots=True)
class Result:
    label: str
    seconds: float
    user: float
    system: float
    switches: int
    items: int

    def per_item(self, value: float) -> float:
        return value / self.items * 1e6


def measure(label: str, items: int, run: Callable[[], None]) -> Result:
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    return Result(label, seconds, after.ru_utime - before.ru_utime,
                  after.ru_stime - before.ru_stime, after.ru_nvcsw - before.ru_nvcsw,
                  items)  # fmt: skip


def serial(items: int, reader: int, worker: int) -> None:
    for _ in range(items):
        spin(reader)
        spin(worker)


def pipeline(
    items: int, reader: int, worker: int, cap: int, consumed: Callable[[int], object] = id
) -> None:
    """A producer and a consumer thread with a hand-over of at most ``cap`` items; the
    consumer passes each item to ``consumed``."""
    queue: deque[int] = deque()
    lock = threading.Lock()
    filled, room = threading.Condition(lock), threading.Condition(lock)

    def consume() -> None:
        for _ in range(items):
            with lock:
                while not queue:
                    filled.wait()
                item = queue.popleft()
                room.notify()
            consumed(item)
            spin(worker)

    consumer = threading.Thread(target=consume, name="handoff-consumer")
    consumer.start()
    try:
        for item in range(items):
            spin(reader)
            with lock:
                while len(queue) >= cap:
                    room.wait()
                queue.append(item)
                filled.notify()
    finally:
        consumer.join()


def round_trip(count: int) -> float:
    """µs for one wake-up each way between two threads (semaphores)."""
    there, back = threading.Semaphore(0), threading.Semaphore(0)

    def echo() -> None:
        for _ in range(count):
            there.acquire()
            back.release()

    thread = threading.Thread(target=echo, name="handoff-echo")
    thread.start()
    start = time.perf_counter()
    for _ in range(count):
        there.release()
        back.acquire()
    elapsed = time.perf_counter() - start
    thread.join()
    return elapsed / count * 1e6


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=positive_int, default=DEFAULT_ITEMS)
    parser.add_argument("--reader-us", type=float, default=DEFAULT_READER_US)
    parser.add_argument("--worker-us", type=float, default=DEFAULT_WORKER_US)
    parser.add_argument("--caps", type=worker_counts, default=DEFAULT_CAPS)
    parser.add_argument("--repeat", type=positive_int, default=3)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ITEMS} items, one round")
    args = parser.parse_args(argv)
    if args.reader_us <= 0 or args.worker_us <= 0:
        parser.error("--reader-us and --worker-us must be above 0")
    if args.quick:
        args.items = min(args.items, QUICK_ITEMS)
        args.repeat = 1
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(machine_line())
    reader, worker = calibrate(args.reader_us), calibrate(args.worker_us)
    print(f"{args.items:,} items: {args.reader_us:g} µs of work in the reading thread "
          f"({reader:,} rounds), {args.worker_us:g} µs in the applying one "
          f"({worker:,})")  # fmt: skip
    runs: dict[str, Callable[[], None]] = {"serial": partial(serial, args.items, reader, worker)}
    for cap in args.caps:
        runs[f"pipeline cap {cap}"] = partial(pipeline, args.items, reader, worker, cap)
    best: dict[str, Result] = {}
    for _ in range(args.repeat):  # alternately, so that a slow spell hits every one
        for label, run in runs.items():
            result = measure(label, args.items, run)
            if label not in best or result.seconds < best[label].seconds:
                best[label] = result
    base = best["serial"].per_item(best["serial"].seconds)
    for label, result in best.items():
        wall = result.per_item(result.seconds)
        print(f"  {label:<18} {wall:8.1f} µs/item  floor {wall - base:+7.1f} µs  "
              f"user {result.per_item(result.user):6.1f}  sys {result.per_item(result.system):6.1f}"
              f"  switches/item {result.switches / result.items:5.2f}")  # fmt: skip
    print(f"wake-up round trip between two threads: {round_trip(max(200, args.items // 4)):.1f} µs")
    print(f"load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
