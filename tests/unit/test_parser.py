"""The replication statement parser: every form of mysql-reference §4, its errors and warnings."""

from __future__ import annotations

import string
import time
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.errors import Diagnostic, ErrorCode, Level, ParseError, ReplicaError
from spark_replica.sql_handlers.parser.grammar import (
    ALL_OPTIONS,
    INTEGER_OPTIONS,
    LEGACY_OPTION_NAMES,
    STRING_OPTIONS,
    parse,
)
from spark_replica.sql_handlers.parser.statements import (
    BOTH_THREADS,
    Account,
    ChangeSource,
    ResetReplica,
    ShowReplicaStatus,
    StartReplica,
    StopReplica,
    ThreadType,
    Until,
    UntilKind,
)

SYNTAX = (
    "You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
    "server version for the right syntax to use"
)
UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def near(text: str, line: int = 1) -> str:
    return f"{SYNTAX} near '{text}' at line {line}"


def warning_1287(old: str, new: str) -> Diagnostic:
    return Diagnostic(
        Level.WARNING,
        1287,
        f"'{old}' is deprecated and will be removed in a future release. Please use {new} instead",
    )


def change(options: str, channel: str = "") -> ChangeSource:
    sql = f"CHANGE REPLICATION SOURCE TO {options}"
    if channel:
        sql += f" FOR CHANNEL '{channel}'"
    statement = parse(sql)
    assert isinstance(statement, ChangeSource)
    return statement


def error_of(sql: str) -> ReplicaError:
    with pytest.raises(ReplicaError) as caught:
        parse(sql)
    return caught.value


def start(sql: str) -> StartReplica:
    statement = parse(sql)
    assert isinstance(statement, StartReplica)
    return statement


# -- CHANGE REPLICATION SOURCE TO: value classes ----------------------------------------------


@pytest.mark.parametrize("option", sorted(STRING_OPTIONS - {"SOURCE_PASSWORD"}))
def test_string_options_take_quoted_strings(option: str) -> None:
    assert change(f"{option} = 'v a'").options == {option: "v a"}
    assert change(f'{option}="dq"').options == {option: "dq"}


@pytest.mark.parametrize("option", sorted(STRING_OPTIONS))
@pytest.mark.parametrize("value", ["42", "NULL", "abc"])
def test_string_options_refuse_other_literals(option: str, value: str) -> None:
    error = error_of(f"CHANGE REPLICATION SOURCE TO {option}={value}")
    assert (error.code, error.message) == (1064, near(value))


def test_string_escapes_are_unescaped() -> None:
    assert change(r"SOURCE_HOST='a\'b\nc'").options == {"SOURCE_HOST": "a'b\nc"}
    assert change("SOURCE_HOST='it''s'").options == {"SOURCE_HOST": "it's"}


def test_tls_ciphersuites_takes_null_or_string() -> None:
    assert change("SOURCE_TLS_CIPHERSUITES = NULL").options == {"SOURCE_TLS_CIPHERSUITES": None}
    assert change("SOURCE_TLS_CIPHERSUITES = 'TLS_AES_128_GCM_SHA256'").options == {
        "SOURCE_TLS_CIPHERSUITES": "TLS_AES_128_GCM_SHA256"
    }


@pytest.mark.parametrize(
    ("text", "account"),
    [
        ("'repl'@'10.0.0.%'", Account("repl", "10.0.0.%")),
        ("'repl'", Account("repl", "%")),
        ("`u`@`h`", Account("u", "h")),
        ("u@localhost", Account("u", "localhost")),
        ("'u'@localhost", Account("u", "localhost")),
        ("NULL", None),
    ],
)
def test_privilege_checks_user(text: str, account: Account | None) -> None:
    assert change(f"PRIVILEGE_CHECKS_USER = {text}").options == {"PRIVILEGE_CHECKS_USER": account}


@pytest.mark.parametrize("option", sorted(INTEGER_OPTIONS))
def test_integer_options_take_integers_and_hex(option: str) -> None:
    assert change(f"{option}=1").options == {option: 1}
    assert change(f"{option} = 0x1F").options == {option: 31}
    assert change(f"{option}=9223372036854775807").options == {option: 9223372036854775807}


@pytest.mark.parametrize("option", sorted(INTEGER_OPTIONS))
def test_integer_options_beyond_64_bit_signed_are_refused(option: str) -> None:
    """Metadata columns are 64-bit signed; a larger value is refused whole (1210)."""
    with pytest.raises(ReplicaError) as caught:
        change(f"{option}=9223372036854775808")
    assert caught.value.code == ErrorCode.WRONG_ARGUMENTS
    assert caught.value.message == f"Incorrect arguments to {option}"


