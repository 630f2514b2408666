"""The protocol layer on mysql-mimic: one place where errors cross to the wire, and the
connection fixes real clients need.

- Every error reaches the client with its MySQL number, SQLSTATE and message
  (``to_mysql_error``); sqlglot parse errors and statement bytes the client's character set
  cannot decode become 1064 without terminal colour codes.
- Error messages and column names reach a client whose ``character_set_results`` cannot
  represent some of their characters with '?' in their place, as MySQL converts them.
- Result columns carry their whole definition (``column_defs``): character set 63 for
  bytes, lengths, decimals, NOT_NULL/UNSIGNED/PRI_KEY flags, and the table they come from,
  in the text and the binary protocol alike.
- OK packets carry affected rows and the warning count of the statement.
- The result-set terminator carries 0 affected rows, as MySQL sends it (MariaDB Connector/J
  fails on anything else).
- COM_STMT_PREPARE sends no EOF after the parameters when the client asked for DEPRECATE_EOF.
- A connection that ends before or during its handshake gives one INFO line, not a stack.
- A statement ended by KILL QUERY gets 1317 ``Query execution was interrupted`` (SQLSTATE
  70100), as from MySQL; mysql-mimic sends 3169 "Query was killed".
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, cast

from mysql_mimic import ResultSet
from mysql_mimic import errors as mimic_errors
from mysql_mimic.charset import CharacterSet
from mysql_mimic.connection import Connection
from mysql_mimic.constants import KillKind
from mysql_mimic.control import LocalControl
from mysql_mimic.errors import MysqlError
from mysql_mimic.packets import (
    make_binary_resultrow,
    make_column_count,
    parse_com_stmt_execute,
)
from mysql_mimic.prepared import PreparedStatement
from mysql_mimic.stream import ConnectionClosed
from mysql_mimic.types import ServerStatus, uint_len
from mysql_mimic.utils import aiterate, cooperative_iterate
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError

from spark_replica.applier_core.errors import (
    CATALOGUE,
    ErrorCode,
    ReplicaError,
    format_message,
)
from spark_replica.server.auth import denial_code
from spark_replica.server.column_defs import ColumnDefinitions, definition_packets
from spark_replica.server.quiet_log import exc_info_if_debug
from spark_replica.sql_handlers.query.column_meta import ColumnMeta

logger = logging.getLogger(__name__)

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Text result rows framed per write to the stream.
_ROWS_PER_WRITE = 1000


def install_sqlstates() -> None:
    """Teach mysql-mimic the SQLSTATE of every error in the catalogue."""
    for code, (sqlstate, _) in CATALOGUE.items():
        mimic_errors.SQLSTATES[cast(mimic_errors.ErrorCode, int(code))] = sqlstate.encode()


def to_mysql_error(error: BaseException, sql: str = "") -> MysqlError:
    """The single translation of any exception into what the client receives."""
    if isinstance(error, MysqlError):
        return error
    if isinstance(error, ReplicaError):
        return MysqlError(error.message, cast(mimic_errors.ErrorCode, error.code))
    if isinstance(error, SqlglotParseError | TokenError):
        return MysqlError(_parse_error_message(error, sql), mimic_errors.ErrorCode.PARSE_ERROR)
    if isinstance(error, UnicodeDecodeError):
        # Statement bytes that are not text in the client's character set: MySQL's lexer
        # stops at the first of them.
        near = error.object[error.start :].decode(error.encoding, errors="replace")
        return MysqlError(
            format_message(ErrorCode.PARSE_ERROR, near[:80], 1), mimic_errors.ErrorCode.PARSE_ERROR
        )
    if isinstance(error, RecursionError):
        # MySQL's parser gives up on deep nesting with 1064 "memory exhausted".
        near = sql.strip()[:80]
        return MysqlError(
            f"memory exhausted near '{near}' at line 1", mimic_errors.ErrorCode.PARSE_ERROR
        )
    text = _ANSI.sub("", str(error)) or type(error).__name__
    first = text.strip().splitlines()[0] if text.strip() else text
    logger.error("internal error: %s: %s", type(error).__name__, first,
                 exc_info=exc_info_if_debug(logger, error))  # fmt: skip
    return MysqlError(text, mimic_errors.ErrorCode.UNKNOWN_ERROR)


def _parse_error_message(error: Exception, sql: str) -> str:
    line, col = 1, 1
    details = getattr(error, "errors", None)
    if details:
        line = int(details[0].get("line") or 1)
        col = int(details[0].get("col") or 1)
        highlight = _ANSI.sub("", str(details[0].get("highlight") or ""))
        col = max(1, col - len(highlight) + 1)
    lines = sql.splitlines() or [""]
    text_line = lines[min(line, len(lines)) - 1]
    offset = sum(len(x) + 1 for x in lines[: line - 1]) + col - 1
    near = sql[offset:] if text_line else ""
    return format_message(ErrorCode.PARSE_ERROR, near.rstrip().rstrip(";"), line)


def encodable(text: str, charset: CharacterSet) -> str:
    """``text`` with each character ``charset`` cannot represent shown as '?', as MySQL
    converts messages and column names to ``character_set_results``."""
    return text.encode(charset.codec, errors="replace").decode(charset.codec)


class ReplicaConnection(Connection):
    """mysql-mimic's connection with MySQL's OK/EOF contents (see module docstring)."""

    peer_host = "localhost"
    client_address = "localhost"

    async def start(self) -> None:
        """Serve the connection; one that ends before or during its handshake (a health
        probe, a wrong password, a client gone) is logged in one INFO line, not as a stack."""
        try:
            await super().start()
        except (ConnectionClosed, ConnectionError, asyncio.IncompleteReadError) as error:
            logger.info("connection %s from %s ended: %s",
                        self.connection_id, self.client_address, type(error).__name__)  # fmt: skip
        except MysqlError as error:
            logger.info("connection %s from %s refused: %d: %s", self.connection_id,
                        self.client_address, int(error.code), error.msg)  # fmt: skip
        except Exception as error:  # a fault of the server's: one line, the stack at DEBUG
            logger.error("connection %s from %s failed: %s: %s", self.connection_id,
                         self.client_address, type(error).__name__, error,
                         exc_info=exc_info_if_debug(logger, error))  # fmt: skip

    def _definitions(self, result_set: ResultSet) -> Sequence[ColumnMeta]:
        kept: ColumnDefinitions | None = getattr(self.session, "column_definitions", None)
        return kept.take(result_set) if kept is not None else ()

    def _statement_info(self) -> tuple[int, int]:
        session: Any = self.session
        return int(getattr(session, "affected_rows", 0)), int(getattr(session, "warning_count", 0))

    def ok(self, **kwargs: Any) -> bytes:
        if "affected_rows" not in kwargs and "eof" not in kwargs:
            affected, warnings = self._statement_info()
            kwargs.setdefault("affected_rows", affected)
            kwargs.setdefault("warnings", warnings)
        return super().ok(**kwargs)

    def ok_or_eof(
        self,
        affected_rows: int = 0,
        last_insert_id: int = 0,
        warnings: int = 0,
        flags: int = 0,
    ) -> bytes:
        del affected_rows  # MySQL's terminator never carries a row count.
        _, warning_count = self._statement_info()
        return super().ok_or_eof(0, last_insert_id, warnings or warning_count, flags)

    def error(self, **kwargs: Any) -> bytes:
        refused = denial_code.get()
        if refused is not None and kwargs.get("code") == mimic_errors.ErrorCode.ACCESS_DENIED_ERROR:
            denial_code.set(None)  # a refused login that is not 1045 (auth: a locked account)
            kwargs["code"] = cast(mimic_errors.ErrorCode, int(refused))
        killed = kwargs.get("code") == mimic_errors.ErrorCode.SESSION_WAS_KILLED
        if killed and self._kill is KillKind.QUERY:
            interrupted = ErrorCode.QUERY_INTERRUPTED
            kwargs["code"] = cast(mimic_errors.ErrorCode, int(interrupted))
            kwargs["msg"] = format_message(interrupted)
        if "msg" in kwargs:
            kwargs["msg"] = encodable(str(kwargs["msg"]), self.server_charset)
        return super().error(**kwargs)

    async def write_text_resultset(self, result_set: ResultSet) -> None:
        """mysql-mimic's text result set, with each column's whole definition
        (``column_defs``) and column names in the results' character set."""
        for column in result_set.columns:
            column.name = encodable(column.name, self.server_charset)
        header = [make_column_count(capabilities=self.capabilities,
                                    column_count=len(result_set.columns))]  # fmt: skip
        header += definition_packets(self.server_charset, result_set,
                                     self._definitions(result_set))  # fmt: skip
        if not self.deprecate_eof():
            header.append(self.eof())
        self.stream.write_many(header)
        columns, count, batch = result_set.columns, 0, []
        async for row in cooperative_iterate(aiterate(result_set.rows)):
            count += 1
            batch.append(row)
            if len(batch) >= _ROWS_PER_WRITE:
                self.stream.write_text_rows(batch, columns)
                batch = []
                await self.stream.drain()
        if batch:
            self.stream.write_text_rows(batch, columns)
        await self.stream.write(self.ok_or_eof(affected_rows=count), drain=False)
        await self.stream.drain()

    async def handle_query(self, data: bytes) -> None:
        """COM_QUERY; text the client's character set cannot decode is a syntax error (1064),
        not an internal one. A failure while rows stream (Spark fails a task) reaches the
        client with its MySQL number, and the log in one line."""
        try:
            await super().handle_query(data)
        except MysqlError:
            raise
        except Exception as e:
            raise to_mysql_error(e) from e

    async def handle_stmt_execute(self, data: bytes) -> None:
        """COM_STMT_EXECUTE as mysql-mimic runs it, with each column's whole definition and
        COM_QUERY's translation of failures."""
        try:
            await self._stmt_execute(data)
        except MysqlError:
            raise
        except Exception as e:
            raise to_mysql_error(e) from e

    async def _stmt_execute(self, data: bytes) -> None:
        execute = parse_com_stmt_execute(capabilities=self.capabilities,
                                         client_charset=self.client_charset, data=data,
                                         get_stmt=self.get_stmt)  # fmt: skip
        execute.stmt.param_buffers = None
        result_set = await self.query(execute.sql, execute.query_attrs)
        if not result_set:
            await self.stream.write(self.ok())
            return
        await self.stream.write(uint_len(len(result_set.columns)))
        definitions = self._definitions(result_set)
        for packet in definition_packets(self.server_charset, result_set, definitions):
            await self.stream.write(packet)
        columns = result_set.columns

        async def binary_rows() -> AsyncIterator[bytes]:
            async for row in cooperative_iterate(aiterate(result_set.rows)):
                yield make_binary_resultrow(row, columns)

        rows = binary_rows()
        if execute.use_cursor:
            execute.stmt.cursor = rows
            await self.stream.write(self.ok_or_eof(flags=ServerStatus.SERVER_STATUS_CURSOR_EXISTS))
            return
        if not self.deprecate_eof():
            await self.stream.write(self.eof())
        async for packet in rows:
            await self.stream.write(packet)
        await self.stream.write(self.ok_or_eof())

    def com_stmt_prepare_response(self, statement: PreparedStatement) -> Iterator[bytes]:
        packets = list(super().com_stmt_prepare_response(statement))
        if statement.num_params and self.deprecate_eof():
            packets = packets[:-1]
        return iter(packets)


class ReplicaControl(LocalControl):
    """mysql-mimic's connection registry (KILL), which also lists the connections (SHOW
    PROCESSLIST)."""

    def connections(self) -> list[Connection]:
        return list(self._connections.values())
