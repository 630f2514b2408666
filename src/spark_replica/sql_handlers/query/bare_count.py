"""``SELECT COUNT(*) FROM t``, answered from what the engine knows of the table's rows at the
query's snapshot instead of a scan.

Spark answers a count of an Iceberg table from its metadata only while the table has no
delete files; a table between two compactions has deletion vectors, so the same count scans
every data file. The engine can still count its rows from the metadata: each data file's
record count less the rows its deletion vector holds. Only the bare query is answered this
way: one ``COUNT(*)`` of one table, nothing else (no WHERE, GROUP BY, join, LIMIT, DISTINCT);
any other query, or a table whose count the engine cannot tell, is run by Spark."""

from __future__ import annotations

from sqlglot import exp

#: The parts a bare count's SELECT and table may have.
_SELECT_PARTS = frozenset({"expressions", "from_"})
_TABLE_PARTS = frozenset({"this", "db", "catalog", "alias"})


def counted_table(tree: exp.Expr) -> exp.Table | None:
    """The table ``tree`` counts when it is a bare ``SELECT COUNT(*) FROM t`` (aliased or
    not); None for any other query."""
    if not isinstance(tree, exp.Select):
        return None
    if any(value for key, value in tree.args.items() if key not in _SELECT_PARTS):
        return None
    if len(tree.expressions) != 1:
        return None
    projection = tree.expressions[0]
    count = projection.this if isinstance(projection, exp.Alias) else projection
    if not isinstance(count, exp.Count) or not isinstance(count.this, exp.Star):
        return None
    source = tree.args.get("from_")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table):
        return None
    if any(value for key, value in table.args.items() if key not in _TABLE_PARTS):
        return None
    return table


def counted(tree: exp.Select, rows: int) -> exp.Select:
    """The query that returns ``rows`` as ``tree``'s count would: one BIGINT column of the
    same name (``tree``'s projection is named already)."""
    projection = tree.expressions[0]
    name = projection.alias if isinstance(projection, exp.Alias) else projection.sql("mysql")
    value = exp.cast(exp.Literal.number(rows), exp.DataType.build("BIGINT"))
    return exp.select(exp.alias_(value, name, quoted=True))
