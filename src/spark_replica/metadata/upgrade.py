"""Bring a metadata database written by an earlier version up to the current tables.

``create_all`` creates missing tables but leaves existing ones alone, so a column added to
a model since (one that may be NULL: older rows have no value for it) would be missing.
``add_missing_columns`` adds each such column with ALTER TABLE ... ADD COLUMN, which every
SQL database SQLAlchemy supports runs. A missing column that may not be NULL is an error:
an upgrade that needs one must fill it, which this does not guess.
"""

from __future__ import annotations

from sqlalchemy import Connection, MetaData, inspect, text


def add_missing_columns(connection: Connection, metadata: MetaData) -> list[str]:
    """Add the nullable columns of ``metadata``'s tables that the database lacks; returns
    them as ``table.column``."""
    inspector = inspect(connection)
    dialect = connection.dialect
    preparer = dialect.identifier_preparer
    added = []
    for table in metadata.sorted_tables:
        if not inspector.has_table(table.name):
            continue
        present = {column["name"] for column in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present:
                continue
            if not column.nullable:
                raise RuntimeError(f"metadata table {table.name} lacks column {column.name}")
            kind = column.type.compile(dialect=dialect)
            connection.execute(
                text(
                    f"ALTER TABLE {preparer.format_table(table)} "
                    f"ADD COLUMN {preparer.format_column(column)} {kind}"
                )
            )
            added.append(f"{table.name}.{column.name}")
    return added