def test_decimal_is_truncated_for_ulong_options() -> None:
    """sql_yacc.yy ulong_num: my_strtoll10 truncates (mysql-reference §4.1)."""
    assert change("SOURCE_PORT=3306.9").options == {"SOURCE_PORT": 3306}
    assert change("SOURCE_CONNECT_RETRY=.5").options == {"SOURCE_CONNECT_RETRY": 0}
    assert change("SOURCE_DELAY=10.").options == {"SOURCE_DELAY": 10}


def test_decimal_truncation_keeps_every_integer_digit() -> None:
    assert change("SOURCE_LOG_POS=9007199254740993.5").options == {
        "SOURCE_LOG_POS": 9007199254740993
    }


def test_huge_float_literal_does_not_crash() -> None:
    try:
        parse("CHANGE REPLICATION SOURCE TO SOURCE_PORT=1e999")
    except ReplicaError:
        pass


@pytest.mark.parametrize("option", ["GTID_ONLY", "SOURCE_CONNECTION_AUTO_FAILOVER"])
def test_real_ulong_options_refuse_decimals_with_1578(option: str) -> None:
    error = error_of(f"CHANGE REPLICATION SOURCE TO {option}=1.5")
    assert isinstance(error, ParseError)
    assert (error.code, error.sqlstate) == (1578, "HY000")
    assert error.message == "Only integers allowed as number here"


@pytest.mark.parametrize("option", ["GTID_ONLY", "SOURCE_CONNECTION_AUTO_FAILOVER"])
@pytest.mark.parametrize("value", [0, 1])
def test_real_ulong_options_take_zero_and_one(option: str, value: int) -> None:
    assert change(f"{option}={value}").options == {option: value}
    assert change(f"{option}=0x{value}").options == {option: value}


def test_gtid_only_2_is_the_special_1064() -> None:
    error = error_of("CHANGE REPLICATION SOURCE TO GTID_ONLY=2")
    assert isinstance(error, ParseError)
    assert (error.code, error.sqlstate) == (1064, "42000")
    assert error.message == (
        "You have an error in your CHANGE REPLICATION SOURCE syntax; GTID_ONLY only accepts "
        "values 0 or 1"
    )


def test_auto_failover_2_is_a_plain_1064() -> None:
    error = error_of("CHANGE REPLICATION SOURCE TO SOURCE_CONNECTION_AUTO_FAILOVER=2")
    assert (error.code, error.message) == (1064, near("2"))


@pytest.mark.parametrize(
    "option", ["SOURCE_PORT", "SOURCE_DELAY", "GTID_ONLY", "SOURCE_HEARTBEAT_PERIOD"]
)
def test_negative_numbers_are_1064(option: str) -> None:
    error = error_of(f"CHANGE REPLICATION SOURCE TO {option}=-1")
    assert isinstance(error, ParseError)
    assert (error.code, error.message) == (1064, near("-1"))


@pytest.mark.parametrize(
    "option", ["SOURCE_PORT", "SOURCE_LOG_POS", "GTID_ONLY", "SOURCE_HEARTBEAT_PERIOD"]
)
def test_quoted_numbers_are_1064(option: str) -> None:
    error = error_of(f"CHANGE REPLICATION SOURCE TO {option}='3306'")
    assert (error.code, error.message) == (1064, near("'3306'"))


@pytest.mark.parametrize(
    ("text", "value"),
    [("0", 0.0), ("30", 30.0), ("0.5", 0.5), ("1.25", 1.25), ("1e3", 1000.0), (".001", 0.001)],
)
def test_heartbeat_takes_decimals(text: str, value: float) -> None:
    options = change(f"SOURCE_HEARTBEAT_PERIOD={text}").options
    assert options == {"SOURCE_HEARTBEAT_PERIOD": value}
    assert type(options["SOURCE_HEARTBEAT_PERIOD"]) is float


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("()", ()),
        ("( )", ()),
        ("(5)", (5,)),
        ("(3, 1, 2)", (1, 2, 3)),
        ("(2,2,1)", (1, 2)),
        ("(0x10)", (16,)),
    ],
)
def test_ignore_server_ids(text: str, ids: tuple[int, ...]) -> None:
    assert change(f"IGNORE_SERVER_IDS = {text}").options == {"IGNORE_SERVER_IDS": ids}


