"""MySQL SELECTs as Spark SQL: table references, the fix-up rules and the errors (no Spark).

The requirements catalogue has no query-specific IDs (it covers replication); these tests
follow the rules listed in the module docstring of ``sql_handlers.query.transpile``. Running
the output on Spark is ``test_transpile_spark.py``.
"""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage import TableRef
from spark_replica.sql_handlers.query.transpile import SparkQuery, to_spark_sql

VIEWS = {
    TableRef("shop", "orders"): "__replica_v12",
    TableRef("shop", "items"): "__replica_v13",
    TableRef("shop", "t"): "__replica_v1",
    TableRef("other", "t"): "__replica_v2",
    TableRef("Shop", "Orders"): "__replica_v3",
    TableRef("shop", "x"): "__replica_v4",
    TableRef("my db", "t-1"): "__replica_v5",
}


def transpile(sql: str, database: str | None = "shop") -> SparkQuery:
    query = to_spark_sql(sqlglot.parse_one(sql, read="mysql"), database=database, resolve=VIEWS.get)
    sqlglot.parse_one(query.sql, read="spark")  # the output is valid Spark SQL
    return query


def spark_sql(sql: str, database: str | None = "shop") -> str:
    return transpile(sql, database).sql


def error_of(sql: str, database: str | None = "shop") -> ReplicaError:
    with pytest.raises(ReplicaError) as caught:
        transpile(sql, database)
    return caught.value


# --- API ------------------------------------------------------------------------------------


def test_result_is_the_sql_and_the_tables_read() -> None:
    query = transpile("SELECT * FROM orders")
    assert query == SparkQuery(
        "SELECT * FROM `__replica_v12` AS `orders`", (TableRef("shop", "orders"),)
    )


def test_tables_are_deduplicated_in_order_of_appearance() -> None:
    sql = (
        "SELECT (SELECT 1 FROM items) AS n FROM orders JOIN shop.items ON 1 "
        "JOIN other.t ON 1 WHERE 1 IN (SELECT 1 FROM orders)"
    )
    assert transpile(sql).tables == (
        TableRef("shop", "items"),
        TableRef("shop", "orders"),
        TableRef("other", "t"),
    )


def test_the_callers_tree_is_not_changed() -> None:
    tree = sqlglot.parse_one(
        "SELECT CAST(a AS UNSIGNED), a XOR b FROM shop.orders o WHERE o.x DIV 2", read="mysql"
    )
    before = tree.copy()
    to_spark_sql(tree, database=None, resolve=VIEWS.get)
    assert tree == before
    assert tree.sql(dialect="mysql") == before.sql(dialect="mysql")


# --- table references -------------------------------------------------------------------------


def test_a_table_reads_its_view_under_the_name_the_query_uses() -> None:
    assert spark_sql("SELECT id FROM shop.orders", database=None) == (
        "SELECT `id` AS `id` FROM `__replica_v12` AS `orders`"
    )
    assert spark_sql("SELECT o.id FROM shop.orders o") == (
        "SELECT `o`.`id` AS `id` FROM `__replica_v12` AS `o`"
    )


def test_qualified_columns_name_the_alias() -> None:
    assert spark_sql("SELECT shop.orders.id, orders.id FROM shop.orders") == (
        "SELECT `orders`.`id` AS `id`, `orders`.`id` AS `id` FROM `__replica_v12` AS `orders`"
    )
    assert spark_sql("SELECT shop.orders.* FROM orders") == (
        "SELECT `orders`.* FROM `__replica_v12` AS `orders`"
    )


def test_correlated_three_part_names_find_the_outer_table() -> None:
    sql = (
        "SELECT id FROM orders WHERE EXISTS "
        "(SELECT 1 FROM shop.items WHERE shop.items.oid = shop.orders.id)"
    )
    assert "WHERE `items`.`oid` = `orders`.`id`" in spark_sql(sql)


def test_same_table_name_in_two_databases_gets_qualified_aliases() -> None:
    sql = "SELECT shop.t.x, other.t.x FROM shop.t JOIN other.t ON shop.t.id = other.t.id"
    assert spark_sql(sql) == (
        "SELECT `shop.t`.`x` AS `x`, `other.t`.`x` AS `x` FROM `__replica_v1` AS `shop.t` "
        "JOIN `__replica_v2` AS `other.t` ON `shop.t`.`id` = `other.t`.`id`"
    )


