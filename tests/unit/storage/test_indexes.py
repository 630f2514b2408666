"""Secondary keys in the catalog: parsed from CREATE TABLE, CREATE/DROP INDEX and ALTER TABLE,
named, ordered and checked as MySQL does, following column changes; kept by both engines and
in the Spark engine's JSON definitions; shown by SHOW CREATE TABLE and information_schema."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.storage import (
    Column,
    EngineError,
    Index,
    IndexKind,
    IndexPart,
    StorageEngine,
    TableDef,
    TableRef,
    parse_ddl,
)
from spark_replica.applier_core.storage.ddl import Catalog
from spark_replica.applier_core.storage.spark.state import definition_from_json, definition_to_json
from spark_replica.sql_handlers.tables.key_rows import (
    key_column_usage_rows,
    statistics_rows,
    table_constraints_rows,
)
from spark_replica.sql_handlers.tables.replica_tables import columns_rows, create_table_text
from tests.unit.storage.test_engine_behaviour import ddl, ddl_error

T = TableRef("d", "t")
TABLE = (
    "CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(40), c TEXT, "
    "g GEOMETRY NOT NULL, e VARCHAR(10) UNIQUE, KEY (b(10) DESC, a), UNIQUE KEY uk (a, b), "
    "FULLTEXT KEY ft (c), SPATIAL INDEX (g), INDEX ix (a) COMMENT 'by a' INVISIBLE, "
    "CONSTRAINT cu UNIQUE (b(5)), UNIQUE INDEX (a), FOREIGN KEY (a) REFERENCES p (id))"
)


def catalog(*statements: str) -> Catalog:
    found = Catalog().apply(parse_ddl("CREATE DATABASE d", None)[0])
    for statement in statements:
        for operation in parse_ddl(statement, "d"):
            found = found.apply(operation)
    return found


def keys(*statements: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, kind, parts as text) of ``t``'s secondary keys, in the catalog's order."""
    definition = catalog(*statements).definition(T)
    return [(i.name, i.kind.value, _parts(definition, i)) for i in definition.indexes]


def _parts(definition: TableDef, index: Index) -> tuple[str, ...]:
    return tuple(
        definition.columns[p.column].name
        + (f"({p.prefix})" if p.prefix else "")
        + (" DESC" if p.descending else "")
        for p in index.parts
    )


def error(*statements: str) -> tuple[int, str]:
    with pytest.raises(EngineError) as caught:
        catalog(*statements)
    return caught.value.code, caught.value.message


def test_create_table_keeps_every_kind_of_key_named_and_ordered_as_mysql() -> None:
    assert keys(TABLE) == [
        ("a", "UNIQUE", ("a",)),  # unique on NOT NULL columns first
        ("e", "UNIQUE", ("e",)),  # then unique with a nullable column, in definition order
        ("uk", "UNIQUE", ("a", "b")),
        ("cu", "UNIQUE", ("b(5)",)),  # then unique with a prefix part
        ("b", "INDEX", ("b(10) DESC", "a")),  # then the other keys, in definition order
        ("g", "SPATIAL", ("g",)),
        ("ix", "INDEX", ("a",)),
        ("ft", "FULLTEXT", ("c",)),  # FULLTEXT last
    ]
    ix = next(i for i in catalog(TABLE).definition(T).indexes if i.name == "ix")
    assert (ix.comment, ix.visible) == ("by a", False)


def test_unnamed_keys_take_the_first_column_then_a_number() -> None:
    statements = ("CREATE TABLE t (x INT, y INT, KEY (x), KEY x_2 (y), KEY (x, y))",
                  "ALTER TABLE t ADD INDEX (x), ADD UNIQUE (y)")  # fmt: skip
    assert [name for name, _, _ in keys(*statements)] == ["y", "x", "x_2", "x_3", "x_4"]


def test_create_index_and_alter_table_add_drop_rename_and_alter_keys() -> None:
    assert keys(
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20))",
        "CREATE UNIQUE INDEX un USING BTREE ON t (b(4), a)",
        "CREATE INDEX ia ON d.t (a DESC) COMMENT 'x' ALGORITHM=INPLACE LOCK=NONE",
        "ALTER TABLE t ADD KEY k (a, b), ADD FULLTEXT (b), ADD CONSTRAINT cb UNIQUE (b)",
        "ALTER TABLE t RENAME INDEX k TO k2, RENAME KEY ia TO ia2, DROP KEY b",
        "ALTER TABLE t ALTER INDEX k2 INVISIBLE",
        "DROP INDEX un ON t",
    ) == [("cb", "UNIQUE", ("b",)), ("ia2", "INDEX", ("a DESC",)), ("k2", "INDEX", ("a", "b"))]
    altered = catalog(
        "CREATE TABLE t (a INT, KEY k (a))", "ALTER TABLE t ALTER INDEX k INVISIBLE"
    ).definition(T)
    assert not altered.indexes[0].visible


