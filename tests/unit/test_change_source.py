"""CHANGE REPLICATION SOURCE TO validation at the core level (requirements §11.1, T02-T31).

``change_source`` is pure: a statement, the channel's current configuration and the
environment in, the new configuration and its warnings (or the first failing check) out.
"""

from __future__ import annotations

from dataclasses import astuple, replace

import pytest

from spark_replica.applier_core.channels.config import (
    AnonymousGtids,
    ApplierSettings,
    ApplierVersion,
    ChannelConfig,
    PrimaryKeyCheck,
    SourceConnection,
)
from spark_replica.applier_core.errors import Diagnostic, Level, ReplicaError
from spark_replica.sql_handlers.parser.grammar import parse
from spark_replica.sql_handlers.parser.statements import ChangeSource
from spark_replica.sql_handlers.replication.change_source import (
    Environment,
    Outcome,
    change_source,
)

PACKET = 1073741824
UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
ENV = Environment(
    io_running=False,
    sql_running=False,
    gtid_mode="ON",
    replica_net_timeout=60,
    replica_max_allowed_packet=PACKET,
    client_uses_tls=True,
)

#: A channel created with only SOURCE_HOST: version 1 (MTA), no CSA prerequisites.
MTA = ChannelConfig("c1", SourceConnection(host="h"), ApplierSettings())
#: An MTA channel that meets every CSA prerequisite.
READY = ChannelConfig(
    "c1",
    SourceConnection(host="h", auto_position=True, gtid_only=True),
    ApplierSettings(require_row_format=True),
)
#: A valid Change Stream Applier channel.
CSA = replace(READY, applier=replace(READY.applier, applier_version=ApplierVersion.CSA))
#: READY with SOURCE_DELAY=10.
DELAYED = replace(READY, applier=replace(READY.applier, sql_delay=10))

MSG_7500 = (
    "Invalid applier version specified in CHANGE REPLICATION SOURCE TO command. Refer to "
    "documentation for supported versions."
)
MSG_7501 = "Coordinator thread count out of bounds. Please specify a value between 1 and 1024."
MSG_7502 = "Applier worker count can only be configured when using CSA applier version."
MSG_7503 = "Applier event memory limit can only be configured when using CSA applier version."
MSG_7504 = (
    "Applier event memory limit out of bounds. Actual limit has been set to the max_allowed_packet."
)
MSG_7506 = (
    "The Change Stream Applier does not currently support the SOURCE_DELAY option of the "
    "CHANGE REPLICATION SOURCE TO command. Please unset SOURCE_DELAY when using CSA."
)
MSG_7507 = (
    "The Change Stream Applier currently supports row-based replication. Please set "
    "REQUIRE_ROW_FORMAT to 1 when using CSA."
)
MSG_7508 = (
    "The Change Stream Applier currently supports row-based replication with GTIDs. Please set "
    "GTID_ONLY to 1 when using CSA."
)
MSG_3085 = (
    "This operation cannot be performed with a running replica sql thread; run STOP REPLICA "
    "SQL_THREAD FOR CHANNEL 'c1' first."
)
MSG_3021 = (
    "This operation cannot be performed with a running replica io thread; run STOP REPLICA "
    "IO_THREAD FOR CHANNEL 'c1' first."
)
MSG_3081 = (
    "This operation cannot be performed with running replication threads; run STOP REPLICA "
    "FOR CHANNEL 'c1' first"
)
NOTE_1759 = Diagnostic(
    Level.NOTE, 1759, "Sending passwords in plain text without SSL/TLS is extremely insecure."
)
NOTE_1760 = Diagnostic(
    Level.NOTE,
    1760,
    "Storing MySQL user name or password information in the connection metadata repository is "
    "not secure and is therefore not recommended. Please consider using the USER and PASSWORD "
    "connection options for START REPLICA; see the 'START REPLICA Syntax' in the MySQL Manual "
    "for more information.",
)


def statement(options: str) -> ChangeSource:
    parsed = parse(f"CHANGE REPLICATION SOURCE TO {options} FOR CHANNEL 'c1'")
    assert isinstance(parsed, ChangeSource)
    return parsed


def run(options: str, current: ChannelConfig = MTA, **env: object) -> Outcome:
    before = astuple(current)
    outcome = change_source(statement(options), current, replace(ENV, **env))
    assert astuple(current) == before
    return outcome


def rejected(options: str, current: ChannelConfig = MTA, **env: object) -> ReplicaError:
    """The error of a rejected statement; the given configuration is left as it was (T30)."""
    before = astuple(current)
    with pytest.raises(ReplicaError) as caught:
        change_source(statement(options), current, replace(ENV, **env))
    assert astuple(current) == before
    return caught.value


def connection(current: ChannelConfig, **changes: object) -> ChannelConfig:
    return replace(current, connection=replace(current.connection, **changes))


def applier(current: ChannelConfig, **changes: object) -> ChannelConfig:
    return replace(current, applier=replace(current.applier, **changes))


# -- APPLIER_VERSION (INT.0010-0013) -----------------------------------------------------------


@pytest.mark.parametrize("version", [0, 3, 0x10])
def test_t02_unknown_applier_version_is_7500(version: int) -> None:
    """T02 / INT.0011."""
    error = rejected(f"APPLIER_VERSION={version}")
    assert (error.code, error.sqlstate, error.message) == (7500, "HY000", MSG_7500)


def test_t03_applier_version_2_on_a_ready_channel() -> None:
    """T03 / INT.0010."""
    outcome = run("APPLIER_VERSION=2", READY)
    assert outcome.config.applier.applier_version is ApplierVersion.CSA
    assert outcome.config.connection == READY.connection
    assert outcome.warnings == []


def test_t04_version_is_kept_when_not_given() -> None:
    """T04 / INT.0013."""
    outcome = run("SOURCE_HOST='other'", CSA)
    assert outcome.config.applier.applier_version is ApplierVersion.CSA
    assert outcome.config.connection.host == "other"


