"""What the transaction provider's reader makes of each event type (DES.TS.0080, RD.1/RD.2).

The rules of ``binlog.transactions`` (TransactionGrouper), narrowed to row-based replication
with GTIDs: GTID events open transactions; body events (Table_map, rows, Rows_query) go into
them; Xid, an XA_prepare event, a Transaction_payload or a COMMIT query end them; an ``XA
START`` opens a body as BEGIN does, and ``XA COMMIT``/``XA ROLLBACK`` are transactions of a
single statement (docs/decisions/0015); Format_description, Rotate, Previous_gtids, Stop,
heartbeats and ignorable events are consumed by the reader, inside a transaction too.
Everything else is refused with the text of ERR.11: statement-only events (Intvar, Rand,
User_var, LOAD DATA), Incident, other XA statements, MariaDB GTIDs, and unknown types without
the ignorable flag. Transactions whose GTID is executed already are marked to skip.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from spark_replica.applier_core.apply.xa import xa_verb as xa_verb
from spark_replica.applier_core.binlog.constants import STATEMENT_ONLY_EVENTS, EventType
from spark_replica.applier_core.binlog.events import Gtid, Query
from spark_replica.applier_core.gtid import GtidSet

UNEXPECTED_EVENT = "Unexpected event in the Change stream applier reader"
"""ERR.11: the text after ``Relay log read failure: ``; the event's type name follows."""

UNSUPPORTED, BODY, XID, PAYLOAD, QUERY, GTID, FDE, CONTROL, OTHER = range(9)
"""Event kinds. ``OTHER``: unknown to the codec (skipped when flagged ignorable)."""

_IN_BODY = re.compile(
    r"\s*(SAVEPOINT|RELEASE\s+SAVEPOINT|ROLLBACK\s+(WORK\s+)?TO|SET|CREATE\s+TABLE)\b", re.I
)


def _kinds() -> tuple[int, ...]:
    t = EventType
    kinds = [OTHER] * 256
    groups = {
        BODY: (t.TABLE_MAP, t.ROWS_QUERY, t.MARIADB_ANNOTATE_ROWS, t.WRITE_ROWS_V1,
               t.UPDATE_ROWS_V1, t.DELETE_ROWS_V1, t.WRITE_ROWS, t.UPDATE_ROWS, t.DELETE_ROWS,
               t.PARTIAL_UPDATE_ROWS),
        XID: (t.XID, t.XA_PREPARE),
        PAYLOAD: (t.TRANSACTION_PAYLOAD,),
        QUERY: (t.QUERY,),
        GTID: (t.GTID, t.ANONYMOUS_GTID, t.GTID_TAGGED),
        FDE: (t.FORMAT_DESCRIPTION,),
        CONTROL: (t.ROTATE, t.PREVIOUS_GTIDS, t.STOP, t.HEARTBEAT, t.HEARTBEAT_V2, t.IGNORABLE,
                  t.TRANSACTION_CONTEXT, t.VIEW_CHANGE, t.MARIADB_GTID_LIST,
                  t.MARIADB_BINLOG_CHECKPOINT),
        UNSUPPORTED: (*STATEMENT_ONLY_EVENTS, t.UNKNOWN, t.START_V3, t.SLAVE, t.INCIDENT,
                      t.MARIADB_GTID, t.MARIADB_START_ENCRYPTION),
    }  # fmt: skip
    for kind, types in groups.items():
        for type_code in types:
            kinds[type_code] = kind
    return tuple(kinds)


KINDS = _kinds()
"""The kind of every type code 0-255."""


def belongs_in_body(query: Query) -> bool:
    """The statements a row transaction may hold between BEGIN and its end: SAVEPOINT,
    ROLLBACK TO, RELEASE SAVEPOINT, SET, and the CREATE TABLE of MariaDB's CREATE TABLE ...
    SELECT (its rows follow). DML logged as a statement is not one of them."""
    return _IN_BODY.match(query.query) is not None


def is_xa(query: Query) -> bool:
    return query.query.lstrip()[:3].upper() == "XA "


SkipRule = GtidSet | Callable[[Gtid], bool] | None
"""Which transactions are executed already: a GTID set, or a predicate on the GTID event.
Their transactions come out with ``skip`` set (anonymous ones never do)."""


def skip_predicate(rule: SkipRule) -> Callable[[Gtid], bool] | None:
    if isinstance(rule, GtidSet):
        executed = rule
        return lambda gtid: executed.contains(gtid.uuid, gtid.tag, gtid.gno)
    return rule
