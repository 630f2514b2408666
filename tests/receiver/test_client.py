"""The receiver's client protocol against real servers: a Debian MariaDB and this project's
own server (issue 7 §1: authentication, the IO errors 2003, 2005 and 1045)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from pymysql._auth import scramble_caching_sha2, scramble_native_password

from spark_replica.applier_core.receiver.client import (
    SourceClient,
    SourceError,
    caching_sha2_scramble,
    native_scramble,
)
from tests.helpers.mariadb import REPL_PASSWORD, REPL_USER, MariaDB
from tests.helpers.server import ROOT_PASSWORD, running_server

NONCE = bytes(range(1, 21))


@pytest.mark.parametrize("password", ["", "secret", "pässwörd with spaces"])
def test_scrambles_match_an_independent_client(password: str) -> None:
    """The login answers equal pymysql's for the same password and nonce."""
    assert native_scramble(password, NONCE) == scramble_native_password(password.encode(), NONCE)
    assert caching_sha2_scramble(password, NONCE) == scramble_caching_sha2(password.encode(), NONCE)


def test_logs_in_to_mariadb_and_queries(mariadb: MariaDB) -> None:
    client = SourceClient.connect(mariadb.host, mariadb.port, REPL_USER, REPL_PASSWORD)
    try:
        assert client.handshake is not None
        assert "MariaDB" in client.handshake.server_version
        result = client.query("SELECT @@server_id, @@binlog_format, NULL AS nothing")
        assert result.columns == ["@@server_id", "@@binlog_format", "nothing"]
        assert result.rows == [("1", "ROW", None)]
        assert client.query("SET @master_binlog_checksum = 'CRC32'").rows == []
        mariadb.sql(
            "CREATE DATABASE IF NOT EXISTS shop; CREATE TABLE IF NOT EXISTS shop.names "
            "(id INT PRIMARY KEY, name VARCHAR(20)) CHARACTER SET utf8mb4; "
            "REPLACE INTO shop.names VALUES (1, 'Zoë ☃')"
        )
        assert client.query("SELECT id, name FROM shop.names").rows == [("1", "Zoë ☃")]
    finally:
        client.close()
        client.close()  # idempotent


def test_a_server_error_keeps_its_number_sqlstate_and_text(mariadb: MariaDB) -> None:
    client = SourceClient.connect(mariadb.host, mariadb.port, REPL_USER, REPL_PASSWORD)
    try:
        with pytest.raises(SourceError) as caught:
            client.query("SELECT * FROM no_such_db.t")
        error = caught.value
        assert (error.code, error.sqlstate, error.message) == (
            1146,
            "42S02",
            "Table 'no_such_db.t' doesn't exist",
        )
        assert client.query("SELECT 1").rows == [("1",)]  # the connection goes on
    finally:
        client.close()


def test_wrong_password_is_1045(mariadb: MariaDB) -> None:
    with pytest.raises(SourceError) as caught:
        SourceClient.connect(mariadb.host, mariadb.port, REPL_USER, "wrong")
    error = caught.value
    assert (error.code, error.sqlstate) == (1045, "28000")
    assert (
        error.message == f"Access denied for user '{REPL_USER}'@'127.0.0.1' (using password: YES)"
    )


def test_connection_refused_is_2003() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SourceError) as caught:
        SourceClient.connect("127.0.0.1", port, "u", "p", timeout=5)
    assert caught.value.code == 2003
    assert caught.value.message == f"Can't connect to MySQL server on '127.0.0.1:{port}' (111)"


def test_unknown_host_is_2005() -> None:
    with pytest.raises(SourceError) as caught:
        SourceClient.connect("no-such-host.invalid", 3306, "u", "p", timeout=5)
    assert caught.value.code == 2005
    assert caught.value.message.startswith("Unknown MySQL server host 'no-such-host.invalid'")


def test_logs_in_to_this_server(tmp_path: Path) -> None:
    """The same client logs in to the replica's own server (mysql_native_password)."""
    with running_server(tmp_path / "data") as server:
        client = SourceClient.connect("127.0.0.1", server.port, "root", ROOT_PASSWORD)
        try:
            assert client.query("SELECT 1 + 1 AS two").rows == [("2",)]
        finally:
            client.close()
        with pytest.raises(SourceError) as caught:
            SourceClient.connect("127.0.0.1", server.port, "root", "wrong")
        assert caught.value.code == 1045