def test_keys_follow_dropped_renamed_and_changed_columns() -> None:
    assert keys(
        "CREATE TABLE t (a INT, b VARCHAR(20), c INT, KEY ab (a, b(8)), KEY a (a), "
        "UNIQUE KEY bc (b, c))",
        "ALTER TABLE t DROP COLUMN a, RENAME COLUMN c TO z",
        "ALTER TABLE t CHANGE b bb VARCHAR(5)",
    ) == [("bc", "UNIQUE", ("bb", "z")), ("ab", "INDEX", ("bb",))]
    # the prefix longer than the new type: the whole value is keyed


def test_key_names_and_columns_are_checked_with_mysqls_errors() -> None:
    create = "CREATE TABLE t (a INT, b INT, KEY k (a))"
    assert error(create, "ALTER TABLE t ADD INDEX K (b)") == (1061, "Duplicate key name 'K'")
    assert error("CREATE TABLE t (a INT, KEY k (a), UNIQUE k (a))")[0] == 1061
    assert error(create, "ALTER TABLE t DROP INDEX z") == (
        1091, "Can't DROP 'z'; check that column/key exists")  # fmt: skip
    assert error(create, "ALTER TABLE t RENAME INDEX z TO y") == (
        1176, "Key 'z' doesn't exist in table 't'")  # fmt: skip
    assert error(create, "ALTER TABLE t ADD INDEX i (b), RENAME INDEX i TO k")[0] == 1176
    assert (
        error(create, "ALTER TABLE t ADD KEY j (b)", "ALTER TABLE t RENAME INDEX j TO k")[0] == 1061
    )
    assert error(create, "ALTER TABLE t ADD KEY `PRIMARY` (b)") == (
        1280, "Incorrect index name 'PRIMARY'")  # fmt: skip
    assert error(create, "ALTER TABLE t ADD KEY (z)") == (
        1072, "Key column 'z' doesn't exist in table")  # fmt: skip
    # DROP CONSTRAINT may name a foreign key or check (not kept); IF EXISTS tolerates a miss
    assert keys(create, "ALTER TABLE t DROP CONSTRAINT fk", "DROP INDEX IF EXISTS z ON t")
    assert keys(create, "ALTER TABLE t DROP CONSTRAINT k") == []
    # dropped and added again in one statement
    assert keys(create, "ALTER TABLE t DROP INDEX k, ADD UNIQUE k (b)") == [("k", "UNIQUE", ("b",))]


def test_create_table_like_copies_the_keys() -> None:
    found = catalog(TABLE, "CREATE TABLE u LIKE t")
    assert found.definition(TableRef("d", "u")).indexes == found.definition(T).indexes


def test_both_engines_keep_the_keys(engine: StorageEngine) -> None:
    ddl(
        engine,
        "CREATE DATABASE d",
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), KEY (a))",
        "CREATE UNIQUE INDEX ub ON t (b(6) DESC)",
        "ALTER TABLE t RENAME INDEX a TO ia, ADD KEY ab (a, b)",
    )
    assert engine.definition(T).indexes == (
        Index("ub", IndexKind.UNIQUE, (IndexPart(2, 6, True),)),
        Index("ia", IndexKind.INDEX, (IndexPart(1),)),
        Index("ab", IndexKind.INDEX, (IndexPart(1), IndexPart(2))),
    )
    assert ddl_error(engine, "ALTER TABLE t ADD INDEX ab (b)").code == 1061
    assert ddl_error(engine, "DROP INDEX nope ON t").code == 1091


def test_definitions_keep_their_keys_as_json_and_old_json_still_loads() -> None:
    definition = catalog(TABLE).definition(T)
    assert definition_from_json(definition_to_json(definition)) == definition
    old = '{"columns":[["id","INT",false]],"primary_key":[0],"key_prefix":[0]}'
    assert definition_from_json(old) == TableDef((Column("id", "INT", False),), (0,))


