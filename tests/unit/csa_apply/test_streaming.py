"""Streamed transactions through the service, with a relay log writer running: a relay log
ending mid-transaction (T71) and a transaction across two relay log files (T73)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.codecs.registry import encode_event_at
from spark_replica.applier_core.binlog.constants import EventFlag, EventType
from spark_replica.applier_core.binlog.events import FormatDescription, Rotate, make_header
from spark_replica.applier_core.binlog.file import read_raw_events
from spark_replica.applier_core.binlog.relaylog import RelayLogWriter
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.unit.csa_apply.harness import Replica, generate

SPEC = WorkloadSpec(tables=2, rows_per_table=10, transactions=120, seed=13)
RELAY_FDE = FormatDescription.for_server("8.4.0", flags=EventFlag.RELAY_LOG)


def _writer(replica: Replica) -> RelayLogWriter:
    relay_log = replica.relay_logs.get("c1")
    writer: RelayLogWriter

    def rotate(next_name: str) -> bytes:
        event = Rotate(make_header(EventType.ROTATE, flags=EventFlag.RELAY_LOG), 4, next_name)
        return encode_event_at(event, writer.position.offset, checksum=True)

    writer = RelayLogWriter(
        relay_log,
        make_header=lambda: encode_event_at(RELAY_FDE, 4, checksum=True),
        make_rotate=rotate,
    )
    writer.open()
    return writer


def _split(files: list[Path], gno: int) -> tuple[list[bytes], list[bytes]]:
    """The stream's raw events, cut three events into transaction ``gno``."""
    events = [data for path in files for _, _, data in read_raw_events(path)]
    gtids = [i for i, data in enumerate(events) if data[4] == EventType.GTID]
    cut = gtids[gno - 1] + 3
    return events[:cut], events[cut:]


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_t71_a_cut_off_transaction_rolls_back_silently_and_applies_later(
    tmp_path: Path, commit_order: bool
) -> None:
    transactions, content, files = generate(SPEC, tmp_path / "source")
    first, rest = _split(files, 60)
    replica = Replica(tmp_path / "data", workers=4, commit_order=commit_order)
    writer = _writer(replica)
    try:
        for data in first:
            writer.append(data)
        replica.start()
        assert replica.wait_for(f"{SPEC.server_uuid}:1-59")
        replica.stop()  # transaction 60 is streaming: it is cut off and rolled back
        assert replica.exits == []
        assert not replica.executed.contains(SPEC.server_uuid, "", 60)
        for data in rest:
            writer.append(data)
        replica.start()
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{len(transactions)}")
        replica.stop()
        assert replica.exits == []
        assert replica.content() == content
    finally:
        writer.close()
        replica.close()


def test_t73_a_transaction_across_two_relay_log_files(tmp_path: Path) -> None:
    transactions, content, files = generate(SPEC, tmp_path / "source")
    first, rest = _split(files, 70)
    replica = Replica(tmp_path / "data", workers=4)
    writer = _writer(replica)
    try:
        replica.start()
        for data in first:
            writer.append(data)
        writer.rotate()  # the relay log moves to its next file in the middle of transaction 70
        for data in rest:
            writer.append(data)
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{len(transactions)}")
        replica.stop()
        assert replica.exits == []
        assert replica.content() == content
        assert len(replica.relay_logs.get("c1").files()) >= 1
    finally:
        writer.close()
        replica.close()
