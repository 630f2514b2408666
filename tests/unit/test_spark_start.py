"""``spark-replica serve`` starts Spark's JVM on a thread while the rest of the server opens
(restart to serving: issue requirements, scale targets)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from spark_replica.server.config import load_config
from spark_replica.server.spark_start import session_options, spark_started_early


def _starting() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "spark-start"]


def test_the_memory_engine_starts_no_spark(tmp_path: Path) -> None:
    config = load_config(data_dir=str(tmp_path), engine="memory", environ={})
    with spark_started_early(config):
        assert _starting() == []


@pytest.mark.spark
def test_the_session_is_started_on_a_thread_joined_at_the_end(spark: Any, tmp_path: Path) -> None:
    """The thread creates (here: finds) the process's session with the server's options and
    is joined when the block ends; the engine's ``get_spark`` then returns that session."""
    from spark_replica.applier_core.storage.spark.session import get_spark

    config = load_config(data_dir=str(tmp_path), environ={})
    assert session_options(config)["spark.sql.warehouse.dir"].endswith("/_spark_catalog")
    with spark_started_early(config):
        pass
    assert _starting() == []
    assert get_spark(session_options(config)) is spark
