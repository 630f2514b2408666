#!/usr/bin/env python3
"""Record the driver JVM's class archive (``spark_replica.applier_core.storage.spark.
class_archive``): the classes a replica server's JVM loads while it replicates into
Iceberg tables and answers queries on them.

Run by ``make install`` after the jars are fetched, with the virtualenv's Python:
``.venv/bin/python tools/make_class_archive.py``. It runs ``spark-replica demo`` (a
built-in source, a replica server, replication with the Change Stream Applier, queries)
for ``--duration`` seconds with the server's JVM writing its archive when it exits, and
puts the archive beside the jars. Sessions started later map it; without it they start
as before, only slower.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from spark_replica.applier_core.storage.spark.class_archive import (
    DRIVER_JAVA_OPTIONS,
    archive_path,
    recording_options,
)

#: Seconds the JVM may take to write the archive after the server exits.
EXIT_TIMEOUT = 180.0


def record(target: Path, duration: float) -> Path:
    """Run the demo with its server's JVM recording into a file beside ``target``, then
    put the file in its place."""
    part = target.with_name(target.name + ".part")
    part.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="spark-replica-class-archive-") as tmp:
        config = Path(tmp) / "record.toml"
        options = recording_options(part)
        config.write_text(
            f'[spark.options]\n"{DRIVER_JAVA_OPTIONS}" = "{options[DRIVER_JAVA_OPTIONS]}"\n'
        )
        command = [
            sys.executable, "-m", "spark_replica.server.cli", "demo",
            "--duration", str(duration), "--rate", "300", "--interval", "5",
            "--transactions", str(int(duration * 600)),
            "--data-dir", str(Path(tmp) / "demo"), "--config", str(config),
        ]  # fmt: skip
        finished = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, check=False)  # fmt: skip
        # The server's JVM writes the archive as it exits, after the server itself.
        _wait_exited(str(part))
        if finished.returncode != 0 or not part.is_file():
            part.unlink(missing_ok=True)
            raise SystemExit(
                f"no class archive recorded (the demo exited with {finished.returncode}):\n"
                f"{finished.stdout[-4000:]}"
            )
    os.replace(part, target)
    return target


def _wait_exited(marker: str, timeout: float = EXIT_TIMEOUT) -> None:
    """Wait until no process has ``marker`` in its command line (Linux's /proc)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_running_with(marker)):
        time.sleep(0.5)


def _running_with(marker: str) -> Iterator[int]:
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                yield int(entry.name)
        except OSError:  # gone meanwhile
            continue


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=30.0,
                        help="seconds of replication the archive records")  # fmt: skip
    args = parser.parse_args()
    target = archive_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    recorded = record(target, args.duration)
    print(f"class archive: {recorded} ({recorded.stat().st_size / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
