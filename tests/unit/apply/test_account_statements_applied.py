"""An account statement in a transaction goes to the engine's replicated accounts; one the
engine refuses fails the transaction with its error, and the error text shows the statement
with its password masked."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.apply.transaction import ApplyError, TransactionApplier
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import EventHeader, Query
from spark_replica.applier_core.storage import InMemoryEngine, TransactionRef
from spark_replica.applier_core.storage.accounts import AccountName

GTID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def _apply(engine: InMemoryEngine, number: int, statement: str) -> None:
    session = engine.session("worker")
    session.begin(TransactionRef(f"{GTID}:{number}", number))
    header = EventHeader(0, EventType.QUERY, 1, 0, 100, 0)
    applier = TransactionApplier(session, f"{GTID}:{number}", "source-bin.000001")
    try:
        assert applier.apply(Query.build(header, statement, db="shop"))
        session.prepare()
        session.commit()
    except ApplyError:
        session.rollback()
        raise


def test_account_statements_change_the_replicated_accounts() -> None:
    engine = InMemoryEngine()
    _apply(engine, 1, "CREATE USER 'u'@'%' IDENTIFIED BY 'clear-secret'")
    _apply(engine, 2, "CREATE OR REPLACE USER 'v'@'%'")
    assert list(engine.accounts()) == [AccountName("u", "%"), AccountName("v", "%")]
    assert "clear-secret" not in repr(engine.accounts())


def test_a_refused_account_statement_names_it_without_its_password() -> None:
    engine = InMemoryEngine()
    _apply(engine, 1, "CREATE USER 'u'@'%' IDENTIFIED BY 'first-secret'")
    with pytest.raises(ApplyError) as caught:
        _apply(engine, 2, "CREATE USER 'u'@'%' IDENTIFIED BY 'second-secret'")
    assert caught.value.code == 1396
    assert caught.value.detail == (
        "Error 'Operation CREATE USER failed for 'u'@'%'' on query. Default database: 'shop'. "
        "Query: 'CREATE USER 'u'@'%' IDENTIFIED BY <secret>'"
    )
    with pytest.raises(ApplyError) as unsupported:
        _apply(engine, 3, "CREATE USER w IDENTIFIED VIA mysql_native_password "
                          "USING PASSWORD('third-secret') OR unix_socket")  # fmt: skip
    assert unsupported.value.code == 1235
    assert "several authentication methods for one account" in unsupported.value.detail
    assert "third-secret" not in unsupported.value.detail
