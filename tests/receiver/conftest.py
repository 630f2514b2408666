"""A MariaDB server for the receiver's tests, one per test session; the replica server
fixtures (``engine``, ``port``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.mariadb import MariaDB, available, running_mariadb
from tests.helpers.replica_fixtures import *  # noqa: F403 (engine, port)


@pytest.fixture(scope="session")
def mariadb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDB]:
    if not available():
        pytest.fail("Debian's mariadb-server is needed (`.ci/run` installs it)")
    with running_mariadb(tmp_path_factory.mktemp("mariadb")) as server:
        yield server


@pytest.fixture(scope="module")
def own_mariadb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDB]:
    """A MariaDB for one module alone, for tests that empty its binary log (RESET MASTER) and
    load much into it without the other modules replaying that."""
    if not available():
        pytest.fail("Debian's mariadb-server is needed (`.ci/run` installs it)")
    with running_mariadb(tmp_path_factory.mktemp("own-mariadb")) as server:
        yield server
