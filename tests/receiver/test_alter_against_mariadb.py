"""ALTER TABLE replicated from a real MariaDB into tables the Spark engine has flushed (their
rows in the key index and in Iceberg): ALTERs that convert every row (a new NOT NULL column
with a DEFAULT, a retyped and a rescaled column, a new primary key, a key for a keyless
table), ALTERs Iceberg does as a schema change (added, dropped and moved columns of a keyed
table: no row copied), and row changes after them that the key
index must find under the new keys. Then every table is read through the replica's server
and from MariaDB with the same SELECT: column names and every value must agree."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.storage.key_index import LmdbKeyIndex
from spark_replica.applier_core.storage.spark.indexed_tables import Content
from spark_replica.server.storage import configured_components
from tests.helpers.live_source import caught_up, following, recorded
from tests.helpers.mariadb import ROOT_PASSWORD as MARIADB_ROOT_PASSWORD
from tests.helpers.mariadb import MariaDB
from tests.helpers.server import connect, no_leaks_but_a_servers, running_server

pytestmark = pytest.mark.spark

WAIT = 180.0
ROWS = 3000
SETUP = (
    "DROP DATABASE IF EXISTS alt",
    "CREATE DATABASE alt",
    "USE alt",  # where the sequence engine's seq_1_to_N tables are
    "CREATE TABLE alt.a (id INT PRIMARY KEY, n INT, v VARCHAR(20), d DECIMAL(8,2), t DATETIME)",
    "CREATE TABLE alt.b (x INT NOT NULL, y VARCHAR(10))",
    "CREATE TABLE alt.c (id INT PRIMARY KEY, a INT, b VARCHAR(10), d INT)",
    f"INSERT INTO alt.a SELECT seq, seq * 7 % 1000, CONCAT('v', seq), seq / 8, "
    f"'2026-01-01' + INTERVAL seq MINUTE FROM seq_1_to_{ROWS}",
    f"INSERT INTO alt.b SELECT seq, CONCAT('y', seq % 50) FROM seq_1_to_{ROWS}",
    f"INSERT INTO alt.c SELECT seq, seq % 11, CONCAT('b', seq), seq * 3 FROM seq_1_to_{ROWS}",
)
ALTERS = (
    "ALTER TABLE alt.a ADD COLUMN w INT NOT NULL DEFAULT 7, ALGORITHM=COPY",
    "ALTER TABLE alt.a MODIFY n VARCHAR(20)",  # every value converted to text
    "ALTER TABLE alt.a MODIFY d DECIMAL(10,3)",  # rescaled
    "ALTER TABLE alt.a ADD COLUMN c BIGINT AFTER id, MODIFY v VARCHAR(40)",  # schema only
    "ALTER TABLE alt.a DROP PRIMARY KEY, ADD PRIMARY KEY (w, id)",
    "ALTER TABLE alt.b ADD PRIMARY KEY (x)",
    "ALTER TABLE alt.b ADD COLUMN z INT FIRST",
    # Schema changes of a keyed table flushed before them: no row copied (a layout)
    "ALTER TABLE alt.c ADD COLUMN e INT AFTER id",
    "ALTER TABLE alt.c DROP COLUMN b",
    "ALTER TABLE alt.c MODIFY d INT FIRST",
)
#: The ALTERs above that read the table's key index rows anew instead of copying them (the
#: two others that change no value may copy rows an ALTER before them staged, unflushed).
LAID_OUT = 3
AFTER = (
    "UPDATE alt.a SET n = 'changed', c = id WHERE id % 10 = 0",
    "DELETE FROM alt.a WHERE id % 13 = 0",
    "INSERT INTO alt.a (id, n, w) VALUES (100001, 'new', 8)",
    "UPDATE alt.b SET y = 'upd', z = x WHERE x % 9 = 0",
    "DELETE FROM alt.b WHERE x % 11 = 0",
    "UPDATE alt.c SET e = id, a = a + 1 WHERE id % 7 = 0",
    "DELETE FROM alt.c WHERE id % 17 = 0",
    "INSERT INTO alt.c (id, d, e) VALUES (100001, 5, 6)",
)
QUERIES = (
    "SELECT * FROM alt.a ORDER BY w, id",
    "SELECT * FROM alt.b ORDER BY x",
    "SELECT * FROM alt.c ORDER BY id",
)


@pytest.fixture(autouse=True)
def no_thread_leaks() -> Iterator[None]:
    yield from no_leaks_but_a_servers()


@pytest.fixture(scope="module")
def replicated(
    spark: Any, mariadb: MariaDB, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[int]:
    """A replica (Spark engine, CSA) that flushed the tables before the ALTERs came."""
    mariadb.sql("; ".join(SETUP))
    root = tmp_path_factory.mktemp("alter-against-mariadb")
    stage, reshape = LmdbKeyIndex.stage, Content.reshaped
    staged: list[int] = []
    reshaped: list[Content] = []

    def counted(index: LmdbKeyIndex, *args: Any) -> int:
        staged.append(stage(index, *args))
        return staged[-1]

    def counted_reshape(content: Content, *args: Any) -> Content:
        reshaped.append(reshape(content, *args))
        return reshaped[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LmdbKeyIndex, "stage", counted)
        patch.setattr(Content, "reshaped", counted_reshape)
        with running_server(root / "data", configured_components) as server:
            with following(server.port, mariadb, "csa") as cursor:
                caught_up(cursor, mariadb, WAIT)
                recorded(cursor, mariadb, WAIT)  # in the key index and Iceberg
                mariadb.sql("; ".join(ALTERS + AFTER))
                caught_up(cursor, mariadb, WAIT)
                recorded(cursor, mariadb, WAIT)
            # Every ALTER streamed its table through a stage of the key index or read its
            # rows through a new layout (none of them found the table in memory).
            assert len(staged) + len(reshaped) == len(ALTERS)
            assert len(reshaped) >= LAID_OUT
            yield server.port


def _read(cursor: Any, query: str) -> tuple[list[str], list[tuple[object, ...]]]:
    cursor.execute(query)
    return [d[0] for d in cursor.description], list(cursor.fetchall())


@pytest.mark.parametrize("query", QUERIES)
def test_altered_tables_read_as_the_source_holds_them(
    replicated: int, mariadb: MariaDB, query: str
) -> None:
    source = pymysql.connect(host=mariadb.host, port=mariadb.port, user="root",
                             password=MARIADB_ROOT_PASSWORD)  # fmt: skip
    try:
        with source.cursor() as theirs, connect(replicated) as conn, conn.cursor() as ours:
            expected = _read(theirs, query)
            found = _read(ours, query)
    finally:
        source.close()
    assert found[0] == expected[0]
    assert len(found[1]) == len(expected[1]) > ROWS * 0.8
    assert found[1] == expected[1]
