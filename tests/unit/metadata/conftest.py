"""The databases the metadata behaviour tests run on.

``store_url`` (and the ``store`` opened on it) is SQLite in memory, SQLite in a file and a new
database on a real PostgreSQL server (``tests.helpers.postgres``); ``shared_url`` is one of
the databases that several stores can open at once: SQLite in a file, and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_replica.metadata import MetadataStore, open_store


def _url(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if kind == "sqlite-memory":
        return "sqlite:///:memory:"
    if kind == "sqlite-file":
        return f"sqlite:///{tmp_path / 'nested' / 'metadata.db'}"
    url = request.getfixturevalue("postgres_url")
    assert isinstance(url, str)
    return url


@pytest.fixture(params=["sqlite-memory", "sqlite-file", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty metadata database, on each backend in turn."""
    return _url(request.param, request, tmp_path)


@pytest.fixture(params=["sqlite-file", "postgresql"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty metadata database that several stores can open at once."""
    return _url(request.param, request, tmp_path)


@pytest.fixture
def store(store_url: str) -> Iterator[MetadataStore]:
    """A store on ``store_url``, closed when the test ends."""
    opened = open_store(store_url)
    yield opened
    opened.close()
