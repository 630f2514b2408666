"""The error catalogue: every error and warning the replica reports, with MySQL's numbers.

Numbers, SQLSTATEs and message templates follow MySQL 8.0.43 (stable through 8.4/9.x).
The Change Stream Applier errors have no published numbers; they take the block 7500-7519
(docs/decisions/0002-csa-error-numbers.md). Templates use printf syntax, which Python's ``%``
operator understands, so ``ReplicaError.from_code`` formats them directly.

https://dev.mysql.com/doc/mysql-errors/8.4/en/server-error-reference.html
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class ErrorCode(enum.IntEnum):
    """MySQL error numbers, named after the server's symbols (8.0.22+ spellings)."""

    DB_CREATE_EXISTS = 1007
    DB_DROP_EXISTS = 1008
    DBACCESS_DENIED_ERROR = 1044
    ACCESS_DENIED_ERROR = 1045
    NO_DB_ERROR = 1046
    UNKNOWN_COM_ERROR = 1047
    BAD_DB_ERROR = 1049
    TABLE_EXISTS_ERROR = 1050
    BAD_TABLE_ERROR = 1051
    BAD_FIELD_ERROR = 1054
    DUP_FIELDNAME = 1060
    DUP_KEYNAME = 1061
    PARSE_ERROR = 1064
    EMPTY_QUERY = 1065
    KEY_NOT_FOUND = 1032
    DUP_ENTRY = 1062
    MULTIPLE_PRI_KEY = 1068
    KEY_COLUMN_DOES_NOT_EXITS = 1072  # sic: MySQL's symbol
    CANT_REMOVE_ALL_FIELDS = 1090
    CANT_DROP_FIELD_OR_KEY = 1091
    NO_SUCH_THREAD = 1094
    UNKNOWN_ERROR = 1105
    PASSWORD_NO_MATCH = 1133
    NONEXISTING_GRANT = 1141
    TABLEACCESS_DENIED_ERROR = 1142
    COLUMNACCESS_DENIED_ERROR = 1143
    NO_SUCH_TABLE = 1146
    NONEXISTING_TABLE_GRANT = 1147
    NET_PACKET_TOO_LARGE = 1153
    KEY_DOES_NOT_EXITS = 1176  # sic: MySQL's symbol
    UNKNOWN_SYSTEM_VARIABLE = 1193
    REPLICA_NOT_RUNNING = 1199
    BAD_REPLICA = 1200
    CONNECTION_METADATA = 1201
    UNKNOWN_CHARACTER_SET = 1115
    LOCK_WAIT_TIMEOUT = 1205
    WRONG_ARGUMENTS = 1210
    WRONG_STRING_LENGTH = 1470
    ERROR_WHEN_EXECUTING_COMMAND = 1220
    LOCK_DEADLOCK = 1213
    WRONG_USAGE = 1221
    SPECIFIC_ACCESS_DENIED_ERROR = 1227
    LOCAL_VARIABLE = 1228
    GLOBAL_VARIABLE = 1229
    NO_DEFAULT = 1230
    WRONG_VALUE_FOR_VAR = 1231
    WRONG_TYPE_FOR_VAR = 1232
    NOT_SUPPORTED_YET = 1235
    SOURCE_FATAL_ERROR_READING_BINLOG = 1236
    INCORRECT_GLOBAL_LOCAL_VAR = 1238
    COLLATION_CHARSET_MISMATCH = 1253
    UNKNOWN_COLLATION = 1273
    SP_WRONG_NO_OF_ARGS = 1318
    BAD_REPLICA_UNTIL_COND = 1277
    UNTIL_COND_IGNORED = 1279
    WRONG_NAME_FOR_INDEX = 1280
    WARN_DEPRECATED_SYNTAX = 1287
    OPTION_PREVENTS_STATEMENT = 1290
    TRUNCATED_WRONG_VALUE = 1292
    SP_ALREADY_EXISTS = 1304
    SP_DOES_NOT_EXIST = 1305
    QUERY_INTERRUPTED = 1317
    WRONG_OBJECT = 1347
    VIEW_INVALID = 1356
    TRG_ALREADY_EXISTS = 1359
    TRG_DOES_NOT_EXIST = 1360
    VIEW_RECURSIVE = 1462
    RELAY_LOG_FAIL = 1371
    RELAY_LOG_INIT = 1380
    CANNOT_USER = 1396
    XAER_NOTA = 1397
    CANT_CREATE_USER_WITH_GRANT = 1410
    TABLE_DEF_CHANGED = 1412
    XAER_DUPID = 1440
    WRONG_VALUE = 1525
    EVENT_ALREADY_EXISTS = 1537
    EVENT_DOES_NOT_EXIST = 1539
    ONLY_INTEGERS_ALLOWED = 1578
    WRONG_PARAMCOUNT_TO_NATIVE_FCT = 1582
    REPLICA_HEARTBEAT_VALUE_OUT_OF_RANGE = 1624
    REPLICA_IGNORE_SERVER_IDS = 1650
    REPLICA_HEARTBEAT_VALUE_OUT_OF_RANGE_MIN = 1703
    REPLICA_HEARTBEAT_VALUE_OUT_OF_RANGE_MAX = 1704
    SOURCE_DELAY_VALUE_OUT_OF_RANGE = 1729
    INSECURE_PLAIN_TEXT = 1759
    INSECURE_CHANGE_SOURCE = 1760
    SQLTHREAD_WITH_SECURE_REPLICA = 1763
    BAD_REPLICA_AUTO_POSITION = 1776
    AUTO_POSITION_REQUIRES_GTID_MODE_NOT_OFF = 1777
    REPLICA_CONFIGURATION = 1794
    VARIABLE_NOT_SETTABLE_IN_TRANSACTION = 1766
    MALFORMED_GTID_SET_SPECIFICATION = 1772
    MALFORMED_GTID_SPECIFICATION = 1774
    CANT_DO_IMPLICIT_COMMIT_IN_TRX_WHEN_GTID_NEXT_IS_SET = 1778
    CANT_SET_GTID_NEXT_TO_GTID_WHEN_GTID_MODE_IS_OFF = 1781
    CANT_SET_GTID_NEXT_TO_ANONYMOUS_WHEN_GTID_MODE_IS_ON = 1782
    GTID_MODE_CAN_ONLY_CHANGE_ONE_STEP_AT_A_TIME = 1788
    CANT_SET_GTID_NEXT_WHEN_OWNING_GTID = 1790
    MTA_CHANGE_SOURCE_CANT_RUN_WITH_GAPS = 1802
    GTID_NEXT_TYPE_UNDEFINED_GTID = 1837
    SQL_REPLICA_SKIP_COUNTER_NOT_SETTABLE_IN_GTID_MODE = 1858
    STOP_REPLICA_SQL_THREAD_TIMEOUT = 1875
    STOP_REPLICA_IO_THREAD_TIMEOUT = 1876
    REPLICA_SQL_THREAD_MUST_STOP = 3017
    REPLICA_CHANNEL_IO_THREAD_MUST_STOP = 3021
    WARN_ONLY_SOURCE_LOG_FILE_NO_POS = 3023
    REPLICA_WORKER_STOPPED_PREVIOUS_THD_ERROR = 3030
    DONT_SUPPORT_REPLICA_PRESERVE_COMMIT_ORDER = 3031
    CHANGE_SOURCE_PASSWORD_LENGTH = 3056
    REPLICA_CHANNEL_DOES_NOT_EXIST = 3074
    REPLICA_CHANNEL_NAME_INVALID_OR_TOO_LONG = 3076
    REPLICA_MULTIPLE_CHANNELS_CMD = 3079
    REPLICA_MAX_CHANNELS_EXCEEDED = 3080
    REPLICA_CHANNEL_MUST_STOP = 3081
    REPLICA_CHANNEL_NOT_RUNNING = 3082
    REPLICA_CHANNEL_WAS_RUNNING = 3083
    REPLICA_CHANNEL_WAS_NOT_RUNNING = 3084
    REPLICA_CHANNEL_SQL_THREAD_MUST_STOP = 3085
    REPLICA_CHANNEL_SQL_SKIP_COUNTER = 3086
    CANT_SET_GTID_MODE = 3111
    CANT_USE_AUTO_POSITION_WITH_GTID_MODE_OFF = 3112
    ACCOUNT_HAS_BEEN_LOCKED = 3118
    REPLICA_CHANNEL_OPERATION_NOT_ALLOWED = 3139
    UNKNOWN_AUTHID = 3523
    ROLE_NOT_GRANTED = 3530
    CANT_SET_GTID_PURGED_DUE_SETS_CONSTRAINTS = 3546
    CHANGE_SOURCE_WRONG_COMPRESSION_ALGORITHM_CLIENT = 3920
    CHANGE_SOURCE_WRONG_COMPRESSION_LEVEL_CLIENT = 3921
    CHANGE_SOURCE_WRONG_COMPRESSION_ALGORITHM_LIST_CLIENT = 3924
    CLIENT_PRIVILEGE_CHECKS_USER_CANNOT_BE_ANONYMOUS = 3925
    REQUIRE_ROW_FORMAT_INVALID_VALUE = 3945
    RPL_ASYNC_RECONNECT_GTID_MODE_OFF = 3990
    RPL_ASYNC_RECONNECT_AUTO_POSITION_OFF = 3991
    DISABLE_AUTO_POSITION_REQUIRES_ASYNC_RECONNECT_OFF = 3993
    CANT_USE_ANONYMOUS_TO_GTID_WITH_GTID_MODE_NOT_ON = 4013
    CANT_COMBINE_ANONYMOUS_TO_GTID_AND_AUTOPOSITION = 4014
    ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_REQUIRES_GTID_MODE_ON = 4015
    CANT_SET_SQL_AFTER_OR_BEFORE_GTIDS_WITH_ANONYMOUS_TO_GTID = 4019
    CHANGE_RPL_SRC_WRONG_COMPRESSION_ALGORITHM_SIZE = 4037
    CHANGE_REPLICATION_SOURCE_NO_OPTIONS_FOR_GTID_ONLY = 4065
    CHANGE_REP_SOURCE_CANT_DISABLE_REQ_ROW_FORMAT_WITH_GTID_ONLY = 4066
    CHANGE_REP_SOURCE_CANT_DISABLE_AUTO_POSITION_WITH_GTID_ONLY = 4067
    CHANGE_REP_SOURCE_CANT_DISABLE_GTID_ONLY_WITHOUT_POSITIONS = 4068
    CHANGE_REP_SOURCE_CANT_DISABLE_AUTO_POS_WITHOUT_POSITIONS = 4069
    CANT_USE_GTID_ONLY_WITH_GTID_MODE_NOT_ON = 4071
    # The Change Stream Applier block (numbers assigned by this project).
    CRST_UNKNOWN_APPLIER_VERSION = 7500
    CRST_APPLIER_WORKER_COUNT_OUT_OF_RANGE = 7501
    CRST_APPLIER_WORKER_COUNT_ONLY_FOR_CSA = 7502
    CRST_APPLIER_EVENT_MEMORY_LIMIT_ONLY_FOR_CSA = 7503
    WARN_CRST_APPLIER_EVENT_MEMORY_LIMIT_OUT_OF_RANGE = 7504
    CSA_UNSUPPORTED_UNTIL_COND = 7505
    CSA_CRST_DELAYED_APPLIER_NOT_SUPPORTED = 7506
    CSA_CRST_REQUIREMENT_ROW_FORMAT = 7507
    CSA_CRST_REQUIREMENT_GTID_ONLY = 7508
    # Server error-log range, reported as Last_SQL_Errno / Last_IO_Errno.
    REPLICA_FATAL_ERROR = 13117
    REPLICA_INCIDENT = 13119
    REPLICA_SOURCE_COM_FAILURE = 13120
    REPLICA_RELAY_LOG_READ_FAILURE = 13121
    REPLICA_RELAY_LOG_WRITE_FAILURE = 13122


