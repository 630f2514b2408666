"""TLS between MySQL clients and the replica server (``ssl_cert``/``ssl_key``), and the
anonymous login that the server refuses.

With a certificate and key configured the server offers TLS as MySQL does: a client may
upgrade (pymysql, Connector/Python and the mariadb CLI all do here) or stay in plain text.
Without them a client that insists on TLS gets a clear 2026 and every other client works
as before. Each TLS check looks at the client's own socket, so a session that silently
stayed in plain text fails.
"""

from __future__ import annotations

import socket
import ssl
import struct
import subprocess
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import mysql.connector
import pymysql
import pytest

from tests.helpers.certs import self_signed
from tests.helpers.idle_applier import IdleComponents
from tests.helpers.server import ROOT_PASSWORD, connect, running_server

pytestmark = pytest.mark.timeout(60)

CSA_CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1 FOR CHANNEL 'c1'"
)
#: Connections in a row: pymysql's handshake hung against mysql-mimic 3.0.5 most times.
ROUNDS = 20
#: pymysql and Connector/Python's words when TLS is required and the server offers none.
NO_TLS = "SSL is required but the server doesn't support it"
TLS_VERSIONS = ("TLSv1.2", "TLSv1.3")

#: pymysql's socket timeouts; the TLS handshake runs under the write timeout.
TIMEOUTS = {"connect_timeout": 10, "read_timeout": 10, "write_timeout": 10}

Certs = tuple[Path, Path]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    """A self-signed certificate for localhost and 127.0.0.1, and its key."""
    return self_signed(tmp_path_factory.mktemp("tls"), "replica")


@pytest.fixture
def tls_server(tmp_path: Path, idle: IdleComponents, certs: Certs) -> Iterator[int]:
    """A running replica configured with TLS; yields its port."""
    cert, key = certs
    with running_server(
        tmp_path / "data", idle.components(), ssl_cert=str(cert), ssl_key=str(key)
    ) as background:
        yield background.port


