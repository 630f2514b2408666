"""User queries over replicated tables: the catalog they see and SELECTs run by Spark."""