def test_names_are_case_sensitive_and_passed_as_written() -> None:
    assert transpile("SELECT * FROM Shop.Orders").tables == (TableRef("Shop", "Orders"),)
    error = error_of("SELECT * FROM SHOP.orders")
    assert error.message == "Table 'SHOP.orders' doesn't exist"


def test_backquoted_identifiers_with_odd_characters() -> None:
    assert spark_sql("SELECT `odd col`, `a``b` FROM `my db`.`t-1`") == (
        "SELECT `odd col` AS `odd col`, `a``b` AS `a``b` FROM `__replica_v5` AS `t-1`"
    )


def test_index_hints_are_dropped() -> None:
    assert spark_sql("SELECT * FROM orders USE INDEX (i) FORCE INDEX (j)") == (
        "SELECT * FROM `__replica_v12` AS `orders`"
    )


# --- CTEs -----------------------------------------------------------------------------------


def test_cte_names_are_not_replicated_tables() -> None:
    query = transpile(
        "WITH x AS (SELECT id FROM orders), y AS (SELECT * FROM x) "
        "SELECT * FROM y UNION ALL SELECT * FROM x"
    )
    assert query.tables == (TableRef("shop", "orders"),)
    assert "FROM `x`" in query.sql and "FROM `y`" in query.sql


def test_a_cte_sees_only_the_ctes_before_it() -> None:
    # MySQL: in a non-recursive WITH, `x` inside its own definition is the base table x,
    # and a CTE cannot see the ones defined after it.
    assert transpile("WITH x AS (SELECT * FROM x) SELECT * FROM x").tables == (
        TableRef("shop", "x"),
    )
    sql = "WITH a AS (SELECT * FROM x), x AS (SELECT 1) SELECT * FROM a"
    assert transpile(sql).tables == (TableRef("shop", "x"),)


def test_a_recursive_cte_sees_itself() -> None:
    sql = (
        "WITH RECURSIVE x AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM x WHERE n < 3) "
        "SELECT n FROM x"
    )
    assert transpile(sql, database=None).tables == ()


def test_a_cte_is_visible_only_in_its_query() -> None:
    sql = "SELECT * FROM (WITH x AS (SELECT 1 AS n) SELECT * FROM x) AS d, x"
    assert transpile(sql).tables == (TableRef("shop", "x"),)


# --- errors ---------------------------------------------------------------------------------


def test_no_database_selected() -> None:
    error = error_of("SELECT * FROM orders", database=None)
    assert (error.code, error.sqlstate, error.message) == (
        ErrorCode.NO_DB_ERROR,
        "3D000",
        "No database selected",
    )
    assert error_of("SELECT * FROM orders", database="").code == ErrorCode.NO_DB_ERROR


def test_queries_without_tables_need_no_database() -> None:
    assert spark_sql("SELECT 1 FROM dual", database=None) == "SELECT 1 AS `1`"
    assert spark_sql("WITH c AS (SELECT 1 AS n) SELECT n FROM c", database=None) == (
        "WITH `c` AS (SELECT 1 AS `n`) SELECT `n` AS `n` FROM `c`"
    )


def test_unknown_table() -> None:
    error = error_of("SELECT * FROM orders JOIN shop.nope ON 1")
    assert (error.code, error.sqlstate, error.message) == (
        ErrorCode.NO_SUCH_TABLE,
        "42S02",
        "Table 'shop.nope' doesn't exist",
    )


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        ("SELECT CAST(a AS TIME) FROM t", "CAST(... AS TIME)"),
        ("SELECT CAST(a AS YEAR) FROM t", "CAST(... AS YEAR)"),
        ("SELECT CAST(a AS JSON) FROM t", "CAST(... AS JSON)"),
        ("SELECT JSON_EXTRACT(a, '$.x', '$.y') FROM t", "JSON_EXTRACT with several paths"),
    ],
)
def test_constructs_spark_cannot_run(sql: str, what: str) -> None:
    error = error_of(sql)
    assert (error.code, error.message) == (
        ErrorCode.NOT_SUPPORTED_YET,
        f"This version of MySQL doesn't yet support '{what}'",
    )


