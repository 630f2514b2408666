"""What the key index raises: the engine rebuilds the index on ``KeyIndexOutOfDate`` and
``KeyIndexIncompatible``; any other ``KeyIndexError`` is a bug in the caller."""

from __future__ import annotations


class KeyIndexError(Exception):
    """The index cannot do what was asked (a wrong batch number, an unknown table...)."""


class KeyIndexOutOfDate(KeyIndexError):
    """The index is neither at the recorded commit point nor one batch after it: rebuild."""

    def __init__(self, index_batch: int, recorded_batch: int) -> None:
        super().__init__(
            f"the key index is at batch {index_batch}, the recorded commit point is batch "
            f"{recorded_batch}: only one batch can be undone, the index must be rebuilt"
        )
        self.index_batch = index_batch
        self.recorded_batch = recorded_batch


class KeyIndexIncompatible(KeyIndexError):
    """The index was written with another row encoding: remove it and rebuild."""


class KeyIndexDuplicate(KeyIndexError):
    """Rows staged for one table hold a key twice: ``row`` is one of them."""

    def __init__(self, row: tuple[object, ...]) -> None:
        super().__init__("a key occurs twice in the rows staged")
        self.row = row
