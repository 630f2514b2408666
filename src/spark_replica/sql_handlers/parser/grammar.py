"""Recursive-descent parser for the replication statements.

https://dev.mysql.com/doc/refman/8.4/en/sql-replication-statements.html

``parse`` returns ``None`` for anything that is not a replication statement, so the caller can
hand it to the general SQL path. Old spellings (SLAVE, MASTER, MASTER_*) are accepted with
MySQL 8.0's deprecation warning 1287 and mapped to the current names here, so the rest of the
code only ever sees replica/source names.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from spark_replica.applier_core.errors import (
    Diagnostic,
    ErrorCode,
    ParseError,
    ReplicaError,
    deprecated,
)
from spark_replica.sql_handlers.parser.statements import (
    BOTH_THREADS,
    Account,
    ChangeSource,
    ResetReplica,
    ShowRelaylogEvents,
    ShowReplicaStatus,
    StartReplica,
    Statement,
    StopReplica,
    ThreadType,
    Until,
    UntilKind,
)
from spark_replica.sql_handlers.parser.tokens import (
    Kind,
    Token,
    TokenCursor,
    syntax_error,
    tokenize,
)

MAX_PASSWORD_LENGTH = 32
#: The longest SOURCE_HOST in bytes (MySQL's HOSTNAME_LENGTH), and how much of a value too
#: long the error quotes.
MAX_HOST_BYTES = 255
QUOTED_BYTES = 70
#: Integer option values above this are refused (1210): metadata columns are 64-bit signed.
MAX_OPTION_INTEGER = (1 << 63) - 1

# Value classes of sql_yacc.yy: which literal each option takes.
STRING_OPTIONS = frozenset(
    {
        "SOURCE_HOST", "SOURCE_USER", "SOURCE_PASSWORD", "SOURCE_BIND", "NETWORK_NAMESPACE",
        "SOURCE_LOG_FILE", "RELAY_LOG_FILE", "SOURCE_SSL_CA", "SOURCE_SSL_CAPATH",
        "SOURCE_SSL_CERT", "SOURCE_SSL_CRL", "SOURCE_SSL_CRLPATH", "SOURCE_SSL_KEY",
        "SOURCE_SSL_CIPHER", "SOURCE_TLS_VERSION", "SOURCE_PUBLIC_KEY_PATH",
        "SOURCE_COMPRESSION_ALGORITHMS",
    }
)  # fmt: skip
NULLABLE_STRING_OPTIONS = frozenset({"SOURCE_TLS_CIPHERSUITES"})
INTEGER_OPTIONS = frozenset(
    {
        "SOURCE_PORT", "SOURCE_CONNECT_RETRY", "SOURCE_RETRY_COUNT", "SOURCE_DELAY",
        "RELAY_LOG_POS", "SOURCE_ZSTD_COMPRESSION_LEVEL", "SOURCE_AUTO_POSITION", "SOURCE_SSL",
        "SOURCE_SSL_VERIFY_SERVER_CERT", "GET_SOURCE_PUBLIC_KEY", "REQUIRE_ROW_FORMAT",
        "SOURCE_LOG_POS", "APPLIER_VERSION", "APPLIER_WORKER_COUNT",
        "APPLIER_EVENT_MEMORY_LIMIT",
    }
)  # fmt: skip
STRICT_INTEGER_OPTIONS = frozenset({"SOURCE_CONNECTION_AUTO_FAILOVER", "GTID_ONLY"})
OTHER_OPTIONS = frozenset(
    {
        "SOURCE_HEARTBEAT_PERIOD", "REQUIRE_TABLE_PRIMARY_KEY_CHECK",
        "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS", "IGNORE_SERVER_IDS", "PRIVILEGE_CHECKS_USER",
    }
)  # fmt: skip
ALL_OPTIONS = (
    STRING_OPTIONS | NULLABLE_STRING_OPTIONS | INTEGER_OPTIONS | STRICT_INTEGER_OPTIONS
) | OTHER_OPTIONS

#: Old option names and the ones that replace them.
LEGACY_OPTION_NAMES = {
    name.replace("SOURCE_", "MASTER_", 1): name for name in ALL_OPTIONS if "SOURCE_" in name
}
del LEGACY_OPTION_NAMES["MASTER_CONNECTION_AUTO_FAILOVER"]  # new in 8.0.22, never had an old name


class _Parser(TokenCursor):
    def __init__(self, sql: str) -> None:
        super().__init__(sql, tokenize(sql))
        self.warnings: list[Diagnostic] = []

    # -- token helpers -------------------------------------------------------------------------
    def error(self, token: Token | None = None) -> ParseError:
        return syntax_error(self.sql, token or self.token)

    def accept_word(self, *words: str) -> str | None:
        if self.token.is_word(*words):
            return self.advance().value
        return None

    def expect_word(self, *words: str) -> str:
        word = self.accept_word(*words)
        if word is None:
            raise self.error()
        return word

    def accept_symbol(self, symbol: str) -> bool:
        if self.token.is_symbol(symbol):
            self.advance()
            return True
        return False

    def expect_symbol(self, symbol: str) -> None:
        if not self.accept_symbol(symbol):
            raise self.error()

    def expect_string(self) -> str:
        if self.token.kind is not Kind.STRING:
            raise self.error()
        return self.advance().value

    def expect_unsigned(self, *, strict: bool = False) -> int:
        """ulong_num: integers and hex; decimals are truncated unless ``strict``."""
        token = self.token
        if token.kind is Kind.INTEGER:
            self.advance()
            return int(token.value)
        if token.kind is Kind.HEX:
            self.advance()
            return int(token.value, 16)
        if token.kind is Kind.DECIMAL:
            if strict:
                raise ParseError.from_code(ErrorCode.ONLY_INTEGERS_ALLOWED)
            self.advance()
            return _truncate(token.value)
        raise self.error()

    def finish(self) -> None:
        self.accept_symbol(";")
        if self.token.kind is not Kind.END:
            raise self.error()

    def channel_clause(self) -> str | None:
        if self.accept_word("FOR") is None:
            return None
        self.expect_word("CHANNEL")
        name = self.expect_string()
        if "\n" in name:
            raise ReplicaError.from_code(ErrorCode.WRONG_ARGUMENTS, "CHANNEL")
        return name.lower()

    def replica_word(self, statement: str) -> None:
        """REPLICA, or the deprecated SLAVE with its 1287 warning."""
        if self.accept_word("SLAVE"):
            self.warnings.append(deprecated(f"{statement} SLAVE", f"{statement} REPLICA"))
        else:
            self.expect_word("REPLICA")

    # -- statements ----------------------------------------------------------------------------
    def change_source(self) -> ChangeSource:
        self.expect_word("CHANGE")
        if self.accept_word("MASTER"):
            self.warnings.append(deprecated("CHANGE MASTER", "CHANGE REPLICATION SOURCE"))
        else:
            self.expect_word("REPLICATION")
            self.expect_word("SOURCE")
        self.expect_word("TO")
        options: dict[str, object] = {}
        while True:
            name, value = self.change_option()
            options.pop(name, None)  # a repeated option moves to where it was last given
            options[name] = value
            if not self.accept_symbol(","):
                break
        channel = self.channel_clause()
        self.finish()
        return ChangeSource(options, channel, self.warnings)

    def change_option(self) -> tuple[str, object]:
        token = self.token
        if token.kind is not Kind.WORD:
            raise self.error()
        name = token.value
        if name in LEGACY_OPTION_NAMES:
            self.warnings.append(deprecated(name, LEGACY_OPTION_NAMES[name]))
            name = LEGACY_OPTION_NAMES[name]
        elif name not in ALL_OPTIONS:
            raise self.error()
        self.advance()
        self.expect_symbol("=")
        return name, self.option_value(name)

    def option_value(self, name: str) -> object:
        if name in STRING_OPTIONS:
            value = self.expect_string()
            if name == "SOURCE_PASSWORD" and len(value) > MAX_PASSWORD_LENGTH:
                raise ReplicaError.from_code(ErrorCode.CHANGE_SOURCE_PASSWORD_LENGTH)
            if name == "SOURCE_HOST":
                check_host_name(value)
            return value
        if name in NULLABLE_STRING_OPTIONS:
            return None if self.accept_word("NULL") else self.expect_string()
        if name in INTEGER_OPTIONS:
            number = self.expect_unsigned()
            if number > MAX_OPTION_INTEGER:
                raise ReplicaError.from_code(ErrorCode.WRONG_ARGUMENTS, name)
            return number
        if name in STRICT_INTEGER_OPTIONS:
            token = self.token
            number = self.expect_unsigned(strict=True)
            if name == "GTID_ONLY" and number > 1:
                raise ParseError(
                    ErrorCode.PARSE_ERROR,
                    "You have an error in your CHANGE REPLICATION SOURCE syntax; GTID_ONLY only "
                    "accepts values 0 or 1",
                )
            if number > 1:
                raise self.error(token)
            return number
        return _SPECIAL_VALUES[name](self)

    def heartbeat_value(self) -> float:
        token = self.token
        if token.kind in (Kind.INTEGER, Kind.DECIMAL):
            self.advance()
            return float(token.value)
        if token.kind is Kind.HEX:
            self.advance()
            return float(int(token.value, 16))
        raise self.error()

    def primary_key_check_value(self) -> str:
        return self.expect_word("STREAM", "ON", "OFF", "GENERATE")

    def anonymous_gtids_value(self) -> str:
        word = self.accept_word("OFF", "LOCAL")
        return word if word is not None else self.expect_string()

    def server_ids_value(self) -> tuple[int, ...]:
        self.expect_symbol("(")
        ids: list[int] = []
        if not self.accept_symbol(")"):
            while True:
                ids.append(self.expect_unsigned())
                if self.accept_symbol(")"):
                    break
                self.expect_symbol(",")
        return tuple(sorted(set(ids)))

    def account_value(self) -> Account | None:
        if self.accept_word("NULL"):
            return None
        if self.token.kind is Kind.STRING or self.token.kind is Kind.QUOTED_ID:
            user = self.advance().value
        else:
            user = self.expect_word_value()
        host = "%"
        if self.accept_symbol("@"):
            if self.token.kind in (Kind.STRING, Kind.QUOTED_ID):
                host = self.advance().value
            else:
                host = self.expect_word_value()
        return Account(user, host)

    def expect_word_value(self) -> str:
        if self.token.kind is not Kind.WORD:
            raise self.error()
        token = self.advance()
        return self.sql[token.offset : token.offset + len(token.value)]

    def thread_types(self) -> frozenset[ThreadType]:
        threads: set[ThreadType] = set()
        while True:
            word = self.accept_word("SQL_THREAD", "IO_THREAD", "RELAY_THREAD")
            if word is None:
                if threads:
                    raise self.error()
                return BOTH_THREADS
            threads.add(ThreadType.SQL if word == "SQL_THREAD" else ThreadType.IO)
            if not self.accept_symbol(","):
                return frozenset(threads)

    def start_replica(self) -> StartReplica:
        self.expect_word("START")
        self.replica_word("START")
        threads = self.thread_types()
        until = self.until_clause() if self.accept_word("UNTIL") else None
        auth: dict[str, str] = {}
        while (
            word := self.accept_word("USER", "PASSWORD", "DEFAULT_AUTH", "PLUGIN_DIR")
        ) is not None:
            self.expect_symbol("=")
            auth[word] = self.expect_string()
        channel = self.channel_clause()
        self.finish()
        if auth and threads == frozenset({ThreadType.SQL}):
            raise ReplicaError.from_code(ErrorCode.SQLTHREAD_WITH_SECURE_REPLICA)
        return StartReplica(
            threads,
            until,
            auth.get("USER"),
            auth.get("PASSWORD"),
            auth.get("DEFAULT_AUTH"),
            auth.get("PLUGIN_DIR"),
            channel,
            self.warnings,
        )

    def until_clause(self) -> Until:
        items: dict[str, object] = {}
        while True:
            token = self.token
            word = token.value if token.kind is Kind.WORD else ""
            if word.startswith("MASTER_LOG_"):
                new = word.replace("MASTER_", "SOURCE_", 1)
                self.warnings.append(deprecated(word, new))
                word = new
            if word in ("SQL_BEFORE_GTIDS", "SQL_AFTER_GTIDS", "SOURCE_LOG_FILE", "RELAY_LOG_FILE"):
                self.advance()
                self.expect_symbol("=")
                items[word] = self.expect_string()
            elif word in ("SOURCE_LOG_POS", "RELAY_LOG_POS"):
                self.advance()
                self.expect_symbol("=")
                items[word] = self.expect_unsigned()
            elif word == "SQL_AFTER_MTS_GAPS":
                self.advance()
                items[word] = True
            else:
                raise self.error()
            if not self.accept_symbol(","):
                break
        return _until_of(items)

    def stop_replica(self) -> StopReplica:
        self.expect_word("STOP")
        self.replica_word("STOP")
        threads = self.thread_types()
        channel = self.channel_clause()
        self.finish()
        return StopReplica(threads, channel, self.warnings)

    def reset_replica(self) -> ResetReplica:
        self.expect_word("RESET")
        self.replica_word("RESET")
        everything = self.accept_word("ALL") is not None
        channel = self.channel_clause()
        self.finish()
        return ResetReplica(everything, channel, self.warnings)

    def show_relaylog_events(self) -> ShowRelaylogEvents:
        """https://dev.mysql.com/doc/refman/8.4/en/show-relaylog-events.html"""
        self.expect_word("SHOW")
        self.expect_word("RELAYLOG")
        self.expect_word("EVENTS")
        log_name = self.expect_string() if self.accept_word("IN") else None
        position = self.expect_unsigned() if self.accept_word("FROM") else None
        offset, limit = 0, None
        if self.accept_word("LIMIT"):
            limit = self.expect_unsigned()
            if self.accept_symbol(","):
                offset, limit = limit, self.expect_unsigned()
            elif self.accept_word("OFFSET"):
                offset = self.expect_unsigned()
        channel = self.channel_clause()
        self.finish()
        return ShowRelaylogEvents(log_name, position, offset, limit, channel, self.warnings)

    def show_replica_status(self) -> ShowReplicaStatus:
        self.expect_word("SHOW")
        legacy = self.accept_word("SLAVE") is not None
        if legacy:
            self.warnings.append(deprecated("SHOW SLAVE STATUS", "SHOW REPLICA STATUS"))
        else:
            self.expect_word("REPLICA")
        self.expect_word("STATUS")
        channel = self.channel_clause()
        self.finish()
        return ShowReplicaStatus(channel, legacy, self.warnings)


