"""How a source computes last_committed and sequence_number (WL#6314 §2, WRITESET).

``CommitOrderClock``: a transaction reads the commit clock when it prepares (its commit
parent, ``last_committed``) and the clock steps when it commits (its ``sequence_number``).
``WritesetClock``: ``last_committed`` is the last transaction that wrote any of the same rows,
never more than the commit-order value (MySQL takes the smaller of the two); DDL and a full
history make the next transactions depend on everything before them. A transaction that
writes a table without a primary key has no usable write set for those rows: it keeps the
commit-order value, and the keys it did write still go into the history (MySQL's
``Writeset_trx_dependency_tracker``: "If the transaction references tables with missing
primary keys revert to COMMIT_ORDER, update and not reset history"). Both restart at 1 with
each binary log file, as MySQL's do.

Pure logic: no threads, no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable


class CommitOrderClock:
    """The source's logical clock for one binary log file."""

    def __init__(self) -> None:
        self._committed = 0  # sequence_number of the last committed transaction
        self._next = 1

    def prepare(self) -> int:
        """The commit parent of a transaction entering prepare now."""
        return self._committed

    def commit(self) -> int:
        """The sequence_number of the transaction committing now."""
        sequence_number = self._next
        self._next += 1
        self._committed = sequence_number
        return sequence_number

    def rotate(self) -> None:
        """A new binary log file: numbering starts over."""
        self.__init__()  # type: ignore[misc]


class WritesetClock:
    """WRITESET dependency tracking over the row keys a transaction writes."""

    def __init__(self, history_size: int = 25000) -> None:
        self._history: dict[Hashable, int] = {}
        self._history_size = history_size
        self._floor = 0  # no transaction may depend on less than this

    def last_committed(
        self,
        keys: Iterable[Hashable],
        sequence_number: int,
        *,
        commit_parent: int,
        ddl: bool,
        missing_keys: bool = False,
    ) -> int:
        """``last_committed`` of the transaction that commits as ``sequence_number``.

        ``keys`` are the rows it wrote in tables with a primary key; ``missing_keys`` says it
        also wrote rows of a table without one (those have no key to hash).
        """
        keys = list(keys)
        if ddl or not (keys or missing_keys):
            # DDL, and transactions without keys, depend on everything before them, and
            # everything after them depends on them.
            self._floor = sequence_number
            self._history.clear()
            return sequence_number - 1
        if len(self._history) + len(keys) > self._history_size:
            self._floor = sequence_number - 1
            self._history.clear()
        value = max([self._floor] + [self._history.get(k, 0) for k in keys])
        for key in keys:
            self._history[key] = sequence_number
        if missing_keys:
            # Back to COMMIT_ORDER; every later transaction on such a table is as well, so the
            # history needs no reset.
            return min(commit_parent, sequence_number - 1)
        return min(value, commit_parent, sequence_number - 1)

    def rotate(self) -> None:
        self._history.clear()
        self._floor = 0
