"""`spark-replica sqltest` runs users' scripts against a server (issue: scripted SQL tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.server.cli import main
from tests.helpers.server import ROOT_PASSWORD


def test_sqltest_command_runs_scripts(
    server: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "check.test"
    script.write_text(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL 'c1';\n"
        "--error ER_REPLICA_CHANNEL_DOES_NOT_EXIST\n"
        "STOP REPLICA FOR CHANNEL 'nope';\n"
        "SELECT CHANNEL_NAME FROM performance_schema.replication_applier_status;\n"
    )
    args = ["sqltest", "--host", "127.0.0.1", "--port", str(server), "--user", "root",
            "--password", ROOT_PASSWORD]  # fmt: skip
    assert main([*args, "--record", str(script)]) == 0
    assert (tmp_path / "check.result").read_text() == (
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL 'c1';\n"
        "STOP REPLICA FOR CHANNEL 'nope';\n"
        "ERROR HY000: Replica channel 'nope' does not exist.\n"
        "SELECT CHANNEL_NAME FROM performance_schema.replication_applier_status;\n"
        "CHANNEL_NAME\n"
        "c1\n"
    )
    capsys.readouterr()
    (tmp_path / "check.result").write_text("something else\n")
    assert main([*args, str(script)]) == 1
    out = capsys.readouterr().out
    assert "[ fail ]" in out and "0 passed, 1 failed" in out