_SPECIAL_VALUES: dict[str, Callable[[_Parser], object]] = {
    "SOURCE_HEARTBEAT_PERIOD": _Parser.heartbeat_value,
    "REQUIRE_TABLE_PRIMARY_KEY_CHECK": _Parser.primary_key_check_value,
    "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS": _Parser.anonymous_gtids_value,
    "IGNORE_SERVER_IDS": _Parser.server_ids_value,
    "PRIVILEGE_CHECKS_USER": _Parser.account_value,
}


def _truncate(text: str) -> int:
    """The integer part of a decimal literal, exactly (MySQL's my_strtoll10 truncation)."""
    try:
        value = Decimal(text)
    except InvalidOperation:
        return 0
    if not value.is_finite() or value.adjusted() > 40:
        return MAX_OPTION_INTEGER + 1
    return int(value)


def _until_of(items: dict[str, object]) -> Until:
    """Combine UNTIL items; any mix other than one form gives 1277 (a parse-time error)."""
    bad = ReplicaError.from_code(ErrorCode.BAD_REPLICA_UNTIL_COND)
    keys = set(items)
    for gtid_kind in (UntilKind.SQL_BEFORE_GTIDS, UntilKind.SQL_AFTER_GTIDS):
        if keys == {gtid_kind.value}:
            return Until(gtid_kind, gtids=str(items[gtid_kind.value]))
    if keys == {"SQL_AFTER_MTS_GAPS"}:
        return Until(UntilKind.SQL_AFTER_MTS_GAPS)
    for prefix, kind in (("SOURCE", UntilKind.SOURCE_POS), ("RELAY", UntilKind.RELAY_POS)):
        if keys == {f"{prefix}_LOG_FILE", f"{prefix}_LOG_POS"}:
            pos = items[f"{prefix}_LOG_POS"]
            assert isinstance(pos, int)
            return Until(kind, log_file=str(items[f"{prefix}_LOG_FILE"]), log_pos=pos)
    raise bad


