"""The engine's earlier table layout, read once to move its tables into Iceberg
(``migration``): where a table's files live, and the SQL that reads its merged content.

Under the warehouse root, table ``id`` keeps one directory per generation::

    t<id>/g<generation>/base/                  the base snapshot (parquet)
    t<id>/g<generation>/log/batch=<n>/         the change-log batch n (parquet, one partition)

Physical columns are positional (``c0``, ``c1``, ...), whatever the MySQL names are: odd names
and renames never touch the files, and views give the columns their MySQL names. A log row
also carries ``_seq`` (its position in the source's commit order, larger is later), ``_gtid``
(the transaction that made it) and either ``_op`` (1 upsert, 0 delete; keyed tables) or
``_cnt`` (the signed change of the row's count; tables without a primary key are multisets).

The merged content of a keyed table at batch B is the latest row per key over the base and
the log batches up to B, deletes removed; of a keyless one, every row repeated as often as its
summed count says. Only the batches the state lists are read (never a batch written and not yet
recorded, or left by a failed flush): that is what makes the metadata transaction the commit
point.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from spark_replica.applier_core.storage.interface import TableDef
from spark_replica.applier_core.storage.spark.state import LegacyFiles, StoredTable
from spark_replica.applier_core.storage.spark.types import spark_type

SEQ, GTID, OP, CNT, BATCH = "_seq", "_gtid", "_op", "_cnt", "batch"


def physical(index: int) -> str:
    return f"c{index}"


def table_dir(root: str, table_id: int) -> str:
    return f"{root.rstrip('/')}/t{table_id}"


def _files_of(table: StoredTable) -> LegacyFiles:
    assert table.legacy is not None, f"{table.ref} is not in the earlier layout"
    return table.legacy


def generation_dir(root: str, table: StoredTable) -> str:
    return f"{table_dir(root, table.id)}/g{_files_of(table).generation}"


def base_dir(root: str, table: StoredTable) -> str:
    return f"{generation_dir(root, table)}/base"


def log_dir(root: str, table: StoredTable) -> str:
    return f"{generation_dir(root, table)}/log"


def batch_dir(root: str, table: StoredTable, batch: int) -> str:
    return f"{log_dir(root, table)}/{BATCH}={batch}"


def parse_batch_dir(name: str) -> int | None:
    """The batch number of a ``batch=<n>`` directory name; None for anything else."""
    prefix = f"{BATCH}="
    if name.startswith(prefix) and name[len(prefix) :].isdigit():
        return int(name[len(prefix) :])
    return None


def quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def _files(path: str) -> str:
    return f"parquet.{quote(str(PurePosixPath(path)) if '://' not in path else path)}"


def merged_sql(root: str, table: StoredTable, *, names: bool = True) -> str:
    """Spark SQL for the table's merged content at its last recorded batch.

    ``names``: columns carry their MySQL names (for queries); otherwise their physical names
    (for rewriting the base)."""
    definition = table.definition
    cols = [physical(i) for i in range(len(definition.columns))]
    select = ", ".join(cols)
    files = _files_of(table)
    sources: list[str] = []
    recorded = ", ".join(map(str, files.batches))
    if table.keyed:
        if files.base:
            sources.append(
                f"SELECT {select}, 1 AS {OP}, CAST(-1 AS BIGINT) AS {SEQ} "
                f"FROM {_files(base_dir(root, table))}"
            )
        if files.batches:
            sources.append(
                f"SELECT {select}, {OP}, {SEQ} FROM {_files(log_dir(root, table))} "
                f"WHERE {BATCH} IN ({recorded})"
            )
        if not sources:
            return _empty(definition, names)
        if not files.batches:
            # A base alone holds each key once (compaction wrote it): no merge to do.
            return _renamed(
                definition, f"SELECT {select} FROM {_files(base_dir(root, table))}", names
            )
        key = ", ".join(_key_expression(definition, i) for i in range(len(definition.primary_key)))
        body = (
            f"SELECT {select} FROM (SELECT {select}, {OP}, ROW_NUMBER() OVER "
            f"(PARTITION BY {key} ORDER BY {SEQ} DESC) AS _rn FROM "
            f"({' UNION ALL '.join(sources)})) WHERE _rn = 1 AND {OP} = 1"
        )
    else:
        if files.base:
            sources.append(
                f"SELECT {select}, CAST(1 AS BIGINT) AS {CNT} FROM {_files(base_dir(root, table))}"
            )
        if files.batches:
            sources.append(
                f"SELECT {select}, {CNT} FROM {_files(log_dir(root, table))} "
                f"WHERE {BATCH} IN ({recorded})"
            )
        if not sources:
            return _empty(definition, names)
        body = (
            f"SELECT {select} FROM (SELECT {select}, SUM({CNT}) AS _n FROM "
            f"({' UNION ALL '.join(sources)}) GROUP BY {select} HAVING SUM({CNT}) > 0) "
            f"LATERAL VIEW EXPLODE(SEQUENCE(1, _n)) AS _i"
        )
    return _renamed(definition, body, names)


def _renamed(definition: TableDef, body: str, names: bool) -> str:
    if not names:
        return body
    renamed = ", ".join(
        f"{physical(i)} AS {quote(c.name)}" for i, c in enumerate(definition.columns)
    )
    return f"SELECT {renamed} FROM ({body})"


def _key_expression(definition: TableDef, part: int) -> str:
    column = physical(definition.primary_key[part])
    prefix = definition.key_prefix[part]
    return f"SUBSTRING({column}, 1, {prefix})" if prefix else column


def _empty(definition: TableDef, names: bool) -> str:
    columns = ", ".join(
        f"CAST(NULL AS {spark_type(c.type).spark_sql}) AS {quote(c.name) if names else physical(i)}"
        for i, c in enumerate(definition.columns)
    )
    return f"SELECT {columns} WHERE 1 = 0"
