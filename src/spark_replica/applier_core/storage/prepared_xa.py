"""The prepared XA transactions an engine keeps (docs/decisions/0015).

A prepared XA transaction is kept by the transaction that prepared it and dropped by the
one that commits or rolls it back (``EngineSession.keep_prepared`` / ``take_prepared``), so
the set of prepared transactions changes at commit points with the rows and the executed
GTIDs: after a crash it is exactly the set of the recorded GTIDs, and no prepared
transaction is lost or applied twice. The engine does not read the kept events; the
applier does (``apply.xa``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.interface import EngineError

#: Prepared transactions by xid (``apply.xa.Xid.text``).
Prepared = Mapping[str, "PreparedXa"]
NO_PREPARED: Prepared = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class PreparedXa:
    """A prepared XA transaction: its xid, the GTID of its prepare, its row events."""

    xid: str
    gtid: str
    events: bytes


@dataclass(slots=True)
class XaChanges:
    """What one transaction changes in the prepared set: xids it keeps and xids it takes."""

    kept: dict[str, PreparedXa] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.kept or self.taken)

    def keep(self, prepared: PreparedXa, committed: Prepared) -> None:
        """Stage keeping ``prepared``; 1440 when its xid is prepared already."""
        xid = prepared.xid
        if xid in self.kept or (xid in committed and xid not in self.taken):
            raise EngineError.of(ErrorCode.XAER_DUPID)
        self.kept[xid] = prepared

    def take(self, xid: str, committed: Prepared) -> PreparedXa | None:
        """Stage dropping ``xid``; what was prepared under it (None: nothing is)."""
        found = self.kept.pop(xid, None)
        if found is None and xid not in self.taken:
            found = committed.get(xid)
            if found is not None:
                self.taken.add(xid)
        return found

    def applied_to(self, committed: Prepared) -> Prepared:
        """The prepared set after these changes (1397 when a taken xid is gone meanwhile)."""
        if not self:
            return committed
        result = dict(committed)
        for xid in self.taken:
            if result.pop(xid, None) is None:
                raise EngineError.of(ErrorCode.XAER_NOTA)
        result.update(self.kept)
        return MappingProxyType(result)
