"""The MySQL binary log: events, values, files, relay logs and the workload generator."""
