"""Pytest fixtures for tests that drive a replica server over the wire: ``engine`` (the
in-memory storage engine the server applies into; a test module may override it) and
``port`` (a server started on it with every component, data in ``tmp_path / "data"``).
A conftest makes them available with ``from tests.helpers.replica_fixtures import *``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_replica.applier_core.storage import InMemoryEngine, StorageEngine
from spark_replica.server.components import default_components
from tests.helpers.server import running_server

__all__ = ["engine", "port"]


@pytest.fixture
def engine() -> InMemoryEngine:
    return InMemoryEngine()


@pytest.fixture
def port(tmp_path: Path, engine: StorageEngine) -> Iterator[int]:
    with running_server(tmp_path / "data", default_components(engine)) as server:
        yield server.port
