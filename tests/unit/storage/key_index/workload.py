"""A deterministic stream of batches for the key index tests, and a plain-Python model of
what the index holds after each: keyed puts and deletes, keyless count changes, tables
created, replaced (TRUNCATE, a rewrite) and dropped."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from spark_replica.applier_core.storage.interface import Key, Row
from spark_replica.applier_core.storage.key_index import LmdbKeyIndex, TableChanges

KEYED = 1
KEYLESS = 2
REPLACED = 3  # replaced every few batches
DROPPED = 4  # dropped and created again


def key_of(row: Row) -> Key:
    return (row[0],)


def writes_for(batch: int, *, size: int = 200) -> dict[int, TableChanges]:
    """Batch ``batch``'s changes (batch 1 creates the tables)."""
    rng = random.Random(batch)
    if batch == 1:
        return {
            KEYED: TableChanges(replace=[], key_of=key_of),
            KEYLESS: TableChanges(replace=[], key_of=None),
            REPLACED: TableChanges(replace=[(i, "r0") for i in range(20)], key_of=key_of),
            DROPPED: TableChanges(replace=[("a", 1.5)], key_of=None),
        }
    puts: dict[Key, Row | None] = {}
    for _ in range(size):
        key = rng.randrange(size * 3)
        if rng.random() < 0.2:
            puts[(key,)] = None
        else:
            puts[(key,)] = (key, batch, f"c-{key}-{batch}" * 3, Decimal(batch) / 4)
    deltas: dict[Row, int] = {}
    for _ in range(size // 4):
        deltas[(rng.randrange(20), "dup", -0.0 if rng.random() < 0.5 else 0.0)] = rng.choice(
            [-2, -1, 1, 2, 3]
        )
    writes = {KEYED: TableChanges(puts=puts), KEYLESS: TableChanges(deltas=deltas)}
    if batch % 3 == 0:
        rows = [(i, f"r{batch}") for i in range(rng.randrange(5, 40))]
        writes[REPLACED] = TableChanges(replace=rows, key_of=key_of, puts={(1000,): (1000, "p")})
    if batch % 4 == 0:
        writes[DROPPED] = TableChanges(drop=True)
    elif batch % 4 == 1:
        writes[DROPPED] = TableChanges(replace=[("b", float(batch))] * 2, key_of=None)
    return writes


@dataclass
class Model:
    """What the index should hold: keyed tables by key, keyless ones as counters."""

    keyed: dict[int, dict[Key, Row]] = field(default_factory=dict)
    bags: dict[int, Counter[Row]] = field(default_factory=dict)

    def apply(self, writes: dict[int, TableChanges]) -> None:
        for table_id, changes in writes.items():
            if changes.drop:
                self.keyed.pop(table_id, None)
                self.bags.pop(table_id, None)
            if changes.replace is not None:
                self.keyed.pop(table_id, None)
                self.bags.pop(table_id, None)
                if changes.key_of is not None:
                    self.keyed[table_id] = {changes.key_of(r): r for r in changes.replace}
                else:
                    self.bags[table_id] = Counter(changes.replace)
            for key, row in changes.puts.items():
                if row is None:
                    self.keyed[table_id].pop(key, None)
                else:
                    self.keyed[table_id][key] = row
            bag = self.bags.get(table_id)
            for row, delta in changes.deltas.items():
                assert bag is not None
                bag[row] = max(bag[row] + delta, 0)
                if not bag[row]:
                    del bag[row]

    def matches(self, index: LmdbKeyIndex) -> bool:
        tables = set(self.keyed) | set(self.bags)
        if set(index.table_ids()) != tables:
            return False
        for table_id, rows in self.keyed.items():
            if dict(index.keyed_items(table_id)) != rows:
                return False
            if index.size(table_id) != len(rows):
                return False
        for table_id, bag in self.bags.items():
            if Counter(dict(index.bag_items(table_id))) != bag:
                return False
            if index.size(table_id) != bag.total():
                return False
        return True


def model_after(batch: int, *, size: int = 200) -> Model:
    model = Model()
    for number in range(1, batch + 1):
        model.apply(writes_for(number, size=size))
    return model


def batches(
    first: int, last: int, *, size: int = 200
) -> Iterator[tuple[int, dict[int, TableChanges]]]:
    for number in range(first, last + 1):
        yield number, writes_for(number, size=size)
