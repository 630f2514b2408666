"""SELECTs over the replicated tables, run by the storage engine off the event loop.

The statement is transpiled to Spark SQL against one snapshot of the tables (consistent
reads), started in a worker thread, and streamed back in batches: each batch is fetched in a
thread, so the event loop keeps serving other clients while Spark works. When the client's
statement is cancelled (KILL QUERY, a dropped connection), the Spark jobs are cancelled too.

A query takes one of the server's turns (``spark.max_queries``) in the event loop before any
thread works for it, and gives it back once it is closed. Waiting for a turn in a worker
thread instead (the engine's own limit) let more queries than the loop has worker threads
occupy every one of them while the queries holding the turns waited for a thread to fetch
and close: every query and every statement run in a thread (SHOW REPLICA STATUS) hung.

The threads that start, fetch and close the queries are the turns' own (``spark-query_N``,
as many as turns): replication statements (SHOW REPLICA STATUS, CHANGE REPLICATION SOURCE)
run on the loop's default threads, which Spark's slow fetches never occupy. Sharing them,
SHOW REPLICA STATUS waited about a second under 200 clients querying Spark.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mysql_mimic import ResultSet
from sqlglot import expressions as exp

from spark_replica.server.column_defs import ColumnDefinitions
from spark_replica.sql_handlers.query.column_meta import describe, origins
from spark_replica.sql_handlers.query.interfaces import QueryEngine, RunningQuery, TableCatalog
from spark_replica.sql_handlers.query.transpile import to_spark_sql
from spark_replica.sql_handlers.query.views import stored_functions, view_lookup

#: Rows fetched from Spark per trip to a worker thread.
FETCH_ROWS = 1000
#: Seconds between repeated cancels of a killed query's Spark jobs.
CANCEL_EVERY = 0.2
_tags = itertools.count(1)
#: Running cancel loops (kept referenced until they end).
_cancellers: set[asyncio.Future[None]] = set()

T = TypeVar("T")


class QueryTurns:
    """The server's turns for SELECTs over the replicated tables (``spark.max_queries``) and
    the threads that work for the queries holding them. ``close`` (once the server has
    stopped serving) joins the threads."""

    def __init__(self, count: int) -> None:
        self._turns = asyncio.Semaphore(count)
        self._threads = ThreadPoolExecutor(max_workers=count, thread_name_prefix="spark-query")

    async def acquire(self) -> None:
        await self._turns.acquire()

    def release(self) -> None:
        self._turns.release()

    def run(self, work: Callable[[], T]) -> asyncio.Future[T]:
        """``work`` on one of the turns' threads (a query holding a turn has at most one
        call running at a time, so there is always a thread for it)."""
        return asyncio.get_running_loop().run_in_executor(self._threads, work)

    def close(self) -> None:
        self._threads.shutdown(wait=True)


async def run_user_query(
    queries: QueryEngine,
    expression: exp.Expression,
    database: str | None,
    connection: int,
    turns: QueryTurns,
    columns: ColumnDefinitions,
    catalog: TableCatalog | None = None,
) -> ResultSet:
    """Start ``expression`` (a MySQL query AST) on ``queries`` once one of ``turns`` is free;
    its rows stream lazily, and the turn is given back when the query is closed. Columns
    that show a column of a table in ``catalog`` are described as that column."""
    tag = f"spark-replica-query-{connection}-{next(_tags)}"
    views = view_lookup(catalog) if catalog is not None else None
    functions = stored_functions(catalog) if catalog is not None else None

    def start() -> RunningQuery:
        return queries.run(
            lambda tables: (
                to_spark_sql(
                    expression,
                    database=database,
                    resolve=tables.view,
                    views=views,
                    functions=functions,
                    count=tables.row_count,
                ).sql
            ),
            tag,
        )

    await turns.acquire()
    started = turns.run(start)
    try:
        running = await asyncio.shield(started)
    except asyncio.CancelledError:
        _cancel_until_done(queries, tag, started, turns)
        raise
    except BaseException:
        turns.release()
        raise
    found = origins(expression, database, catalog) if catalog is not None else None
    definitions = describe(running.fields, found)
    return columns.result(_stream(queries, running, tag, turns), definitions)


async def _stream(
    queries: QueryEngine, running: RunningQuery, tag: str, turns: QueryTurns
) -> AsyncIterator[tuple[object, ...]]:
    cancelled = False
    try:
        while True:
            fetching = turns.run(lambda: running.fetch(FETCH_ROWS))
            try:
                batch = await asyncio.shield(fetching)
            except asyncio.CancelledError:
                cancelled = True
                _cancel_until_done(queries, tag, fetching, turns, running)
                raise
            if not batch:
                return
            for row in batch:
                yield row
    finally:
        if not cancelled:
            try:
                await asyncio.shield(turns.run(running.close))
            finally:
                turns.release()


def _cancel_until_done(
    queries: QueryEngine,
    tag: str,
    work: asyncio.Future[Any],
    turns: QueryTurns,
    running: RunningQuery | None = None,
) -> None:
    """Cancel ``tag``'s Spark jobs, again every ``CANCEL_EVERY`` seconds until ``work`` (the
    thread running them) returns: a job submitted just as the first cancel ran escapes it.
    Then the query (``running``, or the one ``work`` started) is closed and its turn given
    back."""
    queries.cancel(tag)

    async def repeat() -> None:
        try:
            while not work.done():
                await asyncio.wait({work}, timeout=CANCEL_EVERY)
                if not work.done():
                    queries.cancel(tag)
            result = running
            if result is None and not work.cancelled() and work.exception() is None:
                result = work.result()
            if result is not None:
                await turns.run(result.close)
        finally:
            turns.release()

    _cancellers.add(task := asyncio.ensure_future(repeat()))
    task.add_done_callback(_cancellers.discard)
