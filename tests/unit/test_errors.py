"""The error catalogue: completeness, SQLSTATEs, templates and MySQL's anchor numbers."""

from __future__ import annotations

import re

import pytest

from spark_replica.applier_core.errors import (
    CATALOGUE,
    Diagnostic,
    ErrorCode,
    Level,
    ParseError,
    ReplicaError,
    deprecated,
    format_message,
    sqlstate_of,
)

#: A printf conversion as MySQL's templates use them (flags, width, precision, length, type).
_CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*)(?:\d+)?(?:\.\d+)?[hlL]?(?P<type>[diouxXsc%])")


def _conversions(template: str) -> list[str]:
    """The conversion types of ``template``, ``%%`` excluded."""
    return [m.group("type") for m in _CONVERSION.finditer(template) if m.group("type") != "%"]


def _sample_args(template: str) -> tuple[object, ...]:
    return tuple(7 if kind in "diouxX" else "v" for kind in _conversions(template))


# -- completeness ------------------------------------------------------------------------------


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: f"{c.name}-{int(c)}")
def test_every_code_has_an_entry(code: ErrorCode) -> None:
    sqlstate, template = CATALOGUE[code]
    assert len(sqlstate) == 5
    assert re.fullmatch(r"[0-9A-Z]{5}", sqlstate)
    assert template.strip() == template
    assert template


def test_catalogue_has_nothing_but_error_codes() -> None:
    assert set(CATALOGUE) == set(ErrorCode)


def test_error_numbers_are_unique() -> None:
    numbers = [int(code) for code in ErrorCode]
    assert len(numbers) == len(set(numbers))


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: f"{c.name}-{int(c)}")
def test_every_template_formats_with_its_own_argument_count(code: ErrorCode) -> None:
    template = CATALOGUE[code][1]
    args = _sample_args(template)
    message = format_message(code, *args)
    assert _conversions(message) == []
    if args:
        with pytest.raises(TypeError):
            format_message(code, *args, "extra")


# -- templates of a sample of codes, with exact texts ------------------------------------------


def test_parse_error_template() -> None:
    template = CATALOGUE[ErrorCode.PARSE_ERROR][1]
    assert _conversions(template) == ["s", "d"]
    assert format_message(ErrorCode.PARSE_ERROR, "FOO", 3) == (
        "You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
        "server version for the right syntax to use near 'FOO' at line 3"
    )


def test_parse_error_near_text_is_cut_at_80_characters() -> None:
    message = format_message(ErrorCode.PARSE_ERROR, "x" * 100, 1)
    assert message.endswith(f"near '{'x' * 80}' at line 1")


def test_channel_does_not_exist_template() -> None:
    assert _conversions(CATALOGUE[ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST][1]) == ["s"]
    error = ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST, "c9")
    assert error.code == 3074
    assert error.sqlstate == "HY000"
    assert error.message == "Replica channel 'c9' does not exist."
    assert str(error) == error.message


def test_access_denied_template() -> None:
    assert _conversions(CATALOGUE[ErrorCode.ACCESS_DENIED_ERROR][1]) == ["s", "s", "s"]
    error = ReplicaError.from_code(ErrorCode.ACCESS_DENIED_ERROR, "root", "localhost", "YES")
    assert (error.code, error.sqlstate) == (1045, "28000")
    assert error.message == "Access denied for user 'root'@'localhost' (using password: YES)"


def test_csa_unsupported_until_template() -> None:
    assert _conversions(CATALOGUE[ErrorCode.CSA_UNSUPPORTED_UNTIL_COND][1]) == ["s"]
    error = ReplicaError.from_code(ErrorCode.CSA_UNSUPPORTED_UNTIL_COND, "c1")
    assert (error.code, error.sqlstate) == (7505, "HY000")
    assert error.message == (
        "Replica SQL for channel: 'c1' Change Stream Applier accepts the following UNTIL "
        "conditions: SQL_BEFORE_GTIDS and SQL_AFTER_GTIDS"
    )


