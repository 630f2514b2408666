"""QUERY_EVENT (2): a statement, with its status variables (mysql-reference §7.5)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from spark_replica.applier_core.binlog.events.header import EventHeader, ValueEvent
from spark_replica.applier_core.binlog.status_vars import QueryStatus


@dataclass(slots=True)
class Query(ValueEvent):
    """QUERY_EVENT (2).

    ``status_vars`` is the raw status block (written back as is); ``status`` its parsed form.
    ``query`` is decoded per ``character_set_client`` (utf8/latin1), else as utf-8 with
    replacement characters; ``raw_query``/``raw_db`` keep the original bytes only when the
    text could not be decoded losslessly.
    """

    thread_id: int
    exec_time: int
    error_code: int
    db: str
    query: str
    status: QueryStatus = QueryStatus()
    status_vars: bytes = b""
    raw_db: bytes | None = None
    raw_query: bytes | None = None

    @classmethod
    def build(
        cls,
        header: EventHeader,
        query: str,
        *,
        db: str = "",
        status: QueryStatus | None = None,
        thread_id: int = 0,
        exec_time: int = 0,
        error_code: int = 0,
    ) -> Query:
        """A Query event whose raw status block is encoded from ``status``."""
        status = status or QueryStatus()
        return cls(header, thread_id, exec_time, error_code, db, query, status, status.encode())

    def with_query(self, query: str) -> Query:
        return dataclasses.replace(self, query=query, raw_query=None)

    @property
    def is_begin(self) -> bool:
        return _keyword(self.query) == "BEGIN"

    @property
    def is_commit(self) -> bool:
        return _keyword(self.query) in ("COMMIT", "ROLLBACK")


def _keyword(text: str) -> str:
    stripped = text.strip()
    return stripped.upper() if len(stripped) <= 8 else ""
