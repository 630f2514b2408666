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
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

from mysql_mimic import ColumnType, ResultColumn, ResultSet
from sqlglot import expressions as exp

from spark_replica.sql_handlers.query.interfaces import QueryEngine, RunningQuery
from spark_replica.sql_handlers.query.transpile import to_spark_sql

#: Rows fetched from Spark per trip to a worker thread.
FETCH_ROWS = 1000
#: Seconds between repeated cancels of a killed query's Spark jobs.
CANCEL_EVERY = 0.2
_tags = itertools.count(1)
#: Running cancel loops (kept referenced until they end).
_cancellers: set[asyncio.Future[None]] = set()


async def run_user_query(
    queries: QueryEngine,
    expression: exp.Expression,
    database: str | None,
    connection: int,
    turns: asyncio.Semaphore,
) -> ResultSet:
    """Start ``expression`` (a MySQL query AST) on ``queries`` once one of ``turns`` is free;
    its rows stream lazily, and the turn is given back when the query is closed."""
    tag = f"spark-replica-query-{connection}-{next(_tags)}"

    def start() -> RunningQuery:
        return queries.run(
            lambda resolve: to_spark_sql(expression, database=database, resolve=resolve).sql, tag
        )

    await turns.acquire()
    started = asyncio.ensure_future(asyncio.to_thread(start))
    try:
        running = await asyncio.shield(started)
    except asyncio.CancelledError:
        _cancel_until_done(queries, tag, started, turns)
        raise
    except BaseException:
        turns.release()
        raise
    columns = [ResultColumn(f.name, ColumnType[f.mysql_type]) for f in running.fields]
    return ResultSet(rows=_stream(queries, running, tag, turns), columns=columns)


async def _stream(
    queries: QueryEngine, running: RunningQuery, tag: str, turns: asyncio.Semaphore
) -> AsyncIterator[tuple[object, ...]]:
    cancelled = False
    try:
        while True:
            fetching = asyncio.ensure_future(asyncio.to_thread(running.fetch, FETCH_ROWS))
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
                await asyncio.shield(asyncio.to_thread(running.close))
            finally:
                turns.release()


def _cancel_until_done(
    queries: QueryEngine,
    tag: str,
    work: asyncio.Future[Any],
    turns: asyncio.Semaphore,
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
                await asyncio.to_thread(result.close)
        finally:
            turns.release()

    _cancellers.add(task := asyncio.ensure_future(repeat()))
    task.add_done_callback(_cancellers.discard)
