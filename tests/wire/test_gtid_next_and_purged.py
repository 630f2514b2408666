"""SET GTID_NEXT and SET GLOBAL gtid_purged over a real client: MySQL 8.4's checks, error
numbers and texts, read-back, durability across a restart, and one client waiting for a GTID
another one owns (LIM.3: with GTID_MODE=ON, transactions are skipped with GTIDs)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.gtid import GtidSet
from tests.helpers.server import READER, connect, running_server

U = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
V = "4e11fa47-71ca-11e1-9e33-c80aa9429562"

OWNS = (
    "@@SESSION.GTID_NEXT cannot be changed by a client that owns a GTID. The client owns {}. "
    "Ownership is released on COMMIT or ROLLBACK."
)
UNDEFINED = (
    "When @@SESSION.GTID_NEXT is set to a GTID, you must explicitly set it to a different value "
    "after a COMMIT or ROLLBACK. Please check GTID_NEXT variable manual page for detailed "
    "explanation. Current @@SESSION.GTID_NEXT is '{}'."
)
PURGED = "@@GLOBAL.GTID_PURGED cannot be changed: {}"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Any]:
    with running_server(tmp_path / "data") as running:
        yield running


@pytest.fixture
def cursor(server: Any) -> Iterator[Any]:
    with connect(server.port) as conn, conn.cursor() as cur:
        yield cur


def _error(cursor: Any, sql: str) -> tuple[int, str]:
    with pytest.raises(pymysql.MySQLError) as raised:
        cursor.execute(sql)
    return raised.value.args[0], raised.value.args[1]


def _value(cursor: Any, sql: str) -> Any:
    cursor.execute(sql)
    return cursor.fetchone()[0]


def _executed(cursor: Any) -> GtidSet:
    return GtidSet.parse(_value(cursor, "SELECT @@global.gtid_executed") or "")


def test_empty_transactions_mark_gtids_executed(cursor: Any) -> None:
    """BEGIN/COMMIT, START TRANSACTION/COMMIT, a bare COMMIT, a tagged GTID, any case."""
    assert _value(cursor, "SELECT @@session.gtid_next") == "AUTOMATIC"
    for gtid, statements in (
        (f"{U}:1", ["BEGIN", "COMMIT"]),
        (f"{U}:2", ["START TRANSACTION", "COMMIT WORK"]),
        (f"{U}:3", ["COMMIT"]),
        (f"{U.upper()}:Repair:7", ["begin", "commit;"]),
    ):
        cursor.execute(f"SET GTID_NEXT='{gtid}'")
        assert _value(cursor, "SELECT @@gtid_next") == gtid.lower()
        cursor.execute("SHOW VARIABLES LIKE 'gtid_next'")
        assert cursor.fetchall() == (("gtid_next", gtid.lower()),)
        for statement in statements:
            cursor.execute(statement)
        cursor.execute("SET @@session.gtid_next = 'AUTOMATIC'")
    assert _executed(cursor) == GtidSet.parse(f"{U}:1-3,{U}:repair:7")
    assert _value(cursor, "SELECT @@global.gtid_purged") == _value(
        cursor, "SELECT @@global.gtid_executed"
    )
    cursor.execute(
        "SELECT source_uuid, interval_start, interval_end, gtid_tag "
        "FROM mysql.gtid_executed ORDER BY gtid_tag, interval_start"
    )
    assert list(cursor.fetchall()) == [(U, 1, 3, ""), (U, 7, 7, "repair")]


def test_rollback_and_an_executed_gtid(cursor: Any) -> None:
    """ROLLBACK gives the GTID up; a GTID executed already is skipped, not committed twice."""
    cursor.execute(f"SET GTID_NEXT='{U}:5'")
    cursor.execute("BEGIN")
    cursor.execute("ROLLBACK")
    assert _value(cursor, "SELECT @@gtid_next") == f"{U}:5"
    cursor.execute("SET GTID_NEXT='AUTOMATIC'")
    assert not _executed(cursor)
    cursor.execute(f"SET GTID_NEXT='{U}:5'")
    cursor.execute("COMMIT")
    cursor.execute(f"SET GTID_NEXT='{U}:5'")  # executed: the next transaction is skipped
    cursor.execute("BEGIN")
    cursor.execute("COMMIT")
    cursor.execute("SET GTID_NEXT='AUTOMATIC'")
    assert _executed(cursor) == GtidSet.parse(f"{U}:5")


def test_gtid_next_errors(cursor: Any, server: Any) -> None:
    """1790 while owning, 1766 inside a transaction, 1837 after the transaction ended,
    1778 for a statement with implicit commit in it, 1774/1231/1232 for bad values, 1228 for
    SET GLOBAL, 1782/1781 against @@gtid_mode, 1227 without the admin role."""
    gtid = f"{U}:9"
    assert _error(cursor, "SET GTID_NEXT='junk'") == (1774, "Malformed GTID specification 'junk'.")
    assert _error(cursor, f"SET GTID_NEXT='{U}:0'")[0] == 1774
    assert _error(cursor, f"SET GTID_NEXT='{U}:1bad:2'")[0] == 1774
    assert _error(cursor, "SET GTID_NEXT=NULL") == (
        1231,
        "Variable 'gtid_next' can't be set to the value of 'NULL'",
    )
    assert _error(cursor, "SET GTID_NEXT=5") == (
        1232,
        "Incorrect argument type to variable 'gtid_next'",
    )
    assert _error(cursor, "SET GLOBAL gtid_next='AUTOMATIC'") == (
        1228,
        "Variable 'gtid_next' is a SESSION variable and can't be used with SET GLOBAL",
    )
    assert _error(cursor, "SET GTID_NEXT='ANONYMOUS'") == (
        1782,
        "@@SESSION.GTID_NEXT cannot be set to ANONYMOUS when @@GLOBAL.GTID_MODE = ON.",
    )

    cursor.execute(f"SET GTID_NEXT='{gtid}'")
    assert _error(cursor, "SET GTID_NEXT='AUTOMATIC'") == (1790, OWNS.format(gtid))
    cursor.execute("BEGIN")
    assert _error(cursor, f"SET GTID_NEXT='{U}:10'") == (
        1766,
        "The system variable gtid_next cannot be set when there is an ongoing transaction.",
    )
    implicit = (
        1778,
        "Cannot execute statements with implicit commit inside a transaction when "
        "@@SESSION.GTID_NEXT == 'UUID:NUMBER'.",
    )
    assert _error(cursor, "BEGIN") == implicit
    assert _error(cursor, "STOP REPLICA") == implicit
    cursor.execute("COMMIT")
    assert _error(cursor, "STOP REPLICA") == (1837, UNDEFINED.format(gtid))
    assert _error(cursor, "RESET REPLICA") == (1837, UNDEFINED.format(gtid))
    cursor.execute("SELECT 1")  # statements that change nothing are allowed
    cursor.execute("SHOW REPLICA STATUS")
    cursor.execute("SET GTID_NEXT='AUTOMATIC'")
    cursor.execute("STOP REPLICA")

    for mode in ("ON_PERMISSIVE", "OFF_PERMISSIVE", "OFF"):
        cursor.execute(f"SET GLOBAL gtid_mode = {mode}")
    assert _error(cursor, f"SET GTID_NEXT='{U}:11'") == (
        1781,
        "@@SESSION.GTID_NEXT cannot be set to UUID:NUMBER when @@GLOBAL.GTID_MODE = OFF.",
    )
    cursor.execute("SET GTID_NEXT='ANONYMOUS'")
    assert _value(cursor, "SELECT @@gtid_next") == "ANONYMOUS"
    assert _error(cursor, "SET GTID_NEXT='AUTOMATIC'") == (1790, OWNS.format("ANONYMOUS"))
    cursor.execute("COMMIT")
    cursor.execute("SET GTID_NEXT='AUTOMATIC'")

    with connect(server.port, READER.name, READER.password) as conn, conn.cursor() as reader:
        assert _error(reader, f"SET GTID_NEXT='{U}:12'") == (
            1227,
            "Access denied; you need (at least one of) the SUPER, SYSTEM_VARIABLES_ADMIN, "
            "SESSION_VARIABLES_ADMIN or REPLICATION_APPLIER privilege(s) for this operation",
        )
        assert _error(reader, f"SET GLOBAL gtid_purged='+{U}:12'") == (
            1227,
            "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN "
            "privilege(s) for this operation",
        )
    assert _executed(cursor) == GtidSet.parse(f"{U}:9")


def test_a_replication_statement_commits_the_sessions_gtid(cursor: Any) -> None:
    """A statement with an implicit commit commits the owned GTID; with an executed GTID it is
    skipped: STOP REPLICA then does nothing and gives no note."""
    cursor.execute(f"SET GTID_NEXT='{U}:20'")
    cursor.execute("STOP REPLICA FOR CHANNEL ''")
    assert cursor.connection.show_warnings() == (
        (  # nothing to stop: note 3084
            "Note",
            3084,
            "Replication thread(s) for channel '' are already stopped.",
        ),
    )
    assert _executed(cursor) == GtidSet.parse(f"{U}:20")
    cursor.execute(f"SET GTID_NEXT='{U}:20'")
    cursor.execute("STOP REPLICA FOR CHANNEL ''")
    assert cursor.connection.show_warnings() == ()
    cursor.execute("SET GTID_NEXT='AUTOMATIC'")


def test_a_client_waits_for_a_gtid_another_owns(server: Any, cursor: Any) -> None:
    """The second client's SET GTID_NEXT waits until the owner commits, then finds the GTID
    executed (its transaction is skipped); 3546 while it is owned."""
    gtid = f"{U}:30"
    cursor.execute(f"SET GTID_NEXT='{gtid}'")
    assert _error(cursor, f"SET GLOBAL gtid_purged='+{gtid}'") == (
        3546,
        PURGED.format("the added gtid set must not overlap with @@GLOBAL.GTID_OWNED"),
    )
    done = threading.Event()

    def second() -> None:
        with connect(server.port) as conn, conn.cursor() as other:
            other.execute(f"SET GTID_NEXT='{gtid}'")
            done.set()
            other.execute("COMMIT")
            other.execute("SET GTID_NEXT='AUTOMATIC'")

    thread = threading.Thread(target=second)
    thread.start()
    try:
        assert not done.wait(0.5)
        cursor.execute("COMMIT")
        assert done.wait(10)
    finally:
        thread.join(10)
    cursor.execute("SET GTID_NEXT='AUTOMATIC'")
    assert _executed(cursor) == GtidSet.parse(gtid)


def test_a_closed_connection_gives_its_gtid_up(server: Any, cursor: Any) -> None:
    with connect(server.port) as conn, conn.cursor() as other:
        other.execute(f"SET GTID_NEXT='{U}:40'")
    cursor.execute(f"SET GTID_NEXT='{U}:40'")  # would wait if still owned
    cursor.execute("ROLLBACK")
    cursor.execute("SET GTID_NEXT='AUTOMATIC'")
    assert not _executed(cursor)


def test_gtid_purged(tmp_path: Path) -> None:
    """'set' must contain the old value, '+set' must not overlap gtid_executed (3546); the
    GTIDs become executed and purged, and stay so after a restart."""
    data = tmp_path / "data"
    with running_server(data) as server, connect(server.port) as conn, conn.cursor() as cursor:
        assert _value(cursor, "SELECT @@global.gtid_purged") == ""
        cursor.execute(f"SET GLOBAL gtid_purged = '{U}:1-10'")  # nothing executed: any set
        assert _value(cursor, "SELECT @@global.gtid_purged") == f"{U}:1-10"
        assert _error(cursor, f"SET GLOBAL gtid_purged = '{U}:1-5'") == (
            3546,
            PURGED.format("the new value must be a superset of the old value"),
        )
        assert _error(cursor, f"SET GLOBAL gtid_purged = '+{U}:10-12'") == (
            3546,
            PURGED.format("the added gtid set must not overlap with @@GLOBAL.GTID_EXECUTED"),
        )
        cursor.execute(f"SET GLOBAL gtid_purged = '+{U}:11-12,{V}:tag:1'")
        cursor.execute(f"SET @@global.gtid_purged = '{U}:1-20,{V}:tag:1'")  # a superset
        assert _error(cursor, "SET GLOBAL gtid_purged = 'x'") == (
            1772,
            "Malformed GTID set specification 'x'.",
        )
        assert _error(cursor, "SET gtid_purged = ''") == (
            1229,
            "Variable 'gtid_purged' is a GLOBAL variable and should be set with SET GLOBAL",
        )
        assert _error(cursor, "SET GLOBAL gtid_purged = DEFAULT") == (
            1230,
            "Variable 'gtid_purged' doesn't have a default value",
        )
        assert _error(cursor, "SET GLOBAL gtid_purged = 3") == (
            1232,
            "Incorrect argument type to variable 'gtid_purged'",
        )
        expected = GtidSet.parse(f"{U}:1-20,{V}:tag:1")
        assert _executed(cursor) == expected
    with running_server(data) as server, connect(server.port) as conn, conn.cursor() as cursor:
        assert _executed(cursor) == expected
        assert GtidSet.parse(_value(cursor, "SELECT @@global.gtid_purged")) == expected