def test_int_0012_new_channel_is_version_1() -> None:
    outcome = run("SOURCE_HOST='h'", ChannelConfig("c1"))
    assert outcome.config.applier.applier_version is ApplierVersion.MTA


def test_applier_version_1_on_an_mta_channel_is_accepted() -> None:
    assert run("APPLIER_VERSION=1").config.applier.applier_version is ApplierVersion.MTA


# -- APPLIER_WORKER_COUNT (INT.0020-0028) ------------------------------------------------------


@pytest.mark.parametrize("count", [0, 1025, 1 << 40])
def test_t05_t06_worker_count_out_of_range_is_7501(count: int) -> None:
    """T05, T06 / INT.0022."""
    error = rejected(f"APPLIER_WORKER_COUNT={count}", CSA)
    assert (error.code, error.message) == (7501, MSG_7501)


@pytest.mark.parametrize("count", [1, 1024])
def test_t07_worker_count_bounds_are_accepted(count: int) -> None:
    """T07 / INT.0022, INT.0027."""
    outcome = run(f"APPLIER_WORKER_COUNT={count}", CSA)
    assert outcome.config.applier.applier_worker_count == count
    assert outcome.warnings == []


def test_t08_worker_count_on_mta_is_7502() -> None:
    """T08 / INT.0021."""
    error = rejected("APPLIER_WORKER_COUNT=8", MTA)
    assert (error.code, error.sqlstate, error.message) == (7502, "HY000", MSG_7502)


def test_int_0021_worker_count_with_version_2_in_one_statement() -> None:
    """INT.0021, decision 1: judged on the version the channel has after the statement."""
    outcome = run("APPLIER_VERSION=2, APPLIER_WORKER_COUNT=8", READY)
    assert outcome.config.applier.applier_version is ApplierVersion.CSA
    assert outcome.config.applier.applier_worker_count == 8


def test_int_0021_worker_count_with_version_1_in_one_statement_is_7502() -> None:
    """INT.0021, decision 1: a CSA channel switched to the MTA cannot take a worker count."""
    error = rejected("APPLIER_VERSION=1, APPLIER_WORKER_COUNT=8", CSA)
    assert (error.code, error.message) == (7502, MSG_7502)


def test_t10_worker_count_is_kept_when_not_given() -> None:
    """T10 / INT.0024."""
    current = applier(CSA, applier_worker_count=8)
    outcome = run("SOURCE_RETRY_COUNT=3", current)
    assert outcome.config.applier.applier_worker_count == 8
    assert outcome.config.connection.retry_count == 3


# -- APPLIER_EVENT_MEMORY_LIMIT (INT.0030-0039) ------------------------------------------------


def test_t11_int_0031_case_2_memory_limit_on_mta_is_7503() -> None:
    """T11 / INT.0031 case 2."""
    error = rejected("APPLIER_EVENT_MEMORY_LIMIT=2000000", MTA)
    assert (error.code, error.sqlstate, error.message) == (7503, "HY000", MSG_7503)


@pytest.mark.parametrize("current", [MTA, CSA], ids=["mta", "csa"])
def test_t12_int_0031_case_3_version_1_with_memory_limit_is_7503(current: ChannelConfig) -> None:
    """T12 / INT.0031 case 3."""
    error = rejected("APPLIER_VERSION=1, APPLIER_EVENT_MEMORY_LIMIT=2000000", current)
    assert (error.code, error.message) == (7503, MSG_7503)


def test_t13_int_0031_case_4_version_2_with_memory_limit() -> None:
    """T13 / INT.0031 case 4."""
    outcome = run(
        "APPLIER_VERSION=2, APPLIER_EVENT_MEMORY_LIMIT=200000000",
        READY,
        replica_max_allowed_packet=67108864,
    )
    assert outcome.config.applier.applier_version is ApplierVersion.CSA
    assert outcome.config.applier.applier_event_memory_limit == 200000000
    assert outcome.warnings == []


def test_t14_int_0031_case_1_switching_a_limited_channel_to_mta() -> None:
    """T14 / INT.0031 case 1."""
    current = applier(CSA, applier_event_memory_limit=2000000000)
    outcome = run("APPLIER_VERSION=1", current)
    assert outcome.config.applier.applier_version is ApplierVersion.MTA
    assert outcome.warnings == []


def test_t15_int_0032_limit_below_packet_warns_and_is_stored() -> None:
    """T15 / INT.0032, decision 2."""
    packet = 16777216
    outcome = run(
        f"APPLIER_EVENT_MEMORY_LIMIT={packet - 1}", CSA, replica_max_allowed_packet=packet
    )
    assert outcome.config.applier.applier_event_memory_limit == packet - 1
    assert outcome.warnings == [Diagnostic(Level.WARNING, 7504, MSG_7504)]


@pytest.mark.parametrize("delta", [0, 1, 1000])
def test_t16_int_0032_limit_at_or_above_packet_does_not_warn(delta: int) -> None:
    """T16 / INT.0032."""
    outcome = run(f"APPLIER_EVENT_MEMORY_LIMIT={PACKET + delta}", CSA)
    assert outcome.config.applier.applier_event_memory_limit == PACKET + delta
    assert outcome.warnings == []


def test_t18_memory_limit_is_kept_when_not_given() -> None:
    """T18 / INT.0035."""
    current = applier(CSA, applier_event_memory_limit=123456789)
    outcome = run("SOURCE_CONNECT_RETRY=5", current)
    assert outcome.config.applier.applier_event_memory_limit == 123456789


# -- running threads (T19, decision 3; mysql-reference §4.1 steps 5-7) ------------------------