@pytest.mark.parametrize(
    ("code", "args"),
    [
        (ErrorCode.PARSE_ERROR, ("x",)),
        (ErrorCode.PARSE_ERROR, ("x", 1, 2)),
        (ErrorCode.ACCESS_DENIED_ERROR, ("u", "h")),
        (ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST, ("a", "b")),
        (ErrorCode.CSA_UNSUPPORTED_UNTIL_COND, ("a", "b")),
    ],
)
def test_wrong_argument_count_is_refused(code: ErrorCode, args: tuple[object, ...]) -> None:
    with pytest.raises(TypeError):
        format_message(code, *args)


def test_template_without_arguments_is_returned_as_is() -> None:
    assert format_message(ErrorCode.EMPTY_QUERY) == "Query was empty"
    assert format_message(ErrorCode.ONLY_INTEGERS_ALLOWED) == (
        "Only integers allowed as number here"
    )


# -- MySQL's anchor numbers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "number", "sqlstate"),
    [
        (ErrorCode.KEY_NOT_FOUND, 1032, "HY000"),
        (ErrorCode.DUP_ENTRY, 1062, "23000"),
        (ErrorCode.PARSE_ERROR, 1064, "42000"),
        (ErrorCode.LOCK_WAIT_TIMEOUT, 1205, "HY000"),
        (ErrorCode.LOCK_DEADLOCK, 1213, "40001"),
        (ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST, 3074, "HY000"),
        (ErrorCode.REPLICA_CHANNEL_MUST_STOP, 3081, "HY000"),
        (ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE, 13121, "HY000"),
        (ErrorCode.ACCESS_DENIED_ERROR, 1045, "28000"),
        (ErrorCode.NO_SUCH_TABLE, 1146, "42S02"),
        (ErrorCode.WRONG_VALUE_FOR_VAR, 1231, "42000"),
        (ErrorCode.WRONG_TYPE_FOR_VAR, 1232, "42000"),
        (ErrorCode.NOT_SUPPORTED_YET, 1235, "42000"),
        (ErrorCode.INCORRECT_GLOBAL_LOCAL_VAR, 1238, "HY000"),
        (ErrorCode.BAD_REPLICA_UNTIL_COND, 1277, "HY000"),
        (ErrorCode.WARN_DEPRECATED_SYNTAX, 1287, "HY000"),
        (ErrorCode.ONLY_INTEGERS_ALLOWED, 1578, "HY000"),
        (ErrorCode.MALFORMED_GTID_SET_SPECIFICATION, 1772, "HY000"),
        (ErrorCode.REPLICA_CHANNEL_IO_THREAD_MUST_STOP, 3021, "HY000"),
        (ErrorCode.REPLICA_CHANNEL_SQL_THREAD_MUST_STOP, 3085, "HY000"),
    ],
)
def test_mysql_anchor_numbers(code: ErrorCode, number: int, sqlstate: str) -> None:
    assert int(code) == number
    assert CATALOGUE[code][0] == sqlstate
    assert sqlstate_of(number) == sqlstate


def test_anchor_texts() -> None:
    assert format_message(ErrorCode.KEY_NOT_FOUND, "t1") == "Can't find record in 't1'"
    assert format_message(ErrorCode.DUP_ENTRY, "1", "t1.PRIMARY") == (
        "Duplicate entry '1' for key 't1.PRIMARY'"
    )
    assert format_message(ErrorCode.LOCK_WAIT_TIMEOUT) == (
        "Lock wait timeout exceeded; try restarting transaction"
    )
    assert format_message(ErrorCode.LOCK_DEADLOCK) == (
        "Deadlock found when trying to get lock; try restarting transaction"
    )
    assert format_message(ErrorCode.REPLICA_CHANNEL_MUST_STOP, "c1") == (
        "This operation cannot be performed with running replication threads; run STOP REPLICA "
        "FOR CHANNEL 'c1' first"
    )
    assert format_message(ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE, "bad event") == (
        "Relay log read failure: bad event"
    )


# -- the Change Stream Applier block -----------------------------------------------------------


def test_csa_block_is_7500_to_7508_and_hy000() -> None:
    csa = [code for code in ErrorCode if 7500 <= code <= 7519]
    assert [int(code) for code in csa] == list(range(7500, 7509))
    assert all(CATALOGUE[code][0] == "HY000" for code in csa)


