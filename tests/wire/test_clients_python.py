"""Python MySQL drivers over TCP: pymysql and mysql-connector-python (pure mode).

Each test drives a real replica server through the driver's public API, the way a DBA's script
would, and checks what reaches the client: result metadata (column names in MySQL's case),
values, error numbers, SQLSTATEs, message texts and warning counts.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import Any

import mysql.connector
import pymysql
import pytest

from tests.helpers.server import ROOT_PASSWORD, connect

DRIVERS = ("pymysql", "mysql-connector")

CSA_CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2 FOR CHANNEL 'c1'"
)

UNKNOWN_APPLIER_VERSION = (
    "Invalid applier version specified in CHANGE REPLICATION SOURCE TO command. "
    "Refer to documentation for supported versions."
)

SHOW_REPLICA_STATUS_COLUMNS = (
    "Replica_IO_State", "Source_Host", "Source_User", "Source_Port", "Connect_Retry",
    "Source_Log_File", "Read_Source_Log_Pos", "Relay_Log_File", "Relay_Log_Pos",
    "Relay_Source_Log_File", "Replica_IO_Running", "Replica_SQL_Running", "Replicate_Do_DB",
    "Replicate_Ignore_DB", "Replicate_Do_Table", "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table", "Replicate_Wild_Ignore_Table", "Last_Errno", "Last_Error",
    "Skip_Counter", "Exec_Source_Log_Pos", "Relay_Log_Space", "Until_Condition",
    "Until_Log_File", "Until_Log_Pos", "Source_SSL_Allowed", "Source_SSL_CA_File",
    "Source_SSL_CA_Path", "Source_SSL_Cert", "Source_SSL_Cipher", "Source_SSL_Key",
    "Seconds_Behind_Source", "Source_SSL_Verify_Server_Cert", "Last_IO_Errno", "Last_IO_Error",
    "Last_SQL_Errno", "Last_SQL_Error", "Replicate_Ignore_Server_Ids", "Source_Server_Id",
    "Source_UUID", "Source_Info_File", "SQL_Delay", "SQL_Remaining_Delay",
    "Replica_SQL_Running_State", "Source_Retry_Count", "Source_Bind", "Last_IO_Error_Timestamp",
    "Last_SQL_Error_Timestamp", "Source_SSL_Crl", "Source_SSL_Crlpath", "Retrieved_Gtid_Set",
    "Executed_Gtid_Set", "Auto_Position", "Replicate_Rewrite_DB", "Channel_Name",
    "Source_TLS_Version", "Source_public_key_path", "Get_Source_public_key", "Network_Namespace",
)  # fmt: skip

SHOW_SLAVE_STATUS_COLUMNS = (
    "Slave_IO_State", "Master_Host", "Master_User", "Master_Port", "Connect_Retry",
    "Master_Log_File", "Read_Master_Log_Pos", "Relay_Log_File", "Relay_Log_Pos",
    "Relay_Master_Log_File", "Slave_IO_Running", "Slave_SQL_Running", "Replicate_Do_DB",
    "Replicate_Ignore_DB", "Replicate_Do_Table", "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table", "Replicate_Wild_Ignore_Table", "Last_Errno", "Last_Error",
    "Skip_Counter", "Exec_Master_Log_Pos", "Relay_Log_Space", "Until_Condition",
    "Until_Log_File", "Until_Log_Pos", "Master_SSL_Allowed", "Master_SSL_CA_File",
    "Master_SSL_CA_Path", "Master_SSL_Cert", "Master_SSL_Cipher", "Master_SSL_Key",
    "Seconds_Behind_Master", "Master_SSL_Verify_Server_Cert", "Last_IO_Errno", "Last_IO_Error",
    "Last_SQL_Errno", "Last_SQL_Error", "Replicate_Ignore_Server_Ids", "Master_Server_Id",
    "Master_UUID", "Master_Info_File", "SQL_Delay", "SQL_Remaining_Delay",
    "Slave_SQL_Running_State", "Master_Retry_Count", "Master_Bind", "Last_IO_Error_Timestamp",
    "Last_SQL_Error_Timestamp", "Master_SSL_Crl", "Master_SSL_Crlpath", "Retrieved_Gtid_Set",
    "Executed_Gtid_Set", "Auto_Position", "Replicate_Rewrite_DB", "Channel_Name",
    "Master_TLS_Version", "Master_public_key_path", "Get_master_public_key", "Network_Namespace",
)  # fmt: skip

CHANGE_MASTER_WARNINGS = [
    (
        "Warning",
        1287,
        "'CHANGE MASTER' is deprecated and will be removed in a future release. "
        "Please use CHANGE REPLICATION SOURCE instead",
    ),
    (
        "Warning",
        1287,
        "'MASTER_HOST' is deprecated and will be removed in a future release. "
        "Please use SOURCE_HOST instead",
    ),
]

SHOW_SLAVE_STATUS_WARNING = (
    "Warning",
    1287,
    "'SHOW SLAVE STATUS' is deprecated and will be removed in a future release. "
    "Please use SHOW REPLICA STATUS instead",
)


# -- driver plumbing ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ServerError:
    """What a driver exposes of an ERR packet (pymysql does not keep the SQLSTATE)."""

    errno: int
    sqlstate: str | None
    message: str


def open_connection(
    driver: str, port: int, user: str = "root", password: str = ROOT_PASSWORD
) -> Any:
    if driver == "pymysql":
        return connect(port, user=user, password=password)
    return mysql.connector.connect(
        host="127.0.0.1",
        port=port,
        user=user,
        password=password,
        use_pure=True,
        autocommit=True,
    )


@contextmanager
def session(driver: str, port: int, **login: str) -> Iterator[Any]:
    """A connection and a buffered cursor on it; both closed on exit."""
    with closing(open_connection(driver, port, **login)) as conn:
        cursor = conn.cursor() if driver == "pymysql" else conn.cursor(buffered=True)
        with closing(cursor):
            yield cursor


def query(cursor: Any, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of one SELECT/SHOW."""
    cursor.execute(sql)
    names = [d[0] for d in cursor.description]
    return names, [tuple(row) for row in cursor.fetchall()]


