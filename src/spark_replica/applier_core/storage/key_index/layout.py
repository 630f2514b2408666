"""Where a keyed table's columns lie in the rows the index stores for it.

An ALTER that Iceberg does as a schema change (decision 0018) may add, drop or reorder
columns without changing any stored value or the key. The index then keeps every row as it
is and records a ``Layout`` instead: a stored row is a tuple of *slots*; column ``i`` of the
table is slot ``slots[i]``. Slots are never reused: an added column takes a new slot at the
end (rows stored before it are shorter, and read NULL there: Iceberg fills an added column
with NULL too), a dropped one leaves its slot unread, a reorder permutes ``slots``. A table
loaded or rewritten whole has every row in its columns' order and no layout recorded; once
a layout is recorded it stays until the table is loaded again (even one whose slots are in
order still pads the rows stored before a column was added).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from spark_replica.applier_core.storage.interface import Row

_SLOT = struct.Struct(">H")
#: The most slots a stored row may have (a layout needing more is not made: the ALTER
#: copies the rows into the identity layout instead).
MAX_SLOTS = 0xFFFF


@dataclass(frozen=True, slots=True)
class Layout:
    """Column ``i`` of the table is slot ``slots[i]`` of a stored row; rows stored from now
    on have ``width`` slots."""

    slots: tuple[int, ...]
    width: int
    #: Whether the slots are the columns in order, as many (a row is read by padding it).
    in_order: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        in_order = self.slots == tuple(range(self.width))
        object.__setattr__(self, "in_order", in_order)

    @staticmethod
    def identity(columns: int) -> Layout:
        return Layout(tuple(range(columns)), columns)

    def read(self, stored: Row) -> Row:
        """The table's row held in ``stored``; slots it predates read NULL."""
        size = len(stored)
        if self.in_order:
            if size == self.width:
                return stored
            return stored[: self.width] + (None,) * (self.width - size)
        return tuple(stored[slot] if slot < size else None for slot in self.slots)

    def place(self, row: Row) -> Row:
        """``row`` as stored: its values in their slots, NULL in the unread ones."""
        stored: list[object] = [None] * self.width
        for slot, value in zip(self.slots, row, strict=True):
            stored[slot] = value
        return tuple(stored)

    def after(self, sources: Sequence[int | None]) -> Layout:
        """The layout once column ``i`` of the table comes from column ``sources[i]`` (None:
        a new column, given a new slot)."""
        width = self.width
        slots: list[int] = []
        for source in sources:
            if source is None:
                slots.append(width)
                width += 1
            else:
                slots.append(self.slots[source])
        return Layout(tuple(slots), width)

    def pack(self) -> bytes:
        return _SLOT.pack(self.width) + b"".join(_SLOT.pack(slot) for slot in self.slots)

    @staticmethod
    def unpack(raw: bytes) -> Layout:
        (width,), slots = _SLOT.unpack_from(raw), raw[_SLOT.size :]
        return Layout(tuple(slot for (slot,) in _SLOT.iter_unpack(slots)), width)
