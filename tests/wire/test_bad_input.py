"""Hostile and malformed input: the server answers it, or drops only the offending
connection, and keeps serving every other client."""

from __future__ import annotations

import random
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import Any

import pymysql
import pytest
from pymysql.constants import COMMAND

from spark_replica.server.config import DEFAULT_BIND, ServerConfig, load_config
from tests.helpers.server import ROOT_PASSWORD, connect

MB = 1 << 20
SYNTAX = (
    "You have an error in your SQL syntax; check the manual that corresponds to your "
    "MySQL server version for the right syntax to use near"
)
SOCKET_TIMEOUT = 10.0
MAX_DRAIN_BYTES = 1 << 16


# -- helpers ---------------------------------------------------------------------------------
def mysql_error(excinfo: pytest.ExceptionInfo[pymysql.MySQLError]) -> tuple[int, str | None, str]:
    """(error number, SQLSTATE, message) of an error the server sent."""
    error = excinfo.value
    args: tuple[Any, ...] = error.args
    return int(args[0]), getattr(error, "sqlstate", None), str(args[1])


def run_failing(conn: Any, sql: str) -> tuple[int, str | None, str]:
    with conn.cursor() as cur, pytest.raises(pymysql.MySQLError) as excinfo:
        cur.execute(sql)
    return mysql_error(excinfo)


def select_one(conn: Any) -> Any:
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        return cur.fetchall()


def packet(payload: bytes, seq: int, length: int | None = None) -> bytes:
    """A MySQL packet: 3-byte little-endian length, sequence id, payload."""
    size = len(payload) if length is None else length
    return struct.pack("<I", size)[:3] + bytes([seq]) + payload


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"closed after {len(data)} of {size} bytes")
        data.extend(chunk)
    return bytes(data)


def read_packet(sock: socket.socket) -> tuple[int, bytes]:
    header = recv_exactly(sock, 4)
    length = int.from_bytes(header[:3], "little")
    return header[3], recv_exactly(sock, length)


def drain_until_closed(sock: socket.socket) -> bytes:
    """Everything the server still sends until it closes the connection."""
    received = bytearray()
    while len(received) < MAX_DRAIN_BYTES:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:
            break
        if not chunk:
            break
        received.extend(chunk)
    return bytes(received)


def assert_only_error_packets(data: bytes) -> None:
    """What a dropped connection may still receive: nothing, or error packets."""
    offset = 0
    while offset + 4 <= len(data):
        length = int.from_bytes(data[offset : offset + 3], "little")
        payload = data[offset + 4 : offset + 4 + length]
        assert payload[:1] == b"\xff", f"expected an error packet, got {payload[:40]!r}"
        offset += 4 + length
    assert offset == len(data), f"trailing bytes: {data[offset:]!r}"


