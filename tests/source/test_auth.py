"""Logging in to the built-in source: mysql_native_password, caching_sha2_password's full
authentication (RSA key fetched or given, or TLS) and then its fast path, MySQL's 1045 for a
wrong password or an unknown user, and TLS itself. A third-party client (PyMySQL) checks that
the server speaks the MySQL protocol and not only to our own client."""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from pathlib import Path

import pymysql
import pytest

from spark_replica.applier_core.receiver.client import Security, SourceClient, SourceError
from spark_replica.applier_core.receiver.protocol import (
    CLIENT_PROTOCOL_41,
    CLIENT_SSL,
    PacketStream,
    parse_error,
)
from spark_replica.tools.source import Account, SourceServer
from tests.helpers.certs import self_signed, server_context
from tests.source.conftest import (
    NATIVE_PASSWORD,
    NATIVE_USER,
    REPL_PASSWORD,
    REPL_USER,
    UUID,
    Connect,
    MakeBinlog,
    StartServer,
)

NO_KEY = Security()  # neither TLS nor an RSA key: only the fast path can work


@pytest.fixture
def server(make_binlog: MakeBinlog, start_server: StartServer) -> SourceServer:
    return start_server(make_binlog(3))


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate and its key (PEM files)."""
    return self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def tls_server(
    make_binlog: MakeBinlog, start_server: StartServer, certificate: tuple[Path, Path]
) -> SourceServer:
    return start_server(make_binlog(3), ssl_context=server_context(*certificate))


def _refused(run: Callable[[], object]) -> SourceError:
    with pytest.raises(SourceError) as caught:
        run()
    return caught.value


def _denied(user: str, using: str = "YES") -> tuple[int, str, str]:
    return (1045, "28000", f"Access denied for user '{user}'@'127.0.0.1' (using password: {using})")


def _error(error: SourceError) -> tuple[int, str, str]:
    return (error.code, error.sqlstate, error.message)


def _works(client: SourceClient) -> None:
    assert client.query("SELECT @@GLOBAL.SERVER_UUID").rows == [(UUID,)]


# -- mysql_native_password -------------------------------------------------------------------------


def test_native_password_right(server: SourceServer, connect: Connect) -> None:
    """The greeting offers caching_sha2_password; the account's plugin is
    mysql_native_password: the server switches plugins and the scramble is checked."""
    client = connect(server, NATIVE_USER, NATIVE_PASSWORD, NO_KEY)
    assert client.handshake is not None
    assert client.handshake.plugin == "caching_sha2_password"
    _works(client)


def test_native_password_wrong(server: SourceServer, connect: Connect) -> None:
    error = _refused(lambda: connect(server, NATIVE_USER, "wrong", NO_KEY))
    assert _error(error) == _denied(NATIVE_USER)


def test_native_password_empty_is_using_password_no(server: SourceServer, connect: Connect) -> None:
    error = _refused(lambda: connect(server, NATIVE_USER, "", NO_KEY))
    assert _error(error) == _denied(NATIVE_USER, "NO")


def test_an_account_without_a_password(
    make_binlog: MakeBinlog, start_server: StartServer, connect: Connect
) -> None:
    server = start_server(make_binlog(), accounts=[Account("open", "")])
    _works(connect(server, "open", "", NO_KEY))
    error = _refused(lambda: connect(server, "open", "something", NO_KEY))
    assert _error(error) == _denied("open")


# -- caching_sha2_password -------------------------------------------------------------------------


def test_caching_sha2_full_authentication_with_the_fetched_key_then_the_fast_path(
    server: SourceServer, connect: Connect
) -> None:
    """GET_SOURCE_PUBLIC_KEY=1: the first login asks for the server's RSA key and sends the
    password encrypted with it; the password is then cached, and the next login succeeds on
    the fast path alone (a client with neither key nor TLS could not do a full one)."""
    _works(connect(server, security=Security(get_public_key=True)))
    _works(connect(server, security=NO_KEY))


def test_caching_sha2_full_authentication_with_a_public_key_file(
    server: SourceServer, connect: Connect, tmp_path: Path
) -> None:
    """SOURCE_PUBLIC_KEY_PATH: the server's public key read from a file."""
    path = tmp_path / "public.pem"
    path.write_bytes(server.authenticator.keys().public_pem)
    _works(connect(server, security=Security(public_key_path=str(path))))
    _works(connect(server, security=NO_KEY))


def test_caching_sha2_first_login_without_tls_or_key_is_refused(
    server: SourceServer, connect: Connect
) -> None:
    error = _refused(lambda: connect(server, security=NO_KEY))
    assert (error.code, error.message) == (
        2061,
        "Authentication plugin 'caching_sha2_password' reported error: Authentication "
        "requires secure connection.",
    )
    # and the password did not get cached by it
    assert _refused(lambda: connect(server, security=NO_KEY)).code == 2061


