"""The Spark engine's tables: committed content in the key index on disk (``key_index``)
under an in-memory overlay of the changes committed but not yet flushed (decision 0018).

A table's ``Content`` (shared by the names a RENAME gives it) holds:

* ``table_id``: the engine's table id whose rows the key index holds at the last commit
  point (None: not in the index yet, the table was created, truncated or rewritten by DDL
  that is not flushed: the overlay then holds the whole content, ``complete``);
* ``entries``: the overlay. Keyed table: key → (commit number, row or None for a delete);
  keyless table: row → (commit number, the row's count after that commit, 0 included).

Lookups read the overlay, then the index. A flush applies the net changes of its commits to
the index (``LmdbKeyIndex.apply``) before its commit point; after it, ``drain`` drops the
overlay entries the flushed commits wrote that no later commit overwrote (commit number ≤
the last flushed one). A reader that holds a row's lock and finds no overlay entry reads the
index, which already holds the value: an entry is removed only after the index has it, and
nobody else writes that row meanwhile. ``rebase`` (after a flushed DDL) names the index
table id first, then clears ``complete``, then drains, so a reader never misses both.

An ALTER that keeps every value and the key and that Iceberg does as a schema change
(ADD INDEX; a renamed, widened, added, dropped or moved column) copies nothing: the new
table reads the same index entries through a new ``key_index.layout.Layout`` (where its
columns lie in the stored rows), its overlay's rows reshaped; the flush of the ALTER
records the layout in the index. Any other ALTER TABLE on a table the index holds streams
its rows, in the index's key order with the overlay merged in, through the conversion into a
*stage* of the index (``LmdbKeyIndex.stage``, a chunk of rows per write transaction): the new
table reads the stage until the flush of the ALTER gives it an index table id (``rebase``);
the table is never in memory whole. A reader that misses under the stage id while the rebase
happens looks again under the new id.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from spark_replica.applier_core.storage.ddl_alter import AlteredTable
from spark_replica.applier_core.storage.interface import Key, Row, TableDef, TableRef
from spark_replica.applier_core.storage.key_index import KeyIndexDuplicate, LmdbKeyIndex
from spark_replica.applier_core.storage.key_index.codec import encode_key
from spark_replica.applier_core.storage.key_index.layout import MAX_SLOTS, Layout
from spark_replica.applier_core.storage.memory_tables import (
    CommittedTable,
    NewTable,
    Stage,
    duplicate_key,
    hashable,
)
from spark_replica.applier_core.storage.spark.schema_evolution import schema_change


class Content:
    """A table's overlay and the index table it lies over (see the module)."""

    __slots__ = ("index", "table_id", "complete", "entries", "layout")

    def __init__(
        self, index: LmdbKeyIndex, table_id: int | None, layout: Layout | None = None
    ) -> None:
        self.index = index
        self.table_id = table_id
        self.complete = table_id is None
        self.entries: dict[Any, tuple[int, Any]] = {}
        #: Where the table's columns lie in the rows the index stores (None: the identity).
        self.layout = layout

    @staticmethod
    def stored(index: LmdbKeyIndex, table_id: int) -> Content:
        """The content the index holds for ``table_id``, read by its recorded layout."""
        return Content(index, table_id, index.layout(table_id))

    def reshaped(self, layout: Layout, altered: AlteredTable) -> Content:
        """The same index rows read by ``layout``, the overlay's rows taken into the columns
        of ``altered`` (which converts no value). Under the engine's mutex."""
        content = Content(self.index, self.table_id, layout)
        content.complete = self.complete
        content.entries = {
            key: (tag, None if row is None else altered.convert_row(row, 0))
            for key, (tag, row) in self.entries.items()
        }
        return content

    def read(self, stored: Row) -> Row:
        """A row as the index stores it, as a row of the table."""
        layout = self.layout
        return stored if layout is None else layout.read(stored)

    def drain(self, number: int) -> None:
        """Drop the entries of commits up to ``number`` (flushed: the index holds them).
        Under the engine's mutex."""
        if self.complete:
            return
        entries = self.entries
        for item in [k for k, (tag, _) in entries.items() if tag <= number]:
            del entries[item]

    def rebase(self, table_id: int, number: int) -> None:
        """The index holds the table under ``table_id`` as of commit ``number`` (its DDL
        is flushed). Under the engine's mutex."""
        self.table_id = table_id
        self.complete = False
        self.drain(number)