@pytest.mark.parametrize(
    ("text", "rest"),
    [("5", "5"), ("(1,)", ")"), ("(1 2)", "2)"), ("('1')", "'1')"), ("(1", "")],
)
def test_ignore_server_ids_syntax_errors(text: str, rest: str) -> None:
    error = error_of(f"CHANGE REPLICATION SOURCE TO IGNORE_SERVER_IDS={text}")
    assert (error.code, error.message) == (1064, near(rest))


@pytest.mark.parametrize("word", ["STREAM", "ON", "OFF", "GENERATE"])
def test_require_table_primary_key_check_keywords(word: str) -> None:
    assert change(f"REQUIRE_TABLE_PRIMARY_KEY_CHECK = {word.lower()}").options == {
        "REQUIRE_TABLE_PRIMARY_KEY_CHECK": word
    }


def test_require_table_primary_key_check_refuses_strings() -> None:
    error = error_of("CHANGE REPLICATION SOURCE TO REQUIRE_TABLE_PRIMARY_KEY_CHECK='ON'")
    assert (error.code, error.message) == (1064, near("'ON'"))


@pytest.mark.parametrize(
    ("text", "value"), [("OFF", "OFF"), ("local", "LOCAL"), (f"'{UUID}'", UUID), ("'x'", "x")]
)
def test_assign_gtids_to_anonymous_transactions(text: str, value: str) -> None:
    assert change(f"ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS = {text}").options == {
        "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS": value
    }


def test_repeated_option_last_wins_and_moves_last() -> None:
    statement = change("SOURCE_HOST='a', SOURCE_PORT=1, SOURCE_HOST='b'")
    assert statement.options == {"SOURCE_PORT": 1, "SOURCE_HOST": "b"}
    assert list(statement.options) == ["SOURCE_PORT", "SOURCE_HOST"]


def test_options_keep_statement_order() -> None:
    statement = change("SOURCE_USER='u', SOURCE_HOST='h', SOURCE_PORT=3307, GTID_ONLY=1")
    assert list(statement.options) == ["SOURCE_USER", "SOURCE_HOST", "SOURCE_PORT", "GTID_ONLY"]
    assert statement.channel is None
    assert statement.warnings == []


def test_password_of_32_characters_is_accepted() -> None:
    assert change(f"SOURCE_PASSWORD='{'p' * 32}'").options == {"SOURCE_PASSWORD": "p" * 32}


def test_password_longer_than_32_characters_is_3056() -> None:
    error = error_of(f"CHANGE REPLICATION SOURCE TO SOURCE_PASSWORD='{'p' * 33}'")
    assert (error.code, error.sqlstate) == (3056, "HY000")
    assert error.message == (
        "The password provided for the replication user exceeds the maximum length of 32 characters"
    )


def test_host_of_255_bytes_is_accepted() -> None:
    host = "h" * 253 + "é"  # 255 bytes in UTF-8
    assert change(f"SOURCE_HOST='{host}'").options == {"SOURCE_HOST": host}


