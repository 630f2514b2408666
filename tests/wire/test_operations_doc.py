"""The SQL that docs/operations.md gives DBAs runs as written: its CHANGE REPLICATION SOURCE
statement configures a channel, and every monitoring query answers with the columns it names
(REQ: the status tables of spec/requirements.md §8 and SHOW REPLICA STATUS)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.server import connect

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def _sql_blocks(section: str) -> list[str]:
    """The statements of the ```sql blocks under the ``## section`` heading."""
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    statements: list[str] = []
    for block in re.findall(r"```sql\n(.*?)```", body, flags=re.S):
        lines = [line for line in block.splitlines() if not line.lstrip().startswith("--")]
        for statement in "\n".join(lines).replace("\\G", ";").split(";"):
            if statement.strip():
                statements.append(" ".join(statement.split()))
    return statements


def test_the_setup_statement_configures_the_channel_it_names(port: int) -> None:
    statements = _sql_blocks("Setting up replication")
    change = [s for s in statements if s.startswith("CHANGE REPLICATION SOURCE TO")]
    assert len(change) == 1 and any(s.startswith("START REPLICA") for s in statements)
    with connect(port) as db, db.cursor() as cursor:
        cursor.execute(change[0])
        cursor.execute(
            "SELECT APPLIER_VERSION, APPLIER_WORKER_COUNT, APPLIER_EVENT_MEMORY_LIMIT FROM "
            "performance_schema.replication_applier_configuration WHERE CHANNEL_NAME = 'c1'"
        )
        assert cursor.fetchall() == ((2, 4, 1073741824),)


def test_every_monitoring_query_runs(port: int) -> None:
    statements = _sql_blocks("Monitoring")
    assert len(statements) >= 6
    with connect(port) as db, db.cursor() as cursor:
        cursor.execute(_sql_blocks("Setting up replication")[0])  # channel c1
        for statement in statements:
            try:
                cursor.execute(statement)
            except Exception as exc:  # noqa: BLE001 (the statement is in the message)
                pytest.fail(f"{statement!r} failed: {exc}")
            assert cursor.description, statement
            rows = cursor.fetchall()
            # Worker rows appear once the applier has started; the other tables have a row
            # per configured channel.
            if statement.startswith("SELECT CHANNEL_NAME") and "_by_worker" not in statement:
                assert [row[0] for row in rows] == ["c1"], statement
