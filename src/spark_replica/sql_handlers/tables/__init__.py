"""Virtual tables: performance_schema and mysql replication tables, SHOW REPLICA STATUS."""
