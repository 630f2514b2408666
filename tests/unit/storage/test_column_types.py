"""MySQL column type text read into ``MySqlType``: every synonym, every type family, the
``COLUMN_TYPE`` text, and the errors for text that is no MySQL type."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.storage.column_types import MySqlType, parse_type

#: MySQL 8.4's synonyms and the COLUMN_TYPE MySQL shows for a column declared with them.
#: https://dev.mysql.com/doc/refman/8.4/en/other-vendor-data-types.html
SYNONYMS = [
    ("BOOL", "tinyint(1)"),
    ("BOOLEAN", "tinyint(1)"),
    ("INT1", "tinyint"),
    ("INT2", "smallint"),
    ("INT3", "mediumint"),
    ("MIDDLEINT", "mediumint"),
    ("INTEGER", "int"),
    ("INT4", "int"),
    ("INT8", "bigint"),
    ("INT8 UNSIGNED", "bigint unsigned"),
    ("SERIAL", "bigint unsigned"),
    ("DEC", "decimal(10,0)"),
    ("DEC(5, 2)", "decimal(5,2)"),
    ("NUMERIC(8)", "decimal(8,0)"),
    ("FIXED(4, 1)", "decimal(4,1)"),
    ("FLOAT4", "float"),
    ("FLOAT8", "double"),
    ("DOUBLE PRECISION", "double"),
    ("double precision(10, 2)", "double(10,2)"),
    ("REAL", "double"),
    ("FLOAT(24)", "float"),
    ("FLOAT(25)", "double"),
    ("CHARACTER", "char(1)"),
    ("CHARACTER(4)", "char(4)"),
    ("CHARACTER VARYING(5)", "varchar(5)"),
    ("CHAR VARYING(5)", "varchar(5)"),
    ("VARCHARACTER(5)", "varchar(5)"),
    ("NCHAR(3)", "char(3)"),
    ("NATIONAL CHAR(3)", "char(3)"),
    ("NATIONAL CHARACTER(3)", "char(3)"),
    ("NVARCHAR(3)", "varchar(3)"),
    ("NATIONAL VARCHAR(3)", "varchar(3)"),
    ("NCHAR VARCHAR(3)", "varchar(3)"),
    ("NCHAR VARYING(3)", "varchar(3)"),
    ("NATIONAL CHAR VARYING(3)", "varchar(3)"),
    ("NATIONAL CHARACTER VARYING(3)", "varchar(3)"),
    ("CHAR BYTE", "binary(1)"),
    ("CHAR(4) BYTE", "binary(4)"),
    ("LONG", "mediumtext"),
    ("LONG VARCHAR", "mediumtext"),
    ("LONG CHAR VARYING", "mediumtext"),
    ("LONG VARBINARY", "mediumblob"),
    ("TEXT(50)", "tinytext"),
    ("TEXT(100)", "text"),
    ("TEXT(20000)", "mediumtext"),
    ("TEXT(100) CHARACTER SET latin1", "tinytext"),
    ("BLOB(255)", "tinyblob"),
    ("BLOB(256)", "blob"),
    ("BLOB(4294967295)", "longblob"),
    ("GEOMETRYCOLLECTION", "geomcollection"),
    ("YEAR(4)", "year"),
]


@pytest.mark.parametrize(("written", "column_type"), SYNONYMS, ids=[s[0] for s in SYNONYMS])
def test_a_synonym_is_the_type_it_stands_for(written: str, column_type: str) -> None:
    assert parse_type(written).column_type() == column_type
    assert parse_type(written.lower()).column_type() == column_type


def test_national_types_are_utf8mb3() -> None:
    assert parse_type("NATIONAL CHAR(3)") == MySqlType("char", length=3, charset="utf8mb3")
    assert parse_type("NVARCHAR(3)").charset == "utf8mb3"
    assert parse_type("CHAR(3)").charset is None


def test_serial_and_bool() -> None:
    assert parse_type("SERIAL") == MySqlType("bigint", unsigned=True, serial=True)
    assert parse_type("BOOL") == parse_type("TINYINT(1)") == MySqlType("tinyint", width=1)


#: One of each family, as sqlglot renders a CREATE TABLE and as MySQL's COLUMN_TYPE shows it.
FAMILIES = [
    ("TINYINT", MySqlType("tinyint"), "tinyint"),
    ("TINYINT(1)", MySqlType("tinyint", width=1), "tinyint(1)"),
    ("TINYINT(1) UNSIGNED", MySqlType("tinyint", width=1, unsigned=True), "tinyint(1) unsigned"),
    ("SMALLINT(6)", MySqlType("smallint", width=6), "smallint"),
    ("MEDIUMINT UNSIGNED", MySqlType("mediumint", unsigned=True), "mediumint unsigned"),
    ("INT(11) UNSIGNED", MySqlType("int", width=11, unsigned=True), "int unsigned"),
    ("int signed", MySqlType("int"), "int"),
    (
        "INT(5) ZEROFILL",
        MySqlType("int", width=5, unsigned=True, zerofill=True),
        "int(5) unsigned zerofill",
    ),
    ("BIGINT UNSIGNED", MySqlType("bigint", unsigned=True), "bigint unsigned"),
    ("DECIMAL", MySqlType("decimal", precision=10, scale=0), "decimal(10,0)"),
    (
        "DECIMAL(10, 2) UNSIGNED",
        MySqlType("decimal", precision=10, scale=2, unsigned=True),
        "decimal(10,2) unsigned",
    ),
    ("FLOAT", MySqlType("float"), "float"),
    ("FLOAT(7, 3)", MySqlType("float", precision=7, scale=3), "float(7,3)"),
    ("DOUBLE UNSIGNED", MySqlType("double", unsigned=True), "double unsigned"),
    ("BIT", MySqlType("bit", length=1), "bit(1)"),
    ("BIT(64)", MySqlType("bit", length=64), "bit(64)"),
    ("DATE", MySqlType("date"), "date"),
    ("DATETIME", MySqlType("datetime"), "datetime"),
    ("DATETIME(3)", MySqlType("datetime", fsp=3), "datetime(3)"),
    ("TIMESTAMP(6)", MySqlType("timestamp", fsp=6), "timestamp(6)"),
    ("TIME(1)", MySqlType("time", fsp=1), "time(1)"),
    ("YEAR", MySqlType("year"), "year"),
    ("CHAR", MySqlType("char", length=1), "char(1)"),
    ("VARCHAR(20)", MySqlType("varchar", length=20), "varchar(20)"),
    ("BINARY", MySqlType("binary", length=1), "binary(1)"),
    ("VARBINARY(9)", MySqlType("varbinary", length=9), "varbinary(9)"),
    ("TINYTEXT", MySqlType("tinytext"), "tinytext"),
    ("LONGTEXT", MySqlType("longtext"), "longtext"),
    ("MEDIUMBLOB", MySqlType("mediumblob"), "mediumblob"),
    ("ENUM('a', 'b')", MySqlType("enum", values=("a", "b")), "enum('a','b')"),
    (
        "ENUM('it''s', 'a,b', ')', 'x\\\\y')",
        MySqlType("enum", values=("it's", "a,b", ")", "x\\y")),
        "enum('it''s','a,b',')','x\\\\y')",
    ),
    ('ENUM("q")', MySqlType("enum", values=("q",)), "enum('q')"),
    ("SET('x', 'y')", MySqlType("set", values=("x", "y")), "set('x','y')"),
    ("JSON", MySqlType("json"), "json"),
    ("GEOMETRY", MySqlType("geometry"), "geometry"),
    ("POINT SRID 4326", MySqlType("point", srid=4326), "point"),
    ("MULTIPOLYGON", MySqlType("multipolygon"), "multipolygon"),
    ("GEOMCOLLECTION", MySqlType("geomcollection"), "geomcollection"),
    ("VECTOR(3)", MySqlType("vector", dimension=3), "vector(3)"),
    ("VECTOR", MySqlType("vector", dimension=2048), "vector(2048)"),
    (
        "VARCHAR(3) CHARACTER SET latin1 COLLATE latin1_bin",
        MySqlType("varchar", length=3, charset="latin1", collation="latin1_bin"),
        "varchar(3)",
    ),
    ("CHAR(2) CHARSET 'ascii'", MySqlType("char", length=2, charset="ascii"), "char(2)"),
    ("TEXT BINARY", MySqlType("text", binary=True), "text"),
    ("CHAR(2) ASCII", MySqlType("char", length=2, charset="latin1"), "char(2)"),
]


@pytest.mark.parametrize(
    ("written", "parsed", "column_type"), FAMILIES, ids=[f[0] for f in FAMILIES]
)
def test_each_type_family(written: str, parsed: MySqlType, column_type: str) -> None:
    assert parse_type(written) == parsed
    assert parsed.column_type() == column_type


@pytest.mark.parametrize(
    ("written", "parsed", "column_type"), FAMILIES, ids=[f[0] for f in FAMILIES]
)
def test_column_type_text_reads_back_as_the_same_type(
    written: str, parsed: MySqlType, column_type: str
) -> None:
    again = parse_type(column_type)
    assert again.column_type() == column_type
    assert again.name == parsed.name


GARBAGE = [
    "",
    "   ",
    "FOO",
    "INTEGRAL",
    "INT UNSIGNED BIGINT",
    "INT(11)(2)",
    "INT(x)",
    "INT(1, 2)",
    "VARCHAR(10",
    "VARCHAR(10))",
    "VARCHAR(10) UNSIGNED",
    "DECIMAL(66)",
    "DECIMAL(10, 11)",
    "DECIMAL(40, 31)",
    "DECIMAL(1, 2, 3)",
    "FLOAT(54)",
    "DOUBLE(5)",
    "BIT(0)",
    "BIT(65)",
    "BIT UNSIGNED",
    "TIME(7)",
    "DATETIME(-1)",
    "DATE(1)",
    "ENUM",
    "SET",
    "ENUM(1, 2)",
    "GEOMETRY(1)",
    "POINT SRID",
    "VECTOR(0)",
    "VECTOR(16384)",
    "CHAR(3) CHARACTER SET",
    "NATIONAL",
    "INT ; DROP TABLE t",
]


@pytest.mark.parametrize("written", GARBAGE)
def test_text_that_is_no_mysql_type_is_a_value_error(written: str) -> None:
    with pytest.raises(ValueError, match="^MySQL type "):
        parse_type(written)


def test_parse_type_is_cached() -> None:
    assert parse_type("DECIMAL(12, 4)") is parse_type("DECIMAL(12, 4)")
