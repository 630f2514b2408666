"""A seeded generator of malformed and random SQL statements for fuzzing the server.

``StatementFuzzer(seed).statements(n)`` yields ``n`` statements; the same seed yields the same
statements, so a failure reproduces from the seed alone. The mix:

* random bytes decoded as text (NUL bytes, control characters, half-formed UTF-8);
* random token soup drawn from the replication statements' vocabulary;
* CHANGE REPLICATION SOURCE TO with broken option lists: unknown and legacy names, values of
  the wrong type, huge and negative numbers, nested quotes, NUL bytes, very long strings and
  identifiers, deep and unbalanced parentheses, unknown or invalid channels;
* START/STOP/RESET REPLICA, SHOW REPLICA STATUS and SHOW RELAYLOG EVENTS variants;
* SELECTs over the performance_schema and mysql replication tables with random columns,
  expressions, WHERE, GROUP BY, ORDER BY and LIMIT clauses;
* SET statements over the server's variables, unknown ones and user variables;

each of them possibly garbled afterwards (cut short, a token dropped, doubled or swapped, a
stray quote, parenthesis, backslash or NUL inserted).

Host values are loopback addresses or names that do not resolve, and ports numbers no source
listens on, so a statement that happens to be valid and starts a receiver finds no source to
replicate from.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator

from spark_replica.applier_core.settings import ALIASES, DEFINITIONS
from spark_replica.sql_handlers.parser.grammar import ALL_OPTIONS, LEGACY_OPTION_NAMES
from spark_replica.sql_handlers.tables.definitions import TABLES

CHANNELS = (
    "", "c1", "c2", "C1", "nosuch", "x" * 64, "x" * 65, "a\nb", "a'b", "a\\b", "c1 ", " c1",
    "group_replication_applier", "group_replication_recovery", "ü", "\x00",
)  # fmt: skip
NUMBERS = (
    "0", "1", "2", "3", "-1", "-0", "+1", "1024", "1025", "65535", "65536", str(1 << 31),
    str(1 << 32), str((1 << 63) - 1), str(1 << 63), str(1 << 64), str((1 << 64) + 1), "9" * 40,
    "9" * 400, "1.5", "0.0005", ".5", "5.", "1e3", "1e309", "-1e309", "1e-400", "0x0", "0x1F",
    "0x" + "F" * 40, "0xZZ", "0b101", "x'4142'", "b'101'", "1_000", "--1", "1..2", "NULL",
    "DEFAULT", "TRUE", "FALSE", "ON", "OFF", "LOCAL", "STREAM", "GENERATE",
)  # fmt: skip
STRINGS = (
    "'h1'", "''", "'127.0.0.1'", "'localhost'", "'it''s'", "'a\\'b'", '"dq"', "'\\0'",
    "'a\x00b'", "'\\\\'", "'%s%d%n'", "'😀'", "'\\'", "'''", "'a' 'b'", "N'x'",
    "_utf8mb4'x'", "`ident`", "'" + "y" * 300 + "'", "'3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5'",
    "'3E11FA47-71CA-11E1-9E33-C80AA9429562:5-1'", "'not-a-gtid'", "'uuid:1-5'", "'::'",
    "'a,b,c,d'", "'zlib,zstd,uncompressed,zlib'", "'TLSv1.2'", "'\n'", "'\t'",
)  # fmt: skip
LISTS = (
    "()", "(1)", "(1,2,3)", "(1,,2)", "(1,", "((1))", "('a')", "(-1)", "(18446744073709551616)",
    "(1 2)", ")(",
)  # fmt: skip
ACCOUNTS = ("'u'@'h'", "u@h", "'u'@", "@'h'", "''@''", "`u`@`h`", "'u'@'h'@'x'", "NULL")
SYMBOLS = ("=", ",", "(", ")", ";", ".", "@", "@@", "'", '"', "`", "\\", "*", "/*", "*/", "--")
JUNK = ("'", '"', "`", "(", ")", "\\", "\x00", ";", ",", "=", "/*", "#", "\n", "@", "%", "😀")
KEYWORDS = (
    "CHANGE", "REPLICATION", "SOURCE", "MASTER", "TO", "START", "STOP", "RESET", "SHOW",
    "REPLICA", "SLAVE", "STATUS", "ALL", "FOR", "CHANNEL", "UNTIL", "SQL_THREAD", "IO_THREAD",
    "RELAYLOG", "EVENTS", "IN", "FROM", "LIMIT", "OFFSET", "SELECT", "WHERE", "SET", "GLOBAL",
    "SESSION", "PERSIST", "USER", "PASSWORD", "NULL", "AND", "OR", "NOT",
)  # fmt: skip

_OPTION_NAMES = (
    *sorted(ALL_OPTIONS),
    *sorted(LEGACY_OPTION_NAMES),
    "BOGUS", "SOURCE_", "SOURCE_HOSTX", "MASTER_CONNECTION_AUTO_FAILOVER", "source_host",
    "`SOURCE_HOST`", "'SOURCE_HOST'", "SOURCE HOST", "X" * 300,
)  # fmt: skip
_VARIABLES = (
    *sorted(DEFINITIONS),
    *sorted(ALIASES),
    "autocommit", "sql_mode", "character_set_client", "wait_timeout", "nosuch", "x" * 300,
)  # fmt: skip
_VIRTUAL_TABLES = tuple(sorted(TABLES.values(), key=lambda t: (t.schema, t.name)))
_FUNCTIONS = (
    "COUNT", "SUM", "MIN", "MAX", "AVG", "CONCAT", "SUBSTR", "LENGTH", "UPPER", "LOWER",
    "COALESCE", "IFNULL", "ABS", "ROUND", "CAST", "IF", "NOSUCH", "GTID_SUBSET",
)  # fmt: skip
_COMPARISONS = ("=", "<>", "!=", "<", "<=", ">", ">=", "<=>", "LIKE", "NOT LIKE", "REGEXP")
_ARITHMETIC = ("+", "-", "*", "/", "%", "DIV", "||", "&&", "|", "&", "^", "<<", ">>")
_PATTERNS = ("'%'", "'_'", "'c%'", "'\\\\'", "'['", "'('", "'*'", "'a{99999999}'", "'(?P<'")
_WORD = re.compile(r"\s+")


class StatementFuzzer:
    """Random statements of every kind the module docstring lists, from one seed."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self._kinds: list[tuple[int, Callable[[], str]]] = [
            (2, self.random_text),
            (2, self.token_soup),
            (6, self.change_source),
            (3, self.replica_command),
            (5, self.select),
            (3, self.set_statement),
        ]

    def statements(self, count: int) -> Iterator[str]:
        """``count`` statements; about half of the structured ones are garbled afterwards."""
        weights = [w for w, _ in self._kinds]
        makers = [m for _, m in self._kinds]
        for _ in range(count):
            make = self.rng.choices(makers, weights)[0]
            sql = make()
            if make not in (self.random_text, self.token_soup) and self.rng.random() < 0.5:
                sql = self.garble(sql)
            yield sql

    # -- building blocks -----------------------------------------------------------------------
    def pick(self, choices: tuple[str, ...]) -> str:
        return self.rng.choice(choices)

    def parens(self) -> str:
        """Deep, possibly unbalanced, parentheses around a value."""
        depth = self.rng.choice((1, 2, 50, 500, 5000))
        inner = self.value()
        closing = depth + self.rng.choice((0, 0, 0, -1, 1))
        return "(" * depth + inner + ")" * max(closing, 0)

    def long_identifier(self) -> str:
        size = self.rng.choice((64, 65, 256, 10_000, 100_000))
        return self.rng.choice(("`", "")) + "i" * size + self.rng.choice(("`", ""))

    def value(self) -> str:
        kind = self.rng.random()
        if kind < 0.4:
            return self.pick(NUMBERS)
        if kind < 0.75:
            return self.pick(STRINGS)
        if kind < 0.85:
            return self.pick(LISTS)
        if kind < 0.9:
            return self.pick(ACCOUNTS)
        if kind < 0.95:
            return self.long_identifier()
        return self.parens()

    def channel_clause(self) -> str:
        name = self.pick(CHANNELS)
        return self.pick((
            "", "", f" FOR CHANNEL '{name}'", f" FOR CHANNEL '{name}'", f' FOR CHANNEL "{name}"',
            " FOR CHANNEL", f" FOR CHANNEL {name}", f" FOR '{name}'", f" CHANNEL '{name}'",
            f" FOR CHANNEL '{name}' '{name}'", " FOR CHANNEL 1", f" FOR CHANNEL `{name}`",
            " FOR CHANNEL NULL", f" FOR CHANNEL '{self.long_identifier()}'",
        ))  # fmt: skip

    def ending(self) -> str:
        return self.pick(("", "", "", ";", ";;", " ;", " garbage", " /* c */", " -- c", "\x00"))

    # -- statement kinds -----------------------------------------------------------------------
    def random_text(self) -> str:
        """Random bytes as text: Latin-1 keeps NULs and control bytes, UTF-8 mangles them."""
        data = bytes(self.rng.getrandbits(8) for _ in range(self.rng.randrange(1, 200)))
        prefix = self.pick(("", "", "SELECT ", "CHANGE REPLICATION SOURCE TO ", "SET ", "SHOW "))
        return prefix + data.decode(self.pick(("latin-1", "utf-8")), errors="replace")

    def token_soup(self) -> str:
        parts: list[str] = []
        for _ in range(self.rng.randrange(1, 15)):
            parts.append(self.rng.choice((self.pick(KEYWORDS), self.pick(SYMBOLS), self.value())))
        return " ".join(parts)

    def change_source(self) -> str:
        head = self.pick((
            "CHANGE REPLICATION SOURCE TO", "CHANGE REPLICATION SOURCE TO", "CHANGE MASTER TO",
            "change replication source to", "CHANGE REPLICATION SOURCE", "CHANGE SOURCE TO",
            "CHANGE REPLICATION TO", "CHANGE\nREPLICATION\tSOURCE /* x */ TO",
        ))  # fmt: skip
        options: list[str] = []
        for _ in range(self.rng.randrange(0, 7)):
            name = self.pick(_OPTION_NAMES)
            equals = self.pick(("=", "=", "=", " = ", "", "==", ":="))
            options.append(f"{name}{equals}{self.option_value(name)}")
        separator = self.pick((", ", ", ", ", ", ",", " ", ",, ", " AND "))
        trailing = self.pick(("", "", "", ",", ", ,"))
        return f"{head} {separator.join(options)}{trailing}{self.channel_clause()}{self.ending()}"

    def option_value(self, name: str) -> str:
        """Mostly a value of the right kind for ``name``, often one of another kind."""
        if self.rng.random() < 0.5:
            return self.value()
        if name.endswith(("HOST", "BIND")):
            return self.pick(("'127.0.0.1'", "'localhost'", "'h1'", "''", "'::1'"))
        if name.endswith("PORT"):
            return self.pick(("1", "0", "65535", "65536", "-1", str(1 << 64)))
        if name.endswith("IGNORE_SERVER_IDS"):
            return self.pick(LISTS)
        if name.endswith("PRIVILEGE_CHECKS_USER"):
            return self.pick(ACCOUNTS)
        if name.endswith(("USER", "PASSWORD", "FILE", "CA", "CERT", "KEY", "ALGORITHMS")):
            return self.pick(STRINGS)
        return self.pick(NUMBERS)

    def replica_command(self) -> str:
        word = self.pick(("REPLICA", "REPLICA", "SLAVE", "REPLICAS", ""))
        verb = self.pick(("START", "STOP", "RESET", "SHOW", "SHOW RELAYLOG"))
        if verb == "SHOW":
            return f"SHOW {word} STATUS{self.channel_clause()}{self.ending()}"
        if verb == "SHOW RELAYLOG":
            parts = ["SHOW RELAYLOG EVENTS"]
            if self.rng.random() < 0.5:
                parts.append(f"IN {self.pick(STRINGS)}")
            if self.rng.random() < 0.5:
                parts.append(f"FROM {self.pick(NUMBERS)}")
            if self.rng.random() < 0.5:
                parts.append(f"LIMIT {self.pick(NUMBERS)}")
                if self.rng.random() < 0.5:
                    parts.append(self.pick((",", "OFFSET")) + f" {self.pick(NUMBERS)}")
            return " ".join(parts) + self.channel_clause() + self.ending()
        threads = self.pick((
            "", "", "SQL_THREAD", "IO_THREAD", "SQL_THREAD, IO_THREAD", "RELAY_THREAD",
            "SQL_THREAD,", ", IO_THREAD", "SQL_THREAD IO_THREAD", "ALL",
        ))  # fmt: skip
        extra = ""
        if verb == "START" and self.rng.random() < 0.5:
            key = self.pick((
                "SQL_BEFORE_GTIDS", "SQL_AFTER_GTIDS", "SOURCE_LOG_FILE", "SOURCE_LOG_POS",
                "RELAY_LOG_FILE", "RELAY_LOG_POS", "MASTER_LOG_POS", "SQL_AFTER_MTS_GAPS",
            ))  # fmt: skip
            extra = f" UNTIL {key} = {self.value()}"
            if self.rng.random() < 0.3:
                extra += f", {self.pick(('SOURCE_LOG_POS', 'RELAY_LOG_FILE'))} = {self.value()}"
        if verb == "START" and self.rng.random() < 0.3:
            extra += f" USER={self.pick(STRINGS)} PASSWORD={self.pick(STRINGS)}"
        return f"{verb} {word} {threads}{extra}{self.channel_clause()}{self.ending()}"

    def select(self) -> str:
        table = self.rng.choice(_VIRTUAL_TABLES)
        columns = [c.name for c in table.columns]
        name = self.pick((
            f"{table.schema}.{table.name}", f"{table.schema}.{table.name}", table.name.upper(),
            f"`{table.schema}`.`{table.name}`", f"{table.schema}.nosuch", f"{table.schema}.",
            f"{table.schema}..{table.name}", f"{table.schema}.{table.name} AS t",
            f"{table.schema}.{table.name} t, {table.schema}.{table.name} u",
            f"{table.schema}.{table.name} JOIN shop.x", f"({table.schema}.{table.name})",
        ))  # fmt: skip
        projection = ", ".join(self.expression(columns, 2) for _ in range(self.rng.randrange(1, 4)))
        parts = [f"SELECT {self.pick(('', '', 'DISTINCT ', 'ALL '))}{projection} FROM {name}"]
        if self.rng.random() < 0.6:
            parts.append(f"WHERE {self.condition(columns, 3)}")
        if self.rng.random() < 0.2:
            parts.append(f"GROUP BY {self.expression(columns, 1)}")
            if self.rng.random() < 0.5:
                parts.append(f"HAVING {self.condition(columns, 1)}")
        if self.rng.random() < 0.3:
            order = self.pick((*columns, "1", "99", "-1", "NULL", "RAND()"))
            parts.append(f"ORDER BY {order} {self.pick(('', 'ASC', 'DESC', 'UP'))}")
        if self.rng.random() < 0.3:
            parts.append(f"LIMIT {self.pick(NUMBERS)}")
            if self.rng.random() < 0.3:
                parts.append(f"OFFSET {self.pick(NUMBERS)}")
        return " ".join(parts) + self.ending()

    def expression(self, columns: list[str], depth: int) -> str:
        roll = self.rng.random()
        if depth <= 0 or roll < 0.35:
            return self.pick((*columns, *columns, "*", "nosuch", "t.*", self.pick(NUMBERS),
                              self.pick(STRINGS), "@@server_id", "@u"))  # fmt: skip
        if roll < 0.6:
            name = self.pick(_FUNCTIONS)
            if name == "CAST":
                kind = self.pick(("UNSIGNED", "SIGNED", "CHAR", "DECIMAL(5,2)", "JSON", "NOSUCH"))
                return f"CAST({self.expression(columns, depth - 1)} AS {kind})"
            arguments = ", ".join(
                self.expression(columns, depth - 1) for _ in range(self.rng.randrange(0, 4))
            )
            return f"{name}({arguments})"
        if roll < 0.85:
            left = self.expression(columns, depth - 1)
            right = self.expression(columns, depth - 1)
            return f"{left} {self.pick(_ARITHMETIC)} {right}"
        return f"({self.expression(columns, depth - 1)})"

    def condition(self, columns: list[str], depth: int) -> str:
        roll = self.rng.random()
        if depth <= 0 or roll < 0.4:
            left = self.expression(columns, 1)
            operator = self.pick(_COMPARISONS)
            right = self.pick(_PATTERNS) if operator in ("LIKE", "NOT LIKE", "REGEXP") else None
            return f"{left} {operator} {right or self.expression(columns, 1)}"
        if roll < 0.6:
            joined = self.pick(("AND", "OR", "XOR", "&&", "||"))
            return f"{self.condition(columns, depth - 1)} {joined} {self.condition(columns, 0)}"
        if roll < 0.7:
            items = ", ".join(self.value() for _ in range(self.rng.randrange(0, 4)))
            return f"{self.pick(tuple(columns))} {self.pick(('IN', 'NOT IN'))} ({items})"
        if roll < 0.8:
            low, high = self.pick(NUMBERS), self.pick(STRINGS)
            return f"{self.pick(tuple(columns))} BETWEEN {low} AND {high}"
        if roll < 0.9:
            return f"{self.pick(tuple(columns))} IS {self.pick(('', 'NOT '))}NULL"
        return f"NOT ({self.condition(columns, depth - 1)})"

    def set_statement(self) -> str:
        assignments: list[str] = []
        for _ in range(self.rng.randrange(1, 4)):
            scope = self.pick((
                "", "GLOBAL ", "SESSION ", "PERSIST ", "PERSIST_ONLY ", "LOCAL ", "@@global.",
                "@@session.", "@@", "@", "@@persist.", "@@nosuch.",
            ))  # fmt: skip
            equals = self.pick(("=", "=", " = ", ":=", "", "=="))
            assignments.append(f"{scope}{self.pick(_VARIABLES)}{equals}{self.set_value()}")
        return "SET " + self.pick((", ", ", ", ",", " ")).join(assignments) + self.ending()

    def set_value(self) -> str:
        if self.rng.random() < 0.7:
            return self.value()
        return self.expression(["@@server_id", "@@replica_parallel_workers", "@u"], 2)

    # -- garbling ------------------------------------------------------------------------------
    def garble(self, sql: str) -> str:
        """``sql`` cut short, or with one token dropped, doubled or swapped, or with a stray
        character inserted."""
        how = self.rng.randrange(5)
        if how == 0 and sql:
            return sql[: self.rng.randrange(len(sql))]
        if how == 4:
            at = self.rng.randrange(len(sql) + 1)
            return sql[:at] + self.pick(JUNK) + sql[at:]
        words = _WORD.split(sql)
        i = self.rng.randrange(len(words))
        if how == 1:
            del words[i]
        elif how == 2:
            words.insert(i, words[i])
        else:
            j = self.rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        return " ".join(words)