@pytest.mark.parametrize(
    "options",
    [
        "APPLIER_VERSION=1",
        "APPLIER_VERSION=2",
        "APPLIER_WORKER_COUNT=2",
        "APPLIER_EVENT_MEMORY_LIMIT=2000000000",
        "SOURCE_DELAY=0",
        "RELAY_LOG_FILE='r.000001'",
        "PRIVILEGE_CHECKS_USER=NULL",
        "REQUIRE_TABLE_PRIMARY_KEY_CHECK=ON",
    ],
)
def test_t19_applier_options_while_sql_thread_runs_is_3085(options: str) -> None:
    """T19 / INT.0017, INT.0028, INT.0039, decision 3."""
    error = rejected(options, CSA, sql_running=True)
    assert (error.code, error.sqlstate, error.message) == (3085, "HY000", MSG_3085)


@pytest.mark.parametrize(
    "options",
    ["SOURCE_PORT=3307", "SOURCE_HOST='x'", "SOURCE_USER='u'", "SOURCE_HEARTBEAT_PERIOD=2"],
)
def test_receiver_options_while_io_thread_runs_is_3021(options: str) -> None:
    error = rejected(options, MTA, io_running=True)
    assert (error.code, error.message) == (3021, MSG_3021)


@pytest.mark.parametrize(
    ("io", "sql"), [(True, False), (False, True), (True, True)], ids=["io", "sql", "both"]
)
@pytest.mark.parametrize(
    "options",
    [
        "GTID_ONLY=1",
        "SOURCE_AUTO_POSITION=1",
        "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS=OFF",
        "SOURCE_CONNECTION_AUTO_FAILOVER=0",
    ],
)
def test_options_of_both_threads_while_any_thread_runs_is_3081(
    options: str, io: bool, sql: bool
) -> None:
    error = rejected(options, CSA, io_running=io, sql_running=sql)
    assert (error.code, error.message) == (3081, MSG_3081)


def test_receiver_and_applier_options_while_both_run_is_3081() -> None:
    error = rejected("SOURCE_PORT=3307, SOURCE_DELAY=0", CSA, io_running=True, sql_running=True)
    assert (error.code, error.message) == (3081, MSG_3081)


def test_applier_options_while_only_the_receiver_runs() -> None:
    outcome = run("SOURCE_DELAY=5, PRIVILEGE_CHECKS_USER='u'@'h'", MTA, io_running=True)
    assert outcome.config.applier.sql_delay == 5
    assert outcome.config.applier.privilege_checks_user == "u"
    assert outcome.config.applier.privilege_checks_host == "h"
    assert outcome.purge_relay_logs is False


def test_receiver_options_while_only_the_applier_runs() -> None:
    outcome = run("SOURCE_PORT=3307, SOURCE_RETRY_COUNT=2", CSA, sql_running=True)
    assert outcome.config.connection.port == 3307
    assert outcome.config.connection.retry_count == 2


# -- CSA prerequisites (INT.0060-0090, T20-T29) ------------------------------------------------


def test_t20_version_2_on_a_delayed_channel_is_7506() -> None:
    """T20 / INT.0070."""
    error = rejected("APPLIER_VERSION=2", DELAYED)
    assert (error.code, error.sqlstate, error.message) == (7506, "HY000", MSG_7506)


def test_t21_delay_on_a_csa_channel_is_7506() -> None:
    """T21 / INT.0070."""
    error = rejected("SOURCE_DELAY=5", CSA)
    assert (error.code, error.message) == (7506, MSG_7506)


def test_t22_undelay_then_switch_in_two_statements() -> None:
    """T22 / INT.0070."""
    first = run("SOURCE_DELAY=0", DELAYED)
    assert first.config.applier.sql_delay == 0
    second = run("APPLIER_VERSION=2", first.config)
    assert second.config.applier.applier_version is ApplierVersion.CSA


def test_t22_decision_5_undelay_and_switch_in_one_statement() -> None:
    """T22 / INT.0070, decision 5: judged on the delay the channel has afterwards."""
    outcome = run("APPLIER_VERSION=2, SOURCE_DELAY=0", DELAYED)
    assert outcome.config.applier.applier_version is ApplierVersion.CSA
    assert outcome.config.applier.sql_delay == 0


def test_t23_version_2_without_row_format_is_7507() -> None:
    """T23 / INT.0080."""
    current = ChannelConfig("c1", SourceConnection(host="h", auto_position=True))
    error = rejected("APPLIER_VERSION=2", current)
    assert (error.code, error.sqlstate, error.message) == (7507, "HY000", MSG_7507)


def test_t24_version_2_enabling_row_format_and_gtid_only_together() -> None:
    """T24 / INT.0080, INT.0090."""
    current = ChannelConfig("c1", SourceConnection(host="h", auto_position=True))
    outcome = run("APPLIER_VERSION=2, REQUIRE_ROW_FORMAT=1, GTID_ONLY=1", current)
    assert outcome.config.applier.applier_version is ApplierVersion.CSA
    assert outcome.config.applier.require_row_format is True
    assert outcome.config.connection.gtid_only is True


def test_t25_disabling_row_format_on_a_csa_channel_is_7507() -> None:
    """T25 / INT.0080."""
    error = rejected("REQUIRE_ROW_FORMAT=0", CSA)
    assert (error.code, error.message) == (7507, MSG_7507)


def test_t26_version_2_without_gtid_only_is_7508() -> None:
    """T26 / INT.0090."""
    current = ChannelConfig(
        "c1",
        SourceConnection(host="h", auto_position=True),
        ApplierSettings(require_row_format=True),
    )
    error = rejected("APPLIER_VERSION=2", current)
    assert (error.code, error.sqlstate, error.message) == (7508, "HY000", MSG_7508)


def test_t27_disabling_gtid_only_on_a_csa_channel_is_7508() -> None:
    """T27 / INT.0090."""
    error = rejected("GTID_ONLY=0", CSA)
    assert (error.code, error.message) == (7508, MSG_7508)


def test_t28_int_0060_explicit_version_1_skips_the_csa_checks() -> None:
    """T28 / INT.0060."""
    outcome = run("APPLIER_VERSION=1, SOURCE_DELAY=10", CSA)
    assert outcome.config.applier.applier_version is ApplierVersion.MTA
    assert outcome.config.applier.sql_delay == 10