def test_what_sqlglot_would_drop_is_refused() -> None:
    error = error_of("SELECT TRUNCATE(a, 1) FROM t")
    assert error.code == ErrorCode.NOT_SUPPORTED_YET
    assert "decimals" in error.message


# --- result column names --------------------------------------------------------------------


def test_unaliased_columns_get_mysql_names() -> None:
    sql = "SELECT COUNT(*), ID, 'abc', 1, NULL, -1, t.name, a + 1 AS b, t.* FROM t"
    assert spark_sql(sql) == (
        "SELECT COUNT(*) AS `COUNT(*)`, `ID` AS `ID`, 'abc' AS `abc`, 1 AS `1`, "
        "NULL AS `NULL`, -1 AS `-1`, `t`.`name` AS `name`, `a` + 1 AS `b`, `t`.* "
        "FROM `__replica_v1` AS `t`"
    )


def test_only_the_first_select_of_a_union_names_the_result() -> None:
    assert spark_sql("SELECT 'x' UNION SELECT 'y'") == "SELECT 'x' AS `x` UNION SELECT 'y'"
    assert spark_sql("(SELECT a FROM t) UNION ALL (SELECT b FROM t) ORDER BY 1") == (
        "(SELECT `a` AS `a` FROM `__replica_v1` AS `t`) UNION ALL "
        "(SELECT `b` FROM `__replica_v1` AS `t`) ORDER BY 1"
    )


def test_order_by_a_renamed_expression_uses_its_name() -> None:
    assert spark_sql("SELECT DISTINCT a + 1 FROM t ORDER BY a + 1 DESC, a") == (
        "SELECT DISTINCT `a` + 1 AS `a + 1` FROM `__replica_v1` AS `t` ORDER BY `a + 1` DESC, `a`"
    )


# --- casts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mysql", "spark"),
    [
        ("CAST(a AS UNSIGNED)", "PMOD(CAST(`a` AS DECIMAL(20, 0)), 18446744073709551616)"),
        (
            "CAST(a AS UNSIGNED INTEGER)",
            "PMOD(CAST(`a` AS DECIMAL(20, 0)), 18446744073709551616)",
        ),
        ("CONVERT(a, UNSIGNED)", "PMOD(CAST(`a` AS DECIMAL(20, 0)), 18446744073709551616)"),
        ("CAST(a AS SIGNED)", "CAST(CAST(`a` AS DECIMAL(20, 0)) AS BIGINT)"),
        ("CAST(a AS SIGNED INTEGER)", "CAST(CAST(`a` AS DECIMAL(20, 0)) AS BIGINT)"),
        ("CAST(a AS CHAR)", "CAST(`a` AS STRING)"),
        ("CAST(a AS CHAR(3))", "SUBSTRING(CAST(`a` AS STRING), 1, 3)"),
        ("CAST(a AS CHAR(3) CHARACTER SET utf8mb4)", "SUBSTRING(CAST(`a` AS STRING), 1, 3)"),
        ("CAST(a AS NCHAR(2))", "SUBSTRING(CAST(`a` AS STRING), 1, 2)"),
        ("CONVERT(a USING utf8mb4)", "CAST(`a` AS STRING)"),
        ("CAST(a AS BINARY)", "CAST(`a` AS BINARY)"),
        ("CAST(a AS BINARY(4))", "SUBSTRING(CAST(`a` AS BINARY), 1, 4)"),
        ("CAST(a AS DATETIME)", "CAST(`a` AS TIMESTAMP_NTZ)"),
        ("CAST(a AS DATETIME(6))", "CAST(`a` AS TIMESTAMP_NTZ)"),
        ("CAST(a AS DATE)", "CAST(`a` AS DATE)"),
        ("CAST(a AS DECIMAL(5,2))", "CAST(`a` AS DECIMAL(5, 2))"),
        ("CAST(a AS DOUBLE)", "CAST(`a` AS DOUBLE)"),
    ],
)
def test_casts(mysql: str, spark: str) -> None:
    assert spark_sql(f"SELECT {mysql} AS c FROM t") == (
        f"SELECT {spark} AS `c` FROM `__replica_v1` AS `t`"
    )


# --- MySQL syntax Spark rejects -------------------------------------------------------------