@contextmanager
def raw_client(port: int) -> Iterator[socket.socket]:
    """A TCP connection that has read the server greeting and sent nothing."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT)
    with closing(sock):
        seq, greeting = read_packet(sock)
        assert seq == 0
        assert greeting[0] == 10, "protocol version 10 handshake"
        yield sock


# -- big statements --------------------------------------------------------------------------
def test_one_megabyte_literal_is_returned(server: int) -> None:
    value = "x" * MB
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute(f"SELECT '{value}'")
        rows = cur.fetchall()
    assert len(rows) == 1
    assert rows[0][0] == value


@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param("x" * MB, id="one-token"),
        pytest.param("garbage " * (MB // 8), id="many-tokens"),
        pytest.param("SELECT '" + "x" * MB, id="unterminated-string"),
        pytest.param("SELECT `" + "y" * MB, id="unterminated-identifier"),
    ],
)
def test_one_megabyte_garbage_is_a_syntax_error(server: int, garbage: str) -> None:
    with connect(server) as conn:
        code, sqlstate, message = run_failing(conn, garbage)
        assert (code, sqlstate) == (1064, "42000")
        assert message.startswith("You have an error in your SQL syntax")
        assert "\x1b" not in message
        # MySQL quotes at most 80 characters of the statement.
        near = message.removeprefix(SYNTAX + " '").rsplit("' at line ", 1)[0]
        assert len(near) <= 80
        assert near and near in garbage
        assert select_one(conn) == ((1,),)


def test_deeply_nested_parentheses_get_a_mysql_error(server: int) -> None:
    with connect(server) as conn:
        code, sqlstate, message = run_failing(conn, "SELECT " + "(" * 20_000)
        assert "recursion" not in message
        assert (code, sqlstate) in {(1064, "42000"), (1436, "HY000")}
        assert select_one(conn) == ((1,),)


# -- bytes that are not UTF-8 ------------------------------------------------------------------
def test_invalid_utf8_query_gets_an_error_and_the_connection_survives(server: int) -> None:
    with connect(server) as conn:
        conn._execute_command(COMMAND.COM_QUERY, b"\xff\xfe\x80 SELECT \xc3\x28 \xed\xa0\x80")
        with pytest.raises(pymysql.MySQLError) as excinfo:
            conn._read_query_result()
        code, _, message = mysql_error(excinfo)
        assert code >= 1000
        assert "\x1b" not in message
        assert select_one(conn) == ((1,),)
    with connect(server) as other:
        assert select_one(other) == ((1,),)


def test_unknown_command_byte_gets_an_error_and_the_connection_survives(server: int) -> None:
    with connect(server) as conn:
        conn._execute_command(0xEE, b"whatever")
        with pytest.raises(pymysql.MySQLError) as excinfo:
            conn._read_query_result()
        code, _, _ = mysql_error(excinfo)
        assert code == 1047
        assert select_one(conn) == ((1,),)


# -- raw TCP ---------------------------------------------------------------------------------
_RANDOM = random.Random(20240611)

RAW_PAYLOADS = {
    "random-bytes": bytes(_RANDOM.getrandbits(8) for _ in range(512)),
    "truncated-header": b"\x05\x00",
    "zero-length-packet": packet(b"", 1),
    "huge-length": packet(b"x" * 10, 1, length=0xFFFFFF),
    "wrong-sequence-id": packet(b"hello", 7),
    "short-handshake-response": packet(b"\x00\x02", 1),
}


@pytest.mark.parametrize("payload", RAW_PAYLOADS.values(), ids=RAW_PAYLOADS.keys())
def test_raw_garbage_after_greeting_drops_only_that_client(server: int, payload: bytes) -> None:
    with connect(server) as bystander:
        with raw_client(server) as sock:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            # The server must end this connection (not hang on it), at most saying why.
            assert_only_error_packets(drain_until_closed(sock))
        assert select_one(bystander) == ((1,),)
    with connect(server) as fresh:
        assert select_one(fresh) == ((1,),)


@pytest.mark.parametrize("payload", RAW_PAYLOADS.values(), ids=RAW_PAYLOADS.keys())
def test_raw_garbage_then_abrupt_close(server: int, payload: bytes) -> None:
    with raw_client(server) as sock:
        sock.sendall(payload)
    with connect(server) as fresh:
        assert select_one(fresh) == ((1,),)


def test_client_closing_before_greeting_is_harmless(server: int) -> None:
    for _ in range(20):
        socket.create_connection(("127.0.0.1", server), timeout=SOCKET_TIMEOUT).close()
    with connect(server) as fresh:
        assert select_one(fresh) == ((1,),)


def test_wrong_sequence_id_after_login_drops_only_that_connection(server: int) -> None:
    with connect(server) as bystander:
        victim = connect(server)
        try:
            sock = victim._sock
            sock.sendall(packet(b"\x03SELECT 1", 5))
            sock.shutdown(socket.SHUT_WR)
            assert_only_error_packets(drain_until_closed(sock))
        finally:
            victim._force_close()
        assert select_one(bystander) == ((1,),)


def _vanish_during_handshake(port: int) -> None:
    with raw_client(port) as sock:
        sock.sendall(packet(b"\x00" * 10, 1, length=100))


def _vanish_during_command(port: int) -> None:
    conn = connect(port)
    try:
        conn._sock.sendall(packet(b"\x03SELECT 1", 0, length=100)[:14])
    finally:
        conn._force_close()


def test_clients_vanishing_mid_packet_do_not_disturb_a_busy_connection(server: int) -> None:
    queries = 300
    vanishing = 60
    errors: list[BaseException] = []
    answers: list[int] = []
    ready = threading.Barrier(2, timeout=30)

    def busy() -> None:
        try:
            with connect(server) as conn, conn.cursor() as cur:
                ready.wait()
                for i in range(queries):
                    cur.execute("SELECT %s", (i,))
                    answers.append(int(cur.fetchone()[0]))
        except BaseException as e:
            errors.append(e)

    def vanish() -> None:
        try:
            ready.wait()
            for i in range(vanishing):
                (_vanish_during_command if i % 2 else _vanish_during_handshake)(server)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=busy), threading.Thread(target=vanish)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert answers == list(range(queries))
    with connect(server) as fresh:
        assert select_one(fresh) == ((1,),)


# -- statements the server does not know ------------------------------------------------------
@pytest.mark.parametrize(
    "sql",
    [
        "FOO BAR",
        "CHANGE REPLICATION FILTER REPLICATE_DO_DB=(d)",
        "START REPLICA FOR",
        "STOP REPLICA FOR CHANNEL",
        "SHOW REPLICA STATUS FOR CHANNEL",
        "SELEC 1",
        "SELECT 1 FROM",
        "SELECT 1 1 1",
        "'",
        "`",
        "\\",
        "CHANGE",
        "STOP",
        "RESET",
        "SELECT",
        "START",
        "SELECT 1; SELECT 2",
    ],
)
def test_unknown_or_malformed_statement(server: int, sql: str) -> None:
    with connect(server) as conn:
        code, sqlstate, message = run_failing(conn, sql)
        assert code in (1064, 1235)
        assert sqlstate == "42000"
        if code == 1064:
            assert message.startswith(SYNTAX + " '")
            assert message.endswith("' at line 1")
        assert "\x1b" not in message
        assert select_one(conn) == ((1,),)


@pytest.mark.parametrize(
    "sql",
    [
        "FOO BAR 'x",
        "x'",
        "SELECT 'abc",
        'SELECT "abc',
        "SELECT `abc",
        "STOP REPLICA FOR CHANNEL 'c1",
        "/* unterminated comment",
        "SELECT 1 /* unterminated comment",
    ],
)
def test_unterminated_quote_or_comment_is_a_syntax_error(server: int, sql: str) -> None:
    with connect(server) as conn:
        code, sqlstate, message = run_failing(conn, sql)
        assert (code, sqlstate) == (1064, "42000")
        assert message.startswith(SYNTAX)
        assert select_one(conn) == ((1,),)


@pytest.mark.parametrize(
    "sql",
    [
        "",
        " ",
        "\n\t  \r\n",
        ";",
        " ; ",
        ";;",
    ],
)
def test_empty_query(server: int, sql: str) -> None:
    with connect(server) as conn:
        assert run_failing(conn, sql) == (1065, "42000", "Query was empty")
        assert select_one(conn) == ((1,),)


@pytest.mark.parametrize("sql", ["/* only a comment */", "-- only a comment"])
def test_comment_only_query_is_ok(server: int, sql: str) -> None:
    # MySQL answers a statement that is only a comment with OK (Com_empty_query).
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute(sql)
        assert cur.description is None
        assert select_one(conn) == ((1,),)


MALFORMED = [
    "FOO BAR",
    "SELEC 1",
    "SELECT 1 FROM",
    "SELECT 1 1 1",
    "'",
    "`",
    "START REPLICA FOR",
    "STOP REPLICA FOR CHANNEL",
    "CHANGE REPLICATION SOURCE TO",
    "SHOW REPLICA STATUS FOR CHANNEL",
    "   ",
]


def test_hundred_malformed_statements_then_select(server: int) -> None:
    with connect(server) as conn:
        thread_id = conn.thread_id()
        for i in range(100):
            code, sqlstate, message = run_failing(conn, MALFORMED[i % len(MALFORMED)])
            assert code in (1064, 1065), message
            assert sqlstate == "42000"
        assert select_one(conn) == ((1,),)
        assert conn.thread_id() == thread_id


# -- authentication --------------------------------------------------------------------------
def _login_error(port: int, user: str, password: str) -> tuple[int, str | None, str]:
    with pytest.raises(pymysql.MySQLError) as excinfo:
        connect(port, user=user, password=password).close()
    return mysql_error(excinfo)


@pytest.mark.parametrize(
    ("user", "password", "good_password"),
    [
        ("root", "wrong", ROOT_PASSWORD),
        ("reader", "wrong", "reader-secret"),
        ("root", "", ROOT_PASSWORD),
    ],
)
def test_wrong_password_repeatedly_then_right_one(
    server: int, user: str, password: str, good_password: str
) -> None:
    using = "YES" if password else "NO"
    for _ in range(10):
        code, sqlstate, message = _login_error(server, user, password)
        assert (code, sqlstate) == (1045, "28000")
        assert message.startswith(f"Access denied for user '{user}'@")
        assert message.endswith(f"(using password: {using})")
    with connect(server, user=user, password=good_password) as conn:
        assert select_one(conn) == ((1,),)


def test_unknown_user_is_denied_like_a_wrong_password(server: int) -> None:
    for _ in range(3):
        code, sqlstate, message = _login_error(server, "nobody", "secret")
        assert (code, sqlstate) == (1045, "28000")
        assert message.startswith("Access denied for user 'nobody'@")
    with connect(server) as conn:
        assert select_one(conn) == ((1,),)


# -- defaults --------------------------------------------------------------------------------
def test_binds_to_loopback_by_default() -> None:
    assert DEFAULT_BIND == "127.0.0.1"
    assert ServerConfig().bind == "127.0.0.1"
    config = load_config(environ={})
    assert config.bind == "127.0.0.1"
    assert config.port == 3307
