"""Persistent replication metadata: the ``mysql.*`` replication tables, variables and accounts.

Open a store with :func:`open_store` (``sqlite:///path/metadata.db`` by default, any
SQLAlchemy URL in production, ``sqlite:///:memory:`` in tests). :class:`MetadataStore`
implements the channel layer's ``ChannelStore`` and ``VariableStore``.
"""

from __future__ import annotations

from spark_replica.metadata.factory import open_store as open_store
from spark_replica.metadata.models import MYSQL_TABLE_NAMES as MYSQL_TABLE_NAMES
from spark_replica.metadata.models import ROLE_ADMIN as ROLE_ADMIN
from spark_replica.metadata.models import ROLE_READ_ONLY as ROLE_READ_ONLY
from spark_replica.metadata.models import WorkerInfo as WorkerInfo
from spark_replica.metadata.models import mysql_native_password_hash as mysql_native_password_hash
from spark_replica.metadata.store import GtidInterval as GtidInterval
from spark_replica.metadata.store import MetadataError as MetadataError
from spark_replica.metadata.store import MetadataStore as MetadataStore

__all__ = [
    "MYSQL_TABLE_NAMES",
    "ROLE_ADMIN",
    "ROLE_READ_ONLY",
    "GtidInterval",
    "MetadataError",
    "MetadataStore",
    "WorkerInfo",
    "mysql_native_password_hash",
    "open_store",
]
