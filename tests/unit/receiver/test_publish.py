"""The receiver counts a transaction as received only once its events are published: a relay
log write that fails on the way (a full disk) leaves the received set as it was, so the next
dump asks for those transactions again (nothing is lost), while the Previous_gtids of a file
started on the way names exactly the transactions written whole before it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.relaylog import RelayCoordinate
from spark_replica.applier_core.channels.components import ThreadContext
from spark_replica.applier_core.channels.config import ChannelConfig
from spark_replica.applier_core.channels.relay_logs import RelayLogs
from spark_replica.applier_core.channels.status import StatusBoard, TransactionInfo
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.receiver.thread import Receiver
from spark_replica.applier_core.settings import SystemVariables

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


class Writer:
    """Takes events; the write that publishes them fails (the disk is full). Records the
    Previous_gtids a file started after each append would get."""

    def __init__(self, receiver: Receiver) -> None:
        self.receiver = receiver
        self.appended: list[bytes] = []
        self.headers: list[GtidSet] = []

    def append_many(self, events: Sequence[bytes], *, flush: bool = True) -> RelayCoordinate:
        if flush:
            raise OSError(28, "No space left on device")
        self.appended.extend(events)
        self.headers.append(self.receiver._whole.copy())
        return RelayCoordinate("relay.000001", 4)


@pytest.fixture
def receiver(tmp_path: Path) -> Receiver:
    settings = SystemVariables({})
    settings.set_internal("server_id", 2)
    context = ThreadContext(
        config=ChannelConfig("c1"), status=StatusBoard(), settings=settings,
        data_dir=str(tmp_path), exited=lambda error: None, executed=ExecutedGtids(),
        relay_logs=RelayLogs(tmp_path),
    )  # fmt: skip
    return Receiver(context)


def test_a_failed_publish_counts_nothing_as_received(receiver: Receiver) -> None:
    writer = Writer(receiver)
    pending = [b"gtid1", b"xid1", b"gtid2", b"xid2", b"gtid3"]
    receiver._ended_since[:] = [((UUID, 1), 2), ((UUID, 2), 4)]
    with pytest.raises(OSError):
        receiver._publish(writer, pending, TransactionInfo())  # type: ignore[arg-type]
    assert receiver.received == GtidSet()
    assert receiver.context.status.snapshot().received_transaction_set == ""
    # A file started while a transaction's events are written names those before it only.
    assert writer.headers == [GtidSet(), GtidSet.parse(f"{UUID}:1")]
    assert writer.appended == pending[:4]
