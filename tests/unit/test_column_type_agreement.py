"""The DDL parser, the Spark mapping, ALTER TABLE's value conversions and
``information_schema`` read a column type the same way: a synonym is the type it stands for
everywhere (INT8 is a BIGINT in the catalog, in Spark, in conversions and in SHOW COLUMNS)."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.storage import parse_ddl
from spark_replica.applier_core.storage.column_types import parse_type
from spark_replica.applier_core.storage.ddl_convert import Kind, sql_type, type_converter
from spark_replica.applier_core.storage.ddl_operations import CreateTable
from spark_replica.applier_core.storage.spark.types import spark_type
from spark_replica.sql_handlers.tables.replica_types import type_info

#: Type text as a CREATE TABLE writes it → (DATA_TYPE, COLUMN_TYPE, Spark SQL type, kind of
#: value conversions).
TYPES = [
    ("INT1", "tinyint", "tinyint", "TINYINT", Kind.INTEGER),
    ("BOOL", "tinyint", "tinyint(1)", "TINYINT", Kind.INTEGER),
    ("BOOLEAN", "tinyint", "tinyint(1)", "TINYINT", Kind.INTEGER),
    ("INT2", "smallint", "smallint", "SMALLINT", Kind.INTEGER),
    ("INT3", "mediumint", "mediumint", "INT", Kind.INTEGER),
    ("MIDDLEINT", "mediumint", "mediumint", "INT", Kind.INTEGER),
    ("INTEGER", "int", "int", "INT", Kind.INTEGER),
    ("INT4 UNSIGNED", "int", "int unsigned", "BIGINT", Kind.INTEGER),
    ("INT8", "bigint", "bigint", "BIGINT", Kind.INTEGER),
    ("INT8 UNSIGNED", "bigint", "bigint unsigned", "DECIMAL(20,0)", Kind.INTEGER),
    ("SERIAL", "bigint", "bigint unsigned", "DECIMAL(20,0)", Kind.INTEGER),
    ("INT(5) ZEROFILL", "int", "int(5) unsigned zerofill", "BIGINT", Kind.INTEGER),
    ("DEC(5, 2)", "decimal", "decimal(5,2)", "DECIMAL(5,2)", Kind.DECIMAL),
    ("NUMERIC", "decimal", "decimal(10,0)", "DECIMAL(10,0)", Kind.DECIMAL),
    ("FIXED(40, 2)", "decimal", "decimal(40,2)", "STRING", Kind.DECIMAL),
    ("FLOAT4", "float", "float", "FLOAT", Kind.REAL),
    ("FLOAT(30)", "double", "double", "DOUBLE", Kind.REAL),
    ("FLOAT8", "double", "double", "DOUBLE", Kind.REAL),
    ("REAL", "double", "double", "DOUBLE", Kind.REAL),
    ("DOUBLE PRECISION", "double", "double", "DOUBLE", Kind.REAL),
    ("BIT(5)", "bit", "bit(5)", "BIGINT", Kind.OTHER),
    ("YEAR(4)", "year", "year", "SMALLINT", Kind.YEAR),
    ("DATE", "date", "date", "DATE", Kind.DATE),
    ("DATETIME(3)", "datetime", "datetime(3)", "TIMESTAMP_NTZ", Kind.DATETIME),
    ("TIMESTAMP(6)", "timestamp", "timestamp(6)", "TIMESTAMP", Kind.TIMESTAMP),
    ("TIME", "time", "time", "STRING", Kind.TIME),
    ("CHARACTER(2)", "char", "char(2)", "STRING", Kind.CHAR),
    ("NATIONAL CHAR(3)", "char", "char(3)", "STRING", Kind.CHAR),
    ("NCHAR(3)", "char", "char(3)", "STRING", Kind.CHAR),
    ("CHARACTER VARYING(5)", "varchar", "varchar(5)", "STRING", Kind.VARCHAR),
    ("VARCHARACTER(5)", "varchar", "varchar(5)", "STRING", Kind.VARCHAR),
    ("NATIONAL VARCHAR(4)", "varchar", "varchar(4)", "STRING", Kind.VARCHAR),
    ("NCHAR VARYING(4)", "varchar", "varchar(4)", "STRING", Kind.VARCHAR),
    ("LONG", "mediumtext", "mediumtext", "STRING", Kind.TEXT),
    ("LONG VARCHAR", "mediumtext", "mediumtext", "STRING", Kind.TEXT),
    ("TEXT(50)", "tinytext", "tinytext", "STRING", Kind.TEXT),
    ("BINARY(3)", "binary", "binary(3)", "BINARY", Kind.BINARY),
    ("VARBINARY(9)", "varbinary", "varbinary(9)", "BINARY", Kind.VARBINARY),
    ("LONG VARBINARY", "mediumblob", "mediumblob", "BINARY", Kind.BLOB),
    ("BLOB(300)", "blob", "blob", "BINARY", Kind.BLOB),
    ("ENUM('a', 'b')", "enum", "enum('a','b')", "STRING", Kind.ENUM),
    ("SET('x', 'y')", "set", "set('x','y')", "STRING", Kind.SET),
    ("JSON", "json", "json", "STRING", Kind.OTHER),
    ("GEOMETRY", "geometry", "geometry", "BINARY", Kind.OTHER),
    ("VECTOR(3)", "vector", "vector(3)", "ARRAY<FLOAT>", Kind.OTHER),
]
IDS = [t[0] for t in TYPES]


@pytest.mark.parametrize(("written", "data_type", "column_type", "spark", "kind"), TYPES, ids=IDS)
def test_every_reader_sees_the_same_type(
    written: str, data_type: str, column_type: str, spark: str, kind: Kind
) -> None:
    # The catalog keeps what the DDL parser renders; every reader gets that text.
    (operation,) = parse_ddl(f"CREATE TABLE t (c {written})", "d")
    assert isinstance(operation, CreateTable)
    kept = operation.definition.columns[0].type
    for text in (written, kept):
        assert parse_type(text).column_type() == column_type, text
        info = type_info(text)
        assert (info.data_type, info.column_type) == (data_type, column_type), text
        assert spark_type(text).spark_sql == spark, text
        assert sql_type(text).kind is kind, text
        # A synonym converts as the type it stands for: no conversion between the two.
        assert type_converter(text, column_type) is None, text


def test_int8_is_a_bigint_everywhere() -> None:
    """sqlglot reads INT8 as TINYINT: the catalog kept a BIGINT column as TINYINT."""
    (operation,) = parse_ddl("CREATE TABLE t (c INT8 NOT NULL)", "d")
    assert isinstance(operation, CreateTable)
    assert operation.definition.columns[0].type == "BIGINT"
    assert sql_type("INT8").bits == 64
    assert type_info("INT8").numeric_precision == 19


def test_real_is_a_double_everywhere() -> None:
    """sqlglot reads REAL as FLOAT: ALTER TABLE rounded a DOUBLE to single precision."""
    (operation,) = parse_ddl("CREATE TABLE t (c REAL)", "d")
    assert isinstance(operation, CreateTable)
    assert operation.definition.columns[0].type == "DOUBLE"
    assert sql_type("REAL").bits == 64
    assert type_converter("DOUBLE", "REAL") is None


def test_long_is_mediumtext_everywhere() -> None:
    """sqlglot reads LONG as BIGINT."""
    (operation,) = parse_ddl("CREATE TABLE t (c LONG, d LONG VARBINARY)", "d")
    assert isinstance(operation, CreateTable)
    assert [c.type for c in operation.definition.columns] == ["MEDIUMTEXT", "MEDIUMBLOB"]
    assert sql_type("LONG").kind is Kind.TEXT


def test_national_types_are_utf8mb3_in_the_catalog_and_information_schema() -> None:
    (operation,) = parse_ddl("CREATE TABLE t (c NATIONAL CHAR(3), d NCHAR VARCHAR(2))", "d")
    assert isinstance(operation, CreateTable)
    assert [c.collation for c in operation.definition.columns] == ["utf8mb3_general_ci"] * 2
    info = type_info("NCHAR(3)")
    assert (info.character_set_name, info.collation_name) == ("utf8mb3", "utf8mb3_general_ci")
    assert (info.character_maximum_length, info.character_octet_length) == (3, 9)


@pytest.mark.parametrize(
    ("written", "column_type"),
    [
        ("INT1", "tinyint"),
        ("INT8 UNSIGNED", "bigint unsigned"),
        ("MIDDLEINT", "mediumint"),
        ("LONG VARCHAR", "mediumtext"),
        ("CHARACTER VARYING(5)", "varchar(5)"),
        ("NCHAR(3)", "char(3)"),
        ("GEOMETRYCOLLECTION", "geomcollection"),
        ("TINYINT(1) ZEROFILL", "tinyint(1) unsigned zerofill"),
    ],
)
def test_information_schema_resolves_synonyms(written: str, column_type: str) -> None:
    """information_schema showed these as written (``int8``, ``nchar(3)``, ...)."""
    assert type_info(written).column_type == column_type


def test_text_that_is_no_type_keeps_each_readers_answer() -> None:
    assert type_info("INET6").column_type == "inet6"
    assert sql_type("INET6").kind is Kind.OTHER
    with pytest.raises(ValueError, match="MySQL type 'INET6'"):
        spark_type("INET6")
