"""One replication statement is one metadata transaction (architecture decision 4), on every
backend of ``conftest.py``."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.channels.config import ChannelConfig, SourceConnection
from spark_replica.applier_core.channels.store import ChannelChanges
from spark_replica.metadata import MetadataStore, WorkerInfo
from spark_replica.metadata import store as store_module


def _config(name: str, host: str) -> ChannelConfig:
    return ChannelConfig(name, SourceConnection(host=host))


def _worker(worker_id: int) -> WorkerInfo:
    return WorkerInfo(
        worker_id, "relay.000001", 4, "binlog.000001", 4, "relay.000001", 4, "binlog.000001", 4,
        0, 0, b"",
    )  # fmt: skip


def test_changes_apply_together(store: MetadataStore) -> None:
    store.save_channel(_config("a", "h1"))
    store.save_worker_info("a", [_worker(1)])
    store.apply_channel_changes(
        ChannelChanges(save=(_config("a", "h2"), _config("b", "h3")), clear_workers=("a",))
    )
    assert [(c.name, c.connection.host) for c in store.load_channels()] == [
        ("a", "h2"),
        ("b", "h3"),
    ]
    assert store.load_worker_info("a") == []
    store.apply_channel_changes(ChannelChanges(delete=("a",)))
    assert [c.name for c in store.load_channels()] == ["b"]


def test_a_failure_part_way_stores_nothing(
    store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save_channel(_config("a", "h1"))
    calls = 0
    original = store_module._relay_row

    def failing_relay_row(config: ChannelConfig) -> object:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("disk full")
        return original(config)

    monkeypatch.setattr(store_module, "_relay_row", failing_relay_row)
    with pytest.raises(RuntimeError, match="disk full"):
        store.apply_channel_changes(
            ChannelChanges(save=(_config("a", "changed"), _config("b", "h3")), delete=())
        )
    monkeypatch.undo()
    assert [(c.name, c.connection.host) for c in store.load_channels()] == [("a", "h1")]
