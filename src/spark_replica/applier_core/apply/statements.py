"""The statements a row-based binary log carries as Query events, as the source ran them.

A source logs the text it executed: executable comments included (``/*!40000 ALTER TABLE t
DISABLE KEYS */`` from every mysqldump reload, MariaDB's ``/*M!100100 ... */``).
``as_executed`` expands them the way the source did: ``/*!NNNNN body */`` runs when the
source's version is at least NNNNN (a comment without a number always runs), ``/*M!NNNNNN
body */`` only on MariaDB. What is left is sorted by ``effect``:

* ``Effect.DDL``: the storage engine applies it to its data and catalog: tables, databases
  (ALTER DATABASE: their default character set and collation), indexes, MariaDB sequences
  (``storage.ddl_sequence``: ALTER SEQUENCE changes the sequence's row), and the views,
  triggers, routines and events it keeps (``storage.objects``); DDL it cannot map it refuses
  with 1235 naming the construct.
* ``Effect.NONE``: nothing the replica stores changes. Administrative statements (ANALYZE,
  OPTIMIZE, REPAIR, CHECK, CHECKSUM TABLE, FLUSH), locks (LOCK/UNLOCK TABLES, LOCK INSTANCE),
  savepoints, SET statements a source logs, plugins and components, and the empty statement
  a comment not meant for this source leaves. A MySQL replica runs them to the same effect
  on its own tables, which for the replica's storage is none.
* ``Effect.ACCOUNT``: accounts, roles and privileges (CREATE/ALTER/DROP/RENAME USER, CREATE/
  DROP ROLE, GRANT, REVOKE, SET PASSWORD, SET DEFAULT ROLE): the engine applies them to the
  replicated accounts it keeps with its catalog (``storage.accounts``), refusing with 1235 a
  form it cannot represent; the replica's own local accounts do not change
  (docs/replica-commands.md). FLUSH PRIVILEGES has nothing to do: the accounts change when
  the statement commits.

XA statements are the applier's (``apply.xa``). Anything else (DML logged as a statement)
goes to the engine, which refuses what it cannot apply with MySQL's error naming it: nothing
is skipped silently.
"""

from __future__ import annotations

import enum
import re

from spark_replica.applier_core.binlog.versions import SourceVersion
from spark_replica.applier_core.storage.accounts import is_account_statement

# -- executable comments ---------------------------------------------------------------------

_QUOTES = "'\"`"


def as_executed(statement: str, version: SourceVersion) -> str:
    """``statement`` as ``version`` ran it: executable comments it runs are replaced by their
    body, those it skips (and plain comments) by a space; string literals and quoted names
    are left alone."""
    if "/*" not in statement:
        return statement
    out: list[str] = []
    i, size = 0, len(statement)
    while i < size:
        char = statement[i]
        if char in _QUOTES:
            end = _quoted_end(statement, i)
            out.append(statement[i:end])
            i = end
        elif statement.startswith("/*", i):
            end = statement.find("*/", i + 2)
            end = size if end < 0 else end
            out.append(_comment(statement[i + 2 : end], version))
            i = end + 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _quoted_end(text: str, start: int) -> int:
    """The index after the quoted literal or name that starts at ``start``."""
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\" and quote != "`":
            i += 2
        elif text[i] == quote:
            if text.startswith(quote * 2, i):  # a doubled quote stands for itself
                i += 2
            else:
                return i + 1
        else:
            i += 1
    return len(text)


_EXECUTABLE = re.compile(r"(M?)!(\d{5,6})?")


def _comment(inside: str, version: SourceVersion) -> str:
    found = _EXECUTABLE.match(inside)
    if found is None:
        return " "
    mariadb_only, number = found.group(1) == "M", found.group(2)
    if mariadb_only and not version.mariadb:
        return " "
    if number is not None and version.number < int(number):
        return " "
    return f" {inside[found.end() :]} "


# -- effects ---------------------------------------------------------------------------------


class Effect(enum.Enum):
    DDL = "ddl"
    NONE = "none"
    ACCOUNT = "account"


#: Leading words (upper case, single spaces) of statements that change nothing stored.
_NO_EFFECT = (
    "ANALYZE",
    "OPTIMIZE",
    "REPAIR",
    "CHECK TABLE",
    "CHECKSUM TABLE",
    "FLUSH",
    "LOCK TABLE",
    "LOCK TABLES",
    "UNLOCK TABLE",
    "UNLOCK TABLES",
    "LOCK INSTANCE",
    "UNLOCK INSTANCE",
    "SAVEPOINT",
    "RELEASE SAVEPOINT",
    "ROLLBACK TO",
    "ROLLBACK WORK TO",
    "INSTALL",
    "UNINSTALL",
    "DO",
    "RESET QUERY CACHE",
)
#: Leading words of account statements.
_ACCOUNTS = (
    "CREATE USER",
    "ALTER USER",
    "DROP USER",
    "RENAME USER",
    "CREATE ROLE",
    "DROP ROLE",
    "GRANT",
    "REVOKE",
    "SET PASSWORD",
    "SET DEFAULT ROLE",
)


def effect(statement: str) -> Effect:
    """What applying ``statement`` (as the source executed it) takes."""
    words = " ".join(statement.split()[:3]).upper()
    if not words:
        return Effect.NONE  # only a comment the source skipped: it ran nothing
    if words.startswith(("SET PASSWORD", "SET DEFAULT ROLE")):
        return Effect.ACCOUNT
    if words.startswith("SET") or any(_starts(words, lead) for lead in _NO_EFFECT):
        return Effect.NONE
    if any(_starts(words, lead) for lead in _ACCOUNTS) or is_account_statement(statement):
        return Effect.ACCOUNT  # is_account_statement: MariaDB's CREATE OR REPLACE USER/ROLE
    return Effect.DDL


def _starts(words: str, lead: str) -> bool:
    return words == lead or words.startswith((lead + " ", lead + "("))
