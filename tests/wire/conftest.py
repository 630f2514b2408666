"""The wire tests' fixtures: the replica server (``engine``, ``port``) and the mariadb CLI."""

import shutil

import pytest

from tests.helpers.replica_fixtures import *  # noqa: F403 (engine, port)


@pytest.fixture
def mariadb() -> str:
    """The mariadb command-line client's path (the test is skipped without it)."""
    found = shutil.which("mariadb")
    if found is None:
        pytest.skip("the mariadb client is not installed")
    return found
