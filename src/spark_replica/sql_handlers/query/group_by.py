"""Columns a grouped query selects without grouping by them, as MySQL reads them.

MySQL lets a grouped query select a column that is neither grouped nor aggregated when the
column depends on the grouped key (``SELECT f.film_id, f.title ... GROUP BY f.film_id``,
as sakila's views do), and, without ONLY_FULL_GROUP_BY (the mode a view keeps from its
source), any such column, its value taken from some row of the group. Spark refuses both
(MISSING_AGGREGATION). ``any_value_for_ungrouped`` wraps each such column reference in
``ANY_VALUE()``, which is MySQL's own meaning of it: one value of the group (the only one,
when the column depends on the key).
https://dev.mysql.com/doc/refman/8.4/en/group-by-handling.html
"""

from __future__ import annotations

from sqlglot import exp


def any_value_for_ungrouped(tree: exp.Expr) -> None:
    """Wrap, in place, every column that a grouped SELECT of ``tree`` reads outside its
    GROUP BY keys and outside aggregates in ``ANY_VALUE()``."""
    for select in list(tree.find_all(exp.Select)):
        group = select.args.get("group")
        if group is None:
            continue
        grouped = _grouped_names(select, group)
        if grouped is None:
            continue
        aliases = {p.alias.casefold() for p in select.expressions if isinstance(p, exp.Alias)}
        for column, in_list in _own_columns(select):
            if not in_list and not column.table and column.name.casefold() in aliases:
                continue  # HAVING or ORDER BY naming a select-list column
            if not _is_grouped(column, grouped) and not _aggregated(column, select):
                column.replace(exp.AnyValue(this=column.copy()))


def _grouped_names(select: exp.Select, group: exp.Group) -> set[tuple[str, str]] | None:
    """``(table, column)`` of every column the GROUP BY keys read (table "" when not
    qualified); None when a key cannot be read (a position or alias this does not resolve)."""
    projections = select.expressions
    aliases = {p.alias: p for p in projections if isinstance(p, exp.Alias)}
    names: set[tuple[str, str]] = set()
    for key in group.expressions:
        if isinstance(key, exp.Literal) and key.is_int:
            index = int(key.name) - 1
            if not 0 <= index < len(projections):
                return None
            key = projections[index]
        elif isinstance(key, exp.Column) and not key.table and key.name in aliases:
            key = aliases[key.name]
        names |= {(c.table, c.name.casefold()) for c in key.find_all(exp.Column)}
    return names


def _own_columns(select: exp.Select) -> list[tuple[exp.Column, bool]]:
    """The columns the select list, HAVING and ORDER BY of ``select`` itself read (not those
    of its subqueries), each with whether it is in the select list."""
    found: list[tuple[exp.Column, bool]] = []
    parts = [(p, True) for p in select.expressions]
    parts += [(select.args.get("having"), False), (select.args.get("order"), False)]
    for part, in_list in parts:
        if part is None:
            continue
        for column in part.find_all(exp.Column):
            if _nearest_select(column) is select and not isinstance(column.this, exp.Star):
                found.append((column, in_list))
    return found


def _nearest_select(node: exp.Expr) -> exp.Expr | None:
    parent = node.parent
    while parent is not None and not isinstance(parent, exp.Select):
        parent = parent.parent
    return parent


def _is_grouped(column: exp.Column, grouped: set[tuple[str, str]]) -> bool:
    name = column.name.casefold()
    if column.table:
        return (column.table, name) in grouped or ("", name) in grouped
    return any(n == name for _, n in grouped)


def _aggregated(column: exp.Column, select: exp.Select) -> bool:
    """Whether an aggregate or a window of ``select`` holds ``column`` (an ORDER BY or HAVING
    item naming a select-list alias is the alias's, already handled)."""
    node = column.parent
    while node is not None and node is not select:
        if isinstance(node, exp.AggFunc | exp.Window):
            return True
        node = node.parent
    return False