_SYNTAX = (
    "You have an error in your SQL syntax; check the manual that corresponds to your "
    "MySQL server version for the right syntax to use"
)

#: ``code -> (SQLSTATE, message template)``. Complete: a test checks every ErrorCode is here.
CATALOGUE: dict[ErrorCode, tuple[str, str]] = {
    ErrorCode.DB_CREATE_EXISTS: ("HY000", "Can't create database '%-.192s'; database exists"),
    ErrorCode.DB_DROP_EXISTS: ("HY000", "Can't drop database '%-.192s'; database doesn't exist"),
    ErrorCode.DBACCESS_DENIED_ERROR: (
        "42000",
        "Access denied for user '%-.48s'@'%-.64s' to database '%-.192s'",
    ),
    ErrorCode.ACCESS_DENIED_ERROR: (
        "28000",
        "Access denied for user '%-.48s'@'%-.64s' (using password: %s)",
    ),
    ErrorCode.NO_DB_ERROR: ("3D000", "No database selected"),
    ErrorCode.UNKNOWN_COM_ERROR: ("08S01", "Unknown command"),
    ErrorCode.BAD_DB_ERROR: ("42000", "Unknown database '%-.192s'"),
    ErrorCode.TABLE_EXISTS_ERROR: ("42S01", "Table '%-.192s' already exists"),
    ErrorCode.BAD_TABLE_ERROR: ("42S02", "Unknown table '%-.129s'"),
    ErrorCode.BAD_FIELD_ERROR: ("42S22", "Unknown column '%-.192s' in '%-.192s'"),
    ErrorCode.PARSE_ERROR: ("42000", _SYNTAX + " near '%-.80s' at line %d"),
    ErrorCode.EMPTY_QUERY: ("42000", "Query was empty"),
    ErrorCode.KEY_NOT_FOUND: ("HY000", "Can't find record in '%-.192s'"),
    ErrorCode.DUP_ENTRY: ("23000", "Duplicate entry '%-.64s' for key '%-.385s'"),
    ErrorCode.DUP_FIELDNAME: ("42S21", "Duplicate column name '%-.192s'"),
    ErrorCode.DUP_KEYNAME: ("42000", "Duplicate key name '%-.192s'"),
    ErrorCode.MULTIPLE_PRI_KEY: ("42000", "Multiple primary key defined"),
    ErrorCode.KEY_COLUMN_DOES_NOT_EXITS: ("42000", "Key column '%-.192s' doesn't exist in table"),
    ErrorCode.CANT_REMOVE_ALL_FIELDS: (
        "42000",
        "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
    ),
    ErrorCode.CANT_DROP_FIELD_OR_KEY: (
        "42000",
        "Can't DROP '%-.192s'; check that column/key exists",
    ),
    ErrorCode.NO_SUCH_THREAD: ("HY000", "Unknown thread id: %lu"),
    ErrorCode.UNKNOWN_ERROR: ("HY000", "%s"),
    ErrorCode.PASSWORD_NO_MATCH: ("28000", "Can't find any matching row in the user table"),
    ErrorCode.NONEXISTING_GRANT: (
        "42000",
        "There is no such grant defined for user '%-.48s' on host '%-.255s'",
    ),
    ErrorCode.TABLEACCESS_DENIED_ERROR: (
        "42000",
        "%-.128s command denied to user '%-.48s'@'%-.64s' for table '%-.64s'",
    ),
    ErrorCode.COLUMNACCESS_DENIED_ERROR: (
        "42000",
        "%-.16s command denied to user '%-.48s'@'%-.64s' for column '%-.192s' in table '%-.192s'",
    ),
    ErrorCode.NO_SUCH_TABLE: ("42S02", "Table '%-.192s.%-.192s' doesn't exist"),
    ErrorCode.UNKNOWN_CHARACTER_SET: ("42000", "Unknown character set: '%-.64s'"),
    ErrorCode.COLLATION_CHARSET_MISMATCH: (
        "42000",
        "COLLATION '%s' is not valid for CHARACTER SET '%s'",
    ),
    ErrorCode.UNKNOWN_COLLATION: ("HY000", "Unknown collation: '%-.64s'"),
    ErrorCode.SP_WRONG_NO_OF_ARGS: (
        "42000",
        "Incorrect number of arguments for %s %s; expected %u, got %u",
    ),
    ErrorCode.NONEXISTING_TABLE_GRANT: (
        "42000",
        "There is no such grant defined for user '%-.48s' on host '%-.255s' on table '%-.192s'",
    ),
    ErrorCode.NET_PACKET_TOO_LARGE: (
        "08S01",
        "Got a packet bigger than 'max_allowed_packet' bytes",
    ),
    ErrorCode.KEY_DOES_NOT_EXITS: ("42000", "Key '%-.192s' doesn't exist in table '%-.192s'"),
    ErrorCode.UNKNOWN_SYSTEM_VARIABLE: ("HY000", "Unknown system variable '%-.64s'"),
    ErrorCode.REPLICA_NOT_RUNNING: (
        "HY000",
        "This operation requires a running replica; configure replica and do START REPLICA",
    ),
    ErrorCode.BAD_REPLICA: (
        "HY000",
        "The server is not configured as replica; fix in config file or with "
        "CHANGE REPLICATION SOURCE TO",
    ),
    ErrorCode.CONNECTION_METADATA: (
        "HY000",
        "Could not initialize connection metadata structure; more error messages can be found "
        "in the MySQL error log",
    ),
    ErrorCode.LOCK_WAIT_TIMEOUT: (
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    ),
    ErrorCode.WRONG_ARGUMENTS: ("HY000", "Incorrect arguments to %s"),
    ErrorCode.ERROR_WHEN_EXECUTING_COMMAND: ("HY000", "Error when executing command %s: %-.128s"),
    ErrorCode.LOCK_DEADLOCK: (
        "40001",
        "Deadlock found when trying to get lock; try restarting transaction",
    ),
    ErrorCode.WRONG_USAGE: ("HY000", "Incorrect usage of %s and %s"),
    ErrorCode.SPECIFIC_ACCESS_DENIED_ERROR: (
        "42000",
        "Access denied; you need (at least one of) the %-.128s privilege(s) for this operation",
    ),
    ErrorCode.LOCAL_VARIABLE: (
        "HY000",
        "Variable '%-.64s' is a SESSION variable and can't be used with SET GLOBAL",
    ),
    ErrorCode.GLOBAL_VARIABLE: (
        "HY000",
        "Variable '%-.64s' is a GLOBAL variable and should be set with SET GLOBAL",
    ),
    ErrorCode.NO_DEFAULT: ("42000", "Variable '%-.64s' doesn't have a default value"),
    ErrorCode.WRONG_VALUE_FOR_VAR: (
        "42000",
        "Variable '%-.64s' can't be set to the value of '%-.200s'",
    ),
    ErrorCode.WRONG_TYPE_FOR_VAR: ("42000", "Incorrect argument type to variable '%-.64s'"),
    ErrorCode.NOT_SUPPORTED_YET: ("42000", "This version of MySQL doesn't yet support '%s'"),
    ErrorCode.SP_ALREADY_EXISTS: ("42000", "%s %s already exists"),
    ErrorCode.SP_DOES_NOT_EXIST: ("42000", "%s %s does not exist"),
    ErrorCode.WRONG_OBJECT: ("HY000", "'%-.192s.%-.192s' is not %s"),
    ErrorCode.VIEW_INVALID: (
        "HY000",
        "View '%-.192s.%-.192s' references invalid table(s) or column(s) or function(s) or "
        "definer/invoker of view lack rights to use them",
    ),
    ErrorCode.VIEW_RECURSIVE: ("HY000", "`%-.192s`.`%-.192s` contains view recursion"),
    ErrorCode.TRG_ALREADY_EXISTS: ("HY000", "Trigger already exists"),
    ErrorCode.TRG_DOES_NOT_EXIST: ("HY000", "Trigger does not exist"),
    ErrorCode.EVENT_ALREADY_EXISTS: ("HY000", "Event '%-.192s' already exists"),
    ErrorCode.EVENT_DOES_NOT_EXIST: ("HY000", "Unknown event '%-.192s'"),
    ErrorCode.WRONG_PARAMCOUNT_TO_NATIVE_FCT: (
        "42000",
        "Incorrect parameter count in the call to native function '%-.192s'",
    ),
    ErrorCode.SOURCE_FATAL_ERROR_READING_BINLOG: (
        "HY000",
        "Got fatal error %d from source when reading data from binary log: '%-.512s'",
    ),
    ErrorCode.INCORRECT_GLOBAL_LOCAL_VAR: ("HY000", "Variable '%-.192s' is a %s variable"),
    ErrorCode.BAD_REPLICA_UNTIL_COND: (
        "HY000",
        "Incorrect parameter or combination of parameters for START REPLICA UNTIL",
    ),
    ErrorCode.UNTIL_COND_IGNORED: (
        "HY000",
        "SQL thread is not to be started so UNTIL options are ignored",
    ),
    ErrorCode.WRONG_NAME_FOR_INDEX: ("42000", "Incorrect index name '%-.100s'"),
    ErrorCode.WARN_DEPRECATED_SYNTAX: (
        "HY000",
        "'%s' is deprecated and will be removed in a future release. Please use %s instead",
    ),
    ErrorCode.OPTION_PREVENTS_STATEMENT: (
        "HY000",
        "The MySQL server is running with the %s option so it cannot execute this statement",
    ),
    ErrorCode.TRUNCATED_WRONG_VALUE: ("22007", "Truncated incorrect %-.32s value: '%-.128s'"),
    ErrorCode.QUERY_INTERRUPTED: ("70100", "Query execution was interrupted"),
    ErrorCode.RELAY_LOG_FAIL: ("HY000", "Failed purging old relay logs: %s"),
    ErrorCode.RELAY_LOG_INIT: ("HY000", "Failed initializing relay log position: %s"),
    ErrorCode.CANNOT_USER: ("HY000", "Operation %s failed for %.256s"),
    ErrorCode.XAER_NOTA: ("XAE04", "XAER_NOTA: Unknown XID"),
    ErrorCode.XAER_DUPID: ("XAE08", "XAER_DUPID: The XID already exists"),
    ErrorCode.CANT_CREATE_USER_WITH_GRANT: (
        "42000",
        "You are not allowed to create a user with GRANT",
    ),
    ErrorCode.TABLE_DEF_CHANGED: (
        "HY000",
        "Table definition has changed, please retry transaction",
    ),
    ErrorCode.WRONG_VALUE: ("HY000", "Incorrect %-.32s value: '%-.128s'"),
    ErrorCode.ONLY_INTEGERS_ALLOWED: ("HY000", "Only integers allowed as number here"),
    ErrorCode.REPLICA_HEARTBEAT_VALUE_OUT_OF_RANGE: (
        "HY000",
        "The requested value for the heartbeat period is either negative or exceeds the "
        "maximum allowed (%s seconds).",
    ),
    ErrorCode.REPLICA_IGNORE_SERVER_IDS: (
        "HY000",
        "The requested server id %d clashes with the replica startup option "
        "--replicate-same-server-id",
    ),
    ErrorCode.REPLICA_HEARTBEAT_VALUE_OUT_OF_RANGE_MIN: (
        "HY000",
        "The requested value for the heartbeat period is less than 1 millisecond. The value is "
        "reset to 0, meaning that heartbeating will effectively be disabled.",
    ),
    ErrorCode.REPLICA_HEARTBEAT_VALUE_OUT_OF_RANGE_MAX: (
        "HY000",
        "The requested value for the heartbeat period exceeds the value of "
        "`replica_net_timeout' seconds. A sensible value for the period should be less than "
        "the timeout.",
    ),
    ErrorCode.SOURCE_DELAY_VALUE_OUT_OF_RANGE: (
        "HY000",
        "The requested value %s for the source delay exceeds the maximum %u",
    ),
    ErrorCode.INSECURE_PLAIN_TEXT: (
        "HY000",
        "Sending passwords in plain text without SSL/TLS is extremely insecure.",
    ),
    ErrorCode.INSECURE_CHANGE_SOURCE: (
        "HY000",
        "Storing MySQL user name or password information in the connection metadata repository "
        "is not secure and is therefore not recommended. Please consider using the USER and "
        "PASSWORD connection options for START REPLICA; see the 'START REPLICA Syntax' in the "
        "MySQL Manual for more information.",
    ),
    ErrorCode.SQLTHREAD_WITH_SECURE_REPLICA: (
        "HY000",
        "Setting authentication options is not possible when only the Replica SQL Thread is "
        "being started.",
    ),
    ErrorCode.BAD_REPLICA_AUTO_POSITION: (
        "HY000",
        "Parameters SOURCE_LOG_FILE, SOURCE_LOG_POS, RELAY_LOG_FILE and RELAY_LOG_POS cannot be "
        "set when SOURCE_AUTO_POSITION is active.",
    ),
    ErrorCode.AUTO_POSITION_REQUIRES_GTID_MODE_NOT_OFF: (
        "HY000",
        "CHANGE REPLICATION SOURCE TO SOURCE_AUTO_POSITION = 1 cannot be executed because "
        "@@GLOBAL.GTID_MODE = OFF.",
    ),
    ErrorCode.REPLICA_CONFIGURATION: (
        "HY000",
        "Replica is not configured or failed to initialize properly. You must at least set "
        "--server-id to enable either a source or a replica. Additional error messages can be "
        "found in the MySQL error log.",
    ),
    ErrorCode.MALFORMED_GTID_SET_SPECIFICATION: (
        "HY000",
        "Malformed GTID set specification '%.200s'.",
    ),
    ErrorCode.VARIABLE_NOT_SETTABLE_IN_TRANSACTION: (
        "HY000",
        "The system variable %.200s cannot be set when there is an ongoing transaction.",
    ),
    ErrorCode.MALFORMED_GTID_SPECIFICATION: ("HY000", "Malformed GTID specification '%.200s'."),
    ErrorCode.CANT_DO_IMPLICIT_COMMIT_IN_TRX_WHEN_GTID_NEXT_IS_SET: (
        "HY000",
        "Cannot execute statements with implicit commit inside a transaction when "
        "@@SESSION.GTID_NEXT == 'UUID:NUMBER'.",
    ),
    ErrorCode.CANT_SET_GTID_NEXT_TO_GTID_WHEN_GTID_MODE_IS_OFF: (
        "HY000",
        "@@SESSION.GTID_NEXT cannot be set to UUID:NUMBER when @@GLOBAL.GTID_MODE = OFF.",
    ),
    ErrorCode.CANT_SET_GTID_NEXT_TO_ANONYMOUS_WHEN_GTID_MODE_IS_ON: (
        "HY000",
        "@@SESSION.GTID_NEXT cannot be set to ANONYMOUS when @@GLOBAL.GTID_MODE = ON.",
    ),
    ErrorCode.CANT_SET_GTID_NEXT_WHEN_OWNING_GTID: (
        "HY000",
        "@@SESSION.GTID_NEXT cannot be changed by a client that owns a GTID. The client owns "
        "%s. Ownership is released on COMMIT or ROLLBACK.",
    ),
    ErrorCode.GTID_NEXT_TYPE_UNDEFINED_GTID: (
        "HY000",
        "When @@SESSION.GTID_NEXT is set to a GTID, you must explicitly set it to a different "
        "value after a COMMIT or ROLLBACK. Please check GTID_NEXT variable manual page for "
        "detailed explanation. Current @@SESSION.GTID_NEXT is '%s'.",
    ),
    ErrorCode.UNKNOWN_AUTHID: ("HY000", "Unknown authorization ID `%.64s`@`%.64s`"),
    ErrorCode.ROLE_NOT_GRANTED: ("HY000", "`%.64s`@`%.64s` is not granted to `%.64s`@`%.64s`"),
    ErrorCode.CANT_SET_GTID_PURGED_DUE_SETS_CONSTRAINTS: (
        "HY000",
        "@@GLOBAL.GTID_PURGED cannot be changed: %s",
    ),
    ErrorCode.GTID_MODE_CAN_ONLY_CHANGE_ONE_STEP_AT_A_TIME: (
        "HY000",
        "The value of @@GLOBAL.GTID_MODE can only be changed one step at a time: OFF <-> "
        "OFF_PERMISSIVE <-> ON_PERMISSIVE <-> ON. Also note that this value must be stepped up "
        "or down simultaneously on all servers. See the Manual for instructions.",
    ),
    ErrorCode.MTA_CHANGE_SOURCE_CANT_RUN_WITH_GAPS: (
        "HY000",
        "CHANGE REPLICATION SOURCE cannot be executed when the replica was stopped with an error "
        "or killed in MTA mode. Consider using RESET REPLICA or START REPLICA UNTIL.",
    ),
    ErrorCode.STOP_REPLICA_SQL_THREAD_TIMEOUT: (
        "HY000",
        "STOP REPLICA command execution is incomplete: Replica SQL thread got the stop signal, "
        "thread is busy, SQL thread will stop once the current task is complete.",
    ),
    ErrorCode.STOP_REPLICA_IO_THREAD_TIMEOUT: (
        "HY000",
        "STOP REPLICA command execution is incomplete: Replica IO thread got the stop signal, "
        "thread is busy, IO thread will stop once the current task is complete.",
    ),
    ErrorCode.REPLICA_SQL_THREAD_MUST_STOP: (
        "HY000",
        "This operation cannot be performed with a running replica sql thread; run STOP REPLICA "
        "SQL_THREAD first",
    ),
    ErrorCode.REPLICA_CHANNEL_IO_THREAD_MUST_STOP: (
        "HY000",
        "This operation cannot be performed with a running replica io thread; run STOP REPLICA "
        "IO_THREAD FOR CHANNEL '%s' first.",
    ),
    ErrorCode.WARN_ONLY_SOURCE_LOG_FILE_NO_POS: (
        "HY000",
        "CHANGE REPLICATION SOURCE TO with a SOURCE_LOG_FILE clause but no SOURCE_LOG_POS clause "
        "may not be safe. The old position value may not be valid for the new binary log file.",
    ),
    ErrorCode.REPLICA_WORKER_STOPPED_PREVIOUS_THD_ERROR: (
        "HY000",
        "Replica worker has stopped after at least one previous worker encountered an error when "
        "replica-preserve-commit-order was enabled. To preserve commit order, the last "
        "transaction executed by this thread has not been committed. When restarting the replica "
        "after fixing any failed threads, you should fix this worker as well.",
    ),
    ErrorCode.DONT_SUPPORT_REPLICA_PRESERVE_COMMIT_ORDER: (
        "HY000",
        "replica_preserve_commit_order is not supported %s.",
    ),
    ErrorCode.WRONG_STRING_LENGTH: (
        "HY000",
        "String '%-.70s' is too long for %s (should be no longer than %d)",
    ),
    ErrorCode.CHANGE_SOURCE_PASSWORD_LENGTH: (
        "HY000",
        "The password provided for the replication user exceeds the maximum length of 32 "
        "characters",
    ),
    ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST: ("HY000", "Replica channel '%s' does not exist."),
    ErrorCode.REPLICA_CHANNEL_NAME_INVALID_OR_TOO_LONG: (
        "HY000",
        "Couldn't create channel: Channel name is either invalid or too long.",
    ),
    ErrorCode.REPLICA_MULTIPLE_CHANNELS_CMD: (
        "HY000",
        "Multiple channels exist on the replica. Please provide channel name as an argument.",
    ),
    ErrorCode.REPLICA_MAX_CHANNELS_EXCEEDED: (
        "HY000",
        "Maximum number of replication channels allowed exceeded.",
    ),
    ErrorCode.REPLICA_CHANNEL_MUST_STOP: (
        "HY000",
        "This operation cannot be performed with running replication threads; run STOP REPLICA "
        "FOR CHANNEL '%s' first",
    ),
    ErrorCode.REPLICA_CHANNEL_NOT_RUNNING: (
        "HY000",
        "This operation requires running replication threads; configure replica and run START "
        "REPLICA FOR CHANNEL '%s'",
    ),
    ErrorCode.REPLICA_CHANNEL_WAS_RUNNING: (
        "HY000",
        "Replication thread(s) for channel '%s' are already runnning.",
    ),
    ErrorCode.REPLICA_CHANNEL_WAS_NOT_RUNNING: (
        "HY000",
        "Replication thread(s) for channel '%s' are already stopped.",
    ),
    ErrorCode.SQL_REPLICA_SKIP_COUNTER_NOT_SETTABLE_IN_GTID_MODE: (
        "HY000",
        "sql_replica_skip_counter can not be set when the server is running with "
        "@@GLOBAL.GTID_MODE = ON. Instead, for each transaction that you want to skip, generate "
        "an empty transaction with the same GTID as the transaction",
    ),
    ErrorCode.REPLICA_CHANNEL_SQL_SKIP_COUNTER: (
        "HY000",
        "When sql_replica_skip_counter > 0, it is not allowed to start more than one SQL thread "
        "by using 'START REPLICA [SQL_THREAD]'. Value of sql_replica_skip_counter can only be "
        "used by one SQL thread at a time. Please use 'START REPLICA [SQL_THREAD] FOR CHANNEL' "
        "to start the SQL thread which will use the value of sql_replica_skip_counter.",
    ),
    ErrorCode.REPLICA_CHANNEL_SQL_THREAD_MUST_STOP: (
        "HY000",
        "This operation cannot be performed with a running replica sql thread; run STOP REPLICA "
        "SQL_THREAD FOR CHANNEL '%s' first.",
    ),
    ErrorCode.CANT_SET_GTID_MODE: (
        "HY000",
        "SET @@GLOBAL.GTID_MODE = %-.64s is not allowed because %-.192s.",
    ),
    ErrorCode.ACCOUNT_HAS_BEEN_LOCKED: (
        "HY000",
        "Access denied for user '%-.48s'@'%-.255s'. Account is locked.",
    ),
    ErrorCode.CANT_USE_AUTO_POSITION_WITH_GTID_MODE_OFF: (
        "HY000",
        "The replication receiver thread%-.192s cannot start in AUTO_POSITION mode: this server "
        "uses @@GLOBAL.GTID_MODE = OFF.",
    ),
    ErrorCode.REPLICA_CHANNEL_OPERATION_NOT_ALLOWED: (
        "HY000",
        "%-.192s cannot be performed on channel '%-.192s'.",
    ),
    ErrorCode.CHANGE_SOURCE_WRONG_COMPRESSION_ALGORITHM_CLIENT: (
        "HY000",
        "Invalid SOURCE_COMPRESSION_ALGORITHMS '%.192s' for channel '%.192s'.",
    ),
    ErrorCode.CHANGE_SOURCE_WRONG_COMPRESSION_LEVEL_CLIENT: (
        "HY000",
        "Invalid SOURCE_ZSTD_COMPRESSION_LEVEL %u for channel '%.192s'.",
    ),
    ErrorCode.CHANGE_SOURCE_WRONG_COMPRESSION_ALGORITHM_LIST_CLIENT: (
        "HY000",
        "Specified compression algorithm list '%.192s' exceeds total count of 3 for channel "
        "'%.192s'.",
    ),
    ErrorCode.CLIENT_PRIVILEGE_CHECKS_USER_CANNOT_BE_ANONYMOUS: (
        "HY000",
        "PRIVILEGE_CHECKS_USER for replication channel '%.192s' was set to ``@`%.255s`, but "
        "anonymous users are disallowed for PRIVILEGE_CHECKS_USER.",
    ),
    ErrorCode.REQUIRE_ROW_FORMAT_INVALID_VALUE: (
        "HY000",
        "The requested value %s is invalid for REQUIRE_ROW_FORMAT, must be either 0 or 1.",
    ),
    ErrorCode.RPL_ASYNC_RECONNECT_GTID_MODE_OFF: (
        "HY000",
        "Failed to enable Asynchronous Replication Connection Failover feature. The CHANGE "
        "REPLICATION SOURCE TO SOURCE_CONNECTION_AUTO_FAILOVER = 1 can only be set when "
        "@@GLOBAL.GTID_MODE = ON.",
    ),
    ErrorCode.RPL_ASYNC_RECONNECT_AUTO_POSITION_OFF: (
        "HY000",
        "Failed to enable Asynchronous Replication Connection Failover feature. The CHANGE "
        "REPLICATION SOURCE TO SOURCE_CONNECTION_AUTO_FAILOVER = 1 can only be set when "
        "SOURCE_AUTO_POSITION option of CHANGE REPLICATION SOURCE TO is enabled.",
    ),
    ErrorCode.DISABLE_AUTO_POSITION_REQUIRES_ASYNC_RECONNECT_OFF: (
        "HY000",
        "CHANGE REPLICATION SOURCE TO SOURCE_AUTO_POSITION = 0 cannot be executed because "
        "Asynchronous Replication Connection Failover is enabled i.e. CHANGE REPLICATION SOURCE "
        "TO SOURCE_CONNECTION_AUTO_FAILOVER = 1.",
    ),
    ErrorCode.CANT_USE_ANONYMOUS_TO_GTID_WITH_GTID_MODE_NOT_ON: (
        "HY000",
        "Replication cannot start%.192s with ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS = "
        "LOCAL|<UUID> as this server uses @@GLOBAL.GTID_MODE <> ON.",
    ),
    ErrorCode.CANT_COMBINE_ANONYMOUS_TO_GTID_AND_AUTOPOSITION: (
        "HY000",
        "The options ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS = LOCAL|<UUID> and "
        "SOURCE_AUTO_POSITION = 1 cannot be used together.",
    ),
    ErrorCode.ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_REQUIRES_GTID_MODE_ON: (
        "HY000",
        "CHANGE REPLICATION SOURCE TO ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS = LOCAL|<UUID> "
        "cannot be executed because @@GLOBAL.GTID_MODE <> ON.",
    ),
    ErrorCode.CANT_SET_SQL_AFTER_OR_BEFORE_GTIDS_WITH_ANONYMOUS_TO_GTID: (
        "HY000",
        "The SQL_AFTER_GTIDS or SQL_BEFORE_GTIDS clauses for START REPLICA cannot be used when "
        "the replication channel is configured with ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS = "
        "LOCAL|<UUID>.",
    ),
    ErrorCode.CHANGE_RPL_SRC_WRONG_COMPRESSION_ALGORITHM_SIZE: (
        "HY000",
        "Value too long setting SOURCE_COMPRESSION_ALGORITHMS option to a %d chars long string "
        "for channel '%.192s'.",
    ),
    ErrorCode.CHANGE_REPLICATION_SOURCE_NO_OPTIONS_FOR_GTID_ONLY: (
        "HY000",
        "GTID_ONLY cannot be enabled for replication channel '%.192s'. You need GTID_MODE = ON, "
        "SOURCE_AUTO_POSITION = 1 and REQUIRE_ROW_FORMAT = 1.",
    ),
    ErrorCode.CHANGE_REP_SOURCE_CANT_DISABLE_REQ_ROW_FORMAT_WITH_GTID_ONLY: (
        "HY000",
        "REQUIRE_ROW_FORMAT cannot be disabled for replication channel '%.192s' when GTID_ONLY=1.",
    ),
    ErrorCode.CHANGE_REP_SOURCE_CANT_DISABLE_AUTO_POSITION_WITH_GTID_ONLY: (
        "HY000",
        "SOURCE_AUTO_POSITION cannot be disabled for replication channel '%.192s' when "
        "GTID_ONLY=1.",
    ),
    ErrorCode.CHANGE_REP_SOURCE_CANT_DISABLE_GTID_ONLY_WITHOUT_POSITIONS: (
        "HY000",
        "When disabling GTID_ONLY and SOURCE_AUTO_POSITION FOR CHANNEL '%.192s' you must provide "
        "SOURCE_LOG_FILE and SOURCE_LOG_POS as source positions are invalid.",
    ),
    ErrorCode.CHANGE_REP_SOURCE_CANT_DISABLE_AUTO_POS_WITHOUT_POSITIONS: (
        "HY000",
        "When disabling SOURCE_AUTO_POSITION FOR CHANNEL '%.192s' you must provide "
        "SOURCE_LOG_FILE and SOURCE_LOG_POS as source positions are invalid.",
    ),
    ErrorCode.CANT_USE_GTID_ONLY_WITH_GTID_MODE_NOT_ON: (
        "HY000",
        "Replication cannot start%.192s with GTID_ONLY = 1 as this server uses "
        "@@GLOBAL.GTID_MODE <> ON.",
    ),
    ErrorCode.CRST_UNKNOWN_APPLIER_VERSION: (
        "HY000",
        "Invalid applier version specified in CHANGE REPLICATION SOURCE TO command. Refer to "
        "documentation for supported versions.",
    ),
    ErrorCode.CRST_APPLIER_WORKER_COUNT_OUT_OF_RANGE: (
        "HY000",
        "Coordinator thread count out of bounds. Please specify a value between 1 and 1024.",
    ),
    ErrorCode.CRST_APPLIER_WORKER_COUNT_ONLY_FOR_CSA: (
        "HY000",
        "Applier worker count can only be configured when using CSA applier version.",
    ),
    ErrorCode.CRST_APPLIER_EVENT_MEMORY_LIMIT_ONLY_FOR_CSA: (
        "HY000",
        "Applier event memory limit can only be configured when using CSA applier version.",
    ),
    ErrorCode.WARN_CRST_APPLIER_EVENT_MEMORY_LIMIT_OUT_OF_RANGE: (
        "HY000",
        "Applier event memory limit out of bounds. Actual limit has been set to the "
        "max_allowed_packet.",
    ),
    ErrorCode.CSA_UNSUPPORTED_UNTIL_COND: (
        "HY000",
        "Replica SQL for channel: '%s' Change Stream Applier accepts the following UNTIL "
        "conditions: SQL_BEFORE_GTIDS and SQL_AFTER_GTIDS",
    ),
    ErrorCode.CSA_CRST_DELAYED_APPLIER_NOT_SUPPORTED: (
        "HY000",
        "The Change Stream Applier does not currently support the SOURCE_DELAY option of the "
        "CHANGE REPLICATION SOURCE TO command. Please unset SOURCE_DELAY when using CSA.",
    ),
    ErrorCode.CSA_CRST_REQUIREMENT_ROW_FORMAT: (
        "HY000",
        "The Change Stream Applier currently supports row-based replication. Please set "
        "REQUIRE_ROW_FORMAT to 1 when using CSA.",
    ),
    ErrorCode.CSA_CRST_REQUIREMENT_GTID_ONLY: (
        "HY000",
        "The Change Stream Applier currently supports row-based replication with GTIDs. Please "
        "set GTID_ONLY to 1 when using CSA.",
    ),
    ErrorCode.REPLICA_FATAL_ERROR: ("HY000", "Fatal error: %s"),
    ErrorCode.REPLICA_INCIDENT: ("HY000", "The incident %s occurred on the source. Message: %s"),
    ErrorCode.REPLICA_SOURCE_COM_FAILURE: ("HY000", "Source command %s failed: %s"),
    ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE: ("HY000", "Relay log read failure: %s"),
    ErrorCode.REPLICA_RELAY_LOG_WRITE_FAILURE: ("HY000", "Relay log write failure: %s"),
}


