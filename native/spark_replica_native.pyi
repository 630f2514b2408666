"""The native core of spark-replica's hot paths (see src/lib.rs)."""

def encode_row(row: object) -> bytes | None:
    """A row as the key index stores it; None when the Python codec must encode it."""

def key_bytes(values: object) -> tuple[bytes, bool] | None:
    """A key's bytes and whether they give the values back exactly; None when the Python
    codec must encode it."""

def encode_key(values: object) -> bytes | None:
    """``key_bytes``'s bytes alone."""
