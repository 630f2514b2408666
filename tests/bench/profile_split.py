"""Where a replica server's CPU goes, by stage: py-spy samples the server process's Python
threads while they run (idle threads are not sampled), and each sample is put in one stage.

A sample's stage comes from the innermost frame that names one (its module's path), else
from its thread's name:

=================  ==========================================  ============================
stage              frames in                                   threads named
=================  ==========================================  ============================
receive            (every frame of the receiver's thread)      ``receiver-*``
decode             ``applier_core/binlog/`` (framing, codecs,
                   row images, relay log reading)
schedule           ``applier_core/scheduler/``                 ``*-scheduler``, ``*-csa``,
                                                               ``*-coordinator``,
                                                               ``*-reader``, ``*-prefetcher``
key index          ``storage/key_index/``, ``lmdb``
flush to storage   ``storage/spark/``, ``py4j``                ``spark-engine-*``
apply              ``applier_core/apply/``, ``csa/``, ``mta/``,  ``*-worker-*``
                   ``storage/``
serve SQL                                                      ``MainThread``, ``asyncio_*``
                                                               (the event loop and its
                                                               workers: clients' queries)
other              anything else
=================  ==========================================  ============================

The samples are of Python threads only: what Spark's JVM does for a flush is its own
process's CPU time, which ``cpu_seconds`` reads beside them (``/proc/<pid>/stat``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STAGES = ("receive", "decode", "schedule", "apply", "key index", "flush to storage",
          "serve SQL", "other")  # fmt: skip
#: Samples per second.
RATE = 100
#: Frames' module paths → stage, innermost frame first.
_FRAME_STAGES = (
    ("/key_index/", "key index"),
    ("/lmdb/", "key index"),
    ("/storage/spark/", "flush to storage"),
    ("/py4j/", "flush to storage"),
    ("/applier_core/binlog/", "decode"),
    ("/applier_core/scheduler/", "schedule"),
    ("/applier_core/apply/", "apply"),
    ("/applier_core/csa/", "apply"),
    ("/applier_core/mta/", "apply"),
    ("/applier_core/storage/", "apply"),
)
_THREAD_STAGES = (
    (re.compile(r"receiver"), "receive"),
    (re.compile(r"-worker-\d+$"), "apply"),
    (re.compile(r"-(scheduler|csa|coordinator|reader|prefetcher)$"), "schedule"),
    (re.compile(r"^spark-engine-"), "flush to storage"),
    (re.compile(r"^(MainThread|asyncio_\d+)$"), "serve SQL"),
)
_FRAME_FILE = re.compile(r"\(([^():]+):\d+\)$")


def stage(thread: str, frames: list[str]) -> str:
    """The stage of one sample: the thread ``thread`` with ``frames`` (outermost first, as
    py-spy writes them: ``function (path:line)``)."""
    if thread.startswith("receiver"):
        return "receive"
    for frame in reversed(frames):
        found = _FRAME_FILE.search(frame)
        path = found.group(1) if found else ""
        for part, name in _FRAME_STAGES:
            if part in path:
                return name
    for pattern, name in _THREAD_STAGES:
        if pattern.search(thread):
            return name
    return "other"


def split(raw: str) -> Counter[str]:
    """Samples per stage in py-spy's raw output (``--format raw --threads``: a line per
    distinct stack, ``thread (tid): name;frame;frame count``)."""
    samples: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        thread, *frames = stack.split(";")
        samples[stage(thread.partition(": ")[2], frames)] += int(count)
    return samples


def shares(samples: Counter[str]) -> dict[str, float]:
    """Each stage's share of the samples (0 to 1), every stage named."""
    total = sum(samples.values()) or 1
    return {name: samples[name] / total for name in STAGES}


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process ``pid`` has used, in seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def py_spy() -> str | None:
    """The py-spy program beside this Python, or on the PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


@contextmanager
def sampling(pid: int, output: Path) -> Iterator[Path]:
    """Sample process ``pid`` into ``output`` (py-spy's raw format) until the block ends."""
    program = py_spy()
    if program is None:
        raise RuntimeError("py-spy is not installed (make install installs it)")
    recorder = subprocess.Popen(
        [program, "record", "--pid", str(pid), "--format", "raw", "--threads",
         "--full-filenames", "--nonblocking", "--rate", str(RATE), "--output", str(output)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        yield output
    finally:
        recorder.send_signal(signal.SIGINT)  # py-spy writes its file and exits
        _, errors = recorder.communicate(timeout=60)
        if not output.exists():
            raise RuntimeError(f"py-spy wrote no profile: {errors.decode(errors='replace')}")
