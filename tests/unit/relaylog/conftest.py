from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.relaylog import RelayLog, RelayLogWriter
from tests.unit.relaylog.fakes import make_header, make_rotate

CHANNEL = "c1"


def new_writer(relay_log: RelayLog, max_size: int = 0) -> RelayLogWriter:
    return RelayLogWriter(
        relay_log, make_header=make_header, make_rotate=make_rotate, max_size=max_size
    )


@pytest.fixture
def datadir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def relay_log(datadir: Path) -> Iterator[RelayLog]:
    log = RelayLog.for_channel(datadir, CHANNEL)
    log.open()
    yield log
    log.close()


@pytest.fixture
def writer(relay_log: RelayLog) -> Iterator[RelayLogWriter]:
    w = new_writer(relay_log)
    w.open()
    yield w
    w.close()