#: Leading keywords of each replication statement (SLAVE/MASTER aliases resolved inside).
_ROUTES: dict[tuple[str, str], Callable[[_Parser], Statement]] = {
    ("CHANGE", "REPLICATION"): _Parser.change_source,
    ("CHANGE", "MASTER"): _Parser.change_source,
    ("START", "REPLICA"): _Parser.start_replica,
    ("START", "SLAVE"): _Parser.start_replica,
    ("STOP", "REPLICA"): _Parser.stop_replica,
    ("STOP", "SLAVE"): _Parser.stop_replica,
    ("RESET", "REPLICA"): _Parser.reset_replica,
    ("RESET", "SLAVE"): _Parser.reset_replica,
    ("SHOW", "REPLICA"): _Parser.show_replica_status,
    ("SHOW", "SLAVE"): _Parser.show_replica_status,
    ("SHOW", "RELAYLOG"): _Parser.show_relaylog_events,
}


#: Words a MySQL statement may start with; anything else is a syntax error at its first word.
STATEMENT_KEYWORDS = frozenset(
    {
        "ALTER", "ANALYZE", "BEGIN", "CALL", "CHANGE", "CHECK", "COMMIT", "CREATE", "DELETE",
        "DESC", "DESCRIBE", "DO", "DROP", "EXPLAIN", "FLUSH", "GRANT", "HANDLER", "HELP",
        "INSERT", "INSTALL", "KILL", "LOAD", "LOCK", "OPTIMIZE", "PREPARE", "PURGE", "RENAME",
        "REPAIR", "REPLACE", "RESET", "REVOKE", "ROLLBACK", "SAVEPOINT", "SELECT", "SET",
        "SHOW", "START", "STOP", "TABLE", "TRUNCATE", "UNINSTALL", "UNLOCK", "UPDATE", "USE",
        "VALUES", "WITH", "XA", "(",
    }
)  # fmt: skip


