"""What a batch does to one table, as the engine hands it to the key index."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from spark_replica.applier_core.storage.interface import Key, Row
from spark_replica.applier_core.storage.key_index.layout import Layout

#: A row's primary key (the engine's ``Table.key_of``).
KeyOf: TypeAlias = Callable[[Row], Key]


@dataclass(frozen=True, slots=True)
class TableChanges:
    """One table's changes in a batch, applied in this order: ``drop`` (the table is gone,
    if it was there: a table created and dropped within the batch may be named),
    ``replace`` (the table's whole content, creating it: CREATE, TRUNCATE, a rewrite by
    ALTER; ``key_of`` gives a row's key, None for a keyless table) or ``adopt`` (the content
    staged under that stage id, ``LmdbKeyIndex.stage``), then ``layout`` (a keyed table's
    columns placed anew in its stored rows, ``layout.Layout``; None: as they were), then
    ``puts`` (keyed table: key → row in the table's columns, None deleting; stored by the
    table's layout) or ``deltas`` (keyless: row → change of its count).

    ``replace`` is iterated once, or again when the map had to grow during the batch: a
    big table's rows should come from a re-iterable (a list, or an object whose
    ``__iter__`` starts a new scan); a one-shot iterator fails the batch in that case.
    """

    puts: Mapping[Key, Row | None] = field(default_factory=dict)
    deltas: Mapping[Row, int] = field(default_factory=dict)
    replace: Iterable[Row] | None = None
    key_of: KeyOf | None = None
    drop: bool = False
    adopt: int | None = None
    layout: Layout | None = None
