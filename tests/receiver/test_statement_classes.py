"""Every class of statement a real MariaDB source writes to its row-based binary log keeps the
channel running: executable comments as mysqldump writes them, index DDL, table options,
partitioning, ALTER DATABASE, administrative statements, views, triggers, routines, events,
accounts, savepoints and LOCK TABLES, among row changes. Both appliers end with every table
equal to the source's, row by row."""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.storage import InMemoryEngine, TableRef
from tests.helpers.live_source import caught_up, following
from tests.helpers.mariadb import ROOT_PASSWORD as MARIADB_ROOT_PASSWORD
from tests.helpers.mariadb import MariaDB
from tests.helpers.replica_channel import WAIT

#: One statement per entry, run in order on the source (the mariadb CLI's -e, one at a time,
#: so routine bodies need no DELIMITER).
CORPUS = (
    "CREATE DATABASE corpus",
    "CREATE TABLE corpus.t (id INT PRIMARY KEY, v VARCHAR(20), n INT) ENGINE=InnoDB",
    "/*!40000 ALTER TABLE corpus.t DISABLE KEYS */",
    "INSERT INTO corpus.t VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)",
    "/*!40000 ALTER TABLE corpus.t ENABLE KEYS */",
    "/*!50610 ALTER TABLE corpus.t ENGINE=InnoDB */",
    "/*M!100100 ALTER TABLE corpus.t COMMENT 'only on MariaDB' */",
    # Run by a MariaDB 10.5+ source, so by the replica too: the source's version decides.
    "/*M!100100 CREATE TABLE corpus.on_mariadb (id INT PRIMARY KEY) */",
    "/*!100500 CREATE TABLE corpus.since_10_5 (id INT PRIMARY KEY) */",
    "CREATE INDEX iv ON corpus.t (v)",
    "CREATE UNIQUE INDEX un USING BTREE ON corpus.t (n)",
    "ALTER TABLE corpus.t ADD INDEX ivn (v, n), ALGORITHM=INPLACE, LOCK=NONE",
    "ALTER TABLE corpus.t RENAME INDEX ivn TO ivn2",
    "DROP INDEX iv ON corpus.t",
    "DROP INDEX un ON corpus.t",
    "ALTER TABLE corpus.t COMMENT 'items', ROW_FORMAT=DYNAMIC, AUTO_INCREMENT=10",
    "ALTER TABLE corpus.t CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    "ALTER DATABASE corpus CHARACTER SET utf8mb4",
    "ANALYZE TABLE corpus.t",
    "OPTIMIZE TABLE corpus.t",
    "REPAIR TABLE corpus.t",
    "FLUSH TABLES",
    "FLUSH PRIVILEGES",
    "CREATE OR REPLACE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER "
    "VIEW corpus.v AS SELECT id, v FROM corpus.t",
    "ALTER VIEW corpus.v AS SELECT id FROM corpus.t",
    "CREATE TRIGGER corpus.tr BEFORE INSERT ON corpus.t FOR EACH ROW SET NEW.n = NEW.n * 10",
    "CREATE PROCEDURE corpus.p(IN x INT) SELECT x + 1",
    "CREATE FUNCTION corpus.f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1",
    "CREATE EVENT corpus.e ON SCHEDULE EVERY 1 DAY DO DELETE FROM corpus.t WHERE id < 0",
    "INSERT INTO corpus.t VALUES (4, 'd', 4)",  # the trigger runs on the source only
    "CREATE USER 'corpus_u'@'%' IDENTIFIED BY 'pw1'",
    "GRANT SELECT ON corpus.* TO 'corpus_u'@'%'",
    "ALTER USER 'corpus_u'@'%' IDENTIFIED BY 'pw2'",
    "RENAME USER 'corpus_u'@'%' TO 'corpus_w'@'%'",
    "SET PASSWORD FOR 'corpus_w'@'%' = PASSWORD('pw3')",
    "REVOKE SELECT ON corpus.* FROM 'corpus_w'@'%'",
    "CREATE ROLE corpus_r",
    "GRANT corpus_r TO 'corpus_w'@'%'",
    "DROP ROLE corpus_r",
    "DROP USER 'corpus_w'@'%'",
    "START TRANSACTION; INSERT INTO corpus.t VALUES (5, 'e', 5); SAVEPOINT s1; "
    "INSERT INTO corpus.t VALUES (6, 'f', 6); RELEASE SAVEPOINT s1; COMMIT",
    "LOCK TABLES corpus.t WRITE; UPDATE corpus.t SET v = 'locked' WHERE id = 1; UNLOCK TABLES",
    "ALTER TABLE corpus.t PARTITION BY HASH(id) PARTITIONS 2",
    "ALTER TABLE corpus.t COALESCE PARTITION 1",
    "ALTER TABLE corpus.t REMOVE PARTITIONING",
    "DROP TRIGGER corpus.tr",
    "DROP PROCEDURE corpus.p",
    "DROP FUNCTION corpus.f",
    "DROP EVENT corpus.e",
    "DROP VIEW corpus.v",
    "CREATE TABLE corpus.t2 LIKE corpus.t",
    "INSERT INTO corpus.t2 SELECT * FROM corpus.t WHERE id > 2",
    "RENAME TABLE corpus.t2 TO corpus.t3",
    "DELETE FROM corpus.t WHERE id = 2",
    "CREATE TABLE corpus.t5 AS SELECT id, v FROM corpus.t WHERE id > 1",
    "INSERT INTO corpus.t5 VALUES (100, 'after')",
)
TABLES = ("t", "t3", "t5", "on_mariadb", "since_10_5")


def _source_rows(mariadb: MariaDB, table: str) -> list[tuple[Any, ...]]:
    conn = pymysql.connect(host=mariadb.host, port=mariadb.port, user="root",
                           password=MARIADB_ROOT_PASSWORD)  # fmt: skip
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"SELECT * FROM corpus.{table} ORDER BY id")
            return [tuple(row) for row in cursor.fetchall()]
    finally:
        conn.close()


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_every_statement_class_keeps_the_channel_running(
    mariadb: MariaDB, port: int, engine: InMemoryEngine, applier: str
) -> None:
    mariadb.sql("DROP DATABASE IF EXISTS corpus")
    for statement in CORPUS:
        mariadb.sql(statement)
    with following(port, mariadb, applier) as cursor:
        caught_up(cursor, mariadb, WAIT)
    for table in TABLES:
        found = sorted(engine.rows(TableRef("corpus", table)), key=lambda r: r[0])  # type: ignore[arg-type,return-value]
        assert found == _source_rows(mariadb, table), table
