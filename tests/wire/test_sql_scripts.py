"""The scripted SQL suite: every tests/sql/*.test against a real server, over TCP.

``pytest --record-sql tests/wire/test_sql_scripts.py`` rewrites the .result files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.tools.sqltest import run_file
from tests.helpers.server import ROOT_PASSWORD

SCRIPTS = sorted((Path(__file__).parent.parent / "sql").glob("*.test"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_sql_script(script: Path, server: int, request: pytest.FixtureRequest) -> None:
    record = bool(request.config.getoption("--record-sql"))
    outcome = run_file(
        script, host="127.0.0.1", port=server, user="root", password=ROOT_PASSWORD, record=record
    )
    assert outcome.error is None, outcome.error
    assert outcome.passed, outcome.diff