def test_from_dual_is_removed() -> None:
    assert spark_sql("SELECT 1 + 1 FROM DUAL WHERE 1 = 1") == "SELECT 1 + 1 AS `1 + 1` WHERE 1 = 1"


@pytest.mark.parametrize(
    ("collation", "spark"),
    [
        ("utf8mb4_bin", " COLLATE UTF8_BINARY"),
        ("utf8mb4_0900_as_cs", " COLLATE UTF8_BINARY"),
        ("utf8mb4_general_ci", " COLLATE UTF8_LCASE"),
        ("utf8mb4_0900_ai_ci", " COLLATE UTF8_LCASE"),
        ("latin1_swedish_ci", " COLLATE UTF8_LCASE"),
        ("utf8mb4_0900_as_ci", " COLLATE UTF8_LCASE"),
        ("gb18030_unicode_520_xx", ""),
    ],
)
def test_collations(collation: str, spark: str) -> None:
    assert spark_sql(f"SELECT 1 AS one FROM t WHERE name = 'A' COLLATE {collation}") == (
        f"SELECT 1 AS `one` FROM `__replica_v1` AS `t` WHERE `name` = 'A'{spark}"
    )


def test_select_modifiers_and_straight_join_are_removed() -> None:
    sql = (
        "SELECT SQL_CALC_FOUND_ROWS HIGH_PRIORITY SQL_NO_CACHE STRAIGHT_JOIN SQL_BUFFER_RESULT "
        "SQL_SMALL_RESULT SQL_BIG_RESULT a FROM t STRAIGHT_JOIN orders ON t.a = orders.a"
    )
    assert spark_sql(sql) == (
        "SELECT `a` AS `a` FROM `__replica_v1` AS `t` JOIN `__replica_v12` AS `orders` "
        "ON `t`.`a` = `orders`.`a`"
    )


@pytest.mark.parametrize("lock", ["FOR UPDATE", "LOCK IN SHARE MODE", "FOR SHARE"])
def test_locking_clauses_are_dropped(lock: str) -> None:
    assert spark_sql(f"SELECT * FROM t {lock}") == "SELECT * FROM `__replica_v1` AS `t`"


def test_limit_forms() -> None:
    assert spark_sql("SELECT * FROM t LIMIT 10, 20") == (
        "SELECT * FROM `__replica_v1` AS `t` LIMIT 20 OFFSET 10"
    )
    assert spark_sql("SELECT * FROM t LIMIT 5, 18446744073709551615") == (
        "SELECT * FROM `__replica_v1` AS `t` OFFSET 5"
    )


def test_introducers() -> None:
    assert spark_sql("SELECT _utf8mb4'abc', _binary'x' AS b") == (
        "SELECT 'abc' AS `abc`, CAST('x' AS BINARY) AS `b`"
    )


# --- truth values ---------------------------------------------------------------------------


def test_xor_is_inequality_of_truth_values() -> None:
    # Same truth table as (a OR b) AND NOT (a AND b), NULL included; operands evaluated once.
    assert spark_sql("SELECT 1 AS one FROM t WHERE a XOR b > 1") == (
        "SELECT 1 AS `one` FROM `__replica_v1` AS `t` WHERE (CAST(`a` AS BOOLEAN) <> (`b` > 1))"
    )
    assert spark_sql("SELECT a XOR b XOR c AS x FROM t") == (
        "SELECT CAST(((CAST(`a` AS BOOLEAN) <> CAST(`b` AS BOOLEAN)) <> CAST(`c` AS BOOLEAN)) "
        "AS BIGINT) AS `x` FROM `__replica_v1` AS `t`"
    )


