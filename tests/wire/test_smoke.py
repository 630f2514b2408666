from __future__ import annotations

from tests.helpers.server import connect


def test_change_source_then_performance_schema(server: int) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h', SOURCE_AUTO_POSITION=1, "
            "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2 FOR CHANNEL 'c1'"
        )
        cur.execute(
            "SELECT CHANNEL_NAME, APPLIER_VERSION FROM "
            "performance_schema.replication_applier_configuration"
        )
        assert cur.fetchall() == (("c1", 2),)
        assert [d[0] for d in cur.description] == ["CHANNEL_NAME", "APPLIER_VERSION"]
