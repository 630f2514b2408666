"""The texts a failed transaction leaves in SHOW REPLICA STATUS and the worker table.

MySQL's formats (mysql-reference §3): a row event that fails gives

    Could not execute Write_rows event on table db.t; Duplicate entry '1' for key
    't.PRIMARY', Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY; the event's source
    log binlog.000001, end_log_pos 1234

(``EngineError.row_event_detail``); the worker that ran it prefixes ``Worker 1 failed
executing transaction '<gtid>' at source log <file>, end_log_pos <pos>; `` (its
LAST_ERROR_MESSAGE), and the channel's Last_SQL_Error is that text after
``Replica SQL for channel '<name>': ``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourcePosition:
    """Where an event is in the source's binary log: the file (as the last Rotate named it)
    and the event's end position (its header's ``log_pos``)."""

    log_name: str
    end_log_pos: int


def worker_error(worker_id: int, gtid: str, where: SourcePosition, detail: str) -> str:
    """A worker's LAST_ERROR_MESSAGE for a transaction it failed to apply."""
    return (
        f"Worker {worker_id} failed executing transaction '{gtid}' at source log "
        f"{where.log_name}, end_log_pos {where.end_log_pos}; {detail}"
    )


def channel_error(channel: str, detail: str) -> str:
    """The channel's Last_SQL_Error for an applier error."""
    return f"Replica SQL for channel '{channel}': {detail}"
