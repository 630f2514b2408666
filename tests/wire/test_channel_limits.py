"""Channel creation limits (mysql-reference §4.1 step 4)."""

from __future__ import annotations

import pytest
from pymysql.err import OperationalError

from tests.helpers.server import connect


def test_at_most_256_channels(server: int) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        for i in range(255):  # with the default channel, 256 in all
            cur.execute(f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL 'c{i}'")
        with pytest.raises(OperationalError) as caught:
            cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL 'one_more'")
        assert caught.value.args == (
            3080,
            "Maximum number of replication channels allowed exceeded.",
        )
        cur.execute("SELECT COUNT(*) FROM performance_schema.replication_connection_configuration")
        assert cur.fetchone() == (255,)


@pytest.mark.parametrize("name", ["x" * 65, "trailing ", "a/b"])
def test_invalid_channel_names(server: int, name: str) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        with pytest.raises(OperationalError) as caught:
            cur.execute(f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL '{name}'")
        assert caught.value.args == (
            3076,
            "Couldn't create channel: Channel name is either invalid or too long.",
        )


def test_channel_names_are_case_insensitive(server: int) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL 'Shop'")
        cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_PORT=3310 FOR CHANNEL 'SHOP'")
        cur.execute(
            "SELECT CHANNEL_NAME, PORT FROM performance_schema.replication_connection_configuration"
        )
        assert cur.fetchall() == (("shop", 3310),)