def sqlstate_of(code: int) -> str:
    """The SQLSTATE for an error number; ``HY000`` for numbers outside the catalogue."""
    try:
        return CATALOGUE[ErrorCode(code)][0]
    except ValueError:
        return "HY000"


class ReplicaError(Exception):
    """Raised for any condition the replica reports to a client as a MySQL error."""

    def __init__(self, code: int, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.sqlstate = sqlstate or sqlstate_of(code)

    @classmethod
    def from_code(cls, code: ErrorCode, *args: object) -> ReplicaError:
        """Build the error whose message is the catalogue template filled with ``args``."""
        return cls(code, format_message(code, *args))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.message!r})"


class ParseError(ReplicaError):
    """Raised when a statement does not follow the grammar (1064 and its relatives)."""


def format_message(code: ErrorCode, *args: object) -> str:
    """The catalogue template of ``code`` with ``args`` substituted. A syntax error's quoted
    statement text never shows a password (``redact_secrets``)."""
    template = CATALOGUE[code][1]
    if code is ErrorCode.PARSE_ERROR:
        args = tuple(redact_secrets(a) if isinstance(a, str) else a for a in args)
    return template % args if args else template


_SECRET = re.compile(
    r"""((?<![A-Za-z0-9])PASSWORD\s*=\s*)('(?:[^'\\]|\\.|'')*'?|"(?:[^"\\]|\\.|"")*"?)""",
    re.IGNORECASE,
)
SECRET_MARK = "'<secret>'"


