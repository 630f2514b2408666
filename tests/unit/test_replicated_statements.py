"""Query events as the source ran them: executable comments by source version and flavour,
and which statements store nothing, are kept, or go to the engine."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.apply.statements import Effect, as_executed, effect
from spark_replica.applier_core.binlog.versions import UNKNOWN_VERSION, SourceVersion

MYSQL_84 = SourceVersion.parse("8.4.3")
MARIADB = SourceVersion.parse("10.11.6-MariaDB-0+deb12u1-log")


def test_versions_from_strings_and_gtid_events() -> None:
    assert MYSQL_84 == SourceVersion(80403, False)
    assert MARIADB == SourceVersion(101106, True)
    assert SourceVersion.of_gtid_event(80036) == SourceVersion(80036, False)
    assert SourceVersion.of_gtid_event(101106) == SourceVersion(101106, True)
    assert SourceVersion.of_gtid_event(0) == UNKNOWN_VERSION
    assert SourceVersion.of_gtid_event(999999) == UNKNOWN_VERSION


@pytest.mark.parametrize(
    ("statement", "version", "expected"),
    [
        ("/*!40000 ALTER TABLE `t` DISABLE KEYS */", MYSQL_84, "ALTER TABLE `t` DISABLE KEYS"),
        ("/*!50610 ALTER TABLE film_text engine=InnoDB */", MARIADB,
         "ALTER TABLE film_text engine=InnoDB"),
        ("/*!90000 ALTER TABLE t ENGINE=InnoDB */", MYSQL_84, ""),  # newer than the source
        ("CREATE TABLE t (a INT) /*!80016 ENGINE=InnoDB */", UNKNOWN_VERSION,
         "CREATE TABLE t (a INT)"),
        ("/*! ALTER TABLE t ENGINE=InnoDB */", UNKNOWN_VERSION, "ALTER TABLE t ENGINE=InnoDB"),
        ("CREATE TABLE t (a INT) /*M!100100 PAGE_CHECKSUM=1 */", MARIADB,
         "CREATE TABLE t (a INT)  PAGE_CHECKSUM=1"),
        ("CREATE TABLE t (a INT) /*M!100100 PAGE_CHECKSUM=1 */", MYSQL_84,
         "CREATE TABLE t (a INT)"),
        ("CREATE TABLE t (a INT) /*M!200000 X=1 */", MARIADB, "CREATE TABLE t (a INT)"),
        ("CREATE TABLE t (a VARCHAR(9) DEFAULT '/*!40000 no */') /* plain */", MYSQL_84,
         "CREATE TABLE t (a VARCHAR(9) DEFAULT '/*!40000 no */')"),
        ("CREATE TABLE `a/*!b` (c INT)", MYSQL_84, "CREATE TABLE `a/*!b` (c INT)"),
        ("SELECT 'it''s /*! x */', \"q\\\" /*! y */\"", MYSQL_84,
         "SELECT 'it''s /*! x */', \"q\\\" /*! y */\""),
    ],
)  # fmt: skip
def test_executable_comments_run_as_the_source_ran_them(
    statement: str, version: SourceVersion, expected: str
) -> None:
    assert " ".join(as_executed(statement, version).split()) == " ".join(expected.split())


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("ANALYZE TABLE t", Effect.NONE),
        ("analyze NO_WRITE_TO_BINLOG table t", Effect.NONE),
        ("OPTIMIZE TABLE t", Effect.NONE),
        ("REPAIR TABLE t", Effect.NONE),
        ("CHECK TABLE t", Effect.NONE),
        ("FLUSH PRIVILEGES", Effect.NONE),
        ("FLUSH TABLES", Effect.NONE),
        ("LOCK TABLES t WRITE", Effect.NONE),
        ("UNLOCK TABLES", Effect.NONE),
        ("SAVEPOINT sp1", Effect.NONE),
        ("RELEASE SAVEPOINT sp1", Effect.NONE),
        ("ROLLBACK TO SAVEPOINT sp1", Effect.NONE),
        ("SET @@session.sql_mode = 'ANSI'", Effect.NONE),
        ("ALTER DATABASE d CHARACTER SET utf8mb4", Effect.DDL),
        ("INSTALL PLUGIN x SONAME 'x.so'", Effect.NONE),
        ("   ", Effect.NONE),
        ("CREATE OR REPLACE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER "
         "VIEW v AS SELECT 1", Effect.DDL),
        ("CREATE DEFINER=`root`@`%` TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @a = 1",
         Effect.DDL),
        ("CREATE DEFINER='u'@'h' PROCEDURE p() BEGIN END", Effect.DDL),
        ("CREATE FUNCTION f() RETURNS INT RETURN 1", Effect.DDL),
        ("CREATE AGGREGATE FUNCTION f RETURNS INT SONAME 'x.so'", Effect.DDL),
        ("CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t", Effect.DDL),
        ("DROP TRIGGER IF EXISTS tr", Effect.DDL),
        ("DROP VIEW v", Effect.DDL),
        ("CREATE USER 'u'@'%' IDENTIFIED WITH 'mysql_native_password' AS '*ABC'", Effect.ACCOUNT),
        ("GRANT SELECT ON d.* TO 'u'@'%'", Effect.ACCOUNT),
        ("SET PASSWORD FOR 'u'@'%' = '*ABC'", Effect.ACCOUNT),
        ("CREATE TABLE t (a INT)", Effect.DDL),
        ("CREATE INDEX i ON t (a)", Effect.DDL),
        ("DROP TABLE t", Effect.DDL),
        ("INSERT INTO t VALUES (1)", Effect.DDL),  # the engine refuses it, naming it (1235)
        ("XA START 'x'", Effect.DDL),
    ],
)  # fmt: skip
def test_effects(statement: str, expected: Effect) -> None:
    assert effect(statement) is expected


def test_alter_with_view_options_goes_to_the_engine() -> None:
    statement = ("ALTER ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER "
                 "VIEW `corpus`.`v` AS SELECT id FROM corpus.t")  # fmt: skip
    assert effect(statement) is Effect.DDL
    assert effect("ALTER TABLE t ADD COLUMN x INT") is Effect.DDL
