"""The disk-backed key index of the Spark engine: every committed row of every table by key
(a keyless table's rows as a multiset), in LMDB, with one batch of undo for crash
consistency with the commit point (decision 0018)."""

from spark_replica.applier_core.storage.key_index.changes import KeyOf, TableChanges
from spark_replica.applier_core.storage.key_index.errors import (
    KeyIndexDuplicate,
    KeyIndexError,
    KeyIndexIncompatible,
    KeyIndexOutOfDate,
)
from spark_replica.applier_core.storage.key_index.lmdb_index import LmdbKeyIndex, Snapshot
from spark_replica.applier_core.storage.key_index.verify import Difference

__all__ = [
    "Difference",
    "KeyIndexDuplicate",
    "KeyIndexError",
    "KeyIndexIncompatible",
    "KeyIndexOutOfDate",
    "KeyOf",
    "LmdbKeyIndex",
    "Snapshot",
    "TableChanges",
]