def server_error(error: BaseException) -> ServerError:
    if isinstance(error, mysql.connector.Error):
        return ServerError(error.errno, error.sqlstate, error.msg)
    assert isinstance(error, pymysql.err.MySQLError), error
    errno, message = error.args
    return ServerError(errno, None, message)


def expect(driver: str, errno: int, sqlstate: str, message: str) -> ServerError:
    """The error a driver reports: pymysql drops the SQLSTATE, mysql-connector keeps it."""
    return ServerError(errno, None if driver == "pymysql" else sqlstate, message)


def failure(cursor: Any, sql: str) -> ServerError:
    with pytest.raises((pymysql.err.MySQLError, mysql.connector.Error)) as caught:
        cursor.execute(sql)
    return server_error(caught.value)


@pytest.fixture(params=DRIVERS)
def driver(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def _three_channels(cursor: Any) -> None:
    """c1 CSA with default workers, c2 CSA with 16 workers, c3 MTA (T79's shape)."""
    cursor.execute(CSA_CHANNEL)
    cursor.execute(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h2', SOURCE_AUTO_POSITION=1, "
        "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=16 "
        "FOR CHANNEL 'c2'"
    )
    cursor.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h3' FOR CHANNEL 'c3'")


# -- CHANGE REPLICATION SOURCE and performance_schema ------------------------------------------
def test_crst_csa_channel_then_pfs_where_and_order_by(server: int, driver: str) -> None:
    """T03/T79 (INT.0010/0016/0027/0038): one row per channel with its configured values."""
    with session(driver, server) as cur:
        _three_channels(cur)
        assert cur.warning_count == 0
        names, rows = query(
            cur,
            "SELECT CHANNEL_NAME, APPLIER_VERSION, APPLIER_WORKER_COUNT, "
            "APPLIER_EVENT_MEMORY_LIMIT FROM performance_schema.replication_applier_configuration "
            "ORDER BY CHANNEL_NAME DESC",
        )
        assert names == [
            "CHANNEL_NAME",
            "APPLIER_VERSION",
            "APPLIER_WORKER_COUNT",
            "APPLIER_EVENT_MEMORY_LIMIT",
        ]
        assert rows == [("c3", 1, 4, 0), ("c2", 2, 16, 0), ("c1", 2, 4, 0)]

        names, rows = query(
            cur,
            "SELECT CHANNEL_NAME, REQUIRE_ROW_FORMAT FROM "
            "performance_schema.replication_applier_configuration "
            "WHERE APPLIER_VERSION = 2 AND APPLIER_WORKER_COUNT > 4",
        )
        assert names == ["CHANNEL_NAME", "REQUIRE_ROW_FORMAT"]
        assert rows == [("c2", "YES")]


def test_pfs_aggregate_count_group_by_applier_version(server: int, driver: str) -> None:
    """T79: an aggregate over replication_applier_configuration counts channels per version."""
    with session(driver, server) as cur:
        _three_channels(cur)
        names, rows = query(
            cur,
            "SELECT APPLIER_VERSION, COUNT(*) FROM "
            "performance_schema.replication_applier_configuration "
            "GROUP BY APPLIER_VERSION ORDER BY APPLIER_VERSION",
        )
        assert names == ["APPLIER_VERSION", "COUNT(*)"]
        assert rows == [(1, 1), (2, 2)]

        names, rows = query(
            cur,
            "SELECT APPLIER_VERSION, COUNT(*) AS channels, SUM(APPLIER_WORKER_COUNT) AS workers "
            "FROM performance_schema.replication_applier_configuration "
            "GROUP BY APPLIER_VERSION ORDER BY channels DESC",
        )
        assert names == ["APPLIER_VERSION", "channels", "workers"]
        assert [(version, count, int(workers)) for version, count, workers in rows] == [
            (2, 2, 20),
            (1, 1, 4),
        ]


def test_pfs_join_relay_log_info_with_aliases(server: int, driver: str) -> None:
    """INT.0015/0016: PFS and mysql.slave_relay_log_info agree on each channel's version."""
    with session(driver, server) as cur:
        _three_channels(cur)
        names, rows = query(
            cur,
            "SELECT c.CHANNEL_NAME, c.APPLIER_VERSION, r.Applier_version AS Applier_version, "
            "r.Applier_worker_count AS Applier_worker_count "
            "FROM performance_schema.replication_applier_configuration AS c "
            "JOIN mysql.slave_relay_log_info AS r ON r.Channel_name = c.CHANNEL_NAME "
            "ORDER BY c.CHANNEL_NAME",
        )
        assert names == [
            "CHANNEL_NAME",
            "APPLIER_VERSION",
            "Applier_version",
            "Applier_worker_count",
        ]
        assert rows == [("c1", 2, 2, 4), ("c2", 2, 2, 16), ("c3", 1, 1, 4)]


def test_relay_log_info_columns_keep_mysql_case(server: int, driver: str) -> None:
    """INT.0015/0026/0037: the mysql.slave_relay_log_info columns as MySQL spells them."""
    with session(driver, server) as cur:
        _three_channels(cur)
        names, rows = query(
            cur,
            "SELECT Channel_name, Applier_version, Applier_worker_count, "
            "Applier_event_memory_limit FROM mysql.slave_relay_log_info ORDER BY Channel_name",
        )
        assert names == [
            "Channel_name",
            "Applier_version",
            "Applier_worker_count",
            "Applier_event_memory_limit",
        ]
        assert rows == [("c1", 2, 4, 0), ("c2", 2, 16, 0), ("c3", 1, 4, 0)]


def test_pfs_join_relay_log_info_qualified_columns_keep_their_table_case(
    server: int, driver: str
) -> None:
    """Unaliased columns of a JOIN keep the case of their own table's definition."""
    with session(driver, server) as cur:
        _three_channels(cur)
        names, rows = query(
            cur,
            "SELECT c.CHANNEL_NAME, r.Channel_name, r.Applier_version "
            "FROM performance_schema.replication_applier_configuration AS c "
            "JOIN mysql.slave_relay_log_info AS r ON r.Channel_name = c.CHANNEL_NAME "
            "ORDER BY c.CHANNEL_NAME",
        )
        assert rows == [("c1", "c1", 2), ("c2", "c2", 2), ("c3", "c3", 1)]
        assert names == ["CHANNEL_NAME", "Channel_name", "Applier_version"]


def test_star_over_a_join_keeps_each_tables_columns(server: int) -> None:
    """r.* over a JOIN gives mysql.slave_relay_log_info's own columns, names and types."""
    with session("pymysql", server) as cur:
        cur.execute(CSA_CHANNEL)
        own_names, own_rows = query(cur, "SELECT * FROM mysql.slave_relay_log_info")
        names, rows = query(
            cur,
            "SELECT r.* FROM performance_schema.replication_applier_configuration AS c "
            "JOIN mysql.slave_relay_log_info AS r ON r.Channel_name = c.CHANNEL_NAME",
        )
        assert rows == own_rows
        assert names == own_names


# -- errors --------------------------------------------------------------------------------------
ERRORS = [
    pytest.param(
        "STOP REPLICA FOR CHANNEL 'nope'",
        3074,
        "HY000",
        "Replica channel 'nope' does not exist.",
        id="unknown-channel-3074",
    ),
    pytest.param(
        "CHANGE REPLICATION SOURCE TO APPLIER_VERSION=3 FOR CHANNEL 'c1'",
        7500,
        "HY000",
        UNKNOWN_APPLIER_VERSION,
        id="T02-applier-version-3",
    ),
    pytest.param(
        "CHANGE REPLICATION SOURCE TO APPLIER_VERSION=0 FOR CHANNEL 'c1'",
        7500,
        "HY000",
        UNKNOWN_APPLIER_VERSION,
        id="T02-applier-version-0",
    ),
]


@pytest.mark.parametrize(("sql", "errno", "sqlstate", "message"), ERRORS)
def test_error_number_sqlstate_and_message(
    server: int, driver: str, sql: str, errno: int, sqlstate: str, message: str
) -> None:
    with session(driver, server) as cur:
        cur.execute(CSA_CHANNEL)
        assert failure(cur, sql) == expect(driver, errno, sqlstate, message)
        names, rows = query(cur, "SHOW WARNINGS")
        assert names == ["Level", "Code", "Message"]
        assert rows == [("Error", errno, message)]
        # T02: a rejected CRST changes nothing.
        _, rows = query(
            cur,
            "SELECT CHANNEL_NAME, APPLIER_VERSION FROM "
            "performance_schema.replication_applier_configuration",
        )
        assert rows == [("c1", 2)]


SYNTAX_ERROR_PREFIX = (
    "You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
    "server version for the right syntax to use near '"
)


def test_syntax_error_is_1064_42000(server: int, driver: str) -> None:
    """The 1064 text quotes the SQL from the first token MySQL rejects, without colour codes."""
    with session(driver, server) as cur:
        assert failure(cur, "SELEC 1") == expect(
            driver, 1064, "42000", SYNTAX_ERROR_PREFIX + "SELEC 1' at line 1"
        )
        _, rows = query(cur, "SELECT 1")
        assert rows == [(1,)]


def test_mysql_connector_error_classes_follow_sqlstate(server: int) -> None:
    """mysql-connector picks the exception class from the SQLSTATE the server sends."""
    with session("mysql-connector", server) as cur:
        with pytest.raises(mysql.connector.ProgrammingError) as syntax:
            cur.execute("SELEC 1")
        assert (syntax.value.errno, syntax.value.sqlstate) == (1064, "42000")
        with pytest.raises(mysql.connector.DatabaseError) as channel:
            cur.execute("STOP REPLICA FOR CHANNEL 'nope'")
        assert (channel.value.errno, channel.value.sqlstate) == (3074, "HY000")
        assert str(channel.value) == "3074 (HY000): Replica channel 'nope' does not exist."


# -- warnings ------------------------------------------------------------------------------------
def test_change_master_reports_deprecation_warnings(server: int, driver: str) -> None:
    """The OK packet of a deprecated CHANGE MASTER carries its warning count."""
    with session(driver, server) as cur:
        cur.execute("CHANGE MASTER TO MASTER_HOST='h'")
        assert cur.warning_count == 2
        names, rows = query(cur, "SHOW WARNINGS")
        assert names == ["Level", "Code", "Message"]
        assert rows == CHANGE_MASTER_WARNINGS
        _, rows = query(cur, "SELECT @@warning_count")
        assert rows == [(2,)]
        _, rows = query(cur, "SHOW REPLICA STATUS")
        assert rows[0][:2] == ("", "h")
        assert cur.warning_count == 0


def test_pymysql_show_warnings_helper(server: int) -> None:
    with closing(connect(server)) as conn, conn.cursor() as cur:
        cur.execute("CHANGE MASTER TO MASTER_HOST='h'")
        assert cur.warning_count == 2
        assert [tuple(w) for w in conn.show_warnings()] == CHANGE_MASTER_WARNINGS


def test_show_warnings_raises_no_warnings_of_its_own(server: int, driver: str) -> None:
    """SHOW WARNINGS keeps the list but reports 0 warnings itself, as MySQL does."""
    with session(driver, server) as cur:
        cur.execute("CHANGE MASTER TO MASTER_HOST='h'")
        assert cur.warning_count == 2
        _, rows = query(cur, "SHOW WARNINGS")
        assert rows == CHANGE_MASTER_WARNINGS
        assert cur.warning_count == 0
        _, rows = query(cur, "SHOW WARNINGS")
        assert rows == CHANGE_MASTER_WARNINGS


def _connector_with(server: int, **options: bool) -> Any:
    return mysql.connector.connect(
        host="127.0.0.1",
        port=server,
        user="root",
        password=ROOT_PASSWORD,
        use_pure=True,
        autocommit=True,
        **options,
    )


def test_mysql_connector_get_warnings(server: int) -> None:
    """get_warnings=True: the driver runs SHOW WARNINGS itself when the OK packet counts some."""
    with closing(_connector_with(server, get_warnings=True)) as conn:
        with closing(conn.cursor()) as cur:
            # The driver passes its own Warning object (not a Python Warning) to warnings.warn.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                cur.execute("CHANGE MASTER TO MASTER_HOST='h'")
            [warning] = caught
            assert warning.category is UserWarning
            reported = warning.message.args[0]
            assert isinstance(reported, mysql.connector.Warning)
            assert reported.args == CHANGE_MASTER_WARNINGS[0][1:]
            assert cur.warnings == CHANGE_MASTER_WARNINGS
            cur.execute(CSA_CHANNEL.replace("'c1'", "''"))
            assert cur.warnings is None


def test_mysql_connector_raise_on_warnings(server: int) -> None:
    with closing(_connector_with(server, raise_on_warnings=True)) as conn:
        with closing(conn.cursor()) as cur:
            with pytest.raises(mysql.connector.Error) as caught:
                cur.execute("CHANGE MASTER TO MASTER_HOST='h'")
            assert (caught.value.errno, caught.value.msg) == CHANGE_MASTER_WARNINGS[0][1:]
            cur.execute("SHOW REPLICA STATUS")
            assert [row[1] for row in cur.fetchall()] == ["h"]


def test_crst_without_channel_with_several_channels_is_3079(server: int, driver: str) -> None:
    with session(driver, server) as cur:
        _three_channels(cur)
        error = failure(cur, "CHANGE MASTER TO MASTER_HOST='h'")
        assert error == expect(
            driver,
            3079,
            "HY000",
            "Multiple channels exist on the replica. Please provide channel name as an argument.",
        )


# -- SHOW REPLICA STATUS / SHOW SLAVE STATUS ---------------------------------------------------
def test_show_replica_status_has_60_columns(server: int, driver: str) -> None:
    with session(driver, server) as cur:
        cur.execute(CSA_CHANNEL)
        names, rows = query(cur, "SHOW REPLICA STATUS")
        assert len(names) == 60
        assert tuple(names) == SHOW_REPLICA_STATUS_COLUMNS
        assert len(rows) == 1
        status = dict(zip(names, rows[0], strict=True))
        assert status["Source_Host"] == "h1"
        assert status["Source_Port"] == 3306
        assert status["Replica_IO_Running"] == "No"
        assert status["Replica_SQL_Running"] == "No"
        assert status["Auto_Position"] == 1
        assert status["Channel_Name"] == "c1"
        assert status["Seconds_Behind_Source"] is None
        assert cur.warning_count == 0


def test_show_slave_status_old_names_and_1287(server: int, driver: str) -> None:
    with session(driver, server) as cur:
        cur.execute(CSA_CHANNEL)
        names, rows = query(cur, "SHOW SLAVE STATUS FOR CHANNEL 'c1'")
        assert tuple(names) == SHOW_SLAVE_STATUS_COLUMNS
        status = dict(zip(names, rows[0], strict=True))
        assert status["Master_Host"] == "h1"
        assert status["Slave_SQL_Running"] == "No"
        assert cur.warning_count == 1
        _, warnings = query(cur, "SHOW WARNINGS")
        assert warnings == [SHOW_SLAVE_STATUS_WARNING]


def test_start_and_stop_replica_show_in_status(server: int, driver: str) -> None:
    """INT.0040/0050: START and STOP REPLICA through the driver change the reported state."""
    with session(driver, server) as cur:
        cur.execute(CSA_CHANNEL)
        cur.execute("START REPLICA FOR CHANNEL 'c1'")
        assert cur.warning_count == 0
        _, rows = query(
            cur,
            "SELECT CHANNEL_NAME, SERVICE_STATE FROM performance_schema.replication_applier_status",
        )
        assert rows == [("c1", "ON")]
        names, rows = query(cur, "SHOW REPLICA STATUS FOR CHANNEL 'c1'")
        assert dict(zip(names, rows[0], strict=True))["Replica_SQL_Running"] == "Yes"
        cur.execute("STOP REPLICA FOR CHANNEL 'c1'")
        names, rows = query(cur, "SHOW REPLICA STATUS FOR CHANNEL 'c1'")
        status = dict(zip(names, rows[0], strict=True))
        assert (status["Replica_IO_Running"], status["Replica_SQL_Running"]) == ("No", "No")


# -- system variables ----------------------------------------------------------------------------
def test_replica_parallel_workers_default_and_set_global(server: int, driver: str) -> None:
    """SV.replica_parallel_workers: default 4; SET GLOBAL is seen by new channels (T09)."""
    with session(driver, server) as cur:
        names, rows = query(cur, "SELECT @@global.replica_parallel_workers")
        assert names == ["@@global.replica_parallel_workers"]
        assert rows == [(4,)]
        cur.execute("SET GLOBAL replica_parallel_workers=6")
        assert cur.warning_count == 0
        _, rows = query(cur, "SELECT @@global.replica_parallel_workers")
        assert rows == [(6,)]
        cur.execute(CSA_CHANNEL)
        _, rows = query(
            cur,
            "SELECT APPLIER_WORKER_COUNT FROM performance_schema.replication_applier_configuration "
            "WHERE CHANNEL_NAME = 'c1'",
        )
        assert rows == [(6,)]
    with session(driver, server) as other:
        _, rows = query(other, "SELECT @@GLOBAL.replica_parallel_workers")
        assert rows == [(6,)]
        _, rows = query(other, "SHOW GLOBAL VARIABLES LIKE 'replica_parallel_workers'")
        assert rows == [("replica_parallel_workers", "6")]


# -- accounts ------------------------------------------------------------------------------------
def test_read_only_user_may_read_but_not_change(server: int, driver: str) -> None:
    with session(driver, server) as root:
        root.execute(CSA_CHANNEL)
    with session(driver, server, user="reader", password="reader-secret") as cur:
        assert failure(
            cur, "CHANGE REPLICATION SOURCE TO SOURCE_HOST='x' FOR CHANNEL 'c1'"
        ) == expect(
            driver,
            1227,
            "42000",
            "Access denied; you need (at least one of) the SUPER or REPLICATION_SLAVE_ADMIN "
            "privilege(s) for this operation",
        )
        assert failure(cur, "SET GLOBAL replica_parallel_workers=6") == expect(
            driver,
            1227,
            "42000",
            "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN "
            "privilege(s) for this operation",
        )
        _, rows = query(
            cur,
            "SELECT CHANNEL_NAME, APPLIER_VERSION FROM "
            "performance_schema.replication_applier_configuration",
        )
        assert rows == [("c1", 2)]
        names, rows = query(cur, "SHOW REPLICA STATUS")
        assert dict(zip(names, rows[0], strict=True))["Source_Host"] == "h1"
        _, rows = query(cur, "SELECT @@global.replica_parallel_workers")
        assert rows == [(4,)]


@pytest.mark.parametrize(
    ("user", "password", "message"),
    [
        pytest.param(
            "reader",
            "wrong",
            "Access denied for user 'reader'@'127.0.0.1' (using password: YES)",
            id="wrong-password",
        ),
        pytest.param(
            "root",
            "wrong",
            "Access denied for user 'root'@'127.0.0.1' (using password: YES)",
            id="wrong-root-password",
        ),
        pytest.param(
            "nobody",
            "secret",
            "Access denied for user 'nobody'@'127.0.0.1' (using password: YES)",
            id="unknown-user",
        ),
        pytest.param(
            "reader",
            "",
            "Access denied for user 'reader'@'127.0.0.1' (using password: NO)",
            id="no-password",
        ),
    ],
)
def test_login_refused_with_1045(
    server: int, driver: str, user: str, password: str, message: str
) -> None:
    with pytest.raises((pymysql.err.MySQLError, mysql.connector.Error)) as caught:
        open_connection(driver, server, user=user, password=password).close()
    assert server_error(caught.value) == expect(driver, 1045, "28000", message)


# -- prepared statements -------------------------------------------------------------------------
def test_mysql_connector_prepared_statement_on_pfs(server: int) -> None:
    with closing(open_connection("mysql-connector", server)) as conn:
        with closing(conn.cursor()) as cur:
            _three_channels(cur)
        with closing(conn.cursor(prepared=True)) as prepared:
            sql = (
                "SELECT CHANNEL_NAME, APPLIER_VERSION, APPLIER_WORKER_COUNT FROM "
                "performance_schema.replication_applier_configuration WHERE CHANNEL_NAME = %s"
            )
            prepared.execute(sql, ("c2",))
            assert [d[0] for d in prepared.description] == [
                "CHANNEL_NAME",
                "APPLIER_VERSION",
                "APPLIER_WORKER_COUNT",
            ]
            assert prepared.fetchall() == [("c2", 2, 16)]
            prepared.execute(sql, ("c3",))
            assert prepared.fetchall() == [("c3", 1, 4)]
            prepared.execute(sql, ("nope",))
            assert prepared.fetchall() == []

            prepared.execute(
                "SELECT CHANNEL_NAME FROM performance_schema.replication_applier_configuration "
                "WHERE APPLIER_VERSION = ? ORDER BY CHANNEL_NAME",
                (2,),
            )
            rows: Sequence[tuple[Any, ...]] = prepared.fetchall()
            assert rows == [("c1",), ("c2",)]
