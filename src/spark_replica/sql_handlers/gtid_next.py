"""``@@session.gtid_next``: committing a transaction under a GTID the client chooses.

https://dev.mysql.com/doc/refman/8.4/en/replication-options-gtids.html#sysvar_gtid_next

This is how a DBA steps a channel past a transaction it cannot apply: commit an empty
transaction with that GTID, and the applier skips the GTID when it meets it::

    SET GTID_NEXT='uuid:n';  BEGIN;  COMMIT;  SET GTID_NEXT='AUTOMATIC';

The session follows MySQL's states (``Gtid_specification``):

- ``AUTOMATIC``: the default; BEGIN and COMMIT do nothing here (clients write no rows).
- a GTID (``ASSIGNED``): SET GTID_NEXT made the session the GTID's owner, or found it
  executed already. COMMIT (with or without BEGIN) commits the empty transaction that makes
  it executed; ROLLBACK gives it up. Either way the value becomes ``UNDEFINED`` and the
  session must set GTID_NEXT again before any statement that would start a transaction
  (1837). A GTID already executed is not committed again: its transaction is skipped.
- ``ANONYMOUS`` (only while ``@@gtid_mode`` is not ON): transactions without a GTID.

Statements that change nothing (SET, SHOW, SELECT, USE, BEGIN, COMMIT, ROLLBACK) are always
allowed. The replication statements change the replica: MySQL runs them with an implicit
commit, so one of them commits the session's GTID as well, is skipped when that GTID is
executed already, and is refused inside a transaction that has a GTID (1778).
"""

from __future__ import annotations

import asyncio
import enum

from spark_replica.applier_core.empty_transaction import commit_empty
from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.gtid import GtidSet, format_gtid, parse_gtid
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.settings import DEFAULT, SystemVariables
from spark_replica.applier_core.storage import StorageEngine
from spark_replica.sql_handlers.gtid_owners import Gtid, GtidOwners

#: The privileges MySQL names when a client without them sets GTID_NEXT.
GTID_NEXT_ADMIN = "SUPER, SYSTEM_VARIABLES_ADMIN, SESSION_VARIABLES_ADMIN or REPLICATION_APPLIER"
NAME = "gtid_next"
AUTOMATIC = "AUTOMATIC"
ANONYMOUS = "ANONYMOUS"


class NextKind(enum.Enum):
    AUTOMATIC = "AUTOMATIC"
    ANONYMOUS = "ANONYMOUS"
    ASSIGNED = "ASSIGNED"
    UNDEFINED = "UNDEFINED"  # a GTID's transaction ended; SET GTID_NEXT must come again


class Verdict(enum.Enum):
    """What to do with a statement that changes the replica."""

    RUN = "run"
    SKIP = "skip"  # its GTID is executed already: MySQL skips the statement


def parse_gtid_next(value: object) -> str | Gtid:
    """``AUTOMATIC``, ``ANONYMOUS`` or a GTID, from a SET value (any case); 1231 for NULL,
    1232 for a number, 1774 for a malformed GTID."""
    if value is DEFAULT:
        return AUTOMATIC
    if value is None:
        raise ReplicaError.from_code(ErrorCode.WRONG_VALUE_FOR_VAR, NAME, "NULL")
    if not isinstance(value, str):
        raise ReplicaError.from_code(ErrorCode.WRONG_TYPE_FOR_VAR, NAME)
    word = value.strip().upper()
    if word in (AUTOMATIC, ANONYMOUS):
        return word
    gtid = parse_gtid(value)
    if gtid is None:
        raise ReplicaError.from_code(ErrorCode.MALFORMED_GTID_SPECIFICATION, value)
    return gtid


