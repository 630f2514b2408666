"""With the Spark engine, a GTID committed by an empty transaction (SET GTID_NEXT, SET GLOBAL
gtid_purged) is recorded where the engine records applied transactions' GTIDs, at its
commit point: a later commit point keeps it, and it is executed after a restart (LIM.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.server.storage import configured_components
from tests.helpers.server import connect, executed_gtids, running_server

pytestmark = pytest.mark.spark

U = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def test_empty_transactions_are_durable_in_spark(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    expected = GtidSet.parse(f"{U}:1-3:7,{U}:repair:1")
    with running_server(data, configured_components) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute(f"SET GTID_NEXT='{U}:7'")
            cursor.execute("BEGIN")
            cursor.execute("COMMIT")
            cursor.execute("SET GTID_NEXT='AUTOMATIC'")
            cursor.execute(f"SET GLOBAL gtid_purged='+{U}:1-3'")
            cursor.execute(f"SET GTID_NEXT='{U}:repair:1'")  # a later commit point
            cursor.execute("COMMIT")
            cursor.execute("SET GTID_NEXT='AUTOMATIC'")
            assert executed_gtids(cursor) == expected
            engine = server.server.components.engine  # type: ignore[attr-defined]
            assert GtidSet.from_intervals(engine.durable_state().gtids) == expected
    with running_server(data, configured_components) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            assert executed_gtids(cursor) == expected
