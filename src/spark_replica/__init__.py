"""spark-replica: a MySQL replica whose storage engine is Spark SQL."""

__version__ = "0.1.0"