def test_int_0060_explicit_version_1_also_allows_dropping_gtid_only() -> None:
    current = ChannelConfig(
        "c1",
        SourceConnection(host="h", auto_position=True),
        ApplierSettings(require_row_format=True, applier_version=ApplierVersion.CSA),
    )
    outcome = run("APPLIER_VERSION=1, REQUIRE_ROW_FORMAT=0", current)
    assert outcome.config.applier.applier_version is ApplierVersion.MTA
    assert outcome.config.applier.require_row_format is False


def test_t29_unrelated_option_on_an_mta_channel_needs_no_csa_prerequisite() -> None:
    """T29 / INT.0060."""
    current = applier(MTA, sql_delay=10)
    outcome = run("SOURCE_CONNECT_RETRY=5", current)
    assert outcome.config.connection.connect_retry == 5
    assert outcome.config.applier.sql_delay == 10
    assert outcome.config.connection.gtid_only is False


def test_csa_prerequisites_in_order_delay_row_format_gtid_only() -> None:
    """INT.0070, then INT.0080, then INT.0090 (requirements §10 item 11, decision 4)."""
    current = applier(MTA, sql_delay=10)
    assert rejected("APPLIER_VERSION=2", current).code == 7506
    assert rejected("APPLIER_VERSION=2, SOURCE_DELAY=0", current).code == 7507
    assert rejected("APPLIER_VERSION=2, SOURCE_DELAY=0, REQUIRE_ROW_FORMAT=1", current).code == (
        7508
    )


def test_t30_rejected_statement_changes_nothing() -> None:
    """T30: every option, connection options included, keeps its value."""
    current = applier(
        connection(DELAYED, port=3307, user="u", heartbeat_period=5.0), applier_worker_count=6
    )
    before = astuple(current)
    with pytest.raises(ReplicaError) as caught:
        change_source(
            statement("SOURCE_PORT=3310, SOURCE_USER='v', APPLIER_VERSION=2, SOURCE_DELAY=20"),
            current,
            ENV,
        )
    assert caught.value.code == 7506
    assert astuple(current) == before
    assert current.connection.port == 3307
    assert current.applier.applier_version is ApplierVersion.MTA


# -- check order (module docstring; decision 4) ------------------------------------------------


def test_value_errors_come_before_csa_only_checks() -> None:
    assert rejected("APPLIER_VERSION=3, APPLIER_WORKER_COUNT=8").code == 7500
    assert rejected("APPLIER_WORKER_COUNT=0", MTA).code == 7501


def test_value_errors_come_before_running_threads() -> None:
    assert rejected("SOURCE_DELAY=2147483648", MTA, sql_running=True).code == 1729
    assert rejected("APPLIER_VERSION=9", CSA, sql_running=True).code == 7500


def test_csa_only_checks_come_before_running_threads() -> None:
    assert rejected("APPLIER_WORKER_COUNT=8", MTA, sql_running=True).code == 7502
    assert rejected("APPLIER_EVENT_MEMORY_LIMIT=8", MTA, sql_running=True).code == 7503


def test_running_threads_come_before_csa_prerequisites() -> None:
    assert rejected("SOURCE_DELAY=5", CSA, sql_running=True).code == 3085


def test_csa_prerequisites_come_before_mysql_inter_option_rules() -> None:
    error = rejected("APPLIER_VERSION=2, GTID_ONLY=0, SOURCE_AUTO_POSITION=0", CSA)
    assert error.code == 7508
    # Prerequisites met by the statement's own values; MySQL's rule (4065) then applies.
    error = rejected("APPLIER_VERSION=2, REQUIRE_ROW_FORMAT=1, GTID_ONLY=1", MTA)
    assert error.code == 4065


# -- T31 and IGNORE_SERVER_IDS -----------------------------------------------------------------


def test_t31_ignore_server_ids_with_gtid_only_is_rejected() -> None:
    """T31 / WL10500.UI.4."""
    error = rejected("IGNORE_SERVER_IDS=(5)", CSA)
    assert (error.code, error.sqlstate) == (1221, "HY000")
    assert error.message == "Incorrect usage of IGNORE_SERVER_IDS and GTID_ONLY = 1"


def test_t31_ignore_server_ids_with_gtid_only_in_the_same_statement() -> None:
    current = connection(MTA, auto_position=True)
    current = applier(current, require_row_format=True)
    assert rejected("GTID_ONLY=1, IGNORE_SERVER_IDS=(5)", current).code == 1221


def test_ignore_server_ids_is_stored_with_the_gtid_mode_on_deprecation() -> None:
    outcome = run("IGNORE_SERVER_IDS=(7, 5)", MTA)
    assert outcome.config.connection.ignore_server_ids == (5, 7)
    assert outcome.warnings == [
        Diagnostic(
            Level.WARNING,
            1287,
            "'CHANGE REPLICATION SOURCE TO ... IGNORE_SERVER_IDS='...' when @@GLOBAL.GTID_MODE "
            "= ON' is deprecated and will be removed in a future release. Please use the "
            "transaction filtering of GTIDs instead",
        )
    ]


def test_empty_ignore_server_ids_clears_without_warning() -> None:
    outcome = run("IGNORE_SERVER_IDS=()", connection(MTA, ignore_server_ids=(1, 2)))
    assert outcome.config.connection.ignore_server_ids == ()
    assert outcome.warnings == []


def test_ignore_server_ids_without_gtid_mode_on_does_not_warn() -> None:
    outcome = run("IGNORE_SERVER_IDS=(5)", MTA, gtid_mode="OFF")
    assert outcome.config.connection.ignore_server_ids == (5,)
    assert outcome.warnings == []


# -- MySQL's inter-option rules (mysql-reference §4.1 steps 8-9) -------------------------------


AUTO = connection(MTA, auto_position=True)
GTID_ONLY_MTA = applier(connection(AUTO, gtid_only=True), require_row_format=True)