def run_mariadb(
    program: str, port: int, *args: str, user: str = "root", password: str = ROOT_PASSWORD
) -> subprocess.CompletedProcess[str]:
    """The mariadb CLI with no option files; TLS as ``args`` say."""
    command = [
        program,
        "--no-defaults",
        "--protocol=TCP",
        "--host=127.0.0.1",
        f"--port={port}",
        f"--user={user}",
        f"--password={password}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)


def add_channel(port: int, **tls: Any) -> None:
    with closing(connect(port, **{**TIMEOUTS, **tls})) as conn, conn.cursor() as cursor:
        cursor.execute(CSA_CHANNEL)


def select_one_and_replica_status(cursor: Any) -> None:
    cursor.execute("SELECT 1")
    assert [tuple(row) for row in cursor.fetchall()] == [(1,)]
    cursor.execute("SHOW REPLICA STATUS")
    names = [column[0] for column in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    assert [(row["Channel_Name"], row["Source_Host"]) for row in rows] == [("c1", "h1")]


def connector(port: int, user: str = "root", password: str = ROOT_PASSWORD, **options: Any) -> Any:
    return mysql.connector.connect(
        host="127.0.0.1",
        port=port,
        user=user,
        password=password,
        use_pure=True,
        autocommit=True,
        connection_timeout=10,
        **options,
    )


# -- pymysql ---------------------------------------------------------------------------------

#: pymysql's TLS options, from the certificate's path.
PYMYSQL_TLS: dict[str, Callable[[Path], dict[str, Any]]] = {
    # The chain and the host name checked against the certificate.
    "ssl-dict-ca": lambda cert: {"ssl": {"ca": str(cert)}},
    "ssl_ca-verify-identity": lambda cert: {
        "ssl_ca": str(cert),
        "ssl_verify_cert": True,
        "ssl_verify_identity": True,
    },
    # Encrypted without checking the certificate.
    "ssl_ca-no-verify": lambda cert: {"ssl_ca": str(cert), "ssl_verify_cert": False},
    "ssl-dict-cert-none": lambda _: {"ssl": {"verify_mode": ssl.CERT_NONE}},
    # pymysql 1.2's default: TLS when the server offers it.
    "preferred-default": lambda _: {},
}


@pytest.mark.parametrize("options", PYMYSQL_TLS.values(), ids=PYMYSQL_TLS.keys())
def test_pymysql_over_tls_connection_after_connection(
    tls_server: int, certs: Certs, options: Callable[[Path], dict[str, Any]]
) -> None:
    """Each handshake completes (it hung when mysql-mimic lost the buffered ClientHello) and
    the session is encrypted end to end for queries and replication statements."""
    tls = {**options(certs[0]), **TIMEOUTS}
    add_channel(tls_server, **tls)
    for _ in range(ROUNDS):
        with closing(connect(tls_server, **tls)) as conn:
            assert isinstance(conn._sock, ssl.SSLSocket)
            assert conn._sock.version() in TLS_VERSIONS
            assert conn._sock.cipher() is not None
            assert conn.get_server_info().startswith("8.")
            with conn.cursor() as cursor:
                select_one_and_replica_status(cursor)


def test_pymysql_many_statements_and_large_packets_on_one_tls_session(
    tls_server: int, certs: Certs
) -> None:
    """After the upgrade the stream reads TLS records of every size: small statements in a
    row and a statement of several TLS records (300 kB), in both directions."""
    add_channel(tls_server, ssl_ca=str(certs[0]))
    with closing(connect(tls_server, ssl_ca=str(certs[0]), **TIMEOUTS)) as conn:
        assert isinstance(conn._sock, ssl.SSLSocket)
        with conn.cursor() as cursor:
            for _ in range(ROUNDS):
                select_one_and_replica_status(cursor)
            large = "x" * 300_000
            cursor.execute("SELECT %s AS v", (large,))
            assert cursor.fetchall() == ((large,),)


def test_pymysql_verifying_a_different_ca_is_refused(tls_server: int, tmp_path: Path) -> None:
    """The server presents its configured certificate: a client trusting another CA fails."""
    other, _ = self_signed(tmp_path / "other", "other")
    with pytest.raises(pymysql.err.OperationalError) as caught:
        connect(tls_server, ssl={"ca": str(other)}, **TIMEOUTS)
    assert caught.value.args[0] == 2003
    assert "CERTIFICATE_VERIFY_FAILED" in caught.value.args[1]


# -- the ClientHello in the same segment as the SSLRequest -----------------------------------

CLIENT_SSL = 0x800
CLIENT_PROTOCOL_41 = 0x200
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_PLUGIN_AUTH = 0x80000


def _read_packet(sock: socket.socket) -> bytes:
    header = _read_exactly(sock, 4)
    return _read_exactly(sock, int.from_bytes(header[:3], "little"))


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, "the server closed the connection"
        data += chunk
    return data


def _ssl_request() -> bytes:
    flags = CLIENT_SSL | CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH
    payload = struct.pack("<IIB23s", flags, 1 << 24, 45, b"")
    return len(payload).to_bytes(3, "little") + b"\x01" + payload


def test_clienthello_sent_with_the_ssl_request_in_one_write(tls_server: int) -> None:
    """The deterministic form of the pymysql hang: the SSLRequest and the ClientHello leave
    in a single write, so the server's stream reader holds the ClientHello when the TLS
    upgrade starts. The handshake must complete from those bytes."""
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = client.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with socket.create_connection(("127.0.0.1", tls_server), timeout=10) as sock:
        greeting = _read_packet(sock)
        assert greeting[0] == 10
        with pytest.raises(ssl.SSLWantReadError):
            tls.do_handshake()
        sock.sendall(_ssl_request() + outgoing.read())
        while True:
            chunk = sock.recv(65536)  # times out (10 s) if the server lost the ClientHello
            assert chunk, "the server closed the connection during the handshake"
            incoming.write(chunk)
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                sock.sendall(outgoing.read())
                continue
            sock.sendall(outgoing.read())
            break
        assert tls.version() in TLS_VERSIONS


def test_non_tls_bytes_after_the_ssl_request_close_that_connection_only(
    tls_server: int,
) -> None:
    """A client that asks for TLS and then sends something else is disconnected (no hang);
    the server goes on serving."""
    with socket.create_connection(("127.0.0.1", tls_server), timeout=10) as sock:
        _read_packet(sock)
        sock.sendall(_ssl_request() + b"GET / HTTP/1.0\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):  # at most a TLS alert, then the end
            received += chunk
        assert len(received) < 100
    with closing(connect(tls_server, ssl_disabled=True)) as conn, conn.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == ((1,),)


def test_a_client_leaving_after_the_ssl_request_is_disconnected(tls_server: int) -> None:
    with socket.create_connection(("127.0.0.1", tls_server), timeout=10) as sock:
        _read_packet(sock)
        sock.sendall(_ssl_request())
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(65536):  # the server closes its side; a hang times out here
            pass
    with closing(connect(tls_server, ssl_ca=None, **TIMEOUTS)) as conn, conn.cursor() as cursor:
        assert isinstance(conn._sock, ssl.SSLSocket)
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == ((1,),)


# -- mysql-connector-python ------------------------------------------------------------------


@pytest.mark.parametrize("verify", [True, False], ids=["verify-identity", "no-verification"])
def test_mysql_connector_over_tls(tls_server: int, certs: Certs, verify: bool) -> None:
    tls = {"ssl_ca": str(certs[0]), "ssl_verify_cert": verify, "ssl_verify_identity": verify}
    add_channel(tls_server, ssl_ca=str(certs[0]))
    for _ in range(ROUNDS):
        with closing(connector(tls_server, **tls)) as conn:
            assert conn.is_secure
            assert isinstance(conn._socket.sock, ssl.SSLSocket)
            assert conn._socket.sock.version() in TLS_VERSIONS
            with closing(conn.cursor(buffered=True)) as cursor:
                select_one_and_replica_status(cursor)


# -- the mariadb CLI -------------------------------------------------------------------------


@pytest.mark.clients
@pytest.mark.parametrize(
    "tls",
    [["--ssl", "--skip-ssl-verify-server-cert"], ["--ssl-ca={cert}", "--ssl-verify-server-cert"]],
    ids=["no-verification", "verify-server-cert"],
)
def test_mariadb_cli_over_tls(tls_server: int, certs: Certs, mariadb: str, tls: list[str]) -> None:
    options = [option.format(cert=certs[0]) for option in tls]
    add_channel(tls_server, ssl_ca=str(certs[0]))
    status = run_mariadb(mariadb, tls_server, *options, "-e", "\\s")
    assert status.returncode == 0, status.stderr
    ssl_line = [line for line in status.stdout.splitlines() if line.startswith("SSL:")]
    assert len(ssl_line) == 1 and "Cipher in use is " in ssl_line[0], status.stdout
    done = run_mariadb(
        mariadb, tls_server, *options, "--batch", "-e", "SELECT 1; SHOW REPLICA STATUS\\G"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["1", "1"]
    assert "Channel_Name: c1" in done.stdout


# -- a server without TLS --------------------------------------------------------------------


def test_without_tls_a_client_requiring_it_gets_a_clear_error(server: int, certs: Certs) -> None:
    with pytest.raises(pymysql.err.OperationalError) as caught:
        connect(server, ssl={"ca": str(certs[0])}, **TIMEOUTS)
    assert caught.value.args == (2026, NO_TLS)
    with pytest.raises(mysql.connector.Error) as error:
        connector(server, ssl_ca=str(certs[0]), ssl_verify_cert=True)
    assert (error.value.errno, error.value.msg) == (2026, NO_TLS)


@pytest.mark.clients
def test_without_tls_mariadb_requiring_it_gets_a_clear_error(
    server: int, certs: Certs, mariadb: str
) -> None:
    done = run_mariadb(
        mariadb, server, f"--ssl-ca={certs[0]}", "--ssl-verify-server-cert", "-e", "SELECT 1"
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "ERROR 2026 (HY000): TLS/SSL error: SSL is required, but the server does not support it"
    )


def test_without_tls_plain_and_preferring_clients_work(server: int) -> None:
    """pymysql's and Connector/Python's defaults (TLS if offered) fall back to plain text."""
    with closing(connect(server)) as conn, conn.cursor() as cursor:
        assert not isinstance(conn._sock, ssl.SSLSocket)
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == ((1,),)
    with closing(connector(server)) as conn, closing(conn.cursor(buffered=True)) as cursor:
        assert not conn.is_secure
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == [(1,)]


# -- a server with TLS still serves plain-text clients (MySQL's default) ---------------------


def test_with_tls_plain_clients_are_still_served(tls_server: int) -> None:
    add_channel(tls_server, ssl_disabled=True)
    with closing(connect(tls_server, ssl_disabled=True)) as conn, conn.cursor() as cursor:
        assert not isinstance(conn._sock, ssl.SSLSocket)
        select_one_and_replica_status(cursor)
    with closing(connector(tls_server, ssl_disabled=True)) as conn:
        assert not conn.is_secure
        with closing(conn.cursor(buffered=True)) as cursor:
            select_one_and_replica_status(cursor)


@pytest.mark.clients
def test_with_tls_mariadb_skip_ssl_is_served(tls_server: int, mariadb: str) -> None:
    done = run_mariadb(mariadb, tls_server, "--skip-ssl", "-e", "\\s")
    assert done.returncode == 0, done.stderr
    assert "SSL:\t\t\tNot in use" in done.stdout.splitlines()


# -- the anonymous login ---------------------------------------------------------------------
# pymysql and the mariadb CLI replace an empty user name with the login name of the process;
# Connector/Python sends it as it is.


@pytest.mark.parametrize(
    ("password", "using"), [("", "NO"), ("secret", "YES")], ids=["no-password", "password"]
)
def test_anonymous_login_is_refused(server: int, password: str, using: str) -> None:
    with pytest.raises(mysql.connector.Error) as error:
        connector(server, user="", password=password)
    assert (error.value.errno, error.value.sqlstate, error.value.msg) == (
        1045,
        "28000",
        f"Access denied for user ''@'127.0.0.1' (using password: {using})",
    )


def test_anonymous_login_over_tls_is_refused(tls_server: int, certs: Certs) -> None:
    with pytest.raises(mysql.connector.Error) as error:
        connector(tls_server, user="", password="", ssl_ca=str(certs[0]), ssl_verify_cert=True)
    assert (error.value.errno, error.value.msg) == (
        1045,
        "Access denied for user ''@'127.0.0.1' (using password: NO)",
    )
