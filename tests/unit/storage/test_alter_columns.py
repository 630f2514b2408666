"""ALTER TABLE on columns and the primary key: RENAME/MODIFY/CHANGE COLUMN, ADD/DROP PRIMARY
KEY, several clauses in one statement, clauses without effect, and the conversion of existing
rows (the binlog carries no row events for an ALTER: the replica converts its rows as the
source did).

Sections: the parser's operations, the catalog's results and MySQL's errors (numbers and
texts, ERR.12: the error code is specific to the issue), the rows of the in-memory engine
after an ALTER, and the value converters (``ddl_convert``) on their own.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

import pytest

from spark_replica.applier_core.storage import (
    Column,
    EngineError,
    IndexKind,
    InMemoryEngine,
    Row,
    RowChange,
    TableDef,
    TableRef,
    TransactionRef,
    parse_ddl,
)
from spark_replica.applier_core.storage.ddl import Catalog
from spark_replica.applier_core.storage.ddl_alter import alter_columns
from spark_replica.applier_core.storage.ddl_convert import (
    Default,
    ValueFault,
    fill_converter,
    key_prefix_after,
    real_text,
    scan_number,
    sql_type,
    type_converter,
)
from spark_replica.applier_core.storage.ddl_operations import (
    AddColumn,
    AddIndex,
    AddPrimaryKey,
    AlterColumn,
    AlterTable,
    ChangeColumn,
    ConvertCharset,
    DropPrimaryKey,
    RenameColumn,
    RenameTable,
)
from spark_replica.applier_core.storage.indexes import IndexSpec, KeyPart

T = TableRef("d", "t")
_orders = itertools.count(1)


@dataclass(frozen=True)
class Map:
    """The part of a Table_map event the engine reads."""

    schema: str
    table: str


def _trx() -> TransactionRef:
    order = next(_orders)
    return TransactionRef(f"3e11fa47-71ca-11e1-9e33-c80aa9429562:{order}", order)


def run(engine: InMemoryEngine, *statements: str) -> None:
    """Each statement as its own committed transaction, database ``d``."""
    session = engine.session("ddl")
    for statement in statements:
        session.begin(_trx())
        session.apply_ddl(statement, "d")
        session.commit()


def failing(engine: InMemoryEngine, statement: str) -> EngineError:
    """The error of ``statement`` (at apply or at commit); the transaction is rolled back."""
    session = engine.session("ddl")
    session.begin(_trx())
    with pytest.raises(EngineError) as caught:
        session.apply_ddl(statement, "d")
        session.commit()
    session.rollback()
    return caught.value


def insert(engine: InMemoryEngine, *rows: Row) -> None:
    session = engine.session("writer")
    session.begin(_trx())
    session.apply_rows(Map("d", "t"), [RowChange.insert(row) for row in rows])
    session.commit()


def table(create: str, *rows: Row) -> InMemoryEngine:
    """An engine with database ``d`` and table ``t`` made by ``create``, holding ``rows``."""
    engine = InMemoryEngine()
    run(engine, "CREATE DATABASE d", create)
    if rows:
        insert(engine, *rows)
    return engine


def content(engine: InMemoryEngine) -> list[Row]:
    return sorted(engine.rows(T), key=repr)


def names(engine: InMemoryEngine) -> tuple[str, ...]:
    return engine.definition(T).column_names


def one_alter(statement: str) -> AlterTable:
    (operation,) = parse_ddl(statement, "d")
    assert isinstance(operation, AlterTable)
    return operation


def unsupported_text(what: str, statement: str) -> str:
    return f"This version of MySQL doesn't yet support '{what}' (statement: {statement})"


# -- the parser --------------------------------------------------------------------------------


def test_rename_modify_and_change_column_become_actions() -> None:
    statement = (
        "ALTER TABLE t RENAME COLUMN a TO b, MODIFY COLUMN c BIGINT NOT NULL FIRST, "
        "CHANGE d e VARCHAR(20) NULL AFTER b, MODIFY f INT"
    )
    operation = one_alter(statement)
    assert operation == AlterTable(
        T,
        (
            RenameColumn("a", "b"),
            ChangeColumn("c", Column("c", "BIGINT", False), first=True),
            ChangeColumn("d", Column("e", "VARCHAR(20)", True), after="b"),
            ChangeColumn("f", Column("f", "INT", True)),
        ),
    )
    assert operation.statement == statement


def test_primary_key_clauses_become_actions() -> None:
    assert one_alter("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a, b(10))").actions == (
        DropPrimaryKey(),
        AddPrimaryKey(("a", "b"), (0, 10)),
    )
    assert one_alter("ALTER TABLE t ADD CONSTRAINT pk PRIMARY KEY (a)").actions == (
        AddPrimaryKey(("a",), (0,)),
    )
    assert one_alter("ALTER TABLE t DROP INDEX `PRIMARY`").actions == (DropPrimaryKey(),)
    assert one_alter("ALTER TABLE t ADD c INT NOT NULL PRIMARY KEY").actions == (
        AddColumn(Column("c", "INT", False)),
        AddPrimaryKey(("c",)),
    )
    assert one_alter("ALTER TABLE t MODIFY a BIGINT PRIMARY KEY").actions == (
        ChangeColumn("a", Column("a", "BIGINT", False)),
        AddPrimaryKey(("a",)),
    )


def test_new_columns_keep_their_default_generated_and_charset_clauses() -> None:
    actions = one_alter(
        "ALTER TABLE t ADD a INT NOT NULL DEFAULT -1, ADD b VARCHAR(5) DEFAULT _utf8mb4'x', "
        "ADD c INT DEFAULT NULL, ADD d DATETIME DEFAULT CURRENT_TIMESTAMP, "
        "ADD e INT AUTO_INCREMENT, ADD f INT AS (a + 1), ADD g TINYINT DEFAULT TRUE, "
        "MODIFY h VARCHAR(5) CHARACTER SET latin1, MODIFY i INT NOT NULL AUTO_INCREMENT"
    ).actions
    defaults = [a.default for a in actions if isinstance(a, AddColumn)]
    assert defaults == [
        Default("-1", number=True),
        Default("x"),
        Default(),
        Default(expression="CURRENT_TIMESTAMP()"),
        Default(expression="AUTO_INCREMENT"),
        Default(expression="AS (a + 1)"),
        Default("1", number=True),
    ]
    changes = [a for a in actions if isinstance(a, ChangeColumn)]
    assert (changes[0].charset, changes[1].generated) == ("latin1", "AUTO_INCREMENT")


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE t ENGINE=InnoDB",
        "ALTER TABLE t COMMENT='x', ROW_FORMAT=DYNAMIC, AUTO_INCREMENT=10, KEY_BLOCK_SIZE=8",
        "ALTER TABLE t ALGORITHM=INPLACE, LOCK=NONE",
        "ALTER TABLE t FORCE",
        "ALTER TABLE t ORDER BY v",
        "ALTER TABLE t ENABLE KEYS",
        "ALTER TABLE t CHECKSUM=1, TABLESPACE ts",
        "ALTER TABLE t",
    ],
)
def test_clauses_without_effect_on_columns_or_data_are_accepted(statement: str) -> None:
    assert parse_ddl(statement, "d") == (AlterTable(T, ()),)


def test_alter_column_default_and_options() -> None:
    operation = one_alter(
        "ALTER TABLE t ALTER COLUMN a SET DEFAULT 3, ALTER b DROP DEFAULT, "
        "ALTER c SET INVISIBLE, ALGORITHM=COPY"
    )
    assert operation.actions == (AlterColumn("a"), AlterColumn("b"), AlterColumn("c"))
    assert operation.copy


def test_convert_to_character_set_is_read_around_sqlglot() -> None:
    """sqlglot cannot read CONVERT TO: the clause is taken out and the rest parsed."""
    statement = "ALTER TABLE d.t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, ADD c INT"
    assert parse_ddl(statement, None) == (
        AlterTable(T, (AddColumn(Column("c", "INT")), ConvertCharset("utf8mb4", "utf8mb4_bin"))),
    )
    assert parse_ddl("ALTER TABLE t CONVERT TO CHARSET latin1", "d") == (
        AlterTable(T, (ConvertCharset("latin1", "latin1_swedish_ci"),)),
    )


def test_rename_to_with_column_changes_gives_both_operations() -> None:
    assert parse_ddl("ALTER TABLE t RENAME COLUMN a TO b, RENAME TO u", "d") == (
        AlterTable(T, (RenameColumn("a", "b"),)),
        RenameTable(T, TableRef("d", "u")),
    )
    assert parse_ddl("ALTER TABLE t ADD INDEX (a), RENAME TO u", "d") == (
        AlterTable(T, (AddIndex(IndexSpec(None, IndexKind.INDEX, (KeyPart("a"),))),)),
        RenameTable(T, TableRef("d", "u")),
    )


@pytest.mark.parametrize(
    ("statement", "what"),
    [
        (
            "ALTER TABLE t EXCHANGE PARTITION p0 WITH TABLE u",
            "ALTER TABLE ... EXCHANGE PARTITION p0 WITH TABLE u",
        ),
        ("ALTER TABLE t ENGINE=BLACKHOLE", "ALTER TABLE ... ENGINE=BLACKHOLE"),
        (
            "ALTER TABLE t ALTER COLUMN a SET NOT NULL",
            "ALTER TABLE ... ALTER COLUMN a SET NOT NULL",
        ),
        ("ALTER TABLE t DISCARD TABLESPACE", "ALTER TABLE ... DISCARD TABLESPACE"),
        (
            "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4, IMPORT TABLESPACE",
            "ALTER TABLE ... IMPORT TABLESPACE",
        ),
    ],
)
def test_clauses_that_would_change_data_fail_with_1235(statement: str, what: str) -> None:
    with pytest.raises(EngineError) as caught:
        parse_ddl(statement, "d")
    assert (caught.value.code, caught.value.message) == (1235, unsupported_text(what, statement))


def test_syntax_errors_stay_1064() -> None:
    with pytest.raises(EngineError) as caught:
        parse_ddl("ALTER TABLE t ADD PRIMARY KEY (", "d")
    assert caught.value.code == 1064


# -- the catalog: results and MySQL's errors ----------------------------------------------------

ABCD = TableDef(
    (
        Column("id", "INT", False),
        Column("a", "INT"),
        Column("b", "VARCHAR(10)"),
        Column("c", "INT"),
    ),
    (0,),
)


def altered(statement: str, definition: TableDef = ABCD) -> TableDef:
    catalog = Catalog(frozenset({"d"}), {T: definition}).apply(one_alter(statement))
    return catalog.definition(T)


def alter_error(statement: str, definition: TableDef = ABCD) -> tuple[int, str]:
    with pytest.raises(EngineError) as caught:
        altered(statement, definition)
    return caught.value.code, caught.value.message


def test_rename_column_keeps_type_place_and_key() -> None:
    result = altered("ALTER TABLE t RENAME COLUMN id TO key_id, RENAME COLUMN b TO B2")
    assert result.column_names == ("key_id", "a", "B2", "c")
    assert result.columns[0] == Column("key_id", "INT", False)
    assert result.primary_key == (0,)


def test_names_resolve_against_the_table_before_the_statement() -> None:
    """MySQL matches DROP/CHANGE/RENAME against the old columns: a swap works, DROP + ADD of
    one name replaces the column, AFTER sees the new names."""
    assert altered("ALTER TABLE t RENAME COLUMN a TO c, RENAME COLUMN c TO a").column_names == (
        "id",
        "c",
        "b",
        "a",
    )
    assert altered("ALTER TABLE t DROP a, ADD a BIGINT FIRST").columns[0] == Column("a", "BIGINT")
    result = altered("ALTER TABLE t RENAME COLUMN c TO z, ADD n INT AFTER z, MODIFY id INT AFTER n")
    assert result.column_names == ("a", "b", "z", "n", "id")
    assert result.primary_key == (4,)


def test_modify_and_change_set_type_nullability_and_place() -> None:
    result = altered("ALTER TABLE t MODIFY a BIGINT NOT NULL AFTER c, CHANGE b bb TEXT FIRST")
    assert result.columns == (
        Column("bb", "TEXT", collation="utf8mb4_0900_ai_ci"),
        Column("id", "INT", False),
        Column("c", "INT"),
        Column("a", "BIGINT", False),
    )
    assert result.primary_key == (1,)


def test_a_key_column_stays_not_null_when_modified() -> None:
    assert altered("ALTER TABLE t MODIFY id BIGINT").columns[0] == Column("id", "BIGINT", False)


def test_add_primary_key_makes_its_columns_not_null() -> None:
    keyless = TableDef(ABCD.columns)
    result = altered("ALTER TABLE t ADD PRIMARY KEY (b(4), a)", keyless)
    assert (result.primary_key, result.key_prefix) == ((2, 1), (4, 0))
    assert not result.columns[1].nullable and not result.columns[2].nullable
    result = altered("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (c)")
    assert result.primary_key == (3,)
    assert result.columns[0] == Column("id", "INT", False)  # stays as it was declared


def test_dropping_the_primary_key_leaves_a_keyless_table() -> None:
    assert altered("ALTER TABLE t DROP PRIMARY KEY").primary_key == ()


def test_a_key_prefix_longer_than_the_new_type_keys_the_whole_value() -> None:
    keyed = TableDef((Column("s", "VARCHAR(20)", False),), (0,), (10,))
    assert altered("ALTER TABLE t MODIFY s VARCHAR(30)", keyed).key_prefix == (10,)
    assert altered("ALTER TABLE t MODIFY s VARCHAR(5)", keyed).key_prefix == (0,)
    assert altered("ALTER TABLE t MODIFY s INT", keyed).key_prefix == (0,)


@pytest.mark.parametrize(
    ("statement", "code", "message"),
    [
        ("ALTER TABLE t RENAME COLUMN x TO y", 1054, "Unknown column 'x' in 't'"),
        ("ALTER TABLE t RENAME COLUMN a TO B", 1060, "Duplicate column name 'b'"),
        ("ALTER TABLE t MODIFY x INT", 1054, "Unknown column 'x' in 't'"),
        ("ALTER TABLE t CHANGE x y INT", 1054, "Unknown column 'x' in 't'"),
        ("ALTER TABLE t CHANGE a c INT", 1060, "Duplicate column name 'c'"),
        ("ALTER TABLE t MODIFY a INT AFTER nope", 1054, "Unknown column 'nope' in 't'"),
        ("ALTER TABLE t MODIFY a INT AFTER a", 1054, "Unknown column 'a' in 't'"),
        ("ALTER TABLE t ADD n INT AFTER a, RENAME COLUMN a TO z", 1054,
         "Unknown column 'a' in 't'"),
        ("ALTER TABLE t ALTER COLUMN x SET DEFAULT 1", 1054, "Unknown column 'x' in 't'"),
        ("ALTER TABLE t ADD PRIMARY KEY (a)", 1068, "Multiple primary key defined"),
        ("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a), ADD PRIMARY KEY (c)", 1068,
         "Multiple primary key defined"),
        ("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (x)", 1072,
         "Key column 'x' doesn't exist in table"),
        ("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a, A)", 1060,
         "Duplicate column name 'A'"),
        ("ALTER TABLE t DROP PRIMARY KEY, DROP PRIMARY KEY", 1091,
         "Can't DROP 'PRIMARY'; check that column/key exists"),
        ("ALTER TABLE t DROP x, DROP PRIMARY KEY", 1091,
         "Can't DROP 'x'; check that column/key exists"),
        ("ALTER TABLE t DROP id, DROP a, DROP b, DROP c", 1090,
         "You can't delete all columns with ALTER TABLE; use DROP TABLE instead"),
        ("ALTER TABLE t ADD z INT, ADD Z INT", 1060, "Duplicate column name 'Z'"),
    ],
)  # fmt: skip
def test_alter_errors(statement: str, code: int, message: str) -> None:
    assert alter_error(statement) == (code, message)


def test_drop_primary_key_without_one_is_1091() -> None:
    assert alter_error("ALTER TABLE t DROP PRIMARY KEY", TableDef(ABCD.columns)) == (
        1091,
        "Can't DROP 'PRIMARY'; check that column/key exists",
    )


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE t RENAME COLUMN a TO x, MODIFY a BIGINT",
        "ALTER TABLE t DROP a, RENAME COLUMN a TO x",
        "ALTER TABLE t MODIFY a INT, MODIFY a BIGINT",
        "ALTER TABLE t ALTER a SET DEFAULT 1, RENAME COLUMN A TO x",
    ],
)
def test_two_clauses_on_one_old_column_fail_with_1235(statement: str) -> None:
    what = "several ALTER TABLE clauses on column 'a'"
    assert alter_error(statement) == (1235, unsupported_text(what, statement))


def test_alter_of_a_missing_table_is_1146() -> None:
    catalog = Catalog(frozenset({"d"}))
    with pytest.raises(EngineError) as caught:
        catalog.apply(one_alter("ALTER TABLE t ENGINE=InnoDB"))
    assert (caught.value.code, caught.value.message) == (1146, "Table 'd.t' doesn't exist")


def test_altered_table_tells_another_engine_how_rows_change() -> None:
    """What the Spark engine reuses: sources, converters and ``convert_row`` on plain rows."""
    operation = one_alter("ALTER TABLE t MODIFY a VARCHAR(5) FIRST, ADD n INT DEFAULT 7, DROP b")
    result = alter_columns(operation, ABCD)
    assert result.definition.column_names == ("a", "id", "c", "n")
    assert result.sources == (1, 0, 3, None)
    assert [c is None for c in result.converters] == [False, True, True, False]
    assert not result.keeps_rows
    assert result.convert_row((1, 42, "x", 3), 1) == ("42", 1, 3, 7)
    untouched = alter_columns(one_alter("ALTER TABLE t ADD INDEX (z), RENAME COLUMN a TO z"), ABCD)
    assert untouched.keeps_rows and untouched.sources == (0, 1, 2, 3)


# -- rows of the in-memory engine after ALTER ---------------------------------------------------

CREATE = "CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(10), m DECIMAL(6,2))"


def test_rename_and_reorder_move_the_values_with_their_columns() -> None:
    engine = table(CREATE, (1, 10, "x", Decimal("1.50")), (2, None, "y", None))
    run(engine, "ALTER TABLE t RENAME COLUMN a TO b, MODIFY s VARCHAR(10) FIRST, DROP m")
    assert names(engine) == ("s", "id", "b")
    assert content(engine) == [("x", 1, 10), ("y", 2, None)]
    insert(engine, ("z", 3, 30))  # new row images follow the new column order
    assert ("z", 3, 30) in engine.rows(T)


def test_integer_widening_and_narrowing() -> None:
    """Errors number rows in key order, as MySQL copies them (the inserts are reversed)."""
    engine = table(CREATE, (2, -5, None, None), (1, 100, None, None))
    run(engine, "ALTER TABLE t MODIFY a BIGINT")
    run(engine, "ALTER TABLE t MODIFY a TINYINT")
    assert content(engine) == [(1, 100, None, None), (2, -5, None, None)]
    statement = "ALTER TABLE t MODIFY a TINYINT UNSIGNED"
    error = failing(engine, statement)
    what = (
        "an ALTER TABLE that MySQL's strict mode refuses with 1264: "
        "Out of range value for column 'a' at row 2"
    )
    assert (error.code, error.message) == (1235, unsupported_text(what, statement))
    assert engine.definition(T).columns[1].type == "TINYINT"  # unchanged after the failure


def test_integers_and_decimals_convert_with_mysql_rounding() -> None:
    engine = table(CREATE, (1, 7, None, Decimal("2.50")), (2, -7, None, Decimal("-2.50")))
    run(engine, "ALTER TABLE t MODIFY a DECIMAL(5,1), MODIFY m INT")
    assert content(engine) == [(1, Decimal("7.0"), None, 3), (2, Decimal("-7.0"), None, -3)]
    run(engine, "ALTER TABLE t MODIFY m DECIMAL(4,2)")
    assert content(engine)[0][3] == Decimal("3.00")
    run(engine, "ALTER TABLE t MODIFY a DECIMAL(2,1)")
    error = failing(engine, "ALTER TABLE t MODIFY a DECIMAL(2,2)")
    assert "1264: Out of range value for column 'a' at row 1" in error.message


def test_numbers_become_mysql_text() -> None:
    single = struct.unpack("<f", struct.pack("<f", 0.1))[0]
    engine = table(
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, m DECIMAL(6,2), f FLOAT, g DOUBLE)",
        (1, -42, Decimal("1.50"), single, 1e20),
        (2, 0, Decimal("0.00"), 123456789.0, 0.000123),
    )
    run(engine, "ALTER TABLE t MODIFY a CHAR(5), MODIFY m VARCHAR(8), MODIFY f TEXT, MODIFY g TEXT")
    assert content(engine) == [
        (1, "-42", "1.50", "0.1", "1e20"),
        (2, "0", "0.00", "123457000", "0.000123"),
    ]


def test_strings_become_numbers_when_they_are_numbers() -> None:
    engine = table(CREATE, (1, None, " 12 ", None), (2, None, "1.5e1", None), (3, None, None, None))
    run(engine, "ALTER TABLE t MODIFY s INT")
    assert [row[2] for row in sorted(engine.rows(T))] == [12, 15, None]
    engine = table(CREATE, (1, None, "abc", None))
    error = failing(engine, "ALTER TABLE t MODIFY s INT")
    assert "1366: Incorrect integer value: 'abc' for column 's' at row 1" in error.message
    engine = table(CREATE, (1, None, "12abc", None))
    error = failing(engine, "ALTER TABLE t MODIFY s DECIMAL(5,2)")
    assert "1265: Data truncated for column 's' at row 1" in error.message


def test_varchar_length_changes() -> None:
    engine = table(CREATE, (1, None, "abc  ", None), (2, None, "abcdef", None))
    run(engine, "ALTER TABLE t MODIFY s VARCHAR(20)")
    assert [row[2] for row in sorted(engine.rows(T))] == ["abc  ", "abcdef"]
    run(engine, "ALTER TABLE t MODIFY s VARCHAR(6)")
    error = failing(engine, "ALTER TABLE t MODIFY s VARCHAR(4)")
    assert "1406: Data too long for column 's' at row 2" in error.message
    run(engine, "ALTER TABLE t MODIFY s CHAR(6)")
    assert [row[2] for row in sorted(engine.rows(T))] == ["abc", "abcdef"]  # CHAR drops spaces


def test_date_and_datetime_convert_both_ways() -> None:
    engine = table(
        "CREATE TABLE t (id INT PRIMARY KEY, d DATE, t DATETIME(6))",
        (1, date(2024, 2, 29), datetime(2024, 3, 1, 10, 20, 30, 500000)),
        (2, "0000-00-00", None),
    )
    run(engine, "ALTER TABLE t MODIFY d DATETIME(3), MODIFY t DATE")
    assert sorted(engine.rows(T)) == [
        (1, datetime(2024, 2, 29), date(2024, 3, 1)),
        (2, "0000-00-00 00:00:00.000", None),
    ]


def test_fractional_seconds_are_rounded() -> None:
    engine = table(
        "CREATE TABLE t (id INT PRIMARY KEY, t DATETIME(6))",
        (1, datetime(2024, 3, 1, 23, 59, 59, 500000)),
    )
    run(engine, "ALTER TABLE t MODIFY t DATETIME")
    assert engine.rows(T) == [(1, datetime(2024, 3, 2))]


def test_enum_and_set_member_lists_extended() -> None:
    engine = table(
        "CREATE TABLE t (id INT PRIMARY KEY, e ENUM('a','b'), s SET('x','y'))",
        (1, "b", "x,y"),
        (2, "", ""),
    )
    run(engine, "ALTER TABLE t MODIFY e ENUM('a','b','c'), MODIFY s SET('x','y','z')")
    assert sorted(engine.rows(T)) == [(1, "b", "x,y"), (2, "", "")]
    run(engine, "ALTER TABLE t MODIFY e ENUM('c','B','a'), MODIFY s SET('y','x')")
    assert sorted(engine.rows(T)) == [(1, "B", "y,x"), (2, "", "")]
    error = failing(engine, "ALTER TABLE t MODIFY e ENUM('a')")
    assert "1265: Data truncated for column 'e' at row 1" in error.message


def test_null_into_not_null_is_refused_like_mysql_strict_mode() -> None:
    """In place (same type): 1138; with a table copy (type changed): 1265 with the row."""
    engine = table(CREATE, (1, 5, None, None), (2, None, None, None))
    statement = "ALTER TABLE t MODIFY a INT NOT NULL"
    error = failing(engine, statement)
    what = "an ALTER TABLE that MySQL's strict mode refuses with 1138: Invalid use of NULL value"
    assert (error.code, error.message) == (1235, unsupported_text(what, statement))
    error = failing(engine, "ALTER TABLE t MODIFY a BIGINT NOT NULL")
    assert "1265: Data truncated for column 'a' at row 2" in error.message
    engine = table(CREATE, (1, 5, None, None))
    run(engine, statement)
    assert engine.definition(T).columns[1] == Column("a", "INT", False)


def test_add_primary_key_rekeys_the_rows_and_finds_duplicates() -> None:
    engine = table("CREATE TABLE t (a INT, b VARCHAR(5))", (1, "x"), (2, "x"), (1, "y"))
    error = failing(engine, "ALTER TABLE t ADD PRIMARY KEY (a)")
    assert (error.code, error.message) == (1062, "Duplicate entry '1' for key 't.PRIMARY'")
    run(engine, "ALTER TABLE t ADD PRIMARY KEY (a, b)")
    assert engine.definition(T).primary_key == (0, 1)
    session = engine.session("w")
    session.begin(_trx())
    with pytest.raises(EngineError) as caught:
        session.apply_rows(Map("d", "t"), [RowChange.insert((2, "x"))])
    session.rollback()
    assert caught.value.code == 1062
    run(engine, "ALTER TABLE t DROP PRIMARY KEY")
    insert(engine, (2, "x"))  # a keyless table holds duplicates
    assert sorted(engine.rows(T)) == [(1, "x"), (1, "y"), (2, "x"), (2, "x")]


def test_add_primary_key_on_a_column_with_nulls_is_refused() -> None:
    engine = table("CREATE TABLE t (a INT, b INT)", (1, None))
    error = failing(engine, "ALTER TABLE t ADD PRIMARY KEY (b)")
    assert "1138: Invalid use of NULL value" in error.message


def test_new_columns_take_their_default_in_existing_rows() -> None:
    engine = table(CREATE, (1, None, None, None))
    run(
        engine,
        "ALTER TABLE t ADD n INT NOT NULL, ADD e ENUM('p','q') NOT NULL, "
        "ADD v VARCHAR(5) DEFAULT 'hi', ADD k DECIMAL(5,2) DEFAULT 1.5, ADD z INT",
    )
    assert engine.rows(T) == [(1, None, None, None, 0, "p", "hi", Decimal("1.50"), None)]
    statement = "ALTER TABLE t ADD c DATETIME DEFAULT CURRENT_TIMESTAMP"
    error = failing(engine, statement)
    what = "filling existing rows of column 'c' from CURRENT_TIMESTAMP()"
    assert (error.code, error.message) == (1235, unsupported_text(what, statement))
    empty = table(CREATE)
    run(empty, statement)  # no row to fill
    assert names(empty)[-1] == "c"


def test_add_column_and_add_primary_key_in_one_statement() -> None:
    engine = table("CREATE TABLE t (a INT)", (5,), (6,))
    error = failing(engine, "ALTER TABLE t ADD id INT NOT NULL FIRST, ADD PRIMARY KEY (id)")
    assert (error.code, error.message) == (1062, "Duplicate entry '0' for key 't.PRIMARY'")


def test_several_actions_apply_together() -> None:
    engine = table(CREATE, (1, 3, "9", Decimal("4.00")))
    run(engine, "ALTER TABLE t ADD c INT, DROP m, RENAME COLUMN a TO b, MODIFY s BIGINT")
    assert names(engine) == ("id", "b", "s", "c")
    assert engine.rows(T) == [(1, 3, 9, None)]


def test_conversions_not_implemented_fail_only_when_a_value_needs_one() -> None:
    """JSON → INT is not implemented: an empty table or a NULL-only column changes freely."""
    engine = table("CREATE TABLE t (id INT PRIMARY KEY, j JSON)", (1, None))
    run(engine, "ALTER TABLE t MODIFY j INT")
    assert engine.rows(T) == [(1, None)]
    engine = table("CREATE TABLE t (id INT PRIMARY KEY, j JSON)", (1, "[1]"))
    statement = "ALTER TABLE t MODIFY j INT"
    error = failing(engine, statement)
    what = "converting values of column 'j' from JSON to INT"
    assert (error.code, error.message) == (1235, unsupported_text(what, statement))
    assert engine.rows(T) == [(1, "[1]")]


def test_convert_to_character_set_keeps_text() -> None:
    engine = table(CREATE, (1, None, "héllo", None))
    run(engine, "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci")
    assert engine.rows(T) == [(1, None, "héllo", None)]
    error = failing(engine, "ALTER TABLE t CONVERT TO CHARACTER SET gbk")
    assert error.code == 1235
    run(engine, "ALTER TABLE t MODIFY s VARCHAR(10) CHARACTER SET latin1")


def test_index_and_option_clauses_leave_the_rows_alone() -> None:
    engine = table(CREATE, (1, 2, "x", None))
    run(engine, "ALTER TABLE t ADD INDEX i (s), ENGINE=InnoDB, ALGORITHM=INPLACE, LOCK=NONE")
    run(engine, "ALTER TABLE t DROP INDEX i, COMMENT 'c'")
    assert engine.rows(T) == [(1, 2, "x", None)]
    assert names(engine) == ("id", "a", "s", "m")


# -- value converters ------------------------------------------------------------------------


def _single(value: float) -> float:
    result: float = struct.unpack("<f", struct.pack("<f", value))[0]
    return result


@pytest.mark.parametrize(
    ("value", "single", "text"),
    [
        (0.1, False, "0.1"),
        (100.0, False, "100"),
        (-2.5, False, "-2.5"),
        (1e14, False, "100000000000000"),
        (1e15, False, "1e15"),
        (1.5e20, False, "1.5e20"),
        (1234567890123456.8, False, "1234567890123456.8"),
        (1e-15, False, "0.000000000000001"),
        (1e-16, False, "1e-16"),
        (0.0, False, "0"),
        (_single(0.1), True, "0.1"),
        (_single(123456789.0), True, "123457000"),
        (_single(3.14159265), True, "3.14159"),
        (_single(1e-5), True, "0.00001"),
    ],
)
def test_real_text_is_mysqls(value: float, single: bool, text: str) -> None:
    assert real_text(value, single) == text


def test_scan_number_reads_mysqls_number_syntax() -> None:
    assert scan_number("  -1.5e2xyz") == (Decimal("-1.5e2"), "xyz")
    assert scan_number(".5") == (Decimal("0.5"), "")
    assert scan_number("abc") == (None, "abc")
    assert scan_number("1e") == (Decimal("1"), "e")


@pytest.mark.parametrize(
    ("old", "new", "value", "expected"),
    [
        ("BIGINT UNSIGNED", "INT", 7, 7),
        ("DECIMAL(10,2)", "INT", Decimal("2.50"), 3),
        ("DECIMAL(10,2)", "INT", Decimal("-2.49"), -2),
        ("INT", "DECIMAL(5,2)", 123, Decimal("123.00")),
        ("DOUBLE", "INT", 2.5, 2),  # C's rint: half to even
        ("DOUBLE", "DECIMAL(5,2)", 0.125, Decimal("0.13")),
        ("DOUBLE", "FLOAT", 0.1, _single(0.1)),
        ("INT", "DOUBLE", 3, 3.0),
        ("INT", "YEAR", 69, 2069),
        ("INT", "YEAR", 70, 1970),
        ("YEAR", "CHAR(4)", 0, "0000"),
        ("VARCHAR(5)", "DOUBLE", "1.5", 1.5),
        ("VARCHAR(5)", "DECIMAL(4,1)", "1.25", Decimal("1.3")),
        ("VARCHAR(5)", "ENUM('a','b')", "B ", "b"),
        ("VARCHAR(5)", "ENUM('a','b')", "2", "b"),
        ("VARCHAR(5)", "SET('a','b')", "b,a", "a,b"),
        ("VARCHAR(20)", "DATE", "2024-02-29", date(2024, 2, 29)),
        ("VARCHAR(30)", "DATETIME", "2024-02-29 10:00:00.7", datetime(2024, 2, 29, 10, 0, 1)),
        ("ENUM('a','b')", "VARCHAR(3)", 2, "b"),
        ("ENUM('a','b')", "ENUM('b','a')", 1, 2),
        ("SET('a','b')", "SET('b','a')", 1, 2),
        ("DATETIME", "VARCHAR(30)", datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05"),
        ("DATETIME(2)", "CHAR(30)", datetime(999, 1, 2, 3, 4, 5, 120000), "0999-01-02 03:04:05.12"),
        ("DATETIME(3)", "DATETIME(6)", "2021-04-31 10:00:00.500", "2021-04-31 10:00:00.500000"),
        ("TIME(6)", "TIME", timedelta(seconds=-1.5), timedelta(seconds=-2)),
        ("VARBINARY(4)", "BINARY(3)", b"ab", b"ab\0"),
        ("CHAR(4)", "TEXT", "abcd", "abcd"),
        ("INT", "VARCHAR(3)", None, None),
    ],
)
def test_type_converter(old: str, new: str, value: object, expected: object) -> None:
    convert = type_converter(old, new)
    assert convert is not None
    assert convert(value) == expected


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("INT", "INT(11)"),
        ("INT", "BIGINT"),
        ("INT UNSIGNED", "BIGINT"),
        ("SMALLINT", "MEDIUMINT"),
        ("DECIMAL(5,2)", "DECIMAL(8,2)"),
        ("VARCHAR(5)", "VARCHAR(50)"),
        ("CHAR(5)", "VARCHAR(5)"),
        ("TEXT", "MEDIUMTEXT"),
        ("ENUM('a')", "ENUM('a','b')"),
        ("FLOAT", "DOUBLE"),
        ("TINYINT(1)", "BOOLEAN"),
    ],
)
def test_widening_keeps_the_values(old: str, new: str) -> None:
    assert type_converter(old, new) is None


@pytest.mark.parametrize(
    ("old", "new", "value", "code"),
    [
        ("INT", "TINYINT", 128, 1264),
        ("INT", "TINYINT UNSIGNED", -1, 1264),
        ("DECIMAL(10,2)", "DECIMAL(3,2)", Decimal("9.995"), 1264),
        ("INT", "YEAR", 1900, 1264),
        ("DOUBLE", "FLOAT", 1e39, 1264),
        ("VARCHAR(9)", "INT", "", 1366),
        ("VARCHAR(9)", "DECIMAL(5,1)", "x", 1366),
        ("VARCHAR(9)", "DOUBLE", "1.5x", 1265),
        ("VARCHAR(9)", "ENUM('a')", "b", 1265),
        ("INT", "CHAR(2)", 123, 1406),
        ("VARCHAR(9)", "TEXT", "x" * 65536, 1406),
        ("BIT(8)", "INT", 1, 0),
        ("TIMESTAMP", "DATETIME", datetime(2024, 1, 1), 0),
        ("VARCHAR(9)", "VARBINARY(9)", "a", 0),
        ("VARCHAR(20)", "DATE", "20240101", 0),
    ],
)
def test_type_converter_faults(old: str, new: str, value: object, code: int) -> None:
    convert = type_converter(old, new)
    assert convert is not None
    with pytest.raises(ValueFault) as caught:
        convert(value)
    assert caught.value.code == code


def test_fill_values_of_new_columns() -> None:
    assert fill_converter("c", "INT", True, None)(None) is None
    assert fill_converter("c", "DECIMAL(5,2)", False, None)(None) == Decimal("0.00")
    assert fill_converter("c", "BINARY(2)", False, None)(None) == b"\0\0"
    assert fill_converter("c", "SET('a')", False, None)(None) == ""
    assert fill_converter("c", "INT", True, Default("-3", number=True))(None) == -3
    assert fill_converter("c", "VARCHAR(5)", True, Default("1.50", number=True))(None) == "1.50"
    assert fill_converter("c", "DATE", True, Default("2024-01-31"))(None) == date(2024, 1, 31)
    with pytest.raises(ValueFault):
        fill_converter("c", "DATE", False, None)(None)  # MySQL's zero date: strict mode fails
    with pytest.raises(ValueFault):
        fill_converter("c", "INT", False, Default(expression="AUTO_INCREMENT"))(None)


def test_key_prefix_after_a_type_change() -> None:
    assert key_prefix_after(10, "VARCHAR(20)") == 10
    assert key_prefix_after(10, "VARCHAR(8)") == 0
    assert key_prefix_after(10, "TEXT") == 10
    assert key_prefix_after(10, "BIGINT") == 0


def test_parse_type_reads_the_catalogs_type_text() -> None:
    assert sql_type("DECIMAL") == sql_type("DECIMAL(10, 0)")
    assert sql_type("CHAR") == sql_type("CHAR(1)")
    assert sql_type("FLOAT(30)") == sql_type("DOUBLE")
    assert sql_type("TEXT(100)") == sql_type("TEXT")
    assert sql_type("GEOMETRY") != sql_type("JSON")
