"""A relay log written from a source's events, with codec-built headers, reads back event for
event with our reader and with MariaDB's mariadb-binlog."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.codecs.registry import (
    decode_event,
    encode_event_at,
    remember_table_map,
)
from spark_replica.applier_core.binlog.constants import EventFlag, EventType
from spark_replica.applier_core.binlog.events import FormatDescription, Rotate, make_header
from spark_replica.applier_core.binlog.file import read_raw_events
from spark_replica.applier_core.binlog.relaylog import RelayLog, RelayLogWriter
from spark_replica.tools.generator.simulate import SERVER_UUID, WorkloadSpec, simulate
from spark_replica.tools.generator.writer import write_binlogs


def _relay_from_source(tmp_path: Path) -> tuple[RelayLog, list[bytes]]:
    transactions, _ = simulate(WorkloadSpec(transactions=60, rows_per_table=10, seed=2))
    source = write_binlogs(transactions, tmp_path / "source", server_uuid=SERVER_UUID)
    events = [bytes(raw) for _, _, raw in read_raw_events(source[0])][2:]  # after FDE, PGTID
    relay = RelayLog.for_channel(tmp_path / "data", "c1")
    relay.open()
    fde = FormatDescription.for_server("8.4.0", flags=EventFlag.RELAY_LOG)

    def make_rotate(next_name: str) -> bytes:
        offset = writer.position.offset
        rotate = Rotate(make_header(EventType.ROTATE, flags=EventFlag.RELAY_LOG), 4, next_name)
        return encode_event_at(rotate, offset, checksum=True)

    writer = RelayLogWriter(
        relay,
        make_header=lambda: encode_event_at(fde, 4, checksum=True),
        make_rotate=make_rotate,
        max_size=4096,
    )
    writer.open()
    for event in events:
        writer.append(event)
    writer.close()
    return relay, events


def test_relay_log_reads_back_with_our_reader(tmp_path: Path) -> None:
    relay, events = _relay_from_source(tmp_path)
    files = relay.files()
    assert len(files) > 2
    decoded: list[bytes] = []
    table_maps: dict[int, object] = {}
    fde = None
    for name in files:
        raws = [bytes(raw) for _, _, raw in read_raw_events(relay.path(name))]
        assert raws[0][4] == EventType.FORMAT_DESCRIPTION
        decoded.extend(r for r in raws[1:] if r[4] != EventType.ROTATE)
        for raw in raws:  # every event decodes, checksums verified; a transaction may span files
            event = decode_event(raw, fde, table_maps=table_maps)
            if isinstance(event, FormatDescription):
                fde = event
            remember_table_map(event, table_maps)
    assert decoded == events
    relay.close()


@pytest.mark.clients
def test_relay_log_is_readable_by_mariadb_binlog(tmp_path: Path) -> None:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    if tool is None:
        pytest.skip("mariadb-binlog is not installed")
    relay, events = _relay_from_source(tmp_path)
    paths = [str(relay.path(name)) for name in relay.files()]
    out = subprocess.run(
        [tool, "-v", "--base64-output=DECODE-ROWS", *paths],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    xids = sum(1 for e in events if e[4] == EventType.XID)
    assert out.count("\tXid = ") == xids
    relay.close()
