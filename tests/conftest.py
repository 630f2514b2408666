from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.idle_applier import IdleComponents
from tests.helpers.postgres import postgres_server as postgres_server
from tests.helpers.postgres import postgres_url as postgres_url
from tests.helpers.server import running_server


@pytest.fixture(autouse=True)
def no_thread_leaks() -> Iterator[None]:
    """Fail a test that leaves a thread behind."""
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon]
    for thread in leaked:
        thread.join(timeout=5)
    leaked = [t for t in leaked if t.is_alive()]
    assert not leaked, f"threads left running: {[t.name for t in leaked]}"


@pytest.fixture
def idle() -> IdleComponents:
    return IdleComponents()


@pytest.fixture
def server(tmp_path: Path, idle: IdleComponents) -> Iterator[int]:
    """A running replica (with idle test components installed); yields its port."""
    with running_server(tmp_path / "data", idle.components()) as background:
        yield background.port


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-sql",
        action="store_true",
        default=False,
        help="rewrite the .result files of tests/sql from what the server answers",
    )


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The test run's one SparkSession (local[2]); tests that use it carry the spark mark."""
    from spark_replica.applier_core.storage.spark.session import get_spark, stop_spark

    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = get_spark({"spark.sql.warehouse.dir": str(warehouse)})
    yield session
    stop_spark()