def test_host_longer_than_255_bytes_is_1470_quoting_70_bytes() -> None:
    error = error_of(f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='{'h' * 300}'")
    assert (error.code, error.sqlstate) == (1470, "HY000")
    assert error.message == (
        f"String '{'h' * 70}' is too long for host name (should be no longer than 255)"
    )
    multibyte = error_of(f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='x{'é' * 128}'")
    assert multibyte.code == 1470  # 257 bytes; the quote stops before a character cut in two
    assert multibyte.message.startswith(f"String 'x{'é' * 34}' is too long for host name")


def test_host_with_an_at_sign_is_malformed() -> None:
    error = error_of("CHANGE REPLICATION SOURCE TO SOURCE_HOST='repl@db1'")
    assert (error.code, error.sqlstate) == (1105, "HY000")
    assert error.message == "Malformed hostname (illegal symbol: '@')"


def test_for_channel_is_lower_cased() -> None:
    assert change("SOURCE_HOST='h'", channel="Shop_EU").channel == "shop_eu"
    statement = parse("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL \"C2\"")
    assert isinstance(statement, ChangeSource)
    assert statement.channel == "c2"
    assert change("SOURCE_HOST='h' FOR CHANNEL ''").channel == ""


def test_for_channel_refuses_a_newline_with_1210() -> None:
    error = error_of("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL 'a\\nb'")
    assert (error.code, error.message) == (1210, "Incorrect arguments to CHANNEL")


@pytest.mark.parametrize(
    ("sql", "rest"),
    [
        ("CHANGE REPLICATION SOURCE TO", ""),
        ("CHANGE REPLICATION SOURCE TO FOO=1", "FOO=1"),
        ("CHANGE REPLICATION SOURCE TO SOURCE_HOST", ""),
        ("CHANGE REPLICATION SOURCE TO SOURCE_HOST 'h'", "'h'"),
        ("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h',", ""),
        ("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' SOURCE_PORT=1", "SOURCE_PORT=1"),
        ("CHANGE REPLICATION SOURCE SOURCE_HOST='h'", "SOURCE_HOST='h'"),
        ("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL c1", "c1"),
        ("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR 'c1'", "'c1'"),
        ("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' extra", "extra"),
        ("CHANGE MASTER TO MASTER_CONNECTION_AUTO_FAILOVER=1", "MASTER_CONNECTION_AUTO_FAILOVER=1"),
        ("CHANGE REPLICATION SOURCE TO SOURCE_HOST=NULL", "NULL"),
        ("CHANGE REPLICATION SOURCE TO PRIVILEGE_CHECKS_USER='u'@", ""),
    ],
)
def test_change_source_syntax_errors(sql: str, rest: str) -> None:
    error = error_of(sql)
    assert isinstance(error, ParseError)
    assert (error.code, error.sqlstate, error.message) == (1064, "42000", near(rest))


def test_every_option_is_recognised() -> None:
    samples = {
        "SOURCE_HEARTBEAT_PERIOD": "1",
        "REQUIRE_TABLE_PRIMARY_KEY_CHECK": "ON",
        "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS": "OFF",
        "IGNORE_SERVER_IDS": "()",
        "PRIVILEGE_CHECKS_USER": "NULL",
        "SOURCE_TLS_CIPHERSUITES": "NULL",
        "GTID_ONLY": "1",
        "SOURCE_CONNECTION_AUTO_FAILOVER": "0",
    }
    for option in sorted(ALL_OPTIONS):
        value = samples.get(option, "'x'" if option in STRING_OPTIONS else "1")
        assert list(change(f"{option}={value}").options) == [option]


# -- CHANGE MASTER TO and the MASTER_* names ---------------------------------------------------


def test_change_master_to_warns_1287() -> None:
    statement = parse("CHANGE MASTER TO SOURCE_HOST='h'")
    assert isinstance(statement, ChangeSource)
    assert statement.options == {"SOURCE_HOST": "h"}
    assert statement.warnings == [warning_1287("CHANGE MASTER", "CHANGE REPLICATION SOURCE")]


def test_change_master_with_master_names_maps_and_warns_in_order() -> None:
    statement = parse(
        "CHANGE MASTER TO MASTER_HOST='h', MASTER_PORT=3307, MASTER_LOG_FILE='b.1', "
        "MASTER_LOG_POS=4, MASTER_HEARTBEAT_PERIOD=0.5 FOR CHANNEL 'C1'"
    )
    assert isinstance(statement, ChangeSource)
    assert statement.options == {
        "SOURCE_HOST": "h",
        "SOURCE_PORT": 3307,
        "SOURCE_LOG_FILE": "b.1",
        "SOURCE_LOG_POS": 4,
        "SOURCE_HEARTBEAT_PERIOD": 0.5,
    }
    assert statement.channel == "c1"
    assert statement.warnings == [
        warning_1287("CHANGE MASTER", "CHANGE REPLICATION SOURCE"),
        warning_1287("MASTER_HOST", "SOURCE_HOST"),
        warning_1287("MASTER_PORT", "SOURCE_PORT"),
        warning_1287("MASTER_LOG_FILE", "SOURCE_LOG_FILE"),
        warning_1287("MASTER_LOG_POS", "SOURCE_LOG_POS"),
        warning_1287("MASTER_HEARTBEAT_PERIOD", "SOURCE_HEARTBEAT_PERIOD"),
    ]


@pytest.mark.parametrize(("old", "new"), sorted(LEGACY_OPTION_NAMES.items()))
def test_every_master_option_name_maps_to_its_source_name(old: str, new: str) -> None:
    value = {
        "SOURCE_HEARTBEAT_PERIOD": "1",
        "SOURCE_TLS_CIPHERSUITES": "NULL",
    }.get(new, "'x'" if new in STRING_OPTIONS else "1")
    statement = change(f"{old.lower()}={value}")
    assert list(statement.options) == [new]
    assert statement.warnings == [warning_1287(old, new)]


def test_legacy_names_cover_the_mysql_spellings() -> None:
    assert LEGACY_OPTION_NAMES["MASTER_HOST"] == "SOURCE_HOST"
    assert LEGACY_OPTION_NAMES["GET_MASTER_PUBLIC_KEY"] == "GET_SOURCE_PUBLIC_KEY"
    assert LEGACY_OPTION_NAMES["MASTER_SSL_VERIFY_SERVER_CERT"] == "SOURCE_SSL_VERIFY_SERVER_CERT"
    assert "MASTER_CONNECTION_AUTO_FAILOVER" not in LEGACY_OPTION_NAMES
    assert all(old.replace("MASTER", "SOURCE") == new for old, new in LEGACY_OPTION_NAMES.items())


# -- START REPLICA ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("clause", "threads"),
    [
        ("", BOTH_THREADS),
        ("SQL_THREAD", frozenset({ThreadType.SQL})),
        ("IO_THREAD", frozenset({ThreadType.IO})),
        ("RELAY_THREAD", frozenset({ThreadType.IO})),
        ("IO_THREAD, SQL_THREAD", BOTH_THREADS),
        ("sql_thread , relay_thread", BOTH_THREADS),
        ("SQL_THREAD, SQL_THREAD", frozenset({ThreadType.SQL})),
    ],
)
def test_start_replica_thread_types(clause: str, threads: frozenset[ThreadType]) -> None:
    assert start(f"START REPLICA {clause}") == StartReplica(
        threads, None, None, None, None, None, None, []
    )


def test_start_slave_warns_1287() -> None:
    statement = start("START SLAVE IO_THREAD FOR CHANNEL 'X'")
    assert statement.threads == frozenset({ThreadType.IO})
    assert statement.channel == "x"
    assert statement.warnings == [warning_1287("START SLAVE", "START REPLICA")]


@pytest.mark.parametrize(
    ("clause", "until"),
    [
        (f"SQL_BEFORE_GTIDS='{UUID}:1-5'", Until(UntilKind.SQL_BEFORE_GTIDS, gtids=f"{UUID}:1-5")),
        (f"SQL_AFTER_GTIDS = '{UUID}:3'", Until(UntilKind.SQL_AFTER_GTIDS, gtids=f"{UUID}:3")),
        ("SQL_AFTER_MTS_GAPS", Until(UntilKind.SQL_AFTER_MTS_GAPS)),
        (
            "SOURCE_LOG_FILE='binlog.000002', SOURCE_LOG_POS=1234",
            Until(UntilKind.SOURCE_POS, log_file="binlog.000002", log_pos=1234),
        ),
        (
            "SOURCE_LOG_POS=4, SOURCE_LOG_FILE='b.1'",
            Until(UntilKind.SOURCE_POS, log_file="b.1", log_pos=4),
        ),
        (
            "RELAY_LOG_FILE='relay.000003', RELAY_LOG_POS=0x10",
            Until(UntilKind.RELAY_POS, log_file="relay.000003", log_pos=16),
        ),
    ],
)
def test_start_replica_until_forms(clause: str, until: Until) -> None:
    statement = start(f"START REPLICA SQL_THREAD UNTIL {clause} FOR CHANNEL 'c1'")
    assert statement.until == until
    assert statement.threads == frozenset({ThreadType.SQL})
    assert statement.channel == "c1"
    assert statement.warnings == []


def test_start_replica_until_master_names_warn() -> None:
    statement = start("START REPLICA UNTIL MASTER_LOG_FILE='b.1', MASTER_LOG_POS=100")
    assert statement.until == Until(UntilKind.SOURCE_POS, log_file="b.1", log_pos=100)
    assert statement.warnings == [
        warning_1287("MASTER_LOG_FILE", "SOURCE_LOG_FILE"),
        warning_1287("MASTER_LOG_POS", "SOURCE_LOG_POS"),
    ]


@pytest.mark.parametrize(
    "clause",
    [
        "SOURCE_LOG_FILE='b.1'",
        "SOURCE_LOG_POS=4",
        "RELAY_LOG_FILE='r.1'",
        "RELAY_LOG_POS=4",
        "SOURCE_LOG_FILE='b.1', RELAY_LOG_POS=4",
        "RELAY_LOG_FILE='r.1', SOURCE_LOG_POS=4",
        "SQL_BEFORE_GTIDS='a', SQL_AFTER_GTIDS='b'",
        "SQL_AFTER_MTS_GAPS, SQL_AFTER_GTIDS='a'",
        "SQL_BEFORE_GTIDS='a', SOURCE_LOG_FILE='b.1', SOURCE_LOG_POS=4",
        "SOURCE_LOG_FILE='b.1', SOURCE_LOG_POS=4, SQL_AFTER_MTS_GAPS",
        "SOURCE_LOG_FILE='b.1', SOURCE_LOG_POS=4, RELAY_LOG_FILE='r.1', RELAY_LOG_POS=4",
    ],
)
def test_bad_until_combinations_are_1277(clause: str) -> None:
    error = error_of(f"START REPLICA UNTIL {clause}")
    assert (error.code, error.sqlstate) == (1277, "HY000")
    assert error.message == (
        "Incorrect parameter or combination of parameters for START REPLICA UNTIL"
    )


@pytest.mark.parametrize(
    ("clause", "rest"),
    [
        ("", ""),
        ("SQL_AFTER_GTIDS", ""),
        ("SQL_AFTER_GTIDS=5", "5"),
        ("SOURCE_LOG_POS='4', SOURCE_LOG_FILE='b'", "'4', SOURCE_LOG_FILE='b'"),
        ("FOO=1", "FOO=1"),
    ],
)
def test_until_syntax_errors(clause: str, rest: str) -> None:
    error = error_of(f"START REPLICA UNTIL {clause}")
    assert (error.code, error.message) == (1064, near(rest))


def test_start_replica_authentication_options() -> None:
    statement = start(
        "START REPLICA USER='repl' PASSWORD='secret' DEFAULT_AUTH='caching_sha2_password' "
        "PLUGIN_DIR='/usr/lib/plugin' FOR CHANNEL 'Shop'"
    )
    assert statement == StartReplica(
        BOTH_THREADS,
        None,
        "repl",
        "secret",
        "caching_sha2_password",
        "/usr/lib/plugin",
        "shop",
        [],
    )


def test_start_replica_until_then_authentication() -> None:
    statement = start(
        f"START REPLICA IO_THREAD, SQL_THREAD UNTIL SQL_AFTER_GTIDS='{UUID}:1' USER='u'"
    )
    assert statement.until == Until(UntilKind.SQL_AFTER_GTIDS, gtids=f"{UUID}:1")
    assert statement.user == "u"
    assert statement.password is None


@pytest.mark.parametrize(
    "clause", ["USER='u'", "PASSWORD='p'", "DEFAULT_AUTH='a'", "PLUGIN_DIR='d'"]
)
def test_authentication_with_sql_thread_only_is_1763(clause: str) -> None:
    error = error_of(f"START REPLICA SQL_THREAD {clause}")
    assert (error.code, error.sqlstate) == (1763, "HY000")
    assert error.message == (
        "Setting authentication options is not possible when only the Replica SQL Thread is "
        "being started."
    )


@pytest.mark.parametrize("threads", ["IO_THREAD", "SQL_THREAD, IO_THREAD", ""])
def test_authentication_with_receiver_is_accepted(threads: str) -> None:
    assert start(f"START REPLICA {threads} USER='u'").user == "u"


@pytest.mark.parametrize(
    ("sql", "rest"),
    [
        ("START REPLICA SQL_THREAD,", ""),
        ("START REPLICA SQL_THREAD IO_THREAD", "IO_THREAD"),
        ("START REPLICA USER=u", "u"),
        ("START REPLICA USER 'u'", "'u'"),
        ("START REPLICA FOR CHANNEL", ""),
        ("START REPLICA ALL", "ALL"),
    ],
)
def test_start_replica_syntax_errors(sql: str, rest: str) -> None:
    error = error_of(sql)
    assert (error.code, error.message) == (1064, near(rest))


# -- STOP / RESET / SHOW ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "statement"),
    [
        ("STOP REPLICA", StopReplica(BOTH_THREADS, None, [])),
        ("STOP REPLICA SQL_THREAD", StopReplica(frozenset({ThreadType.SQL}), None, [])),
        (
            "stop replica io_thread for channel 'C1'",
            StopReplica(frozenset({ThreadType.IO}), "c1", []),
        ),
        ("STOP REPLICA RELAY_THREAD, SQL_THREAD", StopReplica(BOTH_THREADS, None, [])),
        (
            "STOP SLAVE",
            StopReplica(BOTH_THREADS, None, [warning_1287("STOP SLAVE", "STOP REPLICA")]),
        ),
        ("RESET REPLICA", ResetReplica(False, None, [])),
        ("RESET REPLICA ALL", ResetReplica(True, None, [])),
        ("RESET REPLICA FOR CHANNEL 'A'", ResetReplica(False, "a", [])),
        ("RESET REPLICA ALL FOR CHANNEL 'a'", ResetReplica(True, "a", [])),
        (
            "RESET SLAVE ALL",
            ResetReplica(True, None, [warning_1287("RESET SLAVE", "RESET REPLICA")]),
        ),
        ("SHOW REPLICA STATUS", ShowReplicaStatus(None, False, [])),
        ("show replica status for channel 'Ab'", ShowReplicaStatus("ab", False, [])),
        (
            "SHOW SLAVE STATUS",
            ShowReplicaStatus(
                None, True, [warning_1287("SHOW SLAVE STATUS", "SHOW REPLICA STATUS")]
            ),
        ),
        (
            "SHOW SLAVE STATUS FOR CHANNEL 'c'",
            ShowReplicaStatus(
                "c", True, [warning_1287("SHOW SLAVE STATUS", "SHOW REPLICA STATUS")]
            ),
        ),
    ],
)
def test_stop_reset_show(sql: str, statement: object) -> None:
    assert parse(sql) == statement


