"""The replica server fixtures (``engine``, ``port``) of the wire tests."""

from tests.helpers.replica_fixtures import *  # noqa: F403 (engine, port)