@pytest.mark.parametrize(
    ("mysql", "spark"),
    [
        ("WHERE active", "WHERE CAST(`active` AS BOOLEAN)"),
        (
            "WHERE NOT deleted AND (a)",
            "WHERE NOT CAST(`deleted` AS BOOLEAN) AND (CAST(`a` AS BOOLEAN))",
        ),
        ("WHERE a > 1 OR b LIKE 'x!_' ESCAPE '!'", "WHERE `a` > 1 OR `b` LIKE 'x!_' ESCAPE '!'"),
        ("WHERE LOCATE('x', b)", "WHERE CAST(LOCATE('x', `b`) AS BOOLEAN)"),
        ("WHERE a IS TRUE", "WHERE CAST(`a` AS BOOLEAN) IS TRUE"),
        ("WHERE a IS NULL", "WHERE `a` IS NULL"),
        ("WHERE TRUE", "WHERE TRUE"),
        ("GROUP BY a HAVING COUNT(*)", "GROUP BY `a` HAVING CAST(COUNT(*) AS BOOLEAN)"),
        (
            "JOIN orders ON t.flag",
            "JOIN `__replica_v12` AS `orders` ON CAST(`t`.`flag` AS BOOLEAN)",
        ),
    ],
)
def test_numbers_used_as_conditions(mysql: str, spark: str) -> None:
    assert spark_sql(f"SELECT 1 AS one FROM t {mysql}") == (
        f"SELECT 1 AS `one` FROM `__replica_v1` AS `t` {spark}"
    )


@pytest.mark.parametrize(
    ("mysql", "spark"),
    [
        ("a > 1", "CAST(`a` > 1 AS BIGINT)"),
        ("SUM(a = 'x')", "SUM(CAST(`a` = 'x' AS BIGINT))"),
        ("(a > 1) + (b > 1)", "(CAST(`a` > 1 AS BIGINT)) + (CAST(`b` > 1 AS BIGINT))"),
        ("NOT a", "CAST(NOT CAST(`a` AS BOOLEAN) AS BIGINT)"),
        ("a IN (1, 2)", "CAST(`a` IN (1, 2) AS BIGINT)"),
        ("a LIKE 'x%'", "CAST(`a` LIKE 'x%' AS BIGINT)"),
        ("TRUE", "1"),
        ("a = FALSE", "CAST(`a` = 0 AS BIGINT)"),
        ("IF(a, 'y', 'n')", "IF(CAST(`a` AS BOOLEAN), 'y', 'n')"),
        ("IF(a > 1, b > 1, 0)", "IF(`a` > 1, CAST(`b` > 1 AS BIGINT), 0)"),
        ("CASE WHEN a THEN 1 END", "CASE WHEN CAST(`a` AS BOOLEAN) THEN 1 END"),
        ("CASE a WHEN 1 THEN 2 END", "CASE `a` WHEN 1 THEN 2 END"),
        ("COALESCE(a > 1, 0)", "COALESCE(CAST(`a` > 1 AS BIGINT), 0)"),
    ],
)
def test_truth_values_used_as_numbers(mysql: str, spark: str) -> None:
    assert spark_sql(f"SELECT {mysql} AS v FROM t") == (
        f"SELECT {spark} AS `v` FROM `__replica_v1` AS `t`"
    )


def test_grouping_and_ordering_by_a_comparison_agree_with_the_select_list() -> None:
    assert spark_sql("SELECT a > 1 AS big FROM t GROUP BY a > 1 ORDER BY a > 1") == (
        "SELECT CAST(`a` > 1 AS BIGINT) AS `big` FROM `__replica_v1` AS `t` "
        "GROUP BY CAST(`a` > 1 AS BIGINT) ORDER BY CAST(`a` > 1 AS BIGINT)"
    )


# --- arithmetic -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mysql", "spark"),
    [
        ("a / b", "`a` / NULLIF(`b`, 0)"),
        ("a DIV b", "`a` DIV NULLIF(`b`, 0)"),
        ("a % b", "`a` % NULLIF(`b`, 0)"),
        ("MOD(a, b)", "`a` % NULLIF(`b`, 0)"),
        ("a / 0", "`a` / NULLIF(0, 0)"),
        ("a / 2", "`a` / 2"),
        ("a DIV 2.5", "`a` DIV 2.5"),
        ("a % 3", "`a` % 3"),
    ],
)
def test_division_by_zero_is_null(mysql: str, spark: str) -> None:
    assert spark_sql(f"SELECT {mysql} AS v FROM t") == (
        f"SELECT {spark} AS `v` FROM `__replica_v1` AS `t`"
    )


