"""The built-in binlog server started in-process for tests, with a generated workload.

``running_source(directory, spec)`` writes the workload's setup (CREATE DATABASE/TABLE and
the initial load) to a fresh binary log, serves it on a free port with the account
``repl``/``repl-secret`` (caching_sha2_password), and appends the workload's transactions
live at ``rate`` per second (0: at once). It yields a ``BuiltinSource`` with the server, the
live workload, and the content the replica must end with.
"""

from __future__ import annotations

import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.tools.generator.simulate import (
    GeneratedTransaction,
    Source,
    WorkloadSpec,
    simulate,
)
from spark_replica.tools.generator.writer import TransactionEncoder
from spark_replica.tools.source import Account, SourceBinlog, SourceOptions, SourceServer
from spark_replica.tools.source.live import LiveWorkload

REPL_USER = "repl"
REPL_PASSWORD = "repl-secret"


@dataclass
class BuiltinSource:
    server: SourceServer
    live: LiveWorkload
    transactions: list[GeneratedTransaction]
    content: dict[str, list[tuple[object, ...]]]
    spec: WorkloadSpec

    @property
    def port(self) -> int:
        return self.server.port

    def all_gtids(self) -> GtidSet:
        """Every GTID the source will have written once the live workload ends."""
        gtids = GtidSet()
        for trx in self.transactions:
            gtids.add(self.spec.server_uuid, "", trx.gno)
        return gtids


@contextmanager
def running_source(
    directory: Path,
    spec: WorkloadSpec,
    *,
    rate: float = 0.0,
    max_size: int = 64 * 1024,
    ssl_context: ssl.SSLContext | None = None,
) -> Iterator[BuiltinSource]:
    transactions, content = simulate(spec)
    binlog = SourceBinlog(directory, max_size=max_size)
    binlog.open()
    first_workload = sum(1 for _ in Source(spec).setup())  # the setup is there from the start
    encoder = TransactionEncoder(spec.server_uuid)
    for trx in transactions[:first_workload]:
        binlog.append(encoder.encode(trx), (spec.server_uuid, trx.gno))
    options = SourceOptions(server_uuid=spec.server_uuid, ssl_context=ssl_context,
                            accounts=[Account(REPL_USER, REPL_PASSWORD)])  # fmt: skip
    server = SourceServer(binlog, options).start()
    live = LiveWorkload(binlog, transactions[first_workload:], server_uuid=spec.server_uuid,
                        rate=rate)  # fmt: skip
    try:
        yield BuiltinSource(server, live, transactions, content, spec)
    finally:
        live.stop()
        server.close()


class SourceProcess:
    """``spark-replica source`` as a child process, to be killed and started again on the
    same port and data directory."""

    def __init__(self, data_dir: Path, *arguments: str) -> None:
        self.data_dir = data_dir
        self.arguments = arguments
        self.port = 0
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> SourceProcess:
        command = [sys.executable, "-m", "spark_replica.server.cli", "source",
                   "--data-dir", str(self.data_dir), "--port", str(self.port),
                   "--user", REPL_USER, "--password", REPL_PASSWORD, *self.arguments]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert "listening on" in line, line
        self.port = int(line.rsplit(":", 1)[1])
        return self

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, a transaction may be cut in the binary log."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None
