"""Storage engines: the interface the appliers use, the row-lock manager, the in-memory engine.

The Spark engine lives in ``storage.spark`` (the only place that imports pyspark).
"""

from __future__ import annotations

from spark_replica.applier_core.storage.ddl import Catalog as Catalog
from spark_replica.applier_core.storage.ddl_operations import DdlOperation as DdlOperation
from spark_replica.applier_core.storage.ddl_parser import parse_ddl as parse_ddl
from spark_replica.applier_core.storage.group_commit import EngineStats as EngineStats
from spark_replica.applier_core.storage.interface import TRANSIENT_ERRORS as TRANSIENT_ERRORS
from spark_replica.applier_core.storage.interface import CheckConstraint as CheckConstraint
from spark_replica.applier_core.storage.interface import Column as Column
from spark_replica.applier_core.storage.interface import EngineError as EngineError
from spark_replica.applier_core.storage.interface import EngineSession as EngineSession
from spark_replica.applier_core.storage.interface import ExecMode as ExecMode
from spark_replica.applier_core.storage.interface import ForeignKey as ForeignKey
from spark_replica.applier_core.storage.interface import HandlerError as HandlerError
from spark_replica.applier_core.storage.interface import Index as Index
from spark_replica.applier_core.storage.interface import IndexKind as IndexKind
from spark_replica.applier_core.storage.interface import IndexPart as IndexPart
from spark_replica.applier_core.storage.interface import Key as Key
from spark_replica.applier_core.storage.interface import ReferenceRule as ReferenceRule
from spark_replica.applier_core.storage.interface import Row as Row
from spark_replica.applier_core.storage.interface import RowChange as RowChange
from spark_replica.applier_core.storage.interface import SessionState as SessionState
from spark_replica.applier_core.storage.interface import StorageEngine as StorageEngine
from spark_replica.applier_core.storage.interface import TableDef as TableDef
from spark_replica.applier_core.storage.interface import TableMap as TableMap
from spark_replica.applier_core.storage.interface import TableRef as TableRef
from spark_replica.applier_core.storage.interface import TransactionRef as TransactionRef
from spark_replica.applier_core.storage.locks import (
    DEFAULT_LOCK_WAIT_TIMEOUT as DEFAULT_LOCK_WAIT_TIMEOUT,
)
from spark_replica.applier_core.storage.locks import LockManager as LockManager
from spark_replica.applier_core.storage.locks import LockStats as LockStats
from spark_replica.applier_core.storage.locks import deadlock_error as deadlock_error
from spark_replica.applier_core.storage.locks import (
    lock_wait_timeout_error as lock_wait_timeout_error,
)
from spark_replica.applier_core.storage.memory import InMemoryEngine as InMemoryEngine
from spark_replica.applier_core.storage.prepared_xa import PreparedXa as PreparedXa
from spark_replica.applier_core.storage.store import StoreSession as StoreSession
from spark_replica.applier_core.storage.store import TransactionalStore as TransactionalStore

__all__ = [
    "DEFAULT_LOCK_WAIT_TIMEOUT",
    "TRANSIENT_ERRORS",
    "Catalog",
    "CheckConstraint",
    "Column",
    "Index",
    "IndexKind",
    "IndexPart",
    "DdlOperation",
    "EngineError",
    "EngineSession",
    "EngineStats",
    "ExecMode",
    "ForeignKey",
    "HandlerError",
    "InMemoryEngine",
    "StoreSession",
    "TransactionalStore",
    "Key",
    "LockManager",
    "LockStats",
    "PreparedXa",
    "ReferenceRule",
    "Row",
    "RowChange",
    "SessionState",
    "StorageEngine",
    "TableDef",
    "TableMap",
    "TableRef",
    "TransactionRef",
    "deadlock_error",
    "lock_wait_timeout_error",
    "parse_ddl",
]
