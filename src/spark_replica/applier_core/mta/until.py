"""START REPLICA UNTIL for the legacy applier: where the coordinator stops assigning.

Every condition is judged at transaction boundaries, as MySQL's multi-threaded applier judges
it (a condition inside a transaction waits for its end):

- ``SQL_BEFORE_GTIDS``: stop before the first transaction whose GTID is in the set; at once
  when one of them is already executed.
- ``SQL_AFTER_GTIDS``: stop once every GTID of the set is executed or was assigned, after the
  workers have applied them; at once when the set is executed already.
- ``SOURCE_LOG_FILE/POS`` and ``RELAY_LOG_FILE/POS``: stop after the first transaction that
  ends at or past the position (a later file counts as past); at once when the applier's own
  position is there already. Files are compared by their numeric extension; a file of another
  base name stops the applier at once, as a condition it can never meet.
- ``SQL_AFTER_MTS_GAPS``: apply the transactions a stop with gaps left out, up to the furthest
  transaction any worker committed (``mysql.slave_worker_info``), then stop; at once when the
  rows show no gap. Until_Condition then reads DONE.

The coordinator asks ``at_start`` once, ``stops_before`` for each transaction before it
assigns it, and ``reached_after`` for each once it is read whole.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from spark_replica.applier_core.channels.config import Until, UntilKind
from spark_replica.applier_core.channels.store import WorkerInfo
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.mta.gaq import Position
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.provider import FetchableTransaction, TransactionState

logger = logging.getLogger(__name__)

DONE = "DONE"
"""Until_Condition once SQL_AFTER_MTS_GAPS is reached."""


def _extension(name: str) -> tuple[str, int] | None:
    """``('relay-bin', 7)`` for ``relay-bin.000007`` (any directory dropped); None when the
    name has no numeric extension."""
    base, dot, number = os.path.basename(name).rpartition(".")
    if not dot or not number.isdigit():
        return None
    return base, int(number)


def at_or_past(file: str, pos: int, until_file: str, until_pos: int) -> bool | None:
    """Whether ``file:pos`` is at or past ``until_file:until_pos``; None when the two files
    cannot be compared (another base name, or no numeric extension)."""
    here, there = _extension(file), _extension(until_file)
    if here is None or there is None or here[0] != there[0]:
        return None
    return here[1] > there[1] or (here[1] == there[1] and pos >= until_pos)


class UntilWatch:
    """One START REPLICA UNTIL condition, judged for the coordinator (its thread only).

    ``origin``: the applier's positions at START; ``workers``: the worker rows the previous
    run left.
    """

    def __init__(
        self,
        until: Until,
        executed: ExecutedGtids,
        *,
        origin: Position,
        workers: Sequence[WorkerInfo] = (),
    ) -> None:
        self.kind = until.kind
        self._until = until
        self._executed = executed
        self._origin = origin
        self._gtids = GtidSet.parse(until.gtids) if until.gtids else GtidSet()
        self._seen = GtidSet()
        self._gap_end = _furthest(workers) if any(w.has_gaps for w in workers) else None

    def __repr__(self) -> str:
        return f"<UntilWatch {self.kind.value}>"

    def at_start(self) -> bool:
        """Whether the condition holds before anything is applied."""
        kind, origin = self.kind, self._origin
        if kind is UntilKind.SQL_BEFORE_GTIDS:
            unexecuted = self._gtids.subtract(self._executed.snapshot())
            return unexecuted.count() < self._gtids.count()
        if kind is UntilKind.SQL_AFTER_GTIDS:
            return self._gtids.is_subset(self._executed.snapshot())
        if kind is UntilKind.SQL_AFTER_MTS_GAPS:
            if self._gap_end is None:
                logger.info("START REPLICA UNTIL SQL_AFTER_MTS_GAPS: no gap to fill")
            return self._gap_end is None
        if kind is UntilKind.SOURCE_POS:
            return self._position(origin.source_file, origin.source_pos, at_start=True)
        return self._position(origin.relay_file, origin.relay_pos, at_start=True)

    def stops_before(self, trx: FetchableTransaction) -> bool:
        """Whether to stop without assigning ``trx``."""
        gtid = trx.gtid
        if self.kind is UntilKind.SQL_BEFORE_GTIDS:
            return self._gtids.contains(gtid.uuid, gtid.tag, gtid.gno)
        if self.kind is UntilKind.SQL_AFTER_GTIDS:
            return self._after_gtids_known()
        return False

    def reached_after(self, trx: FetchableTransaction) -> bool:
        """Whether the condition holds once ``trx``, read whole, is applied (a transaction cut
        off by a truncated relay log never reaches it: its next copy may)."""
        if trx.state is TransactionState.TRUNCATED:
            return False
        kind, end = self.kind, trx.end
        if kind is UntilKind.SQL_AFTER_GTIDS:
            gtid = trx.gtid
            if not gtid.anonymous:
                self._seen.add(gtid.uuid, gtid.tag, gtid.gno)
            return self._after_gtids_known()
        if end is None or kind is UntilKind.SQL_BEFORE_GTIDS:
            return False
        if kind is UntilKind.SOURCE_POS:
            return self._position(trx.source_file, trx.source_end)
        if kind is UntilKind.RELAY_POS:
            return self._position(end.file, end.offset)
        gap_end = self._gap_end
        assert gap_end is not None  # at_start stopped the applier otherwise
        return at_or_past(end.file, end.offset, gap_end.relay_file, gap_end.relay_pos) is True

    def _after_gtids_known(self) -> bool:
        known = self._executed.snapshot()
        known.update(self._seen)
        return self._gtids.is_subset(known)

    def _position(self, file: str, pos: int, *, at_start: bool = False) -> bool:
        if at_start and not file:  # nothing applied yet since RESET REPLICA
            return False
        verdict = at_or_past(file, pos, self._until.log_file, self._until.log_pos)
        if verdict is None:
            logger.error(
                "START REPLICA UNTIL stops at once: '%s' cannot be compared with the log "
                "file '%s' of the condition (position %d)",
                file, self._until.log_file, self._until.log_pos,
            )  # fmt: skip
            return True
        return verdict


def _furthest(workers: Sequence[WorkerInfo]) -> Position | None:
    """The furthest relay-log end any worker committed."""
    best: tuple[int, int] | None = None
    found: Position | None = None
    for worker in workers:
        key = _extension(worker.relay_log_name)
        if key is None:
            continue
        order = (key[1], worker.relay_log_pos)
        if best is None or order > best:
            best = order
            found = Position(worker.relay_log_name, worker.relay_log_pos,
                             worker.source_log_name, worker.source_log_pos)  # fmt: skip
    return found