@pytest.mark.parametrize(
    ("sql", "rest"),
    [
        ("STOP REPLICA ALL", "ALL"),
        ("STOP REPLICA UNTIL SQL_AFTER_MTS_GAPS", "UNTIL SQL_AFTER_MTS_GAPS"),
        ("RESET REPLICA SQL_THREAD", "SQL_THREAD"),
        ("RESET REPLICA ALL ALL", "ALL"),
        ("SHOW REPLICA STATUS LIKE 'x'", "LIKE 'x'"),
        ("SHOW REPLICA STATUS FOR CHANNEL", ""),
    ],
)
def test_stop_reset_show_syntax_errors(sql: str, rest: str) -> None:
    error = error_of(sql)
    assert (error.code, error.message) == (1064, near(rest))


# -- comments, terminators, white space -------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "START REPLICA;",
        "START REPLICA ;  ",
        "  \n\tSTART REPLICA",
        "/* leading */ START REPLICA",
        "START /* inner */ REPLICA",
        "START REPLICA /* trailing */",
        "# comment line\nSTART REPLICA",
        "START REPLICA # trailing comment",
        "START REPLICA -- trailing comment",
        "-- leading comment\nSTART REPLICA",
        "START\nREPLICA\n;",
        "/* multi\nline */ START REPLICA",
    ],
)
def test_comments_and_terminator(sql: str) -> None:
    assert parse(sql) == StartReplica(BOTH_THREADS, None, None, None, None, None, None, [])


