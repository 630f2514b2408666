"""The native core of spark-replica's hot paths (see src/lib.rs)."""

def encode_row(row: object) -> bytes | None:
    """A row as the key index stores it; None when the Python codec must encode it."""

def key_bytes(values: object) -> tuple[bytes, bool] | None:
    """A key's bytes and whether they give the values back exactly; None when the Python
    codec must encode it."""

def encode_key(values: object) -> bytes | None:
    """``key_bytes``'s bytes alone."""

def stored_keys(prefix: bytes, keys: list[object], limit: int) -> list[bytes] | None:
    """The data keys of ``keys`` under ``prefix``; None when one of them is ``limit`` bytes
    or longer, or needs the Python codec."""

def keyed_entries(
    prefix: bytes, items: list[tuple[object, object]], limit: int
) -> list[tuple[bytes, bytes | None]] | None:
    """A keyed table's ``(key, row or None)`` changes as data keys and encoded rows, sorted
    by data key; None when one of them needs the Python codec."""