@pytest.mark.parametrize(
    ("code", "number", "message"),
    [
        (
            ErrorCode.CRST_UNKNOWN_APPLIER_VERSION,
            7500,
            "Invalid applier version specified in CHANGE REPLICATION SOURCE TO command. Refer to "
            "documentation for supported versions.",
        ),
        (
            ErrorCode.CRST_APPLIER_WORKER_COUNT_OUT_OF_RANGE,
            7501,
            "Coordinator thread count out of bounds. Please specify a value between 1 and 1024.",
        ),
        (
            ErrorCode.CRST_APPLIER_WORKER_COUNT_ONLY_FOR_CSA,
            7502,
            "Applier worker count can only be configured when using CSA applier version.",
        ),
        (
            ErrorCode.CRST_APPLIER_EVENT_MEMORY_LIMIT_ONLY_FOR_CSA,
            7503,
            "Applier event memory limit can only be configured when using CSA applier version.",
        ),
        (
            ErrorCode.WARN_CRST_APPLIER_EVENT_MEMORY_LIMIT_OUT_OF_RANGE,
            7504,
            "Applier event memory limit out of bounds. Actual limit has been set to the "
            "max_allowed_packet.",
        ),
        (
            ErrorCode.CSA_CRST_DELAYED_APPLIER_NOT_SUPPORTED,
            7506,
            "The Change Stream Applier does not currently support the SOURCE_DELAY option of the "
            "CHANGE REPLICATION SOURCE TO command. Please unset SOURCE_DELAY when using CSA.",
        ),
        (
            ErrorCode.CSA_CRST_REQUIREMENT_ROW_FORMAT,
            7507,
            "The Change Stream Applier currently supports row-based replication. Please set "
            "REQUIRE_ROW_FORMAT to 1 when using CSA.",
        ),
        (
            ErrorCode.CSA_CRST_REQUIREMENT_GTID_ONLY,
            7508,
            "The Change Stream Applier currently supports row-based replication with GTIDs. "
            "Please set GTID_ONLY to 1 when using CSA.",
        ),
    ],
)
def test_csa_texts_are_the_seed_texts(code: ErrorCode, number: int, message: str) -> None:
    """ERR.1-ERR.8 and WARN.1 of requirements §7.1, verbatim."""
    assert int(code) == number
    assert format_message(code) == message


# -- ReplicaError, Diagnostic, deprecated ------------------------------------------------------


def test_sqlstate_of_unknown_number_is_hy000() -> None:
    assert sqlstate_of(99999) == "HY000"
    assert sqlstate_of(0) == "HY000"


def test_replica_error_takes_sqlstate_from_catalogue_or_override() -> None:
    assert ReplicaError(1064, "m").sqlstate == "42000"
    assert ReplicaError(ErrorCode.DUP_ENTRY, "m").code == 1062
    assert type(ReplicaError(ErrorCode.DUP_ENTRY, "m").code) is int
    assert ReplicaError(1064, "m", "HY001").sqlstate == "HY001"
    assert ReplicaError(12345, "m").sqlstate == "HY000"
    assert repr(ReplicaError(1062, "dup")) == "ReplicaError(1062, 'dup')"


def test_parse_error_is_a_replica_error() -> None:
    error = ParseError.from_code(ErrorCode.ONLY_INTEGERS_ALLOWED)
    assert isinstance(error, ReplicaError)
    assert type(error) is ParseError
    assert (error.code, error.sqlstate) == (1578, "HY000")
    assert repr(error) == "ParseError(1578, 'Only integers allowed as number here')"


def test_diagnostic_of_and_from_error() -> None:
    note = Diagnostic.of(Level.NOTE, ErrorCode.REPLICA_CHANNEL_WAS_RUNNING, "c1")
    assert note == Diagnostic(
        Level.NOTE, 3083, "Replication thread(s) for channel 'c1' are already runnning."
    )
    assert type(note.code) is int
    error = Diagnostic.from_error(ReplicaError.from_code(ErrorCode.EMPTY_QUERY))
    assert error == Diagnostic(Level.ERROR, 1065, "Query was empty")
    assert [level.value for level in Level] == ["Note", "Warning", "Error"]


def test_deprecated_is_the_1287_warning() -> None:
    assert deprecated("START SLAVE", "START REPLICA") == Diagnostic(
        Level.WARNING,
        1287,
        "'START SLAVE' is deprecated and will be removed in a future release. Please use "
        "START REPLICA instead",
    )
