"""The databases a transaction changes, for DATABASE scheduling (WL#5569).

A row transaction changes the databases of its Table_map events' tables. A DDL statement (a
Query event that is not ``BEGIN``) changes the databases the source listed in its
``Q_UPDATED_DB_NAMES`` status variable (WL5569.FALLBACK.2: the coordinator never parses SQL);
without that list (an old source), or with the source's "too many to list" mark, its
databases are unknown (R1.C). Savepoints, ``COMMIT``, rows and Xid events add nothing.
``XA START`` opens a body as ``BEGIN`` does; an ``XA COMMIT`` or ``XA ROLLBACK`` changes the
databases of a prepared transaction the coordinator does not see, so it runs alone
(docs/decisions/0015).

``scan`` reads a transaction's events on the coordinator (keeping none of them), then rewinds
it for the worker (a transaction up to the cache threshold keeps its decoded events, a larger
one is read again from its segments).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from spark_replica.applier_core.apply.xa import xa_verb
from spark_replica.applier_core.binlog.events import Event, Query
from spark_replica.applier_core.binlog.rows.table_map import TableMapEvent
from spark_replica.applier_core.mta.partitions import partitions_of
from spark_replica.applier_core.provider import FetchableTransaction, TransactionState

EVENT_WAIT = 0.5
"""Seconds between checks for a stop while a transaction's next event is not read yet."""


def databases_of(events: Iterable[Event]) -> frozenset[str] | None:
    """The partitions of the transaction made of ``events`` (from the first after its GTID
    event): None when they cannot be told (the transaction runs alone)."""
    found: set[str] = set()
    first = True
    for event in events:
        if isinstance(event, TableMapEvent):
            found.add(event.definition.schema)
        elif isinstance(event, Query) and first and not event.is_begin:
            verb = xa_verb(event)
            if verb == "START":
                first = False
                continue
            if verb is not None:
                return None
            names = event.status.updated_db_names
            return partitions_of(names) if names else None  # DDL: () = over the maximum
        first = False
    return partitions_of(found)


def scan(trx: FetchableTransaction, stopping: Callable[[], bool]) -> frozenset[str] | None:
    """Read ``trx`` to its end and return its partitions (``databases_of``), rewound for the
    worker that applies it.

    A transaction cut off in the relay log (TRUNCATED), one that cannot be read (FAILED), and
    one left unread because ``stopping`` became true are not rewound and run alone: the
    worker then finds no more events and settles it as it would have anyway.
    """
    stopped = False

    def events() -> Iterator[Event]:
        nonlocal stopped
        while True:
            try:
                event = trx.next_event(EVENT_WAIT)
            except TimeoutError:
                if stopping():
                    stopped = True
                    return
                continue
            if event is None:
                return
            yield event

    stream = events()
    found = databases_of(stream)
    for _ in stream:  # read to the end (a DDL's answer comes at its first event)
        pass
    if stopped or trx.state is not TransactionState.COMPLETE:
        return None
    trx.rewind()
    return found
