"""The values existing rows hold after ALTER TABLE changes a column's type or adds a column.

The binlog carries no row events for an ALTER TABLE: the source converts its rows itself, and
a replica must hold what the source holds afterwards. This package gives, for one column, a
*converter*: a function from the column's old value to its new value, both in the binlog
decoder's value model (``binlog.rows.values``: ``int``, ``Decimal``, ``float``, ``str``,
``bytes``, ``date``, ``datetime`` ...; ``None`` is NULL). Converters follow MySQL 8.4's rules
for copying a value into a column of another type (``ALTER TABLE`` with the COPY algorithm):
https://dev.mysql.com/doc/refman/8.4/en/alter-table.html and
https://dev.mysql.com/doc/refman/8.4/en/type-conversion.html.

Implemented (anything else raises for the first non-NULL value, so an empty column or table
changes type freely):

* integers ↔ integers, DECIMAL, FLOAT/DOUBLE, YEAR; DECIMAL ↔ DECIMAL (rounded half away
  from zero to the new scale); FLOAT/DOUBLE → integers (half to even, as C's ``rint``),
  DECIMAL (from the shortest text of the double), FLOAT/DOUBLE;
* numbers, YEAR, DATE, DATETIME, ENUM and SET → CHAR/VARCHAR/TEXT, in MySQL's text form
  (a FLOAT keeps 6 significant digits, a DOUBLE its shortest round-trip digits; exponent form
  below 1e-14 and from 1e15);
* CHAR/VARCHAR/TEXT → numbers (a valid number, surrounding spaces allowed), ENUM/SET (by
  member name, case-insensitively, or an ENUM's index), DATE/DATETIME (``YYYY-MM-DD[
  hh:mm:ss[.ffffff]]``), and to other string types (length checked: characters for
  CHAR/VARCHAR, bytes of UTF-8 for TEXT); BINARY/VARBINARY/BLOB among themselves;
* ENUM/SET member lists changed (values kept by name), DATE ↔ DATETIME, fractional seconds
  of DATETIME/TIMESTAMP/TIME changed (rounded half up).

A value MySQL's strict mode refuses (out of range, too long, not a number, NULL into NOT
NULL) raises ``ValueFault`` with MySQL's error number and text; so does a conversion this
package does not implement (``code`` 0). The source ran the ALTER, so such a fault means the
source was not in strict mode or the replica's data differ.

Also here: where a new column's value in existing rows comes from (``Default``,
``fill_converter``), and how a key prefix survives a type change (``key_prefix_after``).

Modules: ``faults`` (``ValueFault`` and MySQL's errors), ``kinds`` (``SqlType``: a type as
values see it; which changes keep values), ``converters`` (``type_converter``: the converter
for a type change, by the old type's kind), one module per family of values (``numbers``,
``strings``, ``members`` for ENUM/SET, ``temporal``), and ``new_columns``.
"""

from __future__ import annotations

from spark_replica.applier_core.storage.ddl_convert.converters import Converter as Converter
from spark_replica.applier_core.storage.ddl_convert.converters import (
    type_converter as type_converter,
)
from spark_replica.applier_core.storage.ddl_convert.faults import ValueFault as ValueFault
from spark_replica.applier_core.storage.ddl_convert.kinds import Kind as Kind
from spark_replica.applier_core.storage.ddl_convert.kinds import SqlType as SqlType
from spark_replica.applier_core.storage.ddl_convert.kinds import keeps_values as keeps_values
from spark_replica.applier_core.storage.ddl_convert.kinds import (
    key_prefix_after as key_prefix_after,
)
from spark_replica.applier_core.storage.ddl_convert.kinds import needs_copy as needs_copy
from spark_replica.applier_core.storage.ddl_convert.kinds import sql_type as sql_type
from spark_replica.applier_core.storage.ddl_convert.members import member_names as member_names
from spark_replica.applier_core.storage.ddl_convert.new_columns import Default as Default
from spark_replica.applier_core.storage.ddl_convert.new_columns import (
    fill_converter as fill_converter,
)
from spark_replica.applier_core.storage.ddl_convert.numbers import decimal_text as decimal_text
from spark_replica.applier_core.storage.ddl_convert.numbers import real_text as real_text
from spark_replica.applier_core.storage.ddl_convert.numbers import scan_number as scan_number
from spark_replica.applier_core.storage.ddl_convert.temporal import temporal_text as temporal_text

__all__ = [
    "Converter",
    "Default",
    "Kind",
    "SqlType",
    "ValueFault",
    "decimal_text",
    "fill_converter",
    "keeps_values",
    "key_prefix_after",
    "member_names",
    "needs_copy",
    "real_text",
    "scan_number",
    "sql_type",
    "temporal_text",
    "type_converter",
]