@pytest.mark.parametrize(
    "options",
    [
        "SOURCE_LOG_FILE='b.000002'",
        "SOURCE_LOG_POS=100",
        "RELAY_LOG_FILE='r.000002'",
        "RELAY_LOG_POS=100",
    ],
)
def test_positions_with_auto_position_are_1776(options: str) -> None:
    message = (
        "Parameters SOURCE_LOG_FILE, SOURCE_LOG_POS, RELAY_LOG_FILE and RELAY_LOG_POS cannot be "
        "set when SOURCE_AUTO_POSITION is active."
    )
    error = rejected(options, AUTO)
    assert (error.code, error.message) == (1776, message)
    error = rejected(f"SOURCE_AUTO_POSITION=1, {options}", MTA)
    assert (error.code, error.message) == (1776, message)


def test_positions_while_disabling_auto_position_are_accepted() -> None:
    outcome = run("SOURCE_AUTO_POSITION=0, SOURCE_LOG_FILE='b.2', SOURCE_LOG_POS=120", AUTO)
    assert outcome.config.connection.auto_position is False
    assert outcome.config.connection.source_log_file == "b.2"
    assert outcome.config.connection.source_log_pos == 120


def test_anonymous_gtids_with_auto_position_is_4014() -> None:
    error = rejected("ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS=LOCAL", AUTO)
    assert (error.code, error.message) == (
        4014,
        "The options ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS = LOCAL|<UUID> and "
        "SOURCE_AUTO_POSITION = 1 cannot be used together.",
    )


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("OFF", AnonymousGtids.OFF, ""),
        ("LOCAL", AnonymousGtids.LOCAL, ""),
        (f"'{UUID.upper()}'", AnonymousGtids.UUID, UUID),
    ],
)
def test_anonymous_gtids_values(text: str, kind: AnonymousGtids, value: str) -> None:
    outcome = run(f"ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS={text}", MTA)
    assert outcome.config.applier.assign_gtids_type is kind
    assert outcome.config.applier.assign_gtids_value == value


def test_anonymous_gtids_bad_uuid_is_1525() -> None:
    error = rejected("ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS='not-a-uuid'")
    assert (error.code, error.message) == (1525, "Incorrect UUID value: 'not-a-uuid'")


@pytest.mark.parametrize(
    ("current", "options"),
    [
        (MTA, "GTID_ONLY=1"),
        (MTA, "GTID_ONLY=1, SOURCE_AUTO_POSITION=1"),
        (MTA, "GTID_ONLY=1, REQUIRE_ROW_FORMAT=1"),
        (AUTO, "GTID_ONLY=1"),
    ],
)
def test_gtid_only_without_its_requirements_is_4065(current: ChannelConfig, options: str) -> None:
    error = rejected(options, current)
    assert (error.code, error.message) == (
        4065,
        "GTID_ONLY cannot be enabled for replication channel 'c1'. You need GTID_MODE = ON, "
        "SOURCE_AUTO_POSITION = 1 and REQUIRE_ROW_FORMAT = 1.",
    )


def test_gtid_only_with_requirements_now_or_already() -> None:
    outcome = run("GTID_ONLY=1, SOURCE_AUTO_POSITION=1, REQUIRE_ROW_FORMAT=1", MTA)
    assert outcome.config.connection.gtid_only is True
    outcome = run("GTID_ONLY=1", applier(AUTO, require_row_format=True))
    assert outcome.config.connection.gtid_only is True


def test_disabling_row_format_with_gtid_only_is_4066() -> None:
    error = rejected("REQUIRE_ROW_FORMAT=0", GTID_ONLY_MTA)
    assert (error.code, error.message) == (
        4066,
        "REQUIRE_ROW_FORMAT cannot be disabled for replication channel 'c1' when GTID_ONLY=1.",
    )


def test_disabling_auto_position_with_gtid_only_is_4067() -> None:
    error = rejected("SOURCE_AUTO_POSITION=0", GTID_ONLY_MTA)
    assert (error.code, error.message) == (
        4067,
        "SOURCE_AUTO_POSITION cannot be disabled for replication channel 'c1' when GTID_ONLY=1.",
    )


def test_disabling_gtid_only_and_auto_position_needs_positions_4068() -> None:
    error = rejected("GTID_ONLY=0, SOURCE_AUTO_POSITION=0", GTID_ONLY_MTA)
    assert (error.code, error.message) == (
        4068,
        "When disabling GTID_ONLY and SOURCE_AUTO_POSITION FOR CHANNEL 'c1' you must provide "
        "SOURCE_LOG_FILE and SOURCE_LOG_POS as source positions are invalid.",
    )
    outcome = run(
        "GTID_ONLY=0, SOURCE_AUTO_POSITION=0, SOURCE_LOG_FILE='b.3', SOURCE_LOG_POS=4",
        GTID_ONLY_MTA,
    )
    assert outcome.config.connection.gtid_only is False
    assert outcome.config.connection.auto_position is False


def test_auto_failover_without_auto_position_is_3991() -> None:
    error = rejected("SOURCE_CONNECTION_AUTO_FAILOVER=1", MTA)
    assert (error.code, error.message) == (
        3991,
        "Failed to enable Asynchronous Replication Connection Failover feature. The CHANGE "
        "REPLICATION SOURCE TO SOURCE_CONNECTION_AUTO_FAILOVER = 1 can only be set when "
        "SOURCE_AUTO_POSITION option of CHANGE REPLICATION SOURCE TO is enabled.",
    )
    outcome = run("SOURCE_CONNECTION_AUTO_FAILOVER=1, SOURCE_AUTO_POSITION=1", MTA)
    assert outcome.config.connection.source_connection_auto_failover is True


