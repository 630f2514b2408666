"""The candidate stores for a disk-backed key index, measured side by side in one run.

The Spark engine keeps every table's rows in Python to check keys (1062/1032) and to find
the row an update or delete replaces: about 520 bytes a row (decision 0007), which no large
table fits. A key index maps a table's primary key to where its row lives; this script
measures what such an index costs in each candidate store, with the access pattern of
replication: a bulk load of ``--rows`` keys (sysbench-shaped: an INT id), then transactions
of ``--batch`` random lookups, half of them followed by an update of the value, a quarter by
a delete and a re-insert, committed per batch. Printed per store: load rate, lookups+writes
per second, the process's RSS growth, and the bytes on disk.

Stores: ``dict`` (today's in-memory baseline), ``sqlite`` (the standard library, WITHOUT
ROWID table), ``lmdb`` (the native core's LMDB environment, bare) and ``rocksdb`` (rocksdict,
measured when installed: ``pip install rocksdict``), and ``lmdb-index`` (``LmdbKeyIndex``, decision
0018: the engine's index, codec, undo records and reader gates included). ``lmdb-index``
sees rows, not bytes: a key ``(id,)`` and a row ``(id, value)`` holding the bytes the other
stores hold, a transaction's writes kept in an overlay (as the engine keeps them) and
applied as one batch at its commit; its load is ``rebuild``. ``lmdb-index-sync`` is the
same with ``sync=True``, the engine's setting (an fsync per batch). No other store forces
its writes to disk per transaction (LMDB ``sync=False``, SQLite WAL with
``synchronous=NORMAL``, RocksDB's default): a key index needs to be durable at the engine's
commit point, not at each transaction. One store per run of a fresh interpreter is the
fair comparison for RSS; ``--stores`` picks them, and the default runs each in its own
subprocess.

``--codec`` prints instead the microseconds per encode and decode of a sysbench-shaped row
(INT id, INT k, CHAR(120) c, CHAR(60) pad) by pickle protocol 5, marshal format 4 and the
index's codec (which picks marshal for such a row), and of its key; and of an employees row
holding two dates; the codec by its native core and by its Python form
(``encode_row_in_python``, ``key_bytes_in_python``).

    python tests/bench/bench_key_index.py --rows 2000000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))  # lmdb-index: this tree
from benchkit import load_average, machine_line  # noqa: E402

STORES = ("dict", "sqlite", "lmdb", "rocksdb", "lmdb-index", "lmdb-index-sync")
_KEY = struct.Struct(">q")  # big-endian: byte order is key order
_VALUE = struct.Struct(">iq")  # (file id, row position): where the row lives


class Store(Protocol):
    def load(self, pairs: Iterator[tuple[bytes, bytes]]) -> None: ...
    def get(self, key: bytes) -> bytes | None: ...
    def put(self, key: bytes, value: bytes) -> None: ...
    def delete(self, key: bytes) -> None: ...
    def commit(self) -> None: ...


class DictStore:
    def __init__(self, root: Path) -> None:
        self.data: dict[bytes, bytes] = {}

    def load(self, pairs: Iterator[tuple[bytes, bytes]]) -> None:
        self.data.update(pairs)

    def get(self, key: bytes) -> bytes | None:
        return self.data.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        self.data[key] = value

    def delete(self, key: bytes) -> None:
        self.data.pop(key, None)

    def commit(self) -> None:
        pass


class SqliteStore:
    def __init__(self, root: Path) -> None:
        self.db = sqlite3.connect(root / "index.sqlite", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE k (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID")
        self.db.execute("BEGIN")

    def load(self, pairs: Iterator[tuple[bytes, bytes]]) -> None:
        self.db.executemany("INSERT INTO k VALUES (?, ?)", pairs)
        self.commit()

    def get(self, key: bytes) -> bytes | None:
        row = self.db.execute("SELECT value FROM k WHERE key = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def put(self, key: bytes, value: bytes) -> None:
        self.db.execute("INSERT OR REPLACE INTO k VALUES (?, ?)", (key, value))

    def delete(self, key: bytes) -> None:
        self.db.execute("DELETE FROM k WHERE key = ?", (key,))

    def commit(self) -> None:
        self.db.execute("COMMIT")
        self.db.execute("BEGIN")


class LmdbStore:
    def __init__(self, root: Path) -> None:
        from spark_replica_native import Environment

        (root / "index.lmdb").mkdir()
        self.env = Environment(str(root / "index.lmdb"), map_size=64 << 30, max_dbs=1,
                               writemap=True, metasync=False, sync=False)  # fmt: skip
        self.db = self.env.open_db(b"data")
        self.txn = self.env.begin(write=True)

    def load(self, pairs: Iterator[tuple[bytes, bytes]]) -> None:
        cursor = self.txn.cursor(db=self.db)
        cursor.putmulti(pairs, append=True)
        self.commit()

    def get(self, key: bytes) -> bytes | None:
        return self.txn.get(key, db=self.db)

    def put(self, key: bytes, value: bytes) -> None:
        self.txn.put(key, value, db=self.db)

    def delete(self, key: bytes) -> None:
        self.txn.delete(key, db=self.db)

    def commit(self) -> None:
        self.txn.commit()
        self.txn = self.env.begin(write=True)


class RocksStore:
    def __init__(self, root: Path) -> None:
        from rocksdict import Options, Rdict, WriteBatch

        options = Options()
        options.create_if_missing(True)
        self.db = Rdict(str(root / "index.rocksdb"), options)
        self.batch_type = WriteBatch

    def load(self, pairs: Iterator[tuple[bytes, bytes]]) -> None:
        batch = self.batch_type()
        for count, (key, value) in enumerate(pairs, 1):
            batch.put(key, value)
            if count % 100_000 == 0:
                self.db.write(batch)
                batch = self.batch_type()
        self.db.write(batch)

    def get(self, key: bytes) -> bytes | None:
        value = self.db.get(key)
        return None if value is None else bytes(value)

    def put(self, key: bytes, value: bytes) -> None:
        self.db.put(key, value)  # each write to the WAL: a transaction reads its own writes

    def delete(self, key: bytes) -> None:
        self.db.delete(key)

    def commit(self) -> None:
        pass  # written already (an atomic commit would stage in a WriteBatchWithIndex)


class KeyIndexStore:
    """``LmdbKeyIndex`` behind the byte interface: key ``(id,)``, row ``(id, value)``."""

    sync = False

    def __init__(self, root: Path) -> None:
        from spark_replica.applier_core.storage.key_index import LmdbKeyIndex, TableChanges

        self.index = LmdbKeyIndex(root / "index.lmdb", sync=self.sync)
        self.changes = TableChanges
        self.overlay: dict[tuple[object, ...], tuple[object, ...] | None] = {}

    def load(self, pairs: Iterator[tuple[bytes, bytes]]) -> None:
        rows = ((_KEY.unpack(key)[0], value) for key, value in pairs)
        self.index.rebuild(1, rows, lambda row: (row[0],))
        self.index.set_batch(1)

    def get(self, key: bytes) -> bytes | None:
        k = (_KEY.unpack(key)[0],)
        row = self.overlay[k] if k in self.overlay else self.index.get(1, k)
        return None if row is None else row[1]  # type: ignore[return-value]

    def put(self, key: bytes, value: bytes) -> None:
        k = _KEY.unpack(key)[0]
        self.overlay[(k,)] = (k, value)

    def delete(self, key: bytes) -> None:
        self.overlay[(_KEY.unpack(key)[0],)] = None

    def commit(self) -> None:
        self.index.apply(self.index.batch + 1, {1: self.changes(puts=self.overlay)})
        self.overlay = {}


class SyncedKeyIndexStore(KeyIndexStore):
    sync = True


_FACTORIES: dict[str, Any] = {"dict": DictStore, "sqlite": SqliteStore, "lmdb": LmdbStore,
                              "rocksdb": RocksStore, "lmdb-index": KeyIndexStore,
                              "lmdb-index-sync": SyncedKeyIndexStore}  # fmt: skip


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _disk_bytes(root: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in root.rglob("*") if p.is_file())  # sparse: used


class BusyThread:
    """A thread computing in Python while the store is measured, as the applier's threads do
    beside the key index: each call that lets go of the GIL waits to take it back."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, name="bench-busy", daemon=True)

    def _spin(self) -> None:
        while not self._stop.is_set():
            sum(range(2_000))

    def __enter__(self) -> BusyThread:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def measure(
    name: str, rows: int, batches: int, batch: int, seed: int, busy: bool = False
) -> dict[str, object]:
    """One store's figures (run in a fresh process for a fair RSS); ``busy``: the lookups and
    changes run beside a thread computing in Python."""
    with tempfile.TemporaryDirectory(prefix=f"key-index-{name}-") as directory:
        root = Path(directory)
        before = _rss_bytes()
        store: Store = _FACTORIES[name](root)
        started = time.perf_counter()
        store.load((_KEY.pack(k), _VALUE.pack(k % 97, k)) for k in range(rows))
        load_s = time.perf_counter() - started
        random.seed(seed)
        beside = BusyThread() if busy else contextlib.nullcontext()
        with beside:
            apply_s, operations = _apply(store, rows, batches, batch)
        return {
            "store": name,
            "rows": rows,
            "busy": busy,
            "load_rows_per_s": round(rows / load_s),
            "operations_per_s": round(operations / apply_s),
            "rss_growth_mb": round((_rss_bytes() - before) / 2**20, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "disk_mb": round(_disk_bytes(root) / 2**20, 1),
        }


def _apply(store: Store, rows: int, batches: int, batch: int) -> tuple[float, int]:
    """Random lookups, changes and commits: seconds taken and operations done."""
    started = time.perf_counter()
    operations = 0
    for _ in range(batches):
        for _ in range(batch):
            key = _KEY.pack(random.randrange(rows))
            found = store.get(key)
            assert found is not None
            operations += 1
            choice = random.random()
            if choice < 0.5:
                store.put(key, _VALUE.pack(1, 2))
                operations += 1
            elif choice < 0.75:
                store.delete(key)
                store.put(key, found)
                operations += 2
        store.commit()
    return time.perf_counter() - started, operations


def codec_figures(repeat: int = 5, number: int = 100_000) -> dict[str, float]:
    """Best of ``repeat`` runs of ``number`` calls, in microseconds per call."""
    import marshal
    import pickle
    import timeit
    from datetime import date

    from spark_replica.applier_core.storage.key_index import codec

    row = (4_999_123, 5_001, "83868641912-28773972837-60736120486-75162659906-27563526494-"
           "20381887404-41576422241-93426793964-56405065102-33518432330",
           "67847967377-48000963322-62604785301-91415491898-96926520291")  # fmt: skip
    # An employees row (test_db): two DATE columns, which marshal alone does not hold.
    dated = (10_001, date(1953, 9, 2), "Georgi", "Facello", "M", date(1986, 6, 26))
    pickled, marshalled, encoded = (
        pickle.dumps(row, 5),
        marshal.dumps(row, 4),
        codec.encode_row(row),
    )
    dated_encoded = codec.encode_row(dated)
    cases = {
        "codec_encode_row_in_python": lambda: codec.encode_row_in_python(row),
        "pickle5_encode_dated_row": lambda: pickle.dumps(dated, 5),
        "codec_encode_dated_row": lambda: codec.encode_row(dated),
        "codec_encode_dated_row_in_python": lambda: codec.encode_row_in_python(dated),
        "codec_decode_dated_row": lambda: codec.decode_row(dated_encoded),
        "codec_encode_key_in_python": lambda: codec.key_bytes_in_python((row[0],)),
        "pickle5_encode": lambda: pickle.dumps(row, 5),
        "pickle5_decode": lambda: pickle.loads(pickled),
        "marshal4_encode": lambda: marshal.dumps(row, 4),
        "marshal4_decode": lambda: marshal.loads(marshalled),
        "codec_encode_row": lambda: codec.encode_row(row),
        "codec_decode_row": lambda: codec.decode_row(encoded),
        "codec_encode_key": lambda: codec.encode_key((row[0],)),
        "codec_key_bytes_row": lambda: codec.key_bytes(row),
    }
    figures = {
        name: round(min(timeit.repeat(case, repeat=repeat, number=number)) / number * 1e6, 3)
        for name, case in cases.items()
    }
    figures["row_bytes"] = len(encoded)
    return figures


def available(name: str) -> bool:
    module = {"rocksdb": "rocksdict"}.get(name)
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--batch", type=int, default=100, help="lookups per transaction")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument("--json", action="store_true", help="one JSON line per store")
    parser.add_argument("--codec", action="store_true", help="measure the row codecs only")
    parser.add_argument("--busy", action="store_true",
                        help="apply beside a thread computing in Python")  # fmt: skip
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    stores = [s for s in args.stores.split(",") if s]
    unknown = [s for s in stores if s not in _FACTORIES]
    if unknown:
        parser.error(f"unknown stores: {', '.join(unknown)}")
    if args.codec:
        print(machine_line())
        print(f"load average: {load_average()}")
        print(json.dumps(codec_figures()))
        return 0
    if args.in_process:
        for name in stores:
            figures = measure(name, args.rows, args.batches, args.batch, args.seed, args.busy)
            print(json.dumps(figures))
        return 0
    if not args.json:
        print(machine_line())
        print(f"load average: {load_average()}; rows={args.rows} batches={args.batches}x"
              f"{args.batch}{' beside a busy thread' if args.busy else ''}")  # fmt: skip
    for name in stores:
        if not available(name):
            print(json.dumps({"store": name, "skipped": "not installed"}) if args.json
                  else f"{name:15} not installed")  # fmt: skip
            continue
        command = [sys.executable, __file__, "--in-process", "--stores", name,
                   "--rows", str(args.rows), "--batches", str(args.batches),
                   "--batch", str(args.batch), "--seed", str(args.seed),
                   *(["--busy"] if args.busy else [])]  # fmt: skip
        figures = json.loads(subprocess.run(command, check=True, capture_output=True,
                                            text=True).stdout.strip().splitlines()[-1])  # fmt: skip
        if args.json:
            print(json.dumps(figures))
        else:
            print(
                f"{name:15} load {figures['load_rows_per_s']:>10,} rows/s  "
                f"apply {figures['operations_per_s']:>9,} ops/s  "
                f"RSS +{figures['rss_growth_mb']:>7} MB  disk {figures['disk_mb']:>7} MB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
