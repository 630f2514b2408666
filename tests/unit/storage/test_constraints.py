"""FOREIGN KEY and CHECK constraints in the catalog: parsing, naming on MySQL and MariaDB,
the keys foreign keys need, evolution under ALTER TABLE and RENAME TABLE, the Spark
engine's definition JSON, and what SHOW CREATE TABLE and information_schema show."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.storage import (
    Catalog,
    CheckConstraint,
    ForeignKey,
    ReferenceRule,
    StorageEngine,
    TableDef,
    TableRef,
    parse_ddl,
)
from spark_replica.applier_core.storage.collations import CharsetDefaults
from spark_replica.applier_core.storage.ddl_constraints import check_clause
from spark_replica.applier_core.storage.spark.ddl_state import apply_ddl
from spark_replica.applier_core.storage.spark.state import (
    DurableState,
    StoredTable,
    definition_from_json,
    definition_to_json,
)
from spark_replica.sql_handlers.tables.constraint_rows import (
    check_constraints_rows,
    key_column_usage_rows,
    referential_constraints_rows,
    table_constraints_rows,
)
from spark_replica.sql_handlers.tables.replica_tables import create_table_text
from tests.unit.storage.test_engine_behaviour import ddl

MYSQL, MARIADB = CharsetDefaults(), CharsetDefaults(mariadb=True)
P, C = TableRef("d", "p"), TableRef("d", "c")
PARENT = "CREATE TABLE p (id INT PRIMARY KEY, a INT, b INT, UNIQUE KEY ab (a, b))"
CHILD = (
    "CREATE TABLE c (id INT PRIMARY KEY, pid INT, x INT CHECK (x > 0), y INT, a INT, b INT, "
    "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE, "
    "CONSTRAINT fab FOREIGN KEY (a, b) REFERENCES p (a, b) ON UPDATE SET NULL, "
    "CHECK (x < y) NOT ENFORCED, CONSTRAINT named CHECK (a <> b), FOREIGN KEY (id) "
    "REFERENCES other.t (k))"
)


def catalog(*statements: str, source: CharsetDefaults = MYSQL) -> Catalog:
    found = Catalog()
    for statement in ("CREATE DATABASE d", *statements):
        for operation in parse_ddl(statement, "d", source):
            found = found.apply(operation)
    return found


def names(definition: TableDef) -> tuple[list[str], list[str], list[tuple[str, bool]]]:
    """The foreign keys', checks' and keys' names (keys with whether they were generated)."""
    return (
        [k.name for k in definition.foreign_keys],
        [c.name for c in definition.checks],
        [(i.name, i.generated) for i in definition.indexes],
    )


def test_create_table_keeps_foreign_keys_and_checks_named_as_mysql_does() -> None:
    definition = catalog(PARENT, CHILD).definition(C)
    assert definition.foreign_keys == (
        ForeignKey("c_ibfk_1", (1,), P, ("id",), ReferenceRule.CASCADE),
        ForeignKey("fab", (4, 5), P, ("a", "b"), on_update=ReferenceRule.SET_NULL),
        ForeignKey("c_ibfk_2", (0,), TableRef("other", "t"), ("k",)),
    )
    assert definition.checks == (
        CheckConstraint("c_chk_1", "(`x` > 0)"),
        CheckConstraint("c_chk_2", "(`x` < `y`)", enforced=False),
        CheckConstraint("named", "(`a` <> `b`)"),
    )
    # keys for the foreign keys no key serves (the primary key serves c_ibfk_2)
    assert names(definition)[2] == [("pid", True), ("fab", True)]


def test_mariadb_names_checks_after_their_column_or_constraint_n() -> None:
    definition = catalog(PARENT, CHILD, source=MARIADB).definition(C)
    assert names(definition)[:2] == (
        ["c_ibfk_1", "fab", "c_ibfk_2"],
        ["x", "CONSTRAINT_1", "named"],
    )
    assert definition.checks[0] == CheckConstraint("x", "`x` > 0", column="x")
    assert definition.foreign_keys[0].on_update is ReferenceRule.RESTRICT  # MariaDB's default


def test_alter_table_adds_drops_and_renames_constraints() -> None:
    found = catalog(
        PARENT,
        CHILD,
        "ALTER TABLE c ADD FOREIGN KEY (x) REFERENCES p (id), ADD CHECK (x > 1), "
        "ADD CONSTRAINT c2 CHECK (y > 2), ALTER CHECK named NOT ENFORCED",
        "ALTER TABLE c ADD INDEX (x, y)",  # replaces the key generated for c_ibfk_3
        "ALTER TABLE c DROP FOREIGN KEY c_ibfk_1, DROP CHECK c_chk_2, DROP CONSTRAINT fab, "
        "RENAME COLUMN y TO yy",
        "ALTER TABLE c DROP COLUMN b",
    )
    definition = found.definition(C)
    assert names(definition) == (
        ["c_ibfk_2", "c_ibfk_3"],
        ["c_chk_1", "c_chk_3", "c2"],
        [("pid", True), ("fab", True), ("x", False)],  # a dropped foreign key leaves its key
    )
    assert definition.checks[2].clause == "(`yy` > 2)"
    assert "named" not in [c.name for c in definition.checks]  # it named the dropped b


def test_mariadb_change_column_drops_the_columns_own_check() -> None:
    definition = catalog(
        PARENT, CHILD, "ALTER TABLE c CHANGE x x2 INT, ADD CHECK (y > 0)", source=MARIADB
    ).definition(C)
    assert [(c.name, c.clause) for c in definition.checks] == [
        ("CONSTRAINT_1", "`x2` < `y`"),
        ("named", "`a` <> `b`"),
        ("CONSTRAINT_2", "`y` > 0"),
    ]