def redact_secrets(text: str) -> str:
    """``text`` (a statement, or part of one) with the quoted value of every ``PASSWORD =``
    (SOURCE_PASSWORD, MASTER_PASSWORD, START REPLICA's PASSWORD) replaced by '<secret>', as
    MySQL rewrites statements before it logs them. A value cut short by the end of ``text``
    is hidden too."""
    return _SECRET.sub(lambda found: found.group(1) + SECRET_MARK, text)


class Level(enum.Enum):
    """The Level column of SHOW WARNINGS."""

    NOTE = "Note"
    WARNING = "Warning"
    ERROR = "Error"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One row of SHOW WARNINGS: a note or warning raised by a statement that succeeded."""

    level: Level
    code: int
    message: str

    @classmethod
    def of(cls, level: Level, code: ErrorCode, *args: object) -> Diagnostic:
        return cls(level, int(code), format_message(code, *args))

    @classmethod
    def from_error(cls, error: ReplicaError) -> Diagnostic:
        return cls(Level.ERROR, error.code, error.message)


def deprecated(old: str, new: str) -> Diagnostic:
    """The 1287 warning MySQL 8.0 gives for an old spelling."""
    return Diagnostic.of(Level.WARNING, ErrorCode.WARN_DEPRECATED_SYNTAX, old, new)