def test_disabling_auto_position_with_auto_failover_is_3993() -> None:
    """mysql-reference §4.1 step 9: 3991 is for a statement enabling failover."""
    current = connection(AUTO, source_connection_auto_failover=True)
    error = rejected("SOURCE_AUTO_POSITION=0", current)
    assert (error.code, error.message) == (
        3993,
        "CHANGE REPLICATION SOURCE TO SOURCE_AUTO_POSITION = 0 cannot be executed because "
        "Asynchronous Replication Connection Failover is enabled i.e. CHANGE REPLICATION "
        "SOURCE TO SOURCE_CONNECTION_AUTO_FAILOVER = 1.",
    )


def test_auto_position_with_gtid_mode_off_is_1777() -> None:
    error = rejected("SOURCE_AUTO_POSITION=1", MTA, gtid_mode="OFF")
    assert (error.code, error.message) == (
        1777,
        "CHANGE REPLICATION SOURCE TO SOURCE_AUTO_POSITION = 1 cannot be executed because "
        "@@GLOBAL.GTID_MODE = OFF.",
    )
    outcome = run("SOURCE_AUTO_POSITION=1", MTA, gtid_mode="OFF_PERMISSIVE")
    assert outcome.config.connection.auto_position is True


@pytest.mark.parametrize("mode", ["OFF", "OFF_PERMISSIVE", "ON_PERMISSIVE"])
def test_anonymous_gtids_need_gtid_mode_on_4015(mode: str) -> None:
    error = rejected("ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS=LOCAL", MTA, gtid_mode=mode)
    assert (error.code, error.message) == (
        4015,
        "CHANGE REPLICATION SOURCE TO ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS = LOCAL|<UUID> "
        "cannot be executed because @@GLOBAL.GTID_MODE <> ON.",
    )
    outcome = run("ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS=OFF", MTA, gtid_mode=mode)
    assert outcome.config.applier.assign_gtids_type is AnonymousGtids.OFF


@pytest.mark.parametrize("mode", ["OFF_PERMISSIVE", "ON_PERMISSIVE"])
def test_auto_failover_needs_gtid_mode_on_3990(mode: str) -> None:
    error = rejected("SOURCE_CONNECTION_AUTO_FAILOVER=1, SOURCE_AUTO_POSITION=1", gtid_mode=mode)
    assert error.code == 3990


def test_gtid_only_needs_gtid_mode_on_4065() -> None:
    error = rejected(
        "GTID_ONLY=1, SOURCE_AUTO_POSITION=1, REQUIRE_ROW_FORMAT=1", gtid_mode="ON_PERMISSIVE"
    )
    assert error.code == 4065


def test_gtid_only_with_gtid_mode_not_on_names_the_channel() -> None:
    error = rejected(
        "GTID_ONLY=1, SOURCE_AUTO_POSITION=1, REQUIRE_ROW_FORMAT=1", gtid_mode="ON_PERMISSIVE"
    )
    assert error.message == (
        "GTID_ONLY cannot be enabled for replication channel 'c1'. You need GTID_MODE = ON, "
        "SOURCE_AUTO_POSITION = 1 and REQUIRE_ROW_FORMAT = 1."
    )


# -- host and port ------------------------------------------------------------------------------

POSITIONED = connection(
    MTA,
    source_log_file="binlog.000007",
    source_log_pos=991,
    heartbeat_period=5.0,
    source_uuid=UUID,
    source_server_id=7,
)


@pytest.mark.parametrize("options", ["SOURCE_HOST='other'", "SOURCE_PORT=3307"])
def test_host_or_port_change_resets_position_and_heartbeat(options: str) -> None:
    outcome = run(options, POSITIONED)
    new = outcome.config.connection
    assert outcome.source_changed is True
    assert (new.source_log_file, new.source_log_pos) == ("", 4)
    assert (new.source_uuid, new.source_server_id) == ("", 0)
    assert new.heartbeat_period == 30.0


def test_heartbeat_default_follows_replica_net_timeout() -> None:
    outcome = run("SOURCE_HOST='other'", POSITIONED, replica_net_timeout=7)
    assert outcome.config.connection.heartbeat_period == 3.5


def test_host_change_keeps_an_explicit_heartbeat_and_positions() -> None:
    outcome = run(
        "SOURCE_HOST='other', SOURCE_HEARTBEAT_PERIOD=2, SOURCE_LOG_FILE='b.1', SOURCE_LOG_POS=400",
        POSITIONED,
    )
    new = outcome.config.connection
    assert (new.host, new.heartbeat_period) == ("other", 2.0)
    assert (new.source_log_file, new.source_log_pos) == ("b.1", 400)


def test_new_channel_gets_the_heartbeat_default() -> None:
    outcome = run("SOURCE_HOST='src'", ChannelConfig("c1"))
    assert outcome.source_changed is True
    assert outcome.config.connection.heartbeat_period == 30.0
    assert outcome.config.connection.port == 3306
    assert outcome.config.connection.configured is True


def test_unchanged_host_keeps_the_source_identity() -> None:
    outcome = run("SOURCE_HOST='h', SOURCE_PORT=3306", POSITIONED)
    assert outcome.source_changed is False
    assert outcome.config.connection.source_uuid == UUID
    assert outcome.config.connection.source_server_id == 7


def test_host_given_without_heartbeat_resets_the_heartbeat() -> None:
    outcome = run("SOURCE_HOST='h'", POSITIONED)
    assert outcome.config.connection.heartbeat_period == 30.0


def test_empty_host_is_1210() -> None:
    error = rejected("SOURCE_HOST=''")
    assert (error.code, error.message) == (1210, "Incorrect arguments to SOURCE_HOST")


def test_port_0_and_connect_retry_0_are_ignored() -> None:
    current = connection(POSITIONED, port=3307, connect_retry=11)
    outcome = run("SOURCE_PORT=0, SOURCE_CONNECT_RETRY=0", current)
    assert outcome.config.connection == current.connection
    assert outcome.source_changed is False


def test_port_and_connect_retry_are_stored() -> None:
    outcome = run("SOURCE_PORT=3310, SOURCE_CONNECT_RETRY=11", MTA)
    assert (outcome.config.connection.port, outcome.config.connection.connect_retry) == (3310, 11)