def test_double_dash_without_space_is_not_a_comment() -> None:
    error = error_of("START REPLICA --x")
    assert (error.code, error.message) == (1064, near("--x"))


def test_text_after_terminator_is_1064() -> None:
    error = error_of("START REPLICA; STOP REPLICA")
    assert (error.code, error.message) == (1064, near("STOP REPLICA"))


def test_comment_inside_options() -> None:
    statement = change("SOURCE_HOST /* h */ = 'h', -- next\nSOURCE_PORT = 3307 # end")
    assert statement.options == {"SOURCE_HOST": "h", "SOURCE_PORT": 3307}


# -- the 1064 message shape -------------------------------------------------------------------


def test_1064_quotes_the_statement_from_the_offending_token_on() -> None:
    error = error_of("START REPLICA FOR CHANNEL c1 now")
    assert error.message == near("c1 now")


def test_1064_keeps_the_original_spelling_of_the_rest() -> None:
    error = error_of("start replica bogus_Word 'MiXed'")
    assert error.message == near("bogus_Word 'MiXed'")


def test_1064_reports_the_line_of_the_offending_token() -> None:
    sql = "CHANGE REPLICATION SOURCE TO\n  SOURCE_HOST='h',\n  SOURCE_PORT=\n  oops,\n  x=1"
    error = error_of(sql)
    assert error.message == near("oops,\n  x=1", line=4)


