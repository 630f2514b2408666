"""The TLS settings for clients: ``ssl_cert`` and ``ssl_key`` (flag, environment, TOML)."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import pytest

from spark_replica.server import cli
from spark_replica.server.config import ConfigError, ServerConfig, load_config
from tests.helpers.certs import self_signed

Certs = tuple[Path, Path]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return self_signed(tmp_path_factory.mktemp("tls"), "replica")


@pytest.fixture(scope="module")
def other_certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return self_signed(tmp_path_factory.mktemp("other"), "other")


def test_no_tls_by_default() -> None:
    config = load_config(environ={})
    assert (config.ssl_cert, config.ssl_key) == ("", "")
    assert config.ssl_context() is None
    assert ServerConfig().ssl_context() is None


def test_toml_keys(tmp_path: Path, certs: Certs) -> None:
    cert, key = certs
    toml = tmp_path / "replica.toml"
    toml.write_text(f'ssl_cert = "{cert}"\nssl_key = "{key}"\n')
    config = load_config(config_file=str(toml), environ={})
    assert (config.ssl_cert, config.ssl_key) == (str(cert), str(key))


def test_flags_beat_environment_beat_file(tmp_path: Path, certs: Certs, other_certs: Certs) -> None:
    (cert, key), (other_cert, other_key) = certs, other_certs
    toml = tmp_path / "replica.toml"
    toml.write_text('ssl_cert = "/nowhere/cert.pem"\nssl_key = "/nowhere/key.pem"\n')
    env = {"SPARK_REPLICA_SSL_CERT": str(cert), "SPARK_REPLICA_SSL_KEY": str(key)}
    from_env = load_config(config_file=str(toml), environ=env)
    assert (from_env.ssl_cert, from_env.ssl_key) == (str(cert), str(key))
    from_flags = load_config(
        config_file=str(toml), ssl_cert=str(other_cert), ssl_key=str(other_key), environ=env
    )
    assert (from_flags.ssl_cert, from_flags.ssl_key) == (str(other_cert), str(other_key))


def test_the_context_is_server_side_tls_1_2_or_later(certs: Certs) -> None:
    cert, key = certs
    context = load_config(ssl_cert=str(cert), ssl_key=str(key), environ={}).ssl_context()
    assert isinstance(context, ssl.SSLContext)
    assert context.protocol == ssl.PROTOCOL_TLS_SERVER
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("cert", "ssl_cert is set but ssl_key is not: TLS needs both"),
        ("key", "ssl_key is set but ssl_cert is not: TLS needs both"),
    ],
)
def test_one_file_without_the_other_is_a_clear_error(
    certs: Certs, given: str, message: str
) -> None:
    cert, key = certs
    only = {"ssl_cert": str(cert)} if given == "cert" else {"ssl_key": str(key)}
    with pytest.raises(ConfigError) as error:
        load_config(environ={}, **only)
    assert str(error.value) == message
    env = {"SPARK_REPLICA_SSL_" + given.upper(): str(cert if given == "cert" else key)}
    with pytest.raises(ConfigError, match="TLS needs both"):
        load_config(environ=env)


def test_files_that_cannot_be_loaded_are_a_clear_error(
    tmp_path: Path, certs: Certs, other_certs: Certs
) -> None:
    cert, key = certs
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    cases: list[tuple[str, str, str]] = [
        (str(tmp_path / "missing.pem"), str(key), "No such file or directory"),
        (str(garbage), str(key), "PEM"),
        (str(cert), str(other_certs[1]), "KEY_VALUES_MISMATCH"),
    ]
    for bad_cert, bad_key, reason in cases:
        with pytest.raises(ConfigError) as error:
            load_config(ssl_cert=bad_cert, ssl_key=bad_key, environ={})
        text = str(error.value)
        assert text.startswith(f"cannot load TLS certificate {bad_cert} and key {bad_key}: ")
        assert reason in text


def test_serve_passes_the_tls_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    received: dict[str, Any] = {}

    def fake_load_config(**options: Any) -> ServerConfig:
        received.update(options)
        raise ConfigError("stop here")

    monkeypatch.setattr(cli, "load_config", fake_load_config)
    assert cli.main(["serve", "--ssl-cert", "c.pem", "--ssl-key", "k.pem"]) == 2
    assert (received["ssl_cert"], received["ssl_key"]) == ("c.pem", "k.pem")
    assert cli.main(["serve"]) == 2
    assert (received["ssl_cert"], received["ssl_key"]) == (None, None)


def test_serve_reports_a_cert_without_key(
    certs: Certs, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("SPARK_REPLICA_CONFIG", "SPARK_REPLICA_SSL_CERT", "SPARK_REPLICA_SSL_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["serve", "--ssl-cert", str(certs[0])]) == 2
    assert capsys.readouterr().err == (
        "spark-replica: ssl_cert is set but ssl_key is not: TLS needs both\n"
    )
