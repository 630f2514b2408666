"""The SQL layer: replication statements, status tables, variables, virtual tables."""

from spark_replica.sql_handlers.dispatch import ReplicaContext as ReplicaContext
from spark_replica.sql_handlers.dispatch import StatementOutcome as StatementOutcome
from spark_replica.sql_handlers.dispatch import (
    execute_replication_statement as execute_replication_statement,
)
from spark_replica.sql_handlers.dispatch import execute_set as execute_set
from spark_replica.sql_handlers.dispatch import filter_rows as filter_rows
from spark_replica.sql_handlers.dispatch import query_virtual_tables as query_virtual_tables
from spark_replica.sql_handlers.parser.grammar import STATEMENT_KEYWORDS as STATEMENT_KEYWORDS
from spark_replica.sql_handlers.parser.grammar import leading_word as leading_word
from spark_replica.sql_handlers.parser.grammar import parse as parse_replication_statement
from spark_replica.sql_handlers.parser.limit_clause import (
    check_limit_clauses as check_limit_clauses,
)
from spark_replica.sql_handlers.replication.service import ReplicationService as ReplicationService
from spark_replica.sql_handlers.set_statement import parse_set as parse_set
from spark_replica.sql_handlers.virtual_query import executor_error as executor_error
from spark_replica.sql_handlers.virtual_query import reads_no_table as reads_no_table
from spark_replica.sql_handlers.virtual_query import static_select as static_select

__all__ = [
    "STATEMENT_KEYWORDS",
    "check_limit_clauses",
    "leading_word",
    "ReplicaContext",
    "ReplicationService",
    "StatementOutcome",
    "execute_replication_statement",
    "execute_set",
    "executor_error",
    "filter_rows",
    "parse_replication_statement",
    "parse_set",
    "query_virtual_tables",
    "reads_no_table",
    "static_select",
]