def test_1064_line_counts_newlines_inside_comments_and_strings() -> None:
    sql = "/* one\ntwo */ CHANGE REPLICATION SOURCE TO SOURCE_HOST='a\nb'\nBAD"
    error = error_of(sql)
    assert error.message == near("BAD", line=4)


def test_1064_at_end_of_a_multi_line_statement() -> None:
    error = error_of("START REPLICA\nFOR CHANNEL\n")
    assert error.message == near("", line=3)


def test_1064_near_text_is_cut_at_80_characters() -> None:
    rest = "X" * 50 + " " + "Y" * 50
    error = error_of(f"START REPLICA {rest}")
    assert error.message == near(rest[:80])


# -- statements that are not replication statements -------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "SHOW TABLES",
        "SET x=1",
        "START TRANSACTION",
        "BEGIN",
        "COMMIT",
        "STOP",
        "START",
        "",
        "   ",
        "-- only a comment",
        "SHOW REPLICAS",
        "SHOW REPLICA",
        "SHOW STATUS",
        "SHOW SLAVE HOSTS",
        "CHANGE",
        "RESET MASTER",
        "START GROUP_REPLICATION",
        "select * from performance_schema.replication_applier_status",
    ],
)
def test_other_statements_return_none(sql: str) -> None:
    assert parse(sql) is None


