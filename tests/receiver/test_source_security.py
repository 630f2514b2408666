"""Secured connections to the built-in source through CHANGE REPLICATION SOURCE (issue 7 §1):
caching_sha2_password's full authentication over TLS (SOURCE_SSL=1, with the CA checked
when SOURCE_SSL_CA is given) or with the source's RSA key (SOURCE_PUBLIC_KEY_PATH); without
either, MySQL's 2061."""

from __future__ import annotations

from pathlib import Path

from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.certs import self_signed, server_context
from tests.helpers.replica_channel import change_source_at, io_stops, wait_applied
from tests.helpers.server import connect
from tests.unit.csa_apply.harness import engine_content

SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=60, clients=2)


def test_tls_with_the_ca_checked(tmp_path: Path, port: int, engine: InMemoryEngine) -> None:
    cert, key = self_signed(tmp_path / "tls")
    with (
        running_source(tmp_path / "source", SPEC, ssl_context=server_context(cert, key)) as (
            source
        ),
        connect(port) as conn,
        conn.cursor() as cursor,
    ):
        cursor.execute(change_source_at("localhost", source.port, REPL_USER, REPL_PASSWORD,
                                        SOURCE_SSL=1, SOURCE_SSL_CA=f"'{cert}'",
                                        SOURCE_SSL_VERIFY_SERVER_CERT=1))  # fmt: skip
        cursor.execute("START REPLICA FOR CHANNEL 'm1'")
        source.live.start()
        status = wait_applied(cursor, source.all_gtids())
        assert (status["Source_SSL_Allowed"], status["Last_IO_Errno"]) == ("Yes", 0)
        cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert engine_content(engine) == source.content


def test_tls_to_a_source_with_another_certificate_fails_with_2026(
    tmp_path: Path, port: int
) -> None:
    cert, key = self_signed(tmp_path / "tls")
    other, _ = self_signed(tmp_path / "other", "other")
    with (
        running_source(tmp_path / "source", SPEC, ssl_context=server_context(cert, key)) as (
            source
        ),
        connect(port) as conn,
        conn.cursor() as cursor,
    ):
        status = io_stops(cursor, change_source_at(
            "localhost", source.port, REPL_USER, REPL_PASSWORD, SOURCE_SSL=1,
            SOURCE_SSL_CA=f"'{other}'", SOURCE_RETRY_COUNT=1,
        ))  # fmt: skip
    assert status["Last_IO_Errno"] == 2026
    assert "SSL connection error: " in status["Last_IO_Error"]


def test_the_sources_rsa_key_from_a_file(tmp_path: Path, port: int, engine: InMemoryEngine) -> None:
    with running_source(tmp_path / "source", SPEC) as source, connect(port) as conn:
        public_key = tmp_path / "source-public.pem"
        public_key.write_bytes(source.server.authenticator.keys().public_pem)
        with conn.cursor() as cursor:
            cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                            SOURCE_PUBLIC_KEY_PATH=f"'{public_key}'"))  # fmt: skip
            cursor.execute("START REPLICA FOR CHANNEL 'm1'")
            source.live.start()
            wait_applied(cursor, source.all_gtids())
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert engine_content(engine) == source.content


def test_no_secure_way_to_send_the_password_is_2061(tmp_path: Path, port: int) -> None:
    with running_source(tmp_path / "source", SPEC) as source, connect(port) as conn:
        with conn.cursor() as cursor:
            status = io_stops(cursor, change_source_at(
                "127.0.0.1", source.port, REPL_USER, REPL_PASSWORD, SOURCE_RETRY_COUNT=1,
            ))  # fmt: skip
    assert status["Last_IO_Errno"] == 2061
    assert status["Last_IO_Error"].endswith(
        "Message: Authentication plugin 'caching_sha2_password' reported error: "
        "Authentication requires secure connection."
    )


def test_credentials_of_start_replica_win_over_the_stored_ones(
    tmp_path: Path, port: int, engine: InMemoryEngine
) -> None:
    """START REPLICA USER=... PASSWORD=...: used for this run, never stored."""
    with running_source(tmp_path / "source", SPEC) as source, connect(port) as conn:
        with conn.cursor() as cursor:
            cursor.execute(change_source_at("127.0.0.1", source.port, "nobody", "wrong",
                                            GET_SOURCE_PUBLIC_KEY=1))  # fmt: skip
            cursor.execute(f"START REPLICA USER='{REPL_USER}' PASSWORD='{REPL_PASSWORD}' "
                           "FOR CHANNEL 'm1'")  # fmt: skip
            source.live.start()
            status = wait_applied(cursor, source.all_gtids())
            assert (status["Source_User"], status["Last_IO_Errno"]) == ("nobody", 0)
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
            cursor.execute("SELECT User_name FROM mysql.slave_master_info")
            assert cursor.fetchall() == (("nobody",),)
    assert engine_content(engine) == source.content


def test_a_wrong_password_is_1045_with_the_sources_text(tmp_path: Path, port: int) -> None:
    with running_source(tmp_path / "source", SPEC) as source, connect(port) as conn:
        with conn.cursor() as cursor:
            status = io_stops(cursor, change_source_at(
                "127.0.0.1", source.port, REPL_USER, "wrong", GET_SOURCE_PUBLIC_KEY=1,
                SOURCE_RETRY_COUNT=1,
            ))  # fmt: skip
    assert status["Last_IO_Errno"] == 1045
    assert status["Last_IO_Error"] == (
        f"Error connecting to source '{REPL_USER}@127.0.0.1:{source.port}'. This was attempt "
        "1/1, with a delay of 60 seconds between attempts. Message: Access denied for user "
        f"'{REPL_USER}'@'127.0.0.1' (using password: YES)"
    )