@pytest.mark.parametrize(("given", "stored"), [(0, 4), (1, 4), (3, 4), (4, 4), (5, 5)])
def test_log_positions_below_4_are_raised_to_4(given: int, stored: int) -> None:
    outcome = run(f"SOURCE_LOG_FILE='b.1', SOURCE_LOG_POS={given}, RELAY_LOG_POS={given}")
    assert outcome.config.connection.source_log_pos == stored
    assert outcome.config.applier.relay_log_pos == stored


def test_log_file_without_position_warns_3023() -> None:
    outcome = run("SOURCE_LOG_FILE='binlog.000009'", POSITIONED)
    assert outcome.config.connection.source_log_file == "binlog.000009"
    assert outcome.config.connection.source_log_pos == 991
    assert outcome.warnings == [
        Diagnostic(
            Level.WARNING,
            3023,
            "CHANGE REPLICATION SOURCE TO with a SOURCE_LOG_FILE clause but no SOURCE_LOG_POS "
            "clause may not be safe. The old position value may not be valid for the new binary "
            "log file.",
        )
    ]


# -- heartbeat, delay, compression, row format -------------------------------------------------

MSG_1624 = (
    "The requested value for the heartbeat period is either negative or exceeds the maximum "
    "allowed (4294967 seconds)."
)
WARN_1703 = Diagnostic(
    Level.WARNING,
    1703,
    "The requested value for the heartbeat period is less than 1 millisecond. The value is "
    "reset to 0, meaning that heartbeating will effectively be disabled.",
)
WARN_1704 = Diagnostic(
    Level.WARNING,
    1704,
    "The requested value for the heartbeat period exceeds the value of `replica_net_timeout' "
    "seconds. A sensible value for the period should be less than the timeout.",
)


@pytest.mark.parametrize("period", [4294967.5, 4294968.0, 1e12])
def test_heartbeat_above_maximum_is_1624(period: float) -> None:
    error = rejected(f"SOURCE_HEARTBEAT_PERIOD={period!r}")
    assert (error.code, error.message) == (1624, MSG_1624)


def test_negative_heartbeat_is_1624() -> None:
    """The grammar refuses ``-1``; the check still guards the value itself."""
    with pytest.raises(ReplicaError) as caught:
        change_source(ChangeSource({"SOURCE_HEARTBEAT_PERIOD": -0.5}, "c1"), MTA, ENV)
    assert (caught.value.code, caught.value.message) == (1624, MSG_1624)


@pytest.mark.parametrize(
    ("text", "stored", "warnings"),
    [
        ("0", 0.0, []),
        ("0.0005", 0.0, [WARN_1703]),
        ("0.001", 0.001, []),
        ("0.5", 0.5, []),
        ("60", 60.0, []),
        ("60.5", 60.5, [WARN_1704]),
        ("4294967", 4294967.0, [WARN_1704]),
    ],
)
def test_heartbeat_values_and_warnings(
    text: str, stored: float, warnings: list[Diagnostic]
) -> None:
    outcome = run(f"SOURCE_HEARTBEAT_PERIOD={text}")
    assert outcome.config.connection.heartbeat_period == stored
    assert outcome.warnings == warnings


def test_delay_above_maximum_is_1729() -> None:
    error = rejected("SOURCE_DELAY=2147483648")
    assert (error.code, error.message) == (
        1729,
        "The requested value 2147483648 for the source delay exceeds the maximum 2147483647",
    )
    assert run("SOURCE_DELAY=2147483647").config.applier.sql_delay == 2147483647


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("zlib", "zlib"),
        ("ZSTD, zlib", "zstd,zlib"),
        ("uncompressed,zstd,zlib", "uncompressed,zstd,zlib"),
    ],
)
def test_compression_algorithms(given: str, stored: str) -> None:
    outcome = run(f"SOURCE_COMPRESSION_ALGORITHMS='{given}'")
    assert outcome.config.connection.compression_algorithms == stored


@pytest.mark.parametrize("value", ["lz4", "zlib,lz4", "ZLIB,snappy"])
def test_unknown_compression_algorithm_is_3920(value: str) -> None:
    error = rejected(f"SOURCE_COMPRESSION_ALGORITHMS='{value}'")
    assert (error.code, error.message) == (
        3920,
        f"Invalid SOURCE_COMPRESSION_ALGORITHMS '{value}' for channel 'c1'.",
    )


def test_more_than_three_compression_algorithms_is_3924() -> None:
    value = "zlib,zstd,uncompressed,zlib"
    error = rejected(f"SOURCE_COMPRESSION_ALGORITHMS='{value}'")
    assert (error.code, error.message) == (
        3924,
        f"Specified compression algorithm list '{value}' exceeds total count of 3 for channel "
        "'c1'.",
    )


def test_compression_string_of_99_characters_is_4037() -> None:
    value = "zlib," * 19 + "zstd"
    assert len(value) == 99
    error = rejected(f"SOURCE_COMPRESSION_ALGORITHMS='{value}'")
    assert (error.code, error.message) == (
        4037,
        "Value too long setting SOURCE_COMPRESSION_ALGORITHMS option to a 99 chars long string "
        "for channel 'c1'.",
    )


def test_zstd_level_above_22_is_3921() -> None:
    error = rejected("SOURCE_ZSTD_COMPRESSION_LEVEL=23")
    assert (error.code, error.message) == (
        3921,
        "Invalid SOURCE_ZSTD_COMPRESSION_LEVEL 23 for channel 'c1'.",
    )


@pytest.mark.parametrize(("given", "stored"), [(0, 3), (1, 1), (22, 22)])
def test_zstd_level_0_is_ignored(given: int, stored: int) -> None:
    outcome = run(f"SOURCE_ZSTD_COMPRESSION_LEVEL={given}")
    assert outcome.config.connection.zstd_compression_level == stored


