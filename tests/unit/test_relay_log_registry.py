"""RelayLogs: one open relay log per channel, shared by its receiver and applier."""

from __future__ import annotations

import threading
from pathlib import Path

from spark_replica.applier_core.binlog.relaylog import RelayLogState
from spark_replica.applier_core.channels.relay_logs import RelayLogs


def test_a_channel_gets_one_relay_log_until_it_is_closed(tmp_path: Path) -> None:
    logs = RelayLogs(tmp_path)
    first = logs.get("c1")
    assert first.state is RelayLogState.OPEN
    assert logs.get("c1") is first
    assert logs.get("c2") is not first
    assert first.directory == tmp_path / "relay" / "c1"
    logs.close("c1")
    assert first.state is RelayLogState.CLOSED
    again = logs.get("c1")
    assert again is not first and again.state is RelayLogState.OPEN
    logs.close_all()
    logs.close_all()
    assert again.state is RelayLogState.CLOSED


def test_threads_racing_to_open_share_one(tmp_path: Path) -> None:
    logs = RelayLogs(tmp_path)
    start = threading.Barrier(4)
    found: list[object] = []

    def get() -> None:
        start.wait()
        found.append(logs.get("c1"))

    threads = [threading.Thread(target=get, name=f"get-{i}") for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(x) for x in found}) == 1
    logs.close_all()