@pytest.mark.parametrize("cached", [False, True])
def test_caching_sha2_wrong_password_is_denied(
    server: SourceServer, connect: Connect, cached: bool
) -> None:
    """A wrong password fails the full authentication (RSA), whether or not the right one
    was cached (the fast path fails, and the full one too)."""
    if cached:
        connect(server)
    error = _refused(lambda: connect(server, REPL_USER, "wrong"))
    assert _error(error) == _denied(REPL_USER)


def test_unknown_user_is_denied(server: SourceServer, connect: Connect) -> None:
    error = _refused(lambda: connect(server, "ghost", "whatever"))
    assert _error(error) == _denied("ghost")
    error = _refused(lambda: connect(server, "ghost", ""))
    assert _error(error) == _denied("ghost", "NO")


def test_a_wrong_password_does_not_use_the_fast_path_of_another_login(
    server: SourceServer, connect: Connect
) -> None:
    """The cache is per account: native_password's account logging in does not cache the
    caching_sha2_password account."""
    connect(server, NATIVE_USER, NATIVE_PASSWORD, NO_KEY)
    assert _refused(lambda: connect(server, security=NO_KEY)).code == 2061


# -- TLS -------------------------------------------------------------------------------------------


def test_tls_login_sends_the_password_over_the_encrypted_connection(
    tls_server: SourceServer, connect: Connect
) -> None:
    client = connect(tls_server, security=Security(use_ssl=True))
    assert client.encrypted
    _works(client)
    error = _refused(lambda: connect(tls_server, REPL_USER, "wrong", Security(use_ssl=True)))
    assert _error(error) == _denied(REPL_USER)
    # the password is cached now: a plain connection logs in on the fast path
    plain = connect(tls_server, security=NO_KEY)
    assert not plain.encrypted
    _works(plain)


def test_tls_with_native_password(tls_server: SourceServer, connect: Connect) -> None:
    client = connect(tls_server, NATIVE_USER, NATIVE_PASSWORD, Security(use_ssl=True))
    assert client.encrypted
    _works(client)


def test_tls_with_the_certificate_verified(
    tls_server: SourceServer, connect: Connect, certificate: tuple[Path, Path]
) -> None:
    security = Security(use_ssl=True, ca=str(certificate[0]))
    client = connect(tls_server, security=security)
    assert client.encrypted
    _works(client)


def test_ssl_against_a_server_without_tls_is_2026(server: SourceServer, connect: Connect) -> None:
    error = _refused(lambda: connect(server, security=Security(use_ssl=True)))
    message = "SSL connection error: SSL is required but the server doesn't support it"
    assert (error.code, error.message) == (2026, message)


def test_an_ssl_request_to_a_server_without_tls_is_a_bad_handshake(
    server: SourceServer,
) -> None:
    """A client that sends an SSLRequest anyway gets ER_HANDSHAKE_ERROR (1043, 08S01)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        stream = PacketStream(sock)
        greeting = stream.read_packet()
        assert greeting[0] == 10
        stream.write_packet(struct.pack("<IIB23x", CLIENT_PROTOCOL_41 | CLIENT_SSL, 1 << 24, 45))
        error = parse_error(stream.read_packet())
    assert _error(error) == (1043, "08S01", "Bad handshake")


# -- another client ------------------------------------------------------------------------------


def test_pymysql_logs_in_and_queries(server: SourceServer) -> None:
    """An independent MySQL client (PyMySQL) with a mysql_native_password account."""
    connection = pymysql.connect(host="127.0.0.1", port=server.port, user=NATIVE_USER,
                                 password=NATIVE_PASSWORD, connect_timeout=10)  # fmt: skip
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT @@GLOBAL.SERVER_UUID")
            assert cursor.fetchall() == ((UUID,),)
            cursor.execute("SHOW BINARY LOGS")
            rows = cursor.fetchall()
            assert [d[0] for d in cursor.description] == ["Log_name", "File_size", "Encrypted"]
        assert rows == tuple((name, size, "No") for name, size in server.binlog.files())
    finally:
        connection.close()


def test_pymysql_with_caching_sha2_over_the_fast_path(
    server: SourceServer, connect: Connect
) -> None:
    connect(server)  # a full authentication caches the password
    connection = pymysql.connect(host="127.0.0.1", port=server.port, user=REPL_USER,
                                 password=REPL_PASSWORD, connect_timeout=10)  # fmt: skip
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT @@GLOBAL.SERVER_ID, @@GLOBAL.GTID_MODE")
            assert cursor.fetchall() == ((7, "ON"),)
    finally:
        connection.close()
