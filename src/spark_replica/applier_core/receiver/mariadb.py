"""MariaDB sources: their GTIDs in the replica's GTID sets, where a dump resumes, and the
logical clock their group commits give (docs/decisions/0009).

A MariaDB GTID is ``domain-server-seq``. The replica keeps it in its UUID-based sets
(``gtid_executed``, Received_transaction_set) as ``uuid:seq`` where the UUID encodes the
domain and the server id (``mariadb_uuid``), so the two forms convert both ways without a
table. A dump resumes, per domain, after the highest sequence number the replica has
(``connect_state``), as MariaDB's ``@slave_connect_state`` expects.

MariaDB marks the transactions it committed together with one commit id. ``CommitGroups``
turns those ids into MySQL's last_committed/sequence_number, so both appliers run a commit
group's transactions in parallel and each group after the one before (MariaDB's
"conservative" parallel mode). A transaction without a commit id, a DDL, or one MariaDB did
not mark as safe to run in parallel is a group of its own.
"""

from __future__ import annotations

from spark_replica.applier_core.binlog.events import MariadbGtid, MariadbGtidFlag
from spark_replica.applier_core.gtid import GtidSet

#: The first four bytes of every UUID that stands for a MariaDB domain and server: "MDB\0".
PREFIX = "4d444200"


def mariadb_uuid(domain_id: int, server_id: int) -> str:
    """The UUID that stands for ``domain_id`` and ``server_id`` (each below 2^32)."""
    if not (0 <= domain_id < 1 << 32 and 0 <= server_id < 1 << 32):
        raise ValueError(f"a MariaDB domain and server id are 32-bit: {domain_id}, {server_id}")
    raw = f"{PREFIX}{domain_id:08x}{server_id:08x}00000000"
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def domain_and_server(uuid: str) -> tuple[int, int] | None:
    """The domain and server id ``uuid`` stands for; None for any other UUID."""
    raw = uuid.replace("-", "").lower()
    if len(raw) != 32 or not raw.startswith(PREFIX) or raw[24:] != "00000000":
        return None
    return int(raw[8:16], 16), int(raw[16:24], 16)


def gtid_in_set(event: MariadbGtid) -> tuple[str, int]:
    """``(uuid, gno)``: how the replica's GTID sets hold ``event``'s GTID."""
    return mariadb_uuid(event.domain_id, event.server_id), event.seq_no


def mariadb_text(uuid: str, gno: int) -> str:
    """``domain-server-seq`` for a GTID of a MariaDB source; ``uuid:gno`` for others."""
    found = domain_and_server(uuid)
    if found is None:
        return f"{uuid}:{gno}"
    return f"{found[0]}-{found[1]}-{gno}"


def connect_state(gtids: GtidSet) -> str:
    """``@slave_connect_state`` for a replica that has ``gtids``: per domain, the GTID with the
    highest sequence number (MariaDB numbers a domain's transactions in one sequence whatever
    server wrote them). UUIDs of other sources are left out."""
    best: dict[int, tuple[int, int]] = {}  # domain -> (seq, server)
    for uuid, tag, _first, last in gtids.intervals():
        found = None if tag else domain_and_server(uuid)
        if found is None:
            continue
        domain, server = found
        if domain not in best or last > best[domain][0]:
            best[domain] = (last, server)
    return ",".join(f"{d}-{server}-{seq}" for d, (seq, server) in sorted(best.items()))


class CommitGroups:
    """MariaDB commit ids to MySQL's logical clock, transaction by transaction, in stream
    order. ``reset`` at a new binary log file: its Format_description restarts the clock."""

    __slots__ = ("_sequence", "_group_end", "_previous_end", "_group_id")

    def __init__(self) -> None:
        self._sequence = 0  # the last sequence_number handed out
        self._group_end = 0  # the last sequence_number of the group being read
        self._previous_end = 0  # ... of the group before it: what this group waits for
        self._group_id: int | None = None

    def reset(self) -> None:
        self._sequence = self._group_end = self._previous_end = 0
        self._group_id = None

    def next(self, event: MariadbGtid) -> tuple[int, int]:
        """``(last_committed, sequence_number)`` for the transaction ``event`` starts."""
        self._sequence += 1
        commit_id = event.commit_id
        parallel = (
            commit_id is not None
            and event.flags & MariadbGtidFlag.ALLOW_PARALLEL
            and not event.flags & MariadbGtidFlag.DDL
        )
        if not parallel or commit_id != self._group_id:
            self._previous_end = self._group_end  # a new group: it waits for the last one
        self._group_id = commit_id if parallel else None
        self._group_end = self._sequence
        return self._previous_end, self._sequence
