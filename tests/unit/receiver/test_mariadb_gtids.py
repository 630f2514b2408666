"""MariaDB GTIDs in the replica's GTID sets, the resume position and the logical clock from
group commit ids (issue 7 §3; docs/decisions/0009)."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.binlog.events import EventHeader, MariadbGtid, MariadbGtidFlag
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.mariadb import (
    CommitGroups,
    connect_state,
    domain_and_server,
    gtid_in_set,
    mariadb_text,
    mariadb_uuid,
)

DML = MariadbGtidFlag.TRANSACTIONAL | MariadbGtidFlag.ALLOW_PARALLEL
GROUPED = DML | MariadbGtidFlag.GROUP_COMMIT_ID
DDL = MariadbGtidFlag.STANDALONE | MariadbGtidFlag.ALLOW_PARALLEL | MariadbGtidFlag.DDL


def _gtid(seq: int, flags: int = DML, commit_id: int | None = None, *, domain: int = 0,
          server: int = 1) -> MariadbGtid:  # fmt: skip
    header = EventHeader(0, 162, server, 0, 0, 0)
    return MariadbGtid(header, domain, seq, flags, commit_id)


@pytest.mark.parametrize(("domain", "server"), [(0, 1), (7, 4294967295), (4294967295, 0)])
def test_the_uuid_encodes_domain_and_server_both_ways(domain: int, server: int) -> None:
    uuid = mariadb_uuid(domain, server)
    assert GtidSet.parse(f"{uuid}:1").count() == 1  # a valid UUID for the sets
    assert domain_and_server(uuid) == (domain, server)
    assert mariadb_text(uuid, 13) == f"{domain}-{server}-13"


def test_other_uuids_are_not_mariadb_ones() -> None:
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    assert domain_and_server(uuid) is None
    assert mariadb_text(uuid, 5) == f"{uuid}:5"
    with pytest.raises(ValueError):
        mariadb_uuid(1 << 32, 1)


def test_an_event_goes_into_the_set_by_its_uuid_and_seq() -> None:
    assert gtid_in_set(_gtid(13, domain=2, server=9)) == (mariadb_uuid(2, 9), 13)


def test_connect_state_takes_each_domains_highest_sequence() -> None:
    """Domain 0 moved from server 1 to server 2 (a failover): the highest seq wins whatever
    server wrote it; domain 5 is kept apart; another source's UUID is left out."""
    gtids = GtidSet.parse(
        f"{mariadb_uuid(0, 1)}:1-10,{mariadb_uuid(0, 2)}:11-14,{mariadb_uuid(5, 1)}:1-3,"
        "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-99"
    )
    assert connect_state(gtids) == "0-2-14,5-1-3"
    assert connect_state(GtidSet()) == ""


def test_one_commit_group_runs_in_parallel_and_waits_for_the_one_before() -> None:
    groups = CommitGroups()
    clock = [
        groups.next(_gtid(1, GROUPED, 10)),
        groups.next(_gtid(2, GROUPED, 10)),
        groups.next(_gtid(3, DML)),  # no commit id: alone
        groups.next(_gtid(4, DDL)),  # DDL: alone
        groups.next(_gtid(5, GROUPED, 11)),
        groups.next(_gtid(6, GROUPED, 11)),
        groups.next(_gtid(7, GROUPED, 11)),
        groups.next(_gtid(8, GROUPED | MariadbGtidFlag.DDL, 11)),  # a DDL never shares
        groups.next(_gtid(9, MariadbGtidFlag.TRANSACTIONAL | MariadbGtidFlag.GROUP_COMMIT_ID, 12)),
    ]
    assert clock == [(0, 1), (0, 2), (2, 3), (3, 4), (4, 5), (4, 6), (4, 7), (7, 8), (8, 9)]
    groups.reset()
    assert groups.next(_gtid(10, GROUPED, 12)) == (0, 1)