# --- functions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mysql", "spark"),
    [
        ("IFNULL(a, 0)", "COALESCE(`a`, 0)"),
        ("IF(a > 1, 'x', 'y')", "IF(`a` > 1, 'x', 'y')"),
        ("CONCAT(a, '-', b)", "CONCAT(`a`, '-', `b`)"),
        (
            "DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s')",
            "DATE_FORMAT(CAST(`ts` AS TIMESTAMP), 'yyyy-MM-dd HH:mm:ss')",
        ),
        (  # arrays: Spark 4.1's LISTAGG refuses DISTINCT ordered by a non-string value
            "GROUP_CONCAT(DISTINCT a ORDER BY a DESC SEPARATOR ';')",
            "IF(ARRAY_MAX((COLLECT_LIST(NAMED_STRUCT('k0', `a`, 'v', CAST(`a` AS STRING))))"
            ".`v`) IS NULL, NULL, ARRAY_JOIN(ARRAY_DISTINCT((REVERSE(SORT_ARRAY(COLLECT_LIST("
            "NAMED_STRUCT('k0', `a`, 'v', CAST(`a` AS STRING)))))).`v`), ';'))",
        ),
        ("GROUP_CONCAT(DISTINCT a)", "LISTAGG(DISTINCT `a`, ',')"),
        ("GROUP_CONCAT(a)", "LISTAGG(`a`, ',')"),
        ("a <=> b", "CAST(`a` IS NOT DISTINCT FROM `b` AS BIGINT)"),
        ("a REGEXP '^x'", "CAST(`a` RLIKE '^x' AS BIGINT)"),
        ("LENGTH(a)", "OCTET_LENGTH(`a`)"),
        ("CHAR_LENGTH(a)", "LENGTH(`a`)"),
        ("MID(a, 2, 3)", "SUBSTRING(`a`, 2, 3)"),
        (
            "FROM_UNIXTIME(a, '%Y-%m-%d %H:%i')",
            "DATE_FORMAT(CAST(FROM_UNIXTIME(`a`) AS TIMESTAMP), 'yyyy-MM-dd HH:mm')",
        ),
        ("COUNT(*)", "COUNT(*)"),
        (
            "ROW_NUMBER() OVER (PARTITION BY a ORDER BY b)",
            "ROW_NUMBER() OVER (PARTITION BY `a` ORDER BY `b`)",
        ),
    ],
)
def test_functions(mysql: str, spark: str) -> None:
    assert spark_sql(f"SELECT {mysql} AS v FROM t") == (
        f"SELECT {spark} AS `v` FROM `__replica_v1` AS `t`"
    )


def test_json_extract_returns_json_in_the_select_list() -> None:
    sql = "SELECT doc->'$.a', JSON_EXTRACT(doc, '$.b[1]') AS b, doc->>'$.c' FROM t"
    assert spark_sql(sql) == (
        "SELECT TO_JSON(VARIANT_GET(PARSE_JSON(`doc`), '$.a')) AS `JSON_EXTRACT(doc, '$.a')`, "
        "TO_JSON(VARIANT_GET(PARSE_JSON(`doc`), '$.b[1]')) AS `b`, "
        "GET_JSON_OBJECT(`doc`, '$.c') AS `doc ->> '$.c'` FROM `__replica_v1` AS `t`"
    )


def test_json_extract_compares_unquoted_elsewhere() -> None:
    assert spark_sql("SELECT 1 AS one FROM t WHERE doc->'$.a' = 'x'") == (
        "SELECT 1 AS `one` FROM `__replica_v1` AS `t` WHERE GET_JSON_OBJECT(`doc`, '$.a') = 'x'"
    )


def test_json_extract_with_a_wildcard_path_and_json_unquote() -> None:
    assert spark_sql("SELECT JSON_EXTRACT(doc, '$[*].a') AS a FROM t") == (
        "SELECT GET_JSON_OBJECT(`doc`, '$[*].a') AS `a` FROM `__replica_v1` AS `t`"
    )
    assert spark_sql("SELECT JSON_UNQUOTE(JSON_EXTRACT(doc, '$.s')) AS s FROM t") == (
        "SELECT GET_JSON_OBJECT(`doc`, '$.s') AS `s` FROM `__replica_v1` AS `t`"
    )


# --- clauses kept as they are -----------------------------------------------------------------


