"""Fixtures of the Spark engine's tests: where an engine keeps its tables and state, the
metadata database the catalog lives in, and pyiceberg's thread pool."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_replica.metadata.factory import open_store
from spark_replica.metadata.store import MetadataStore


@pytest.fixture
def place(tmp_path: Path) -> Iterator[tuple[str, MetadataStore]]:
    """An engine's warehouse and its metadata store (a SQLite file)."""
    store = open_store(f"sqlite:///{tmp_path / 'metadata.db'}")
    yield str(tmp_path / "warehouse"), store
    store.close()


@pytest.fixture(params=["sqlite-file", "postgresql"])
def metadata_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The metadata database, and so the Iceberg catalog: a SQLite file (the default) or a
    PostgreSQL database (production)."""
    if request.param == "sqlite-file":
        return f"sqlite:///{tmp_path / 'metadata.db'}"
    url = request.getfixturevalue("postgres_url")
    assert isinstance(url, str)
    return url


@pytest.fixture
def pyiceberg_pool() -> Iterator[None]:
    """pyiceberg reads through one thread pool per process that it never shuts down; the
    test shuts it down (pyiceberg makes a new one when next needed)."""
    from pyiceberg.utils.concurrent import ExecutorFactory

    yield
    executor, ExecutorFactory._instance = ExecutorFactory._instance, None
    if executor is not None:
        executor.shutdown(wait=True)
