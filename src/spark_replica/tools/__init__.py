"""Tools that are not the replica, reached through ``spark-replica``'s commands only: the
built-in binlog server (``source/``), the workload generator (``generator/``), the mysqltest
runner (``sqltest/``) and the demo (``demo.py``). They may use the product's code; the product
does not import them."""