def test_rename_table_and_column_follow_into_the_references() -> None:
    found = catalog(
        PARENT,
        CHILD,
        "ALTER TABLE p RENAME COLUMN a TO pa",
        "RENAME TABLE p TO pp, c TO cc",
    )
    definition = found.definition(TableRef("d", "cc"))
    assert [k.name for k in definition.foreign_keys] == ["cc_ibfk_1", "fab", "cc_ibfk_2"]
    assert [c.name for c in definition.checks] == ["cc_chk_1", "cc_chk_2", "named"]
    assert definition.foreign_keys[1].referenced == TableRef("d", "pp")
    assert definition.foreign_keys[1].referenced_columns == ("pa", "b")


def test_create_table_like_copies_checks_but_no_foreign_keys() -> None:
    definition = catalog(PARENT, CHILD, "CREATE TABLE e LIKE c").definition(TableRef("d", "e"))
    assert definition.foreign_keys == ()
    assert [c.name for c in definition.checks] == ["e_chk_1", "e_chk_2", "named"]


@pytest.mark.parametrize(
    ("text", "mysql", "mariadb"),
    [
        ("a > 0", "(`a` > 0)", "`a` > 0"),
        ("a IN (1, 2) AND b LIKE 'x%' OR c BETWEEN 1 AND 5",
         "(((`a` in (1,2)) and (`b` like _utf8mb4'x%')) or (`c` between 1 and 5))",
         "`a` in (1,2) and `b` like 'x%' or `c` between 1 and 5"),
        ("(a + c) * 2 >= -1", "(((`a` + `c`) * 2) >= -1)", "(`a` + `c`) * 2 >= -1"),
        ("char_length(b) > 2 and c is not null",
         "((char_length(`b`) > 2) and (`c` is not null))",
         "char_length(`b`) > 2 and `c` is not null"),
        ("b <> 'it''s'", "(`b` <> _utf8mb4'it\\'s')", "`b` <> 'it\\'s'"),
        ("NOT (a = 1)", "(not((`a` = 1)))", "`a` <> 1"),
    ],
)  # fmt: skip
def test_check_clauses_read_as_the_source_shows_them(text: str, mysql: str, mariadb: str) -> None:
    assert check_clause(text, mariadb=False) == mysql
    assert check_clause(text, mariadb=True) == mariadb


def test_definitions_keep_their_constraints_as_json() -> None:
    definition = catalog(PARENT, CHILD, source=MARIADB).definition(C)
    assert definition_from_json(definition_to_json(definition)) == definition


def test_both_engines_keep_the_constraints(engine: StorageEngine) -> None:
    ddl(engine, "CREATE DATABASE d", PARENT, CHILD, "ALTER TABLE c DROP FOREIGN KEY fab")
    assert [k.name for k in engine.definition(C).foreign_keys] == ["c_ibfk_1", "c_ibfk_2"]
    assert len(engine.definition(C).checks) == 3


def test_the_spark_state_follows_references_another_tables_ddl_changed() -> None:
    before = catalog(PARENT, CHILD)
    state = DurableState(
        frozenset({"d"}),
        {ref: StoredTable(i, ref, d) for i, (ref, d) in enumerate(before.tables.items(), 1)},
    )
    operations = parse_ddl("ALTER TABLE p RENAME COLUMN a TO pa", "d")
    after = apply_ddl(state, operations).state
    assert after.tables[C].definition.foreign_keys[1].referenced_columns == ("pa", "b")


def test_show_create_table_and_information_schema_show_them_as_mysql() -> None:
    found = catalog(PARENT, CHILD)
    definition = found.definition(C)
    lines = create_table_text("c", definition, "d").splitlines()
    assert lines[-8:-1] == [
        "  KEY `fab` (`a`,`b`),",
        "  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE,",
        "  CONSTRAINT `c_ibfk_2` FOREIGN KEY (`id`) REFERENCES `other`.`t` (`k`),",
        "  CONSTRAINT `fab` FOREIGN KEY (`a`, `b`) REFERENCES `p` (`a`, `b`) ON UPDATE SET NULL,",
        "  CONSTRAINT `c_chk_1` CHECK ((`x` > 0)),",
        "  CONSTRAINT `c_chk_2` CHECK ((`x` < `y`)) /*!80016 NOT ENFORCED */,",
        "  CONSTRAINT `named` CHECK ((`a` <> `b`))",
    ]
    kinds = [(r["constraint_name"], r["constraint_type"], r["enforced"])
             for r in table_constraints_rows(C, definition)]  # fmt: skip
    assert kinds[0] == ("c_ibfk_1", "FOREIGN KEY", "YES")
    assert kinds[-2] == ("c_chk_2", "CHECK", "NO")
    usage = [(r["constraint_name"], r["column_name"], r["position_in_unique_constraint"],
              r["referenced_table_name"], r["referenced_column_name"])
             for r in key_column_usage_rows(C, definition)]  # fmt: skip
    assert usage[1:3] == [("fab", "a", 1, "p", "a"), ("fab", "b", 2, "p", "b")]
    rules = [(r["constraint_name"], r["unique_constraint_name"], r["update_rule"],
              r["delete_rule"])
             for r in referential_constraints_rows(C, definition, found.tables)]  # fmt: skip
    assert rules == [
        ("c_ibfk_1", "PRIMARY", "NO ACTION", "CASCADE"),
        ("c_ibfk_2", None, "NO ACTION", "NO ACTION"),
        ("fab", "ab", "SET NULL", "NO ACTION"),
    ]
    assert check_constraints_rows(C, definition)[0]["check_clause"] == "(`x` > 0)"