def test_show_create_table_lists_the_keys_as_mysql_after_the_primary_key() -> None:
    definition = catalog(TABLE).definition(T)
    lines = create_table_text("t", definition, "d").splitlines()
    assert lines[7:-1] == [
        "  PRIMARY KEY (`id`),",
        "  UNIQUE KEY `a` (`a`),",
        "  UNIQUE KEY `e` (`e`),",
        "  UNIQUE KEY `uk` (`a`,`b`),",
        "  UNIQUE KEY `cu` (`b`(5)),",
        "  KEY `b` (`b`(10) DESC,`a`),",
        "  SPATIAL KEY `g` (`g`),",
        "  KEY `ix` (`a`) COMMENT 'by a' /*!80000 INVISIBLE */,",
        "  FULLTEXT KEY `ft` (`c`),",
        "  CONSTRAINT `t_ibfk_1` FOREIGN KEY (`a`) REFERENCES `p` (`id`)",
    ]


def test_information_schema_rows_describe_every_key() -> None:
    definition = catalog(TABLE).definition(T)
    rows = statistics_rows(T, definition)
    shown = [
        (r["index_name"], r["seq_in_index"], r["column_name"], r["non_unique"], r["collation"],
         r["sub_part"], r["nullable"], r["index_type"], r["index_comment"], r["is_visible"])
        for r in rows
    ]  # fmt: skip
    assert shown == [
        ("PRIMARY", 1, "id", 0, "A", None, "", "BTREE", "", "YES"),
        ("a", 1, "a", 0, "A", None, "", "BTREE", "", "YES"),
        ("e", 1, "e", 0, "A", None, "YES", "BTREE", "", "YES"),
        ("uk", 1, "a", 0, "A", None, "", "BTREE", "", "YES"),
        ("uk", 2, "b", 0, "A", None, "YES", "BTREE", "", "YES"),
        ("cu", 1, "b", 0, "A", 5, "YES", "BTREE", "", "YES"),
        ("b", 1, "b", 1, "D", 10, "YES", "BTREE", "", "YES"),
        ("b", 2, "a", 1, "A", None, "", "BTREE", "", "YES"),
        ("g", 1, "g", 1, None, None, "", "SPATIAL", "", "YES"),
        ("ix", 1, "a", 1, "A", None, "", "BTREE", "by a", "NO"),
        ("ft", 1, "c", 1, None, None, "YES", "FULLTEXT", "", "YES"),
    ]
    constraints = [(r["constraint_name"], r["constraint_type"])
                   for r in table_constraints_rows(T, definition)]  # fmt: skip
    assert constraints == [("PRIMARY", "PRIMARY KEY"), ("a", "UNIQUE"), ("e", "UNIQUE"),
                           ("uk", "UNIQUE"), ("cu", "UNIQUE")]  # fmt: skip
    usage = [(r["constraint_name"], r["column_name"], r["ordinal_position"])
             for r in key_column_usage_rows(T, definition)]  # fmt: skip
    assert usage == [("PRIMARY", "id", 1), ("a", "a", 1), ("e", "e", 1), ("uk", "a", 1),
                     ("uk", "b", 2), ("cu", "b", 1)]  # fmt: skip
    column_keys = {r["column_name"]: r["column_key"] for r in columns_rows(T, definition)}
    assert column_keys == {"id": "PRI", "a": "UNI", "b": "UNI", "c": "MUL", "g": "MUL",
                           "e": "UNI"}  # fmt: skip


def test_keys_with_functional_parts_are_kept_with_their_expression() -> None:
    found = catalog(
        "CREATE TABLE t (a INT, b INT, INDEX ((a + b)), UNIQUE KEY k2 (a, (ABS(b)) DESC))",
        "CREATE INDEX idx ON t ((a * 2))",
        "ALTER TABLE t RENAME COLUMN b TO bb",
    )
    definition = found.definition(T)
    assert create_table_text("t", definition, "d").splitlines()[3:6] == [
        "  UNIQUE KEY `k2` (`a`,(abs(`bb`)) DESC),",
        "  KEY `functional_index` (((`a` + `bb`))),",
        "  KEY `idx` (((`a` * 2)))",
    ]
    rows = statistics_rows(T, definition)
    assert [(r["index_name"], r["column_name"], r["expression"], r["collation"]) for r in rows] == [
        ("k2", "a", None, "A"),
        ("k2", None, "abs(`bb`)", "D"),
        ("functional_index", None, "(`a` + `bb`)", "A"),
        ("idx", None, "(`a` * 2)", "A"),
    ]
    assert definition_from_json(definition_to_json(definition)) == definition
