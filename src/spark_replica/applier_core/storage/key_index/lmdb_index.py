"""The key index in one LMDB environment: every committed row of every table, by key.

Layout (four named databases; one per table would cost every read transaction a scan of all
open handles, 2.6 µs per lookup with 2,000 tables against 0.27 µs with 2, measured):

* ``data``: ``generation (8 bytes) + key bytes`` → the row (keyed table), or → ``count (8
  bytes)`` followed by the exact row when the key encoding normalised it (keyless table,
  whose key is the row). A table's content lives under one generation; CREATE, TRUNCATE and
  a rewrite start a new one and DROP forgets it, so none of them copies the old rows: the
  old generation is what an undo goes back to, and is reclaimed a bounded amount per batch
  afterwards.
* ``tables``: table id → generation, keyed flag, row count, and the keyed table's
  ``layout.Layout`` when an ALTER placed its columns anew (the rows stay as stored).
* ``undo``: what the last batch changed, as it was before: table entries, data entries,
  the generations the batch created and retired, and for a table the batch appended to
  past its greatest key, that key (everything after it is the batch's).
* ``meta``: the last batch applied, the batch the undo records describe, the next
  generation, generations awaiting reclaim, the codec version.

A table's new content can be built outside the batches, a write transaction per chunk of
rows (``stage``: the rows an ALTER TABLE converted), under a negative *stage id*; the batch
that records the ALTER gives the table that generation (``TableChanges.adopt``), and the
stage id is forgotten once the batch is at the commit point (``unstage``). Stages that
outlive a crash are forgotten when the index is opened again (``drop_stages``).

Keys longer than LMDB's key limit are stored as a prefix and a BLAKE2b digest; a keyed
table's value then starts with the whole key.

Writes go through a writable shared mapping (LMDB's ``MDB_WRITEMAP``): a write transaction
changes its pages in the file's page cache instead of in copies LMDB allocates, so a flush
of 100,000 random keys does not hold a page copy per key in the process (about 150 MB of
anonymous memory for 50,000 keys of a 1M-row table without it, 9 MB with it, measured), and
the pages it wrote leave the resident set like the pages it read (``resident``). A
writable mapping of a sparse file turns a full disk into SIGBUS at the first write to a new
page, so the disk space a write transaction may need is reserved beforehand
(``posix_fallocate``): a full disk fails the write with ``KeyIndexError``, naming the file.

Threads: any number of readers and one writer. A reader holds its thread's gate for the
length of one short read transaction; growing the map (``set_mapsize``, which remaps the
file) takes every gate, as LMDB requires no transaction to be active. Each write
transaction publishes a view of the tables entry by LMDB transaction id, so a reader whose
snapshot is that transaction finds its table without reading ``tables``.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import shutil
import tempfile
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

from spark_replica_native import Cursor, Environment, MapFullError, Transaction

from spark_replica.applier_core.storage.interface import Key, Row
from spark_replica.applier_core.storage.key_index import resident
from spark_replica.applier_core.storage.key_index.changes import KeyOf, TableChanges
from spark_replica.applier_core.storage.key_index.codec import (
    CODEC_VERSION,
    READABLE_CODECS,
    decode_key,
    decode_row,
    encode_key,
    key_bytes,
)
from spark_replica.applier_core.storage.key_index.entries import (
    KEY_LIMIT,
    TABLE_ID,
    U64,
    TableEntry,
    bag_row,
    bag_value,
    data_keys,
    keyed_entries,
    keyed_row,
    keyed_value,
    pack_generations,
    stored_key,
    unpack_generations,
)
from spark_replica.applier_core.storage.key_index.errors import (
    KeyIndexDuplicate,
    KeyIndexError,
    KeyIndexIncompatible,
    KeyIndexOutOfDate,
)
from spark_replica.applier_core.storage.key_index.gates import ReaderGates
from spark_replica.applier_core.storage.key_index.layout import Layout
from spark_replica.applier_core.storage.key_index.verify import Difference, merge, prefixed

_T = TypeVar("_T")

_BATCH = b"batch"
_UNDO_BATCH = b"undo_batch"
_NEXT_GENERATION = b"next_generation"
_GARBAGE = b"garbage"
_CODEC = b"codec"
_UNDO_TABLE = b"T"
_UNDO_DATA = b"D"
_UNDO_CREATED = b"N"
_UNDO_RETIRED = b"R"
#: A table's generation → its greatest data key before the batch appended past it (empty:
#: the table had none); an undo deletes every entry of the generation after it.
_UNDO_ABOVE = b"A"
_ABSENT = b""
_PRESENT = b"\x01"

#: Data entries of retired generations deleted per batch, so a dropped big table costs
#: each flush a few milliseconds, not one flush seconds.
RECLAIM_PER_BATCH = 20_000
#: Entries deleted, and row changes made or undone, per write transaction: what one commit
#: maps of the file stays a few tens of MB (``apply``).
RECLAIM_PER_TXN = 4_096
CHANGES_PER_TXN = 512
#: Row changes per write transaction after a transaction whose changes were all new keys
#: past the table's greatest (a bulk load's run: its pages are new ones at the end).
APPENDED_PER_TXN = 16_384
#: Rows per write transaction in ``rebuild`` and ``verify``.
CHUNK_ROWS = 50_000
#: Entries per read transaction when scanning a table.
SCAN_CHUNK = 1_000
#: Disk space kept reserved ahead of what a write transaction may have written so far: an
#: eighth of the file, within these bounds (a small index does not take 64 MiB of disk); and
#: what one put may write besides its key and value (a copied leaf page, a split).
RESERVE_BYTES = 64 << 20
MIN_RESERVE_BYTES = 4 << 20
PUT_PAGES_BYTES = 2 * 4096
#: What deleting one of a run of neighbouring keys may write: each leaf page changes once
#: for many of them.
IN_ORDER_DELETE_BYTES = 512


@dataclass(frozen=True, slots=True)
class _View:
    """The tables as of LMDB transaction ``txn_id``."""

    txn_id: int
    batch: int
    tables: dict[int, TableEntry]


class LmdbKeyIndex:
    """The key index of every table, in the LMDB environment at ``path`` (a directory).

    ``sync``: each write transaction is on disk when it returns; once a batch's last one
    is, the batch is the point recovery goes back to. ``resident_limit``: once the data
    file is bigger, the pages reads mapped are dropped from the process's resident set after
    each write transaction and every so many reads (``resident.ResidentBound``; None:
    never), so the process holds about that much of the file at most.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        map_size: int = 1 << 30,
        sync: bool = True,
        max_readers: int = 512,
        max_spare_txns: int = 16,
        resident_limit: int | None = None,
    ) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)
        self.path = Path(path)
        self._env = Environment(
            str(path), map_size=map_size, max_dbs=4, sync=sync, metasync=sync,
            readahead=False, max_readers=max_readers, max_spare_txns=max_spare_txns,
            writemap=True,
        )  # fmt: skip
        self._data_file = self.path.resolve() / "data.mdb"
        #: Bytes of the data file from its start known to have disk space.
        self._reserved = 0
        #: The used bytes when the running write transaction began, and what its puts may
        #: have written since (``_will_write``).
        self._txn_base = 0
        self._txn_bytes = 0
        self._meta = self._env.open_db(b"meta")
        self._tables = self._env.open_db(b"tables")
        self._undo = self._env.open_db(b"undo")
        self._data = self._env.open_db(b"data")
        self._resident = resident.ResidentBound(self._data_file, resident_limit, self._used_bytes)
        self._write_lock = threading.RLock()
        self._gates = ReaderGates()
        self._closed = False
        try:
            self._view = self._open()
        except BaseException:
            self._env.close()
            raise

    def _open(self) -> _View:
        with self._env.begin(write=True) as txn:
            codec = txn.get(_CODEC, db=self._meta)
            if codec is None or codec in READABLE_CODECS:
                # An older codec's rows read alike; once rows are written as this one
                # writes them, a program of that codec must rebuild the index, not misread it.
                txn.put(_CODEC, CODEC_VERSION, db=self._meta)
            elif codec != CODEC_VERSION:
                raise KeyIndexIncompatible(
                    f"the key index at {self.path} was written by codec {codec!r}, this is "
                    f"{CODEC_VERSION!r}"
                )
            return self._read_view(txn)

    @staticmethod
    def remove(path: str | Path) -> None:
        """Delete the index at ``path`` (closed), before a rebuild from the tables."""
        shutil.rmtree(path, ignore_errors=True)

    # -- reading -------------------------------------------------------------------------

    @property
    def batch(self) -> int:
        """The last batch applied (0 for a new index)."""
        return self._view.batch

    @property
    def map_size(self) -> int:
        return int(self._env.info()["map_size"])

    def get(self, table_id: int, key: Key) -> Row | None:
        """The row with ``key``, None when there is none (or no such table)."""
        raw = encode_key(key)
        value = self._read_entry(table_id, raw)
        if value is None:
            return None
        return decode_row(value) if len(raw) < KEY_LIMIT else keyed_row(raw, value)[1]

    def present(self, table_id: int, keys: Sequence[Key]) -> list[bool]:
        """Whether the table has a row with each of ``keys`` (one read transaction for all:
        the duplicate checks of a rows event's inserts)."""
        if not keys:
            return []
        with self._reading() as txn:
            table = self._table(txn, table_id)
            cursor = txn.cursor(db=self._data)
            top = None if table is None else _greatest(cursor, table.prefix)
            if table is None or top is None:
                self._resident.read()
                return [False] * len(keys)
            # A key past the table's greatest is not there: appended keys (ascending ids)
            # cost no lookup, and map no page (the others are counted as reads).
            stored = data_keys(table.prefix, list(keys))
            self._resident.read(1 + sum(map(top.__ge__, stored)))
            return cursor.contains(stored, above=top)

    def count(self, table_id: int, row: Row) -> int:
        """How many times a keyless table holds ``row``."""
        value = self._read_entry(table_id, key_bytes(row)[0])
        return 0 if value is None else int(U64.unpack_from(value)[0])

    def _read_entry(self, table_id: int, raw: bytes) -> bytes | None:
        """The hot path of ``get`` and ``count``: what ``_reading`` does, inline."""
        with self._gates.mine():
            if self._closed:
                raise KeyIndexError("the key index is closed")
            txn = self._env.begin()
            try:
                table = self._table(txn, table_id)
                if table is None:
                    return None
                return txn.get(table.prefix + stored_key(raw), db=self._data)
            finally:
                txn.abort()
                self._resident.read()

    def layout(self, table_id: int) -> Layout | None:
        """Where the table's columns lie in its stored rows (None: the identity, or no
        such table). Rows ``get`` and ``keyed_items`` give are as stored."""
        with self._reading() as txn:
            table = self._table(txn, table_id)
        return None if table is None else table.layout

    def size(self, table_id: int) -> int:
        """The table's rows (a keyless row counted as often as it occurs)."""
        with self._reading() as txn:
            table = self._table(txn, table_id)
        return 0 if table is None else table.rows

    def exists(self, table_id: int) -> bool:
        with self._reading() as txn:
            return self._table(txn, table_id) is not None

    def table_ids(self) -> list[int]:
        return sorted(self._view.tables)

    @contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        """Reads that all see one batch. Keep it short: it holds off map growth (the writer
        waits) and an old snapshot keeps LMDB from reusing pages."""
        with self._reading() as txn:
            yield Snapshot(self, txn)

    def keyed_items(self, table_id: int) -> Iterator[tuple[Key, Row]]:
        """A keyed table's keys (as encoded: normalised) and rows, in key-bytes order.

        Read in chunks of short transactions: a batch applied during the scan may show in
        the rows not yet read. The scan stops with KeyIndexError if the table is dropped or
        replaced meanwhile."""
        for stored, value in self._scan(table_id, keyed=True):
            raw, row = keyed_row(stored, value)
            yield decode_key(raw), row

    def bag_items(self, table_id: int) -> Iterator[tuple[Row, int]]:
        """A keyless table's distinct rows and their counts (chunked as ``keyed_items``)."""
        for stored, value in self._scan(table_id, keyed=False):
            yield bag_row(stored, value)

    def rows(self, table_id: int) -> Iterator[Row]:
        """Every row of the table; a keyless row as often as it occurs."""
        table = self._view.tables.get(table_id)
        if table is None:
            with self._reading() as txn:
                table = self._table(txn, table_id)
            if table is None:
                return
        if table.keyed:
            for _, row in self.keyed_items(table_id):
                yield row
        else:
            for row, count in self.bag_items(table_id):
                for _ in range(count):
                    yield row

    def _scan(self, table_id: int, *, keyed: bool) -> Iterator[tuple[bytes, bytes]]:
        start: bytes | None = None
        first: TableEntry | None = None
        while True:
            chunk: list[tuple[bytes, bytes]] = []
            with self._reading() as txn:
                table = self._table(txn, table_id)
                if first is None:
                    if table is None:
                        return
                    if table.keyed != keyed:
                        kind = "keyed" if table.keyed else "keyless"
                        raise KeyIndexError(f"table {table_id} is {kind}")
                    first = table
                elif table is None or table.prefix != first.prefix:
                    raise KeyIndexError(f"table {table_id} was dropped or replaced in a scan")
                prefix = first.prefix
                cursor = txn.cursor(db=self._data)
                found = cursor.set_range(prefix + (start or b""))
                if found and start is not None and cursor.key() == prefix + start:
                    found = cursor.next()
                while found and len(chunk) < SCAN_CHUNK:
                    key = cursor.key()
                    if not key.startswith(prefix):
                        break
                    chunk.append((key[8:], cursor.value()))
                    found = cursor.next()
                # A scan maps what it reads: counted in reads' worth of bytes (``READ_MAPS``).
                mapped = sum(len(k) + len(v) for k, v in chunk)
                self._resident.read(1 + mapped // resident.READ_MAPS)
            yield from chunk
            if len(chunk) < SCAN_CHUNK:
                return
            start = chunk[-1][0]

    def _table(self, txn: Transaction, table_id: int) -> TableEntry | None:
        view = self._view
        if txn.id() == view.txn_id:
            return view.tables.get(table_id)
        raw = txn.get(TABLE_ID.pack(table_id), db=self._tables)
        return None if raw is None else TableEntry.parse(raw)

    @contextmanager
    def _reading(self) -> Iterator[Transaction]:
        with self._gates.mine():
            if self._closed:
                raise KeyIndexError("the key index is closed")
            txn = self._env.begin()
            try:
                yield txn
            finally:
                txn.abort()

    # -- writing -------------------------------------------------------------------------

    def apply(self, batch: int, writes: Mapping[int, TableChanges]) -> None:
        """Apply batch ``batch`` (the next one), keeping what it replaces as the undo
        records (the previous batch's are discarded: call this only once the previous
        batch's commit point is recorded).

        A batch is a run of write transactions: the first discards the previous undo
        records and does the table-level changes (drop, replace, adopt), each next one up
        to ``CHANGES_PER_TXN`` row changes with their undo records, the last names the
        batch applied. Each commit touches every page its transaction wrote, and the kernel
        maps the cached pages around each (fault-around): one transaction of 30,000 random
        changes mapped the whole file. After a transaction whose changes were all new keys
        past the table's greatest (a bulk load), the next takes ``APPENDED_PER_TXN``: such
        runs write new pages only, and each commit syncs (beside busy threads, each waits
        for the GIL after it too: 50,000 appended rows took 0.69 s in 98 transactions,
        0.14 s in 5). Until the last one the index is at the batch before,
        with part of this one applied (readers see the batch's keys through the engine's
        overlay until its commit point); ``undo`` or the next ``apply`` of the same batch
        takes that part out again, as does ``align`` after a crash."""
        with self._write_lock:
            self._check_open()
            if batch != self.batch + 1:
                raise KeyIndexError(f"batch {batch} applied to a key index at {self.batch}")
            if self._undo_batch_number() == batch:  # part of it, left by a failed apply
                self._undo_changes(batch)
            tables = self._write(lambda txn: self._begin_batch(txn, batch, writes), writes)
            for table_id, table, undo in tables:
                changes = writes[table_id]
                items = iter(changes.puts.items() if table.keyed else changes.deltas.items())
                size = CHANGES_PER_TXN
                while part := list(itertools.islice(items, size)):
                    change = partial(self._change, table_id=table_id, table=table, items=part,
                                     undo=undo)  # fmt: skip
                    table, appended = self._write(change)
                    # A run of new keys past the greatest (a bulk load) writes only new pages
                    # at the end: larger transactions, fewer commits (each one syncs).
                    size = APPENDED_PER_TXN if appended else CHANGES_PER_TXN
            self._write(lambda txn: txn.put(_BATCH, U64.pack(batch), db=self._meta))
            self._reclaim_in_parts(RECLAIM_PER_BATCH)

    def undo(self, expected_batch: int) -> None:
        """Go back from batch ``expected_batch`` (applied, or part of it) to the one
        before it."""
        with self._write_lock:
            self._check_open()
            if self.batch not in (expected_batch, expected_batch - 1):
                raise KeyIndexError(
                    f"undo of batch {expected_batch} asked of a key index at {self.batch}"
                )
            self._undo_changes(expected_batch)

    def align(self, recorded_batch: int) -> None:
        """Bring the index to the recorded commit point: nothing to do, or undo the one
        batch applied after it (or the part of it a failure or crash left); anything else
        raises KeyIndexOutOfDate."""
        with self._write_lock:
            undo_batch = self._undo_batch_number()
            if self.batch == recorded_batch and undo_batch != recorded_batch + 1:
                return
            if self.batch in (recorded_batch, recorded_batch + 1) and (
                undo_batch == recorded_batch + 1
            ):
                self.undo(recorded_batch + 1)  # applied, or a part of it
                return
            raise KeyIndexOutOfDate(self.batch, recorded_batch)

    def rebuild(self, table_id: int, rows: Iterable[Row], key_of: KeyOf | None) -> None:
        """Replace the table's content with ``rows`` (creating the table), a chunk of rows
        per write transaction so memory stays bounded. Not undoable: it discards the undo
        records; ``set_batch`` names the batch the rebuilt index stands for."""
        self._rebuild(table_id, rows, key_of, None)

    def _rebuild(
        self,
        table_id: int,
        rows: Iterable[Row],
        key_of: KeyOf | None,
        duplicates: list[Difference] | None,
    ) -> None:
        with self._write_lock:
            self._check_open()
            generation = self._write(self._allocate_generation)
            for chunk in _chunks(rows, CHUNK_ROWS):

                def load(txn: Transaction, chunk: list[Row] = chunk) -> int:
                    return self._load_chunk(txn, generation, chunk, key_of, duplicates)

                self._write(load)

            def install(txn: Transaction) -> None:
                self._forget(txn, table_id)
                self._install(txn, table_id, generation, key_of)

            self._write(install)

    def stage(self, rows: Iterable[Row], key_of: KeyOf | None) -> int:
        """Load ``rows`` as a new content outside any batch, a write transaction per chunk
        (the undo records stay as they are); the stage id (negative) it is read under until
        a batch adopts it. A key twice raises KeyIndexDuplicate (naming one of its rows);
        an error from ``rows`` or a crash meanwhile leaves nothing staged (the rows loaded
        so far are reclaimed)."""
        with self._write_lock:
            self._check_open()
            generation = self._write(self._allocate_generation)
            for chunk in _chunks(rows, CHUNK_ROWS):

                def load(txn: Transaction, chunk: list[Row] = chunk) -> int:
                    return self._load_chunk(txn, generation, chunk, key_of)

                try:
                    self._write(load)
                except _ChunkDuplicate as error:
                    raise KeyIndexDuplicate(self._duplicate(error.items)) from None
            stage = -generation
            self._write(lambda txn: self._install(txn, stage, generation, key_of))
            return stage

    def unstage(self, stage: int) -> None:
        """Forget stage ``stage``; its rows are reclaimed unless a table adopted them."""
        with self._write_lock:
            self._check_open()
            self._write(lambda txn: self._unstage(txn, stage))

    def drop_stages(self) -> None:
        """Forget every stage (left by a crash: at opening, before any batch)."""
        for stage in self.table_ids():
            if stage < 0:
                self.unstage(stage)

    def drop_table(self, table_id: int) -> None:
        """Forget a table outside any batch (during a rebuild); discards the undo records."""
        with self._write_lock:
            self._check_open()
            self._write(lambda txn: self._forget(txn, table_id))

    def set_batch(self, batch: int) -> None:
        """Name the batch the index stands for (after a rebuild); discards the undo
        records."""
        with self._write_lock:
            self._check_open()

            def write(txn: Transaction) -> None:
                self._discard_undo(txn)
                txn.put(_BATCH, U64.pack(batch), db=self._meta)

            self._write(write)

    def reclaim(self, budget: int | None = None) -> int:
        """Delete the entries of retired generations (all of them by default); the number
        of generations left. ``apply`` reclaims ``RECLAIM_PER_BATCH`` entries each batch."""
        with self._write_lock:
            self._check_open()
            return self._reclaim_in_parts(budget)

    def _reclaim_in_parts(self, budget: int | None) -> int:
        """``_reclaim`` in write transactions of ``RECLAIM_PER_TXN`` deletes at most."""
        left = budget
        while True:
            part = RECLAIM_PER_TXN if left is None else min(left, RECLAIM_PER_TXN)
            deleted, garbage = self._write(partial(self._reclaim, budget=part))
            if left is not None:
                left -= deleted
            if deleted < part or left == 0:  # fewer: no garbage left
                return len(garbage)

    def close(self) -> None:
        with self._write_lock:
            if self._closed:
                return
            with self._gates.all_held():
                self._closed = True
                self._env.close()

    def __enter__(self) -> LmdbKeyIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise KeyIndexError("the key index is closed")

    def _write(
        self,
        body: Callable[[Transaction], _T],
        writes: Mapping[int, TableChanges] | None = None,
    ) -> _T:
        """Run ``body`` in a write transaction and publish the new view; when the map is
        full, grow it (doubling) and run ``body`` again."""
        self._grow_if_nearly_full()
        while True:
            self._txn_base, self._txn_bytes = self._used_bytes(), 0
            self._reserve(self._txn_base + self._margin())
            txn = self._env.begin(write=True)
            try:
                result = body(txn)
                view = self._read_view(txn)
                txn.commit()
            except MapFullError:
                txn.abort()
                _check_reiterable(writes)
                self._grow(self.map_size * 2)
                continue
            except BaseException:
                txn.abort()
                raise
            self._view = view
            self._resident.wrote()
            return result

    def _used_bytes(self) -> int:
        return (int(self._env.info()["last_pgno"]) + 1) * int(self._env.stat()["psize"])

    def _grow_if_nearly_full(self) -> None:
        if self._used_bytes() * 4 > self.map_size * 3:
            self._grow(self.map_size * 2)

    def _will_write(self, nbytes: int, *, pages: int = PUT_PAGES_BYTES) -> None:
        """The running write transaction is about to put ``nbytes`` of key and value (and
        may write ``pages`` bytes of pages besides): keep disk space reserved ahead of all
        it may have written."""
        self._txn_bytes += nbytes + pages
        margin = self._margin()
        if self._txn_base + self._txn_bytes + margin // 2 > self._reserved:
            self._reserve(self._txn_base + self._txn_bytes + margin)

    def _margin(self) -> int:
        """How far ahead of the writes disk space is kept reserved."""
        return min(RESERVE_BYTES, max(MIN_RESERVE_BYTES, self._txn_base // 8))

    def _reserve(self, end: int) -> None:
        """Give the data file disk space up to ``end`` bytes (within the map: LMDB refuses
        a transaction that would outgrow it), so writing through the mapping never meets a
        full disk."""
        end = min(end, self.map_size)
        if end <= self._reserved:
            return
        try:
            fd = os.open(self._data_file, os.O_RDWR)
            try:
                os.posix_fallocate(fd, self._reserved, end - self._reserved)
            finally:
                os.close(fd)
        except OSError as error:
            raise KeyIndexError(
                f"no disk space for the key index: {end - self._reserved:,} bytes more of "
                f"{self._data_file} could not be reserved ({error.strerror or error})"
            ) from error
        self._reserved = end

    def _grow(self, size: int) -> None:
        with self._gates.all_held():
            self._env.set_mapsize(size)
            self._resident.remapped()

    def _read_view(self, txn: Transaction) -> _View:
        tables = {TABLE_ID.unpack(k)[0]: TableEntry.parse(v) for k, v in txn.items(db=self._tables)}
        return _View(txn.id(), self._meta_int(txn, _BATCH), tables)

    def _meta_int(self, txn: Transaction, name: bytes) -> int:
        raw = txn.get(name, db=self._meta)
        return 0 if raw is None else int(U64.unpack(raw)[0])

    def _undo_batch_number(self) -> int:
        with self._reading() as txn:
            return self._meta_int(txn, _UNDO_BATCH)

    def _allocate_generation(self, txn: Transaction) -> int:
        generation = self._meta_int(txn, _NEXT_GENERATION) + 1
        txn.put(_NEXT_GENERATION, U64.pack(generation), db=self._meta)
        # Garbage until installed: a crash in between leaves nothing unreclaimed.
        self._add_garbage(txn, [generation])
        return generation

    def _add_garbage(self, txn: Transaction, generations: list[int]) -> None:
        if generations:
            garbage = unpack_generations(txn.get(_GARBAGE, db=self._meta))
            txn.put(_GARBAGE, pack_generations(garbage + generations), db=self._meta)

    def _discard_undo(self, txn: Transaction) -> None:
        """The last batch can no longer be undone: what it retired becomes garbage."""
        self._add_garbage(txn, unpack_generations(txn.get(_UNDO_RETIRED, db=self._undo)))
        txn.drop(self._undo, delete=False)
        txn.put(_UNDO_BATCH, U64.pack(0), db=self._meta)

    def _begin_batch(
        self, txn: Transaction, batch: int, writes: Mapping[int, TableChanges]
    ) -> list[tuple[int, TableEntry, bool]]:
        """A batch's first write transaction: the previous undo records discarded, the
        table-level changes; the tables whose rows change next, with whether their changes
        need undo records (not in a content the batch created)."""
        self._discard_undo(txn)
        txn.put(_UNDO_BATCH, U64.pack(batch), db=self._meta)
        created: list[int] = []
        retired: list[int] = []
        changing: list[tuple[int, TableEntry, bool]] = []
        for table_id, changes in writes.items():
            name = TABLE_ID.pack(table_id)
            raw = txn.get(name, db=self._tables)
            txn.put(_UNDO_TABLE + name, _ABSENT if raw is None else raw, db=self._undo)
            table = None if raw is None else TableEntry.parse(raw)
            if changes.drop and table is not None:
                retired.append(table.generation)
                table = None
            if changes.replace is not None or changes.adopt is not None:
                if table is not None:
                    retired.append(table.generation)
            if changes.replace is not None:
                generation = self._meta_int(txn, _NEXT_GENERATION) + 1
                txn.put(_NEXT_GENERATION, U64.pack(generation), db=self._meta)
                created.append(generation)
                rows = self._load(txn, generation, changes.replace, changes.key_of)
                table = TableEntry(U64.pack(generation), changes.key_of is not None, rows)
            elif changes.adopt is not None:
                staged = txn.get(TABLE_ID.pack(changes.adopt), db=self._tables)
                if staged is None:
                    raise KeyIndexError(f"batch {batch} adopts stage {changes.adopt}, unknown")
                table = TableEntry.parse(staged)  # not created: an undo keeps the staged rows
            if changes.layout is not None:
                if table is None or not table.keyed:
                    raise KeyIndexError(f"batch {batch} lays out table {table_id}, not keyed")
                table = dataclasses.replace(table, layout=changes.layout)
            if changes.puts or changes.deltas:
                if table is None:
                    raise KeyIndexError(f"batch {batch} changes table {table_id}, unknown")
                if table.keyed and changes.deltas:
                    raise KeyIndexError("count changes for a keyed table")
                if not table.keyed and changes.puts:
                    raise KeyIndexError("keyed changes for a keyless table")
                changing.append((table_id, table, table.generation not in created))
            if table is None:
                txn.delete(name, db=self._tables)
            else:
                txn.put(name, table.pack(), db=self._tables)
        # What the batch created and retired, from its first transaction on: an undo of a
        # part of it reclaims and keeps them as the whole batch's undo would.
        txn.put(_UNDO_CREATED, pack_generations(created), db=self._undo)
        txn.put(_UNDO_RETIRED, pack_generations(retired), db=self._undo)
        return changing

    def _change(
        self,
        txn: Transaction,
        table_id: int,
        table: TableEntry,
        items: list[tuple[Any, Any]],
        undo: bool,
    ) -> tuple[TableEntry, bool]:
        """Part of a table's row changes (``puts`` items of a keyed table, ``deltas`` items
        of a keyless one), with their undo records when ``undo``; the table's entry after
        them, recorded, and whether every change was a new key past the table's greatest."""
        appended = False
        if table.keyed:
            rows, appended = self._change_keyed(txn, table, items, undo)
        else:
            rows = self._change_counts(txn, table, items, undo)
        table = dataclasses.replace(table, rows=rows)
        txn.put(TABLE_ID.pack(table_id), table.pack(), db=self._tables)
        return table, appended

    def _change_keyed(
        self,
        txn: Transaction,
        table: TableEntry,
        items: list[tuple[Key, Row | None]],
        undo: bool,
    ) -> tuple[int, bool]:
        """``_change`` of a keyed table: the rows it has after them, and whether every item
        was a new key past the table's greatest. The entries before are
        read in one go, the puts and their undo records written in key order in one go each
        (LMDB's loops, not Python's); entries past the table's greatest key (a bulk load of
        ascending ids) need neither a read nor an undo record of their own."""
        data, prefix, rows, layout = self._data, table.prefix, table.rows, table.layout
        changes = keyed_entries(prefix, items, layout)
        cursor = txn.cursor(db=data)
        # Entries past the table's greatest key are new (ascending ids): no lookup, and
        # one undo record for them all, the greatest key they came after.
        top = _greatest(cursor, prefix)
        split = 0 if top is None else bisect_right(changes, top, key=_first)
        # Each change below it reads a B-tree path through the mapping: counted as reads,
        # so the pages they mapped are released as it goes (the appended ones all write
        # the same rightmost path).
        self._resident.read(split + 1)
        if undo and split < len(changes):
            above = _UNDO_ABOVE + prefix
            self._will_write(len(above) + len(top or b""))
            txn.put(above, top or b"", db=self._undo, overwrite=False)
        settled = changes[:split]
        previous = dict(cursor.getmulti([stored for stored, _ in settled])) if settled else {}
        puts: list[tuple[bytes, bytes]] = []
        written = 0
        for stored, value in settled:
            if value is None:
                if stored in previous:
                    self._will_write(len(stored))
                    txn.delete(stored, db=data)
                    rows -= 1
                continue
            puts.append((stored, value))
            written += len(stored) + len(value)
            if stored not in previous:
                rows += 1
        for stored, value in changes[split:]:
            if value is not None:
                puts.append((stored, value))
                written += len(stored) + len(value)
                rows += 1
        if puts:
            self._will_write(written, pages=len(puts) * PUT_PAGES_BYTES)
            cursor.putmulti(puts)
        if undo and settled:
            records = []
            written = 0
            for stored, _ in settled:
                before = previous.get(stored)
                record = (_UNDO_DATA + stored, _ABSENT if before is None else _PRESENT + before)
                records.append(record)
                written += len(record[0]) + len(record[1])
            self._will_write(written, pages=len(records) * PUT_PAGES_BYTES)
            txn.cursor(db=self._undo).putmulti(records, overwrite=False)
        return rows, split == 0

    def _change_counts(
        self,
        txn: Transaction,
        table: TableEntry,
        items: list[tuple[Row, int]],
        undo: bool,
    ) -> int:
        """``_change`` of a keyless table: the rows it has after them."""
        data, prefix, rows = self._data, table.prefix, table.rows
        touched = self._resident.read
        for item, change in items:
            touched()
            raw, exact = key_bytes(item)
            stored = prefix + stored_key(raw)
            previous = txn.get(stored, db=data)
            count = 0 if previous is None else int(U64.unpack_from(previous)[0])
            new_count = max(count + change, 0)
            rows += new_count - count
            if new_count:
                value = bag_value(new_count, raw, exact, item, previous)
                self._will_write(len(stored) + len(value))
                txn.put(stored, value, db=data)
            elif previous is not None:
                self._will_write(len(stored))
                txn.delete(stored, db=data)
            if undo:
                before = _ABSENT if previous is None else _PRESENT + previous
                self._will_write(len(stored) + len(before))
                txn.put(_UNDO_DATA + stored, before, db=self._undo, overwrite=False)
        return rows

    def _load(
        self,
        txn: Transaction,
        generation: int,
        rows: Iterable[Row],
        key_of: KeyOf | None,
    ) -> int:
        loaded = 0
        for chunk in _chunks(rows, CHUNK_ROWS):
            loaded += self._load_chunk(txn, generation, chunk, key_of)
        return loaded

    def _load_chunk(
        self,
        txn: Transaction,
        generation: int,
        rows: list[Row],
        key_of: KeyOf | None,
        duplicates: list[Difference] | None = None,
    ) -> int:
        """Put ``rows`` under ``generation`` (sorted first: neighbouring pages); the count
        of rows added. A key twice raises KeyIndexError, or is listed in ``duplicates``."""
        prefix = U64.pack(generation)
        if key_of is not None:
            items = []
            for row in rows:
                raw = encode_key(key_of(row))
                items.append((prefix + stored_key(raw), keyed_value(raw, row)))
            items.sort()
            self._will_write(sum(len(stored) + len(value) for stored, value in items))
            if duplicates is None:
                cursor = txn.cursor(db=self._data)
                # Past every key already there (rows read in key order): append, which fills
                # pages instead of splitting them in half.
                append = not cursor.last() or cursor.key() < items[0][0]
                consumed, added = cursor.putmulti(items, overwrite=False, append=append)
                if added != consumed:
                    raise _ChunkDuplicate(generation, items)
                return len(rows)
            added = 0
            for stored, value in items:
                if txn.put(stored, value, db=self._data, overwrite=False):
                    added += 1
                else:
                    raw, row = keyed_row(stored[8:], value)
                    duplicates.append(Difference("duplicate", decode_key(raw), table_row=row))
            return added
        counts: dict[bytes, tuple[int, bytes, bool, Row]] = {}
        for row in rows:
            raw, exact = key_bytes(row)
            stored = prefix + stored_key(raw)
            found = counts.get(stored)
            counts[stored] = (1, raw, exact, row) if found is None else (found[0] + 1, *found[1:])
        for stored in sorted(counts):
            count, raw, exact, row = counts[stored]
            previous = txn.get(stored, db=self._data)
            if previous is not None:
                count += int(U64.unpack_from(previous)[0])
            value = bag_value(count, raw, exact, row, previous)
            self._will_write(len(stored) + len(value))
            txn.put(stored, value, db=self._data)
        return len(rows)

    def _duplicate(self, items: list[tuple[bytes, bytes]]) -> Row:
        """A row of ``items`` (a chunk refused for a key twice, sorted) whose key occurs
        twice in it or is already in the index."""
        previous = None
        with self._reading() as txn:
            for stored, value in items:
                if stored == previous or txn.get(stored, db=self._data) is not None:
                    return keyed_row(stored[8:], value)[1]
                previous = stored
        raise KeyIndexError("a chunk refused for a key twice holds none")  # pragma: no cover

    def _install(
        self,
        txn: Transaction,
        table_id: int,
        generation: int,
        key_of: KeyOf | None,
    ) -> None:
        """Name ``generation`` (loaded) ``table_id``'s content; it is no garbage then."""
        prefix = U64.pack(generation)
        rows = 0
        cursor = txn.cursor(db=self._data)
        found = cursor.set_range(prefix)
        while found and cursor.key().startswith(prefix):
            rows += 1 if key_of is not None else int(U64.unpack_from(cursor.value())[0])
            found = cursor.next()
        garbage = unpack_generations(txn.get(_GARBAGE, db=self._meta))
        garbage.remove(generation)
        txn.put(_GARBAGE, pack_generations(garbage), db=self._meta)
        table = TableEntry(prefix, key_of is not None, rows)
        txn.put(TABLE_ID.pack(table_id), table.pack(), db=self._tables)

    def _unstage(self, txn: Transaction, stage: int) -> None:
        raw = txn.pop(TABLE_ID.pack(stage), db=self._tables)
        if raw is None:
            return
        generation = TableEntry.parse(raw).generation
        entries = txn.items(db=self._tables)
        if all(TableEntry.parse(raw).generation != generation for _, raw in entries):
            self._add_garbage(txn, [generation])

    def _forget(self, txn: Transaction, table_id: int) -> None:
        self._discard_undo(txn)
        name = TABLE_ID.pack(table_id)
        raw = txn.pop(name, db=self._tables)
        if raw is not None:
            self._add_garbage(txn, [TableEntry.parse(raw).generation])

    def _undo_changes(self, batch: int) -> None:
        """Take batch ``batch`` (applied, or part of it) out: the rows' undo records in
        write transactions of ``CHANGES_PER_TXN`` (each deletes the records it restored, so
        a crash in between leaves the rest to the next undo), then the tables' entries."""
        if self._undo_batch_number() != batch:
            raise KeyIndexError(f"the key index holds no undo records for batch {batch}")
        while self._write(self._restore_rows):
            pass
        while self._write(self._remove_appended):
            pass
        self._write(lambda txn: self._restore_tables(txn, batch))

    def _restore_rows(self, txn: Transaction) -> int:
        """Restore up to ``CHANGES_PER_TXN`` rows from their undo records, deleting those;
        how many."""
        cursor = txn.cursor(db=self._undo)
        restored = 0
        found = cursor.set_range(_UNDO_DATA)
        while found and restored < CHANGES_PER_TXN and cursor.key()[:1] == _UNDO_DATA:
            stored, before = cursor.key()[1:], cursor.value()
            self._will_write(len(stored) + len(before))
            if before == _ABSENT:
                txn.delete(stored, db=self._data)
            else:
                txn.put(stored, before[1:], db=self._data)
            found = cursor.delete()
            restored += 1
        return restored

    def _remove_appended(self, txn: Transaction) -> int:
        """Delete up to ``CHANGES_PER_TXN`` entries a batch appended past a table's greatest
        key (its ``_UNDO_ABOVE`` records), deleting each record once its entries are gone;
        how many entries."""
        records = txn.cursor(db=self._undo)
        data = txn.cursor(db=self._data)
        removed = 0
        found = records.set_range(_UNDO_ABOVE)
        while found and removed < CHANGES_PER_TXN and records.key()[:1] == _UNDO_ABOVE:
            prefix, top = records.key()[1:], records.value()
            start = top if top else prefix
            here = data.set_range(start)
            if here and top and data.key() == top:
                here = data.next()
            while here and removed < CHANGES_PER_TXN and data.key().startswith(prefix):
                self._will_write(0, pages=IN_ORDER_DELETE_BYTES)
                here = data.delete()
                removed += 1
            if here and data.key().startswith(prefix):
                break  # more of them: the next transaction
            found = records.delete()
        return removed

    def _restore_tables(self, txn: Transaction, batch: int) -> None:
        cursor = txn.cursor(db=self._undo)
        found = cursor.set_range(_UNDO_TABLE)
        while found and cursor.key()[:1] == _UNDO_TABLE:
            name, before = cursor.key()[1:], cursor.value()
            if before == _ABSENT:
                txn.delete(name, db=self._tables)
            else:
                txn.put(name, before, db=self._tables)
            found = cursor.next()
        self._add_garbage(txn, unpack_generations(txn.get(_UNDO_CREATED, db=self._undo)))
        txn.drop(self._undo, delete=False)
        txn.put(_UNDO_BATCH, U64.pack(0), db=self._meta)
        txn.put(_BATCH, U64.pack(batch - 1), db=self._meta)

    def _reclaim(self, txn: Transaction, budget: int) -> tuple[int, list[int]]:
        """Delete up to ``budget`` entries of retired generations; how many it deleted, and
        the generations left."""
        garbage = unpack_generations(txn.get(_GARBAGE, db=self._meta))
        deleted = 0
        cursor = txn.cursor(db=self._data)
        while garbage and deleted < budget:
            prefix = U64.pack(garbage[0])
            found = cursor.set_range(prefix)
            while found and cursor.key().startswith(prefix) and deleted < budget:
                self._will_write(0, pages=IN_ORDER_DELETE_BYTES)
                found = cursor.delete()
                deleted += 1
            if found and cursor.key().startswith(prefix):
                break
            garbage.pop(0)
        txn.put(_GARBAGE, pack_generations(garbage), db=self._meta)
        return deleted, garbage

    # -- checking ------------------------------------------------------------------------

    def verify(
        self, table_id: int, rows: Iterable[Row], key_of: KeyOf | None, *, limit: int = 1000
    ) -> list[Difference]:
        """The differences between the table's ``rows`` and the index (at most ``limit``).

        The rows go into a scratch LMDB environment in a temporary directory, sorted by
        key bytes as the index is, then both are walked side by side: memory stays bounded
        whatever the table's size and order. The index is read in one snapshot, its rows
        through the table's layout."""
        with tempfile.TemporaryDirectory(prefix="key-index-verify-") as scratch_dir:
            scratch = LmdbKeyIndex(scratch_dir, map_size=1 << 24, sync=False)
            try:
                differences: list[Difference] = []
                scratch._rebuild(0, rows, key_of, differences)
                differences += self._compare(table_id, scratch, key_of, limit)
            finally:
                scratch.close()
        return differences[:limit]

    def _compare(
        self, table_id: int, scratch: LmdbKeyIndex, key_of: KeyOf | None, limit: int
    ) -> list[Difference]:
        keyed = key_of is not None
        with self._reading() as txn:
            table = self._table(txn, table_id)
            layout = None
            if table is None:
                mine: Iterator[tuple[bytes, bytes]] = iter(())
            elif table.keyed != keyed:
                return [Difference("kind")]
            else:
                mine = prefixed(txn.cursor(db=self._data), table.prefix)
                layout = table.layout
            theirs = scratch._scan(0, keyed=keyed)
            return merge(theirs, mine, keyed, limit, layout)


class Snapshot:
    """Reads in one LMDB read transaction: they all see the same batch."""

    def __init__(self, index: LmdbKeyIndex, txn: Transaction) -> None:
        self._index = index
        self._txn = txn

    @property
    def batch(self) -> int:
        return self._index._meta_int(self._txn, _BATCH)

    def get(self, table_id: int, key: Key) -> Row | None:
        table = self._index._table(self._txn, table_id)
        if table is None:
            return None
        raw = encode_key(key)
        value = self._txn.get(table.prefix + stored_key(raw), db=self._index._data)
        if value is None:
            return None
        return decode_row(value) if len(raw) < KEY_LIMIT else keyed_row(raw, value)[1]

    def count(self, table_id: int, row: Row) -> int:
        table = self._index._table(self._txn, table_id)
        if table is None:
            return 0
        raw, _ = key_bytes(row)
        value = self._txn.get(table.prefix + stored_key(raw), db=self._index._data)
        return 0 if value is None else int(U64.unpack_from(value)[0])

    def size(self, table_id: int) -> int:
        table = self._index._table(self._txn, table_id)
        return 0 if table is None else table.rows


class _ChunkDuplicate(KeyIndexError):
    """A chunk of keyed rows loaded holds a key twice, or one already there."""

    def __init__(self, generation: int, items: list[tuple[bytes, bytes]]) -> None:
        super().__init__(f"duplicate keys in the rows loaded into {generation}")
        self.items = items


_first = itemgetter(0)


def _greatest(cursor: Cursor, prefix: bytes) -> bytes | None:
    """The greatest data key under ``prefix`` (a table's generation), None when there is
    none; leaves the cursor anywhere."""
    after = U64.pack(int(U64.unpack(prefix)[0]) + 1)
    found = cursor.prev() if cursor.set_range(after) else cursor.last()
    if found and cursor.key().startswith(prefix):
        return cursor.key()
    return None


def _chunks(rows: Iterable[_T], size: int) -> Iterator[list[_T]]:
    iterator = iter(rows)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _check_reiterable(writes: Mapping[int, TableChanges] | None) -> None:
    for changes in (writes or {}).values():
        replace = changes.replace
        if replace is not None and iter(replace) is replace:
            raise KeyIndexError(
                "the key index map had to grow during a batch that replaces a table's "
                "rows from a one-shot iterator: pass a re-iterable"
            )