class SessionGtid:
    """One session's ``gtid_next``, the GTID it owns and whether it is in a transaction."""

    def __init__(
        self,
        owners: GtidOwners,
        executed: ExecutedGtids,
        settings: SystemVariables,
        engine: StorageEngine | None,
        *,
        name: str,
    ) -> None:
        self._owners = owners
        self._executed = executed
        self._settings = settings
        self._engine = engine
        self._name = name
        self._owner = id(self)
        self.kind = NextKind.AUTOMATIC
        self.gtid: Gtid | None = None
        #: The session owns ``gtid`` (or, for ANONYMOUS, anonymous ownership).
        self.owns = False
        self.in_transaction = False

    @property
    def value(self) -> str:
        """What ``SELECT @@session.gtid_next`` shows."""
        if self.kind in (NextKind.AUTOMATIC, NextKind.ANONYMOUS):
            return self.kind.value
        assert self.gtid is not None
        return format_gtid(*self.gtid)

    # -- SET GTID_NEXT ---------------------------------------------------------------------

    async def set(self, value: str | Gtid) -> None:
        """Make ``value`` (from ``parse_gtid_next``) the session's gtid_next."""
        if self.in_transaction:
            raise ReplicaError.from_code(ErrorCode.VARIABLE_NOT_SETTABLE_IN_TRANSACTION, NAME)
        if self.owns:
            owned = ANONYMOUS if self.kind is NextKind.ANONYMOUS else self.value
            raise ReplicaError.from_code(ErrorCode.CANT_SET_GTID_NEXT_WHEN_OWNING_GTID, owned)
        mode = self._settings.get_str("gtid_mode")
        if value == AUTOMATIC:
            self.kind, self.gtid = NextKind.AUTOMATIC, None
        elif value == ANONYMOUS:
            if mode == "ON":
                raise ReplicaError.from_code(
                    ErrorCode.CANT_SET_GTID_NEXT_TO_ANONYMOUS_WHEN_GTID_MODE_IS_ON
                )
            self.kind, self.gtid, self.owns = NextKind.ANONYMOUS, None, True
        else:
            assert isinstance(value, tuple)
            if mode == "OFF":
                raise ReplicaError.from_code(
                    ErrorCode.CANT_SET_GTID_NEXT_TO_GTID_WHEN_GTID_MODE_IS_OFF
                )
            self.owns = await self._owners.acquire(value, self._owner, self._executed)
            self.kind, self.gtid = NextKind.ASSIGNED, value

    # -- transactions ----------------------------------------------------------------------

    async def begin(self) -> None:
        """BEGIN / START TRANSACTION."""
        if self.in_transaction:
            if self.kind is NextKind.ASSIGNED:
                raise ReplicaError.from_code(
                    ErrorCode.CANT_DO_IMPLICIT_COMMIT_IN_TRX_WHEN_GTID_NEXT_IS_SET
                )
            await self.commit()  # BEGIN ends the open transaction first, as in MySQL
        self.in_transaction = True

    async def commit(self) -> None:
        """COMMIT: an owned GTID becomes executed through an empty transaction."""
        self.in_transaction = False
        if self.kind is NextKind.ANONYMOUS:
            self.owns = False
            return
        if self.kind is not NextKind.ASSIGNED:
            return
        gtid, owned = self.gtid, self.owns
        assert gtid is not None
        self.kind, self.owns = NextKind.UNDEFINED, False
        if not owned:
            return  # executed already: the transaction was skipped
        try:
            gtids = GtidSet()
            gtids.add(*gtid)
            await asyncio.to_thread(
                commit_empty, self._engine, self._executed, gtids, name=self._name
            )
        finally:
            await self._owners.release(gtid, self._owner)

    async def rollback(self) -> None:
        """ROLLBACK: the owned GTID is given up, not executed."""
        self.in_transaction = False
        if self.kind is NextKind.ANONYMOUS:
            self.owns = False
        elif self.kind is NextKind.ASSIGNED:
            gtid, owned = self.gtid, self.owns
            self.kind, self.owns = NextKind.UNDEFINED, False
            if owned and gtid is not None:
                await self._owners.release(gtid, self._owner)

    # -- statements that change the replica ---------------------------------------------------

    def check_statement(self) -> Verdict:
        """Before a statement that changes the replica (MySQL's ``gtid_pre_statement_checks``):
        1837 after a GTID's transaction ended, 1778 inside a transaction with a GTID; SKIP
        when the GTID is executed already."""
        if self.kind is NextKind.UNDEFINED:
            raise ReplicaError.from_code(ErrorCode.GTID_NEXT_TYPE_UNDEFINED_GTID, self.value)
        if self.kind is NextKind.ASSIGNED:
            if self.in_transaction:
                raise ReplicaError.from_code(
                    ErrorCode.CANT_DO_IMPLICIT_COMMIT_IN_TRX_WHEN_GTID_NEXT_IS_SET
                )
            if not self.owns:
                self.kind = NextKind.UNDEFINED
                return Verdict.SKIP
        return Verdict.RUN

    async def after_statement(self) -> None:
        """After a statement that changes the replica: its implicit commit."""
        await self.commit()

    async def close(self) -> None:
        """The connection ends or is reset: give up what the session owns, back to
        AUTOMATIC."""
        await self.rollback()
        self.kind, self.gtid, self.owns = NextKind.AUTOMATIC, None, False
