"""Fixtures of the Iceberg tests: the metadata database the catalog lives in, and
pyiceberg's thread pool."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


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
