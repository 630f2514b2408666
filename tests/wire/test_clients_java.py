"""JDBC: MariaDB Connector/J drives the replica (java/ReplicaClient.java)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spark_replica.server.variables import SERVER_VERSION

pytestmark = pytest.mark.clients

SOURCE = Path(__file__).parent / "java" / "ReplicaClient.java"
JARS = (Path("/usr/share/java/mariadb-java-client.jar"),)


def _driver_jar() -> Path | None:
    return next((jar for jar in JARS if jar.is_file()), None)


@pytest.fixture(scope="module")
def classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """ReplicaClient compiled once per session of this module, with the driver beside it."""
    javac, java, jar = shutil.which("javac"), shutil.which("java"), _driver_jar()
    if javac is None or java is None or jar is None:
        pytest.skip("needs javac, java and MariaDB Connector/J (mariadb-java-client.jar)")
    classes = tmp_path_factory.mktemp("java-classes")
    compiled = subprocess.run(
        [javac, "-cp", str(jar), "-d", str(classes), str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    return f"{classes}:{jar}"


def test_connector_j_drives_the_replica(server: int, classpath: str) -> None:
    """T03/T79 and the 3074/7500/1064 errors as JDBC reports them."""
    done = subprocess.run(
        ["java", "-cp", classpath, "ReplicaClient", str(server)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # Connector/J prefixes the server's text with the connection id.
    [message] = [line for line in lines if line.startswith("message ")]
    lines.remove(message)
    assert re.fullmatch(r"message \(conn=-?\d+\) Replica channel 'nope' does not exist\.", message)
    assert lines == [
        f"MySQL {SERVER_VERSION}",
        "major.minor 8.4",
        "crst false 0",
        "columns CHANNEL_NAME APPLIER_VERSION APPLIER_WORKER_COUNT",
        "j1 2 4",
        "prepared j1 2",
        "status jhost No 1 60",
        "3074 HY000",
        "7500 HY000",
        "SQLSyntaxErrorException 1064 42000",
        "warning 1287 'CHANGE MASTER' is deprecated and will be removed in a future release. "
        "Please use CHANGE REPLICATION SOURCE instead",
        "warning 1287 'MASTER_HOST' is deprecated and will be removed in a future release. "
        "Please use SOURCE_HOST instead",
        "server-prepared j1 2",
        "server-prepared rows 1",
        "server-prepared rows 0",
    ]