def leading_word(sql: str) -> str:
    """The first word (or opening parenthesis) of ``sql``, upper case; '' when none.

    Raises the lexer's 1064 for an unterminated quote or comment.
    """
    first = tokenize(sql)[0]
    return first.value if first.kind in (Kind.WORD, Kind.SYMBOL) else ""


def leading_words(sql: str, count: int = 2) -> tuple[str, ...]:
    """The first ``count`` words of ``sql``, upper case (comments skipped).

    Raises the lexer's 1064 for an unterminated quote or comment.
    """
    tokens = tokenize(sql)
    return tuple(t.value for t in tokens[:count] if t.kind is Kind.WORD)


def parse(sql: str) -> Statement | None:
    """Parse a replication statement; ``None`` when ``sql`` is not one.

    >>> parse("STOP REPLICA FOR CHANNEL 'C1'").channel
    'c1'
    >>> parse("SELECT 1") is None
    True
    """
    words = leading_words(sql)
    route = _ROUTES.get((words[0], words[1])) if len(words) >= 2 else None
    if route is None:
        return None
    if words[0] == "SHOW":
        third = leading_words(sql, 3)[2:]
        if third != (("EVENTS",) if words[1] == "RELAYLOG" else ("STATUS",)):
            return None
    return route(_Parser(sql))


def check_host_name(host: str) -> None:
    """SOURCE_HOST as MySQL's parser checks a host name: at most ``MAX_HOST_BYTES`` bytes
    (1470, quoting its first ``QUOTED_BYTES`` bytes), and no ``@``."""
    encoded = host.encode("utf-8", "surrogateescape")
    if len(encoded) > MAX_HOST_BYTES:
        quoted = encoded[:QUOTED_BYTES].decode("utf-8", "ignore")
        raise ReplicaError.from_code(
            ErrorCode.WRONG_STRING_LENGTH, quoted, "host name", MAX_HOST_BYTES
        )
    if "@" in host:
        raise ReplicaError.from_code(
            ErrorCode.UNKNOWN_ERROR, "Malformed hostname (illegal symbol: '@')"
        )
