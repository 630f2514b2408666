"""The receiver: the replica's connection to its source (client protocol first)."""

from spark_replica.applier_core.receiver.client import ResultSet as ResultSet
from spark_replica.applier_core.receiver.client import SourceClient as SourceClient
from spark_replica.applier_core.receiver.client import SourceError as SourceError

__all__ = ["ResultSet", "SourceClient", "SourceError"]
