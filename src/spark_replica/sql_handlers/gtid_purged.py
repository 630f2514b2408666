"""``SET GLOBAL gtid_purged``: declaring transactions executed without applying them.

https://dev.mysql.com/doc/refman/8.4/en/replication-options-gtids.html#sysvar_gtid_purged

The replica keeps no binary log, so no executed transaction is in one: ``@@gtid_purged`` is
``@@gtid_executed``, as on a MySQL server with binary logging disabled. MySQL 8.0's rules
(``Gtid_state::add_lost_gtids``) then read:

- ``SET GLOBAL gtid_purged = 'set'``: the new value must contain the old one (3546 "the new
  value must be a superset of the old value"); the GTIDs it adds become executed. On a
  replica that has executed nothing yet, any set is accepted.
- ``SET GLOBAL gtid_purged = '+set'``: the set is added; it must not overlap
  ``@@gtid_executed`` (3546 "the added gtid set must not overlap with
  @@GLOBAL.GTID_EXECUTED").
- Either way, a GTID a client owns (SET GTID_NEXT, not committed yet) may not be added (3546
  "... @@GLOBAL.GTID_OWNED").

The added GTIDs are committed as one empty transaction (``empty_transaction``), so they are
durable and the appliers skip them, like GTIDs of applied transactions.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.settings import DEFAULT

NAME = "gtid_purged"


@dataclass(frozen=True, slots=True)
class PurgedValue:
    gtids: GtidSet
    #: ``'+set'``: add to the current value rather than replace it.
    append: bool


def parse_gtid_purged(value: object) -> PurgedValue:
    """The set of a SET value; 1230 for DEFAULT, 1231 for NULL, 1232 for a number, 1772
    for a malformed set."""
    if value is DEFAULT:
        raise ReplicaError.from_code(ErrorCode.NO_DEFAULT, NAME)
    if value is None:
        raise ReplicaError.from_code(ErrorCode.WRONG_VALUE_FOR_VAR, NAME, "NULL")
    if not isinstance(value, str):
        raise ReplicaError.from_code(ErrorCode.WRONG_TYPE_FOR_VAR, NAME)
    text = value.strip()
    append = text.startswith("+")
    return PurgedValue(GtidSet.parse(text[1:] if append else text), append)


def gtids_to_add(value: PurgedValue, executed: GtidSet, owned: GtidSet) -> GtidSet:
    """The GTIDs the assignment makes executed, or 3546 when MySQL's rules forbid it."""
    added = value.gtids
    if not value.append:
        if not executed.is_subset(added):  # @@gtid_purged is @@gtid_executed here
            raise _constraint("the new value must be a superset of the old value")
        added = added.subtract(executed)
    if added.intersection(executed):
        raise _constraint("the added gtid set must not overlap with @@GLOBAL.GTID_EXECUTED")
    if added.intersection(owned):
        raise _constraint("the added gtid set must not overlap with @@GLOBAL.GTID_OWNED")
    return added


def _constraint(reason: str) -> ReplicaError:
    return ReplicaError.from_code(ErrorCode.CANT_SET_GTID_PURGED_DUE_SETS_CONSTRAINTS, reason)
