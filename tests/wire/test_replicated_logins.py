"""Logins with replicated accounts as MySQL 8 logs them: caching_sha2_password accounts log
in with their password over TLS (full authentication) and are refused in plain text (no RSA
key pair to give a client that asks for one), mysql_native_password accounts in either, a
locked account gets 3118, an account with a plugin the replica cannot check gets 1045, and
what the account may read is enforced (pymysql and Connector/Python)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mysql.connector
import pymysql
import pytest

from spark_replica.applier_core.storage import InMemoryEngine, TransactionRef
from spark_replica.applier_core.storage.accounts.passwords import native_hash, sha2_hash
from spark_replica.server.components import default_components
from tests.helpers.certs import self_signed
from tests.helpers.server import running_server

pytestmark = pytest.mark.timeout(60)

#: A caching_sha2_password hash with a salt holding quotes and a backslash, logged by MySQL
#: as a hex literal.
SHA2 = sha2_hash("sha-pw", b"a'b\\c\"d0123456789xyz")
STATEMENTS = (
    "CREATE DATABASE shop",
    "CREATE TABLE shop.t (id INT PRIMARY KEY)",
    "CREATE TABLE shop.hidden (id INT PRIMARY KEY)",
    "CREATE USER 'sha'@'%' IDENTIFIED WITH 'caching_sha2_password' AS 0x"
    + SHA2.encode("latin-1").hex()
    + " REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK",
    f"CREATE USER 'nat'@'127.0.0.1' IDENTIFIED WITH 'mysql_native_password' AS "
    f"'{native_hash('nat-pw')}'",
    f"CREATE USER 'nat'@'%' IDENTIFIED WITH 'mysql_native_password' AS '{native_hash('other')}'",
    "CREATE USER 'locked'@'%' IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19' "
    "ACCOUNT LOCK",
    "CREATE USER 'pam'@'%' IDENTIFIED WITH authentication_pam AS 'mysql'",
    "GRANT SELECT ON shop.t TO 'sha'@'%'",
    "GRANT SELECT ON shop.* TO 'nat'@'127.0.0.1'",
)


@pytest.fixture
def tls_port(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    engine = InMemoryEngine()
    session = engine.session("source")
    for number, statement in enumerate(STATEMENTS, 1):
        session.begin(TransactionRef(f"3e11fa47-71ca-11e1-9e33-c80aa9429562:{number}", number))
        session.apply_ddl(statement, None)
        session.prepare()
        session.commit()
    cert, key = self_signed(tmp_path / "tls", "replica")
    with running_server(tmp_path / "data", default_components(engine), ssl_cert=str(cert),
                        ssl_key=str(key)) as server:  # fmt: skip
        yield server.port, cert


def _pymysql(port: int, user: str, password: str, **options: Any) -> Any:
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password,
                           autocommit=True, connect_timeout=10, **options)  # fmt: skip


def _error(action: Any) -> int:
    with pytest.raises((pymysql.err.MySQLError, mysql.connector.Error)) as caught:
        action()
    error = caught.value
    return int(error.errno if isinstance(error, mysql.connector.Error) else error.args[0])


def _tables(conn: Any) -> list[str]:
    cursor = conn.cursor()
    cursor.execute("SHOW TABLES FROM shop")
    return [row[0] for row in cursor.fetchall()]


def test_caching_sha2_password_accounts_log_in_over_tls(tls_port: tuple[int, Path]) -> None:
    port, cert = tls_port
    with _pymysql(port, "sha", "sha-pw", ssl={"ca": str(cert)}) as conn:
        assert _tables(conn) == ["t"]
        with conn.cursor() as cursor:
            with pytest.raises(pymysql.err.MySQLError) as caught:
                cursor.execute("SELECT * FROM shop.hidden")
            assert caught.value.args[0] == 1142
    connector = mysql.connector.connect(host="127.0.0.1", port=port, user="sha",
                                        password="sha-pw", use_pure=True,
                                        ssl_ca=str(cert), connection_timeout=10)  # fmt: skip
    try:
        assert _tables(connector) == ["t"]
    finally:
        connector.close()
    assert _error(lambda: _pymysql(port, "sha", "wrong", ssl={"ca": str(cert)})) == 1045
    # Plain text (pymysql upgrades to TLS when the server offers it, unless told not to):
    # the client asks for an RSA public key, which the replica has not.
    assert _error(lambda: _pymysql(port, "sha", "sha-pw", ssl_disabled=True)) == 1045


def test_native_accounts_locked_accounts_and_other_plugins(tls_port: tuple[int, Path]) -> None:
    port, _ = tls_port
    with _pymysql(port, "nat", "nat-pw", ssl_disabled=True) as conn:  # '127.0.0.1' before '%'
        assert _tables(conn) == ["hidden", "t"]
    assert _error(lambda: _pymysql(port, "nat", "other")) == 1045
    with pytest.raises(pymysql.err.MySQLError) as caught:
        _pymysql(port, "locked", "password")
    assert caught.value.args == (
        3118,
        "Access denied for user 'locked'@'127.0.0.1'. Account is locked.",
    )
    assert _error(lambda: _pymysql(port, "pam", "mysql")) == 1045