@pytest.mark.parametrize("value", [2, 10])
def test_require_row_format_other_than_0_or_1_is_3945(value: int) -> None:
    error = rejected(f"REQUIRE_ROW_FORMAT={value}")
    assert (error.code, error.message) == (
        3945,
        f"The requested value {value} is invalid for REQUIRE_ROW_FORMAT, must be either 0 or 1.",
    )


# -- credentials notes (1759, 1760) and other plain options -----------------------------------


@pytest.mark.parametrize("options", ["SOURCE_USER='repl'", "SOURCE_PASSWORD='pw'"])
def test_credentials_give_1760_note(options: str) -> None:
    assert run(options).warnings == [NOTE_1760]


@pytest.mark.parametrize(
    "options", ["SOURCE_USER='repl'", "SOURCE_PASSWORD='pw'", "SOURCE_USER='r', SOURCE_PASSWORD=''"]
)
def test_credentials_without_tls_also_give_1759(options: str) -> None:
    assert run(options, client_uses_tls=False).warnings == [NOTE_1759, NOTE_1760]


def test_no_credentials_no_notes() -> None:
    assert run("SOURCE_RETRY_COUNT=1", client_uses_tls=False).warnings == []


def test_credentials_and_tls_options_are_stored() -> None:
    outcome = run(
        "SOURCE_USER='repl', SOURCE_PASSWORD='pw', SOURCE_SSL=1, SOURCE_SSL_CA='/ca.pem', "
        "SOURCE_SSL_VERIFY_SERVER_CERT=5, SOURCE_TLS_VERSION='TLSv1.3', "
        "SOURCE_TLS_CIPHERSUITES=NULL, GET_SOURCE_PUBLIC_KEY=1, SOURCE_BIND='10.0.0.1', "
        "NETWORK_NAMESPACE='blue', SOURCE_PUBLIC_KEY_PATH='/k.pem'"
    )
    new = outcome.config.connection
    assert (new.user, new.password) == ("repl", "pw")
    assert (new.ssl, new.ssl_ca, new.ssl_verify_server_cert) == (True, "/ca.pem", True)
    assert (new.tls_version, new.tls_ciphersuites) == ("TLSv1.3", None)
    assert (new.get_public_key, new.bind, new.network_namespace) == (True, "10.0.0.1", "blue")
    assert new.public_key_path == "/k.pem"


def test_auto_position_non_zero_means_on() -> None:
    assert run("SOURCE_AUTO_POSITION=7").config.connection.auto_position is True


def test_privilege_checks_user_is_stored_and_cleared() -> None:
    outcome = run("PRIVILEGE_CHECKS_USER='checker'@'localhost'")
    assert outcome.config.applier.privilege_checks_user == "checker"
    assert outcome.config.applier.privilege_checks_host == "localhost"
    cleared = run("PRIVILEGE_CHECKS_USER=NULL", outcome.config)
    assert cleared.config.applier.privilege_checks_user is None
    assert cleared.config.applier.privilege_checks_host is None


def test_anonymous_privilege_checks_user_is_3925() -> None:
    error = rejected("PRIVILEGE_CHECKS_USER=''@'h'")
    assert (error.code, error.message) == (
        3925,
        "PRIVILEGE_CHECKS_USER for replication channel 'c1' was set to ``@`h`, but anonymous "
        "users are disallowed for PRIVILEGE_CHECKS_USER.",
    )


def test_require_table_primary_key_check_is_stored() -> None:
    outcome = run("REQUIRE_TABLE_PRIMARY_KEY_CHECK=GENERATE")
    assert outcome.config.applier.require_table_primary_key_check is PrimaryKeyCheck.GENERATE


def test_parser_warnings_come_first() -> None:
    parsed = parse("CHANGE MASTER TO MASTER_USER='u' FOR CHANNEL 'c1'")
    assert isinstance(parsed, ChangeSource)
    outcome = change_source(parsed, MTA, ENV)
    assert [w.code for w in outcome.warnings] == [1287, 1287, 1760]


# -- relay log purge flag (mysql-reference §4.1 step 11) ---------------------------------------


def test_purge_when_both_threads_stopped_and_no_relay_position() -> None:
    assert run("SOURCE_RETRY_COUNT=2").purge_relay_logs is True


@pytest.mark.parametrize("options", ["RELAY_LOG_FILE='r.000001'", "RELAY_LOG_POS=4"])
def test_no_purge_with_a_relay_position(options: str) -> None:
    assert run(options).purge_relay_logs is False


def test_no_purge_while_a_thread_runs() -> None:
    assert run("SOURCE_DELAY=1", io_running=True).purge_relay_logs is False
    assert run("SOURCE_PORT=3307", sql_running=True).purge_relay_logs is False


def test_success_returns_a_new_config_and_keeps_the_name() -> None:
    outcome = run("SOURCE_PORT=3307", MTA)
    assert outcome.config is not MTA
    assert outcome.config.name == "c1"
    assert MTA.connection.port == 3306


# -- gaps left by the legacy applier (mysql-reference §4.1 step 10) ----------------------------

MSG_1802 = (
    "CHANGE REPLICATION SOURCE cannot be executed when the replica was stopped with an error or "
    "killed in MTA mode. Consider using RESET REPLICA or START REPLICA UNTIL."
)


def test_stopped_with_gaps_is_1802() -> None:
    """WL5569.REC (mysql-reference §4.1 step 10): only START REPLICA fills the gaps."""
    error = rejected("SOURCE_PORT=3307", stopped_with_gaps=True)
    assert (error.code, error.sqlstate, error.message) == (1802, "HY000", MSG_1802)


def test_gaps_come_after_the_option_rules() -> None:
    """Step 9 (1776) is checked before step 10 (1802)."""
    current = ChannelConfig("c1", SourceConnection(host="h", auto_position=True))
    error = rejected("SOURCE_LOG_POS=4", current, stopped_with_gaps=True)
    assert error.code == 1776


def test_without_gaps_change_succeeds() -> None:
    assert run("SOURCE_PORT=3307", stopped_with_gaps=False).config.connection.port == 3307