def test_rollup_unions_and_subqueries_pass_through() -> None:
    assert spark_sql("SELECT a, COUNT(*) AS n FROM t GROUP BY a WITH ROLLUP") == (
        "SELECT `a` AS `a`, COUNT(*) AS `n` FROM `__replica_v1` AS `t` GROUP BY `a` WITH ROLLUP"
    )
    sql = "SELECT d.n FROM (SELECT COUNT(*) AS n FROM t) AS d WHERE d.n IN (SELECT 1 FROM t)"
    assert spark_sql(sql) == (
        "SELECT `d`.`n` AS `n` FROM (SELECT COUNT(*) AS `n` FROM `__replica_v1` AS `t`) AS `d` "
        "WHERE `d`.`n` IN (SELECT 1 FROM `__replica_v1` AS `t`)"
    )


def test_null_ordering_is_left_to_spark_defaults() -> None:
    # MySQL and Spark both sort NULLs first ascending and last descending.
    assert spark_sql("SELECT a AS a FROM t ORDER BY a, b DESC") == (
        "SELECT `a` AS `a` FROM `__replica_v1` AS `t` ORDER BY `a`, `b` DESC"
    )


def test_mimic_aliases_are_kept() -> None:
    tree = sqlglot.parse_one("SELECT 'x' AS `@@version`, a FROM t", read="mysql")
    assert isinstance(tree.expressions[0], exp.Alias)
    query = to_spark_sql(tree, database="shop", resolve=VIEWS.get)
    assert query.sql == "SELECT 'x' AS `@@version`, `a` AS `a` FROM `__replica_v1` AS `t`"


# --- a bare COUNT(*) ------------------------------------------------------------------------


def counted(sql: str, rows: int | None = 42) -> SparkQuery:
    asked: list[TableRef] = []

    def count(ref: TableRef) -> int | None:
        asked.append(ref)
        return rows

    query = to_spark_sql(
        sqlglot.parse_one(sql, read="mysql"), database="shop", resolve=VIEWS.get, count=count
    )
    assert len(asked) <= 1 and all(ref in VIEWS for ref in asked)
    return query


@pytest.mark.parametrize(
    ("sql", "name"),
    [
        ("SELECT COUNT(*) FROM orders", "COUNT(*)"),
        ("select count(*) from shop.orders", "COUNT(*)"),
        ("SELECT COUNT(*) AS n FROM orders o", "n"),
        ("SELECT COUNT(*) `rows in it` FROM `orders`", "rows in it"),
    ],
)
def test_a_bare_count_is_the_count_the_engine_knows(sql: str, name: str) -> None:
    """A table between compactions holds deletion vectors, so Spark would scan it to count
    it: the engine's count from the metadata is returned instead, under MySQL's name."""
    query = counted(sql)
    assert query == SparkQuery(
        f"SELECT CAST(42 AS BIGINT) AS `{name}`", (TableRef("shop", "orders"),)
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(*) FROM orders WHERE id > 1",
        "SELECT COUNT(*) FROM orders GROUP BY id",
        "SELECT COUNT(*) FROM orders LIMIT 0",
        "SELECT COUNT(*) FROM orders JOIN items ON 1",
        "SELECT COUNT(id) FROM orders",
        "SELECT COUNT(DISTINCT id) FROM orders",
        "SELECT COUNT(*), 1 FROM orders",
        "SELECT COUNT(*) + 1 FROM orders",
        "SELECT DISTINCT COUNT(*) FROM orders",
        "SELECT COUNT(*) FROM (SELECT * FROM orders) AS o",
        "SELECT COUNT(*) FROM orders HAVING COUNT(*) > 100",
        "SELECT COUNT(*) FROM orders ORDER BY 1",
        "SELECT SQL_CALC_FOUND_ROWS COUNT(*) FROM orders",
        "WITH o AS (SELECT * FROM orders) SELECT COUNT(*) FROM o",
        "SELECT COUNT(*) FROM orders UNION ALL SELECT COUNT(*) FROM items",
    ],
)
def test_any_other_count_is_run_by_spark(sql: str) -> None:
    assert "42" not in counted(sql).sql


def test_a_count_the_engine_does_not_know_is_run_by_spark() -> None:
    query = counted("SELECT COUNT(*) FROM orders", rows=None)
    assert query.sql == "SELECT COUNT(*) AS `COUNT(*)` FROM `__replica_v12` AS `orders`"
