"""``spark-replica demo`` (``make demo``, issue 8 §1): a live source and a replica, started
and wired over SQL; it prints lag, the applier's metrics and a query Spark answers while it
runs, and Ctrl-C stops everything cleanly."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

_STATUS = re.compile(
    r"^\[\s*[\d.]+s\] source ([\d,]+) \| applied ([\d,]+) \| lag .* \| applier: ([\d,]+) "
    r"committed.* -> (.*)$"
)


def test_demo_replicates_into_spark_and_stops_on_ctrl_c() -> None:
    command = [sys.executable, "-m", "spark_replica.server.cli", "demo", "--rate", "100",
               "--transactions", "2000", "--interval", "2", "--workers", "2"]  # fmt: skip
    demo = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)  # fmt: skip
    lines: list[str] = []
    answered = threading.Event()

    def read() -> None:
        assert demo.stdout is not None
        for line in demo.stdout:
            lines.append(line.rstrip("\n"))
            found = _STATUS.match(lines[-1])
            if found and _rows(found.group(4)):
                answered.set()  # Spark answered the query with replicated rows

    reader = threading.Thread(target=read, name="demo-output")
    reader.start()
    try:
        assert answered.wait(400), "\n".join(lines[-20:])
        demo.send_signal(signal.SIGINT)  # Ctrl-C
        assert demo.wait(120) == 0, "\n".join(lines[-20:])
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        reader.join()
    text = "\n".join(lines)
    assert "mysql> START REPLICA FOR CHANNEL 'demo';" in text
    assert "SOURCE_PASSWORD='********'" in text  # the replication password is never shown
    statuses = [m for m in map(_STATUS.match, lines) if m]
    applied = [int(m.group(2).replace(",", "")) for m in statuses]
    assert applied == sorted(applied) and applied[-1] > 0  # replication moves forward
    assert _rows(statuses[-1].group(4)) > 0
    assert lines[-1] == "demo: both servers stopped"


def _rows(answer: str) -> int:
    """The row count in the demo's answer to its query (0 for an error)."""
    found = re.fullmatch(r"([\d,]+) rows, sum\(k\) (\d+|None)", answer)
    return int(found.group(1).replace(",", "")) if found else 0