class IndexedTable(CommittedTable):
    """A Spark-engine table: ``content`` (overlay over the key index)."""

    __slots__ = ("content",)

    def __init__(self, ref: TableRef, definition: TableDef, content: Content) -> None:
        super().__init__(ref, definition)
        self.content = content

    def get(self, key: Key) -> Row | None:
        content = self.content
        entry = content.entries.get(key)
        if entry is not None:
            return entry[1]
        table_id = content.table_id
        if content.complete or table_id is None:
            return None
        row = content.index.get(table_id, key)
        if row is None:
            if content.table_id != table_id:  # rebased meanwhile
                return self.get(key)
            return None
        return content.read(row)

    def present(self, keys: Sequence[Key]) -> list[bool]:
        content = self.content
        entries = content.entries
        found: list[bool | None] = []
        missing = False
        for key in keys:
            entry = entries.get(key)
            if entry is None:
                found.append(None)
                missing = True
            else:
                found.append(entry[1] is not None)
        table_id = content.table_id
        if not missing or content.complete or table_id is None:
            return [bool(f) for f in found]
        unseen = [key for key, f in zip(keys, found, strict=True) if f is None]
        indexed = iter(content.index.present(table_id, unseen))
        result = [next(indexed) if f is None else f for f in found]
        if content.table_id != table_id and not all(result):  # rebased meanwhile
            return self.present(keys)
        return result

    def count(self, row: Row) -> int:
        content = self.content
        entry = content.entries.get(row)
        if entry is not None:
            return entry[1]
        table_id = content.table_id
        if content.complete or table_id is None:
            return 0
        count = content.index.count(table_id, row)
        if not count and content.table_id != table_id:  # rebased meanwhile
            return self.count(row)
        return count

    def items(self) -> list[tuple[Key, Row]]:
        content = self.content
        entries = content.entries
        found: list[tuple[Key, Row]] = []
        if not content.complete and content.table_id is not None:
            read = content.read
            found = [(k, read(r)) for k, r in content.index.keyed_items(content.table_id)
                     if k not in entries]  # fmt: skip
        found += [(k, r) for k, (_, r) in entries.items() if r is not None]
        return found

    def counts(self) -> Counter[Row]:
        content = self.content
        counts: Counter[Row] = Counter()
        if not content.complete and content.table_id is not None:
            for row, count in content.index.bag_items(content.table_id):
                counts[hashable(row)] = count
        for row, (_, count) in content.entries.items():
            if count:
                counts[row] = count
            else:
                counts.pop(row, None)
        return counts

    def commit(self, stage: Stage, number: int) -> None:
        entries = self.content.entries
        if self.key_of is not None:
            for key, row in stage.changes.items():
                entries[key] = (number, row)
            return
        for row, delta in stage.deltas.items():
            entries[row] = (number, max(self.count(row) + delta, 0))

    def load(self, rows: Iterable[Row]) -> None:
        """Fill a new table (its overlay holds the whole content until its DDL is
        flushed)."""
        entries = self.content.entries
        key_of = self.key_of
        if key_of is None:
            for row in rows:
                row = hashable(row)
                entry = entries.get(row)
                entries[row] = (0, 1 if entry is None else entry[1] + 1)
            return
        for row in rows:
            key = key_of(row)
            if key in entries:
                raise duplicate_key(self, key)
            entries[key] = (0, row)

    def altered(self, altered: AlteredTable, new: NewTable) -> CommittedTable:
        content = self.content
        if content.complete or content.table_id is None:
            return super().altered(altered, new)  # the whole content is in the overlay
        layout = self._layout_after(altered)
        if layout is not None:
            if altered.keeps_rows:
                return IndexedTable(self.ref, altered.definition, content)
            return IndexedTable(self.ref, altered.definition, content.reshaped(layout, altered))
        table = IndexedTable(self.ref, altered.definition, Content(content.index, None))
        rows: Iterable[Row] = self._scan()
        if not altered.keeps_rows:
            rows = (altered.convert_row(row, number) for number, row in enumerate(rows, 1))
        if table.key_of is None:
            rows = map(hashable, rows)
        try:
            stage = content.index.stage(rows, table.key_of)
        except KeyIndexDuplicate as error:
            assert table.key_of is not None  # a keyless table has no keys to repeat
            raise duplicate_key(table, table.key_of(error.row)) from None
        table.content = Content(content.index, stage)
        return table

    def _layout_after(self, altered: AlteredTable) -> Layout | None:
        """Where the columns lie in the stored rows after ``altered``, when the table keeps
        its rows' values and keys and its Iceberg table keeps its id (a schema change:
        ``spark.ddl_state``): then the new table reads this table's index entries and
        overlay through it, nothing copied (ADD INDEX; a renamed, widened, added, dropped or
        moved column). None when the rows must be copied: a converted value, another key,
        a keyless table whose columns change (its key is the whole row), or rows an ALTER
        not flushed yet staged (the stage is adopted and forgotten by that ALTER's flush)."""
        table_id = self.content.table_id
        if table_id is None or table_id < 0:
            return None
        before, after = self.definition, altered.definition
        if any(altered.converters) or schema_change(before, altered) is None:
            return None
        key = tuple(altered.sources[i] for i in after.primary_key)
        if key != before.primary_key or after.key_prefix != before.key_prefix:
            return None
        current = self.content.layout or Layout.identity(len(before.columns))
        if altered.keeps_rows:
            return current
        if self.key_of is None:
            return None
        layout = current.after(altered.sources)
        return layout if layout.width <= MAX_SLOTS else None

    def _scan(self) -> Iterator[Row]:
        """Every row, streamed: a keyed table's in the index's key order with the overlay
        merged in (MySQL's copy reads the clustered index in key order), a keyless
        table's as stored (VECTOR values as lists)."""
        content = self.content
        entries = content.entries
        assert content.table_id is not None
        if self.key_of is None:
            for row, count in content.index.bag_items(content.table_id):
                if row not in entries:
                    yield from itertools.repeat(self.plain(row), count)
            for row, (_, count) in list(entries.items()):
                yield from itertools.repeat(self.plain(row), count)
            return
        overlay = sorted(
            ((encode_key(key), row) for key, (_, row) in entries.items() if row is not None),
            key=itemgetter(0),
        )
        read = content.read
        stored = (
            (encode_key(key), read(row))
            for key, row in content.index.keyed_items(content.table_id)
            if key not in entries
        )
        for _, row in heapq.merge(stored, overlay, key=itemgetter(0)):
            yield row

    def renamed(self, ref: TableRef) -> IndexedTable:
        return IndexedTable(ref, self.definition, self.content)

    def discard(self) -> None:
        """Forget the stage an ALTER loaded this table's rows into (a table sharing a
        content the index holds, or all in the overlay, has none)."""
        content = self.content
        if content.table_id is not None and content.table_id < 0:
            content.index.unstage(content.table_id)
