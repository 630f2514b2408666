"""The native core's LMDB environment, as the key index uses it (decision 0023)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from spark_replica_native import Database, Environment, LmdbError, MapFullError


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Environment]:
    environment = Environment(str(tmp_path), map_size=1 << 24, max_dbs=2, max_spare_txns=2)
    yield environment
    environment.close()


def fill(env: Environment, db: Database, keys: range) -> None:
    with env.begin(write=True) as txn:
        for number in keys:
            txn.put(b"k%03d" % number, b"v%d" % number, db=db)


def test_a_read_transaction_sees_the_commit_it_began_after_and_no_later_one(
    env: Environment,
) -> None:
    db = env.open_db(b"data")
    fill(env, db, range(3))
    before = env.begin()
    fill(env, db, range(3, 6))
    after = env.begin()
    assert before.get(b"k004", db=db) is None
    assert after.get(b"k004", db=db) == b"v4"
    assert after.id() == before.id() + 1
    before.abort()
    after.abort()


def test_named_databases_keep_their_keys_apart(env: Environment) -> None:
    data, meta = env.open_db(b"data"), env.open_db(b"meta")
    with env.begin(write=True) as txn:
        txn.put(b"a", b"data", db=data)
        txn.put(b"a", b"meta", db=meta)
    with env.begin() as txn:
        assert (txn.get(b"a", db=data), txn.get(b"a", db=meta)) == (b"data", b"meta")
        assert txn.items(db=meta) == [(b"a", b"meta")]
        assert txn.stat(data)["entries"] == 1


def test_put_delete_pop_and_drop(env: Environment) -> None:
    db = env.open_db(b"data")
    with env.begin(write=True) as txn:
        assert txn.put(b"a", b"1", db=db)
        assert not txn.put(b"a", b"2", db=db, overwrite=False)
        assert txn.get(b"a", db=db) == b"1"
        assert txn.put(b"a", b"3", db=db)
        assert txn.pop(b"a", db=db) == b"3"
        assert txn.pop(b"a", db=db) is None
        assert not txn.delete(b"a", db=db)
        txn.put(b"b", b"", db=db)
        assert txn.get(b"b", db=db) == b""
        txn.drop(db)
        assert txn.items(db=db) == []


def test_a_block_that_raises_aborts_its_write_transaction(env: Environment) -> None:
    db = env.open_db(b"data")
    with pytest.raises(ZeroDivisionError), env.begin(write=True) as txn:
        txn.put(b"a", b"1", db=db)
        raise ZeroDivisionError
    with env.begin() as txn:
        assert txn.get(b"a", db=db) is None


def test_cursor_moves_answer_whether_they_are_on_an_entry(env: Environment) -> None:
    db = env.open_db(b"data")
    fill(env, db, range(10))
    with env.begin() as txn:
        cursor = txn.cursor(db=db)
        assert (cursor.key(), cursor.value()) == (b"", b"")
        assert cursor.set_range(b"k0045")
        assert (cursor.key(), cursor.value()) == (b"k005", b"v5")
        assert cursor.next() and cursor.key() == b"k006"
        assert cursor.prev() and cursor.prev() and cursor.key() == b"k004"
        assert cursor.last() and cursor.key() == b"k009"
        assert not cursor.next()
        assert cursor.key() == b""
        assert not cursor.set_range(b"l")
        assert cursor.set_key(b"k003") and cursor.value() == b"v3"
        assert not cursor.set_key(b"k0035")
        assert cursor.first() and cursor.key() == b"k000"


def test_a_cursor_delete_moves_to_the_next_entry_until_none_is_left(env: Environment) -> None:
    db = env.open_db(b"data")
    fill(env, db, range(3))
    with env.begin(write=True) as txn:
        cursor = txn.cursor(db=db)
        assert not cursor.delete()  # on no entry
        assert cursor.set_range(b"k001")
        assert cursor.delete() and cursor.key() == b"k002"
        assert cursor.delete() and cursor.key() == b""
        assert cursor.first() and cursor.delete() and cursor.key() == b""
    with env.begin() as txn:
        assert txn.items(db=db) == []


def test_batches_of_keys_in_one_call(env: Environment) -> None:
    db = env.open_db(b"data")
    fill(env, db, range(0, 10, 2))
    with env.begin(write=True) as txn:
        cursor = txn.cursor(db=db)
        assert cursor.getmulti([b"k002", b"k003", b"k008"]) == [(b"k002", b"v2"), (b"k008", b"v8")]
        keys = [b"k000", b"k001", b"k004", b"k008", b"k009"]
        assert cursor.contains(keys) == [True, False, True, True, False]
        # Past ``above`` a key is not looked up: it is answered absent.
        assert cursor.contains(keys, above=b"k005") == [True, False, True, False, False]
        assert cursor.putmulti([(b"k001", b"x"), (b"k002", b"y")], overwrite=False) == (2, 1)
        assert txn.get(b"k002", db=db) == b"v2"
        assert cursor.putmulti([(b"k002", b"y")]) == (1, 1)
        assert txn.get(b"k002", db=db) == b"y"
        # Appending refuses a key not after the last one.
        assert cursor.putmulti([(b"k005", b"z"), (b"k100", b"z")], append=True) == (2, 1)
        assert txn.get(b"k100", db=db) == b"z"


def test_a_full_map_raises_map_full_and_a_bigger_map_takes_the_transaction(
    tmp_path: Path,
) -> None:
    env = Environment(str(tmp_path), map_size=1 << 16, max_dbs=1)
    db = env.open_db(b"data")
    rows = [(b"%08d" % number, b"v" * 100) for number in range(2_000)]
    with pytest.raises(MapFullError), env.begin(write=True) as txn:
        txn.cursor(db=db).putmulti(rows)
    assert issubclass(MapFullError, LmdbError)
    env.set_mapsize(1 << 22)
    with env.begin(write=True) as txn:
        assert txn.cursor(db=db).putmulti(rows) == (2_000, 2_000)
    assert env.info()["map_size"] == 1 << 22
    assert env.stat()["psize"] == 4096
    env.close()


def test_an_open_transaction_holds_off_resizing_and_closing(env: Environment) -> None:
    txn = env.begin()
    with pytest.raises(LmdbError, match="transaction is open"):
        env.set_mapsize(1 << 25)
    with pytest.raises(LmdbError, match="transaction is open"):
        env.close()
    txn.abort()
    env.set_mapsize(1 << 25)


def test_an_ended_transaction_and_its_cursors_refuse_to_be_used(env: Environment) -> None:
    db = env.open_db(b"data")
    fill(env, db, range(2))
    for write in (False, True):
        txn = env.begin(write=write)
        cursor = txn.cursor(db=db)
        assert cursor.first()
        txn.commit()
        txn.abort()  # again: nothing
        with pytest.raises(LmdbError, match="has ended"):
            txn.get(b"k000", db=db)
        with pytest.raises(LmdbError, match="has ended"):
            cursor.next()
        with pytest.raises(LmdbError, match="has ended"):
            txn.commit()


def test_a_closed_environment_refuses_transactions(tmp_path: Path) -> None:
    env = Environment(str(tmp_path), map_size=1 << 20, max_dbs=1)
    env.close()
    env.close()
    with pytest.raises(LmdbError, match="closed"):
        env.begin()


def test_read_transactions_in_many_threads_beside_a_writer(env: Environment) -> None:
    db = env.open_db(b"data")
    fill(env, db, range(1))
    failures: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(500):
                with env.begin() as txn:
                    assert txn.get(b"k000", db=db) == b"v0"
                    cursor = txn.cursor(db=db)
                    assert cursor.set_range(b"k")
        except BaseException as error:  # reported below
            failures.append(error)

    readers = [threading.Thread(target=read, name=f"reader-{n}") for n in range(4)]
    for reader in readers:
        reader.start()
    fill(env, db, range(1, 50))
    for reader in readers:
        reader.join()
    assert failures == []
    # Reset read transactions are reused: a slot each for the spares at most.
    assert env.info()["num_readers"] <= 4