@pytest.mark.parametrize(
    ("sql", "rest"),
    [("START REPLICA /* open", "/* open"), ("START REPLICA FOR CHANNEL 'c1", "'c1")],
)
def test_unterminated_comment_or_string_in_replication_statement_is_1064(
    sql: str, rest: str
) -> None:
    error = error_of(sql)
    assert (error.code, error.message) == (1064, near(rest))


@pytest.mark.parametrize(
    "sql",
    [
        "CHANGE REPLICATION SOURCE TO SOURCE_PORT=²",
        "CHANGE REPLICATION SOURCE TO SOURCE_HEARTBEAT_PERIOD=²",
        "START REPLICA UNTIL SOURCE_LOG_FILE='f', SOURCE_LOG_POS=²",
    ],
)
def test_non_ascii_digits_are_a_syntax_error(sql: str) -> None:
    error = error_of(sql)
    assert (error.code, error.message) == (1064, near("²"))


# -- robustness -------------------------------------------------------------------------------

_HEADS = [
    "",
    "CHANGE REPLICATION SOURCE TO ",
    "CHANGE MASTER TO ",
    "START REPLICA ",
    "START SLAVE UNTIL ",
    "STOP REPLICA ",
    "RESET REPLICA ",
    "SHOW REPLICA STATUS ",
]
_FRAGMENTS = [
    "SOURCE_HOST",
    "SOURCE_PORT",
    "GTID_ONLY",
    "SOURCE_HEARTBEAT_PERIOD",
    "IGNORE_SERVER_IDS",
    "PRIVILEGE_CHECKS_USER",
    "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS",
    "REQUIRE_TABLE_PRIMARY_KEY_CHECK",
    "MASTER_LOG_FILE",
    "SOURCE_LOG_POS",
    "SQL_AFTER_GTIDS",
    "SQL_THREAD",
    "USER",
    "FOR",
    "CHANNEL",
    "UNTIL",
    "NULL",
    "ON",
    "=",
    ",",
    "(",
    ")",
    "@",
    ";",
    "-",
    "'x'",
    '"y"',
    "`z`",
    "1",
    "2",
    "1.5",
    "0x1F",
    "/*",
    "*/",
    "#",
    "-- ",
    "\n",
]
_printable = st.text(alphabet=string.printable, max_size=40)
_statements = st.builds(
    lambda head, parts: head + " ".join(parts),
    st.sampled_from(_HEADS),
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), _printable), max_size=10),
)


@pytest.mark.timeout(120)
@settings(
    max_examples=400,
    deadline=timedelta(seconds=2),
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.one_of(_printable, _statements))
def test_random_text_only_raises_replica_errors(sql: str) -> None:
    try:
        result = parse(sql)
    except ReplicaError:
        return
    assert result is None or isinstance(
        result, ChangeSource | StartReplica | StopReplica | ResetReplica | ShowReplicaStatus
    )


def test_long_statements_parse_in_linear_time() -> None:
    ids = ",".join(str(i) for i in range(10_000))
    sql = f"CHANGE REPLICATION SOURCE TO IGNORE_SERVER_IDS=({ids}) /* {'c' * 50_000} */"
    begin = time.perf_counter()
    statement = change(sql.removeprefix("CHANGE REPLICATION SOURCE TO "))
    assert statement.options["IGNORE_SERVER_IDS"] == tuple(range(10_000))
    with pytest.raises(ReplicaError):
        parse("START REPLICA " + "(" * 20_000)
    assert time.perf_counter() - begin < 5
