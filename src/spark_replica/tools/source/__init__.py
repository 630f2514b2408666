"""The built-in binlog server (``spark-replica source``): a MySQL source emulator serving a
binary log written by this project, for replicas to pull over the replication protocol."""

from spark_replica.tools.source.auth import Account as Account
from spark_replica.tools.source.binlog import SourceBinlog as SourceBinlog
from spark_replica.tools.source.server import SourceOptions as SourceOptions
from spark_replica.tools.source.server import SourceServer as SourceServer

__all__ = ["Account", "SourceBinlog", "SourceOptions", "SourceServer"]
