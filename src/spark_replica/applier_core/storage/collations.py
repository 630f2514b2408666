"""Character sets and collations of replicated databases, tables and columns, resolved the
way the source resolved them.

A DDL statement names a character set, a collation, both or neither. Where it names
neither, MySQL takes the enclosing default: a column its table's, a table its database's,
a database the server's (``collation_server``). A character set alone means its default
collation, which is the same on MySQL 8.4 and MariaDB 10.11 except for utf8mb4 (MySQL:
``utf8mb4_0900_ai_ci``, or what ``default_collation_for_utf8mb4`` says; MariaDB:
``utf8mb4_general_ci``). ``CharsetDefaults`` carries what the source's Query event says
of that (its ``collation_server`` and, from MySQL, ``default_collation_for_utf8mb4``);
``CharsetDefaults.resolve`` gives the collation a clause names, and the catalog fills in
the enclosing defaults (``ddl``). The character set of a collation is the part of its name
before the first ``_`` (``binary`` is its own).

A collation id the table of ``collation_ids`` does not hold (a MySQL collation other than
the common ones) leaves the server default at ``utf8mb4_0900_ai_ci``; a name a statement
gives is kept as written (lower case), whether or not it is in the table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.collation_ids import NAMES
from spark_replica.applier_core.storage.interface import Column, EngineError, TableDef

#: MySQL 8.4's server default, used where the source said nothing.
MYSQL_DEFAULT = "utf8mb4_0900_ai_ci"
_MARIADB_UTF8MB4 = "utf8mb4_general_ci"

#: Each character set's default collation (utf8mb4's depends on the source).
_DEFAULTS = {
    cs: f"{cs}_{suffix}"
    for cs, suffix in (
        ("armscii8", "general_ci"), ("ascii", "general_ci"), ("big5", "chinese_ci"),
        ("cp1250", "general_ci"), ("cp1251", "general_ci"), ("cp1256", "general_ci"),
        ("cp1257", "general_ci"), ("cp850", "general_ci"), ("cp852", "general_ci"),
        ("cp866", "general_ci"), ("cp932", "japanese_ci"), ("dec8", "swedish_ci"),
        ("eucjpms", "japanese_ci"), ("euckr", "korean_ci"), ("gb18030", "chinese_ci"),
        ("gb2312", "chinese_ci"), ("gbk", "chinese_ci"), ("geostd8", "general_ci"),
        ("greek", "general_ci"), ("hebrew", "general_ci"), ("hp8", "english_ci"),
        ("keybcs2", "general_ci"), ("koi8r", "general_ci"), ("koi8u", "general_ci"),
        ("latin1", "swedish_ci"), ("latin2", "general_ci"), ("latin5", "turkish_ci"),
        ("latin7", "general_ci"), ("macce", "general_ci"), ("macroman", "general_ci"),
        ("sjis", "japanese_ci"), ("swe7", "swedish_ci"), ("tis620", "thai_ci"),
        ("ucs2", "general_ci"), ("ujis", "japanese_ci"), ("utf16", "general_ci"),
        ("utf16le", "general_ci"), ("utf32", "general_ci"), ("utf8mb3", "general_ci"),
    )
}  # fmt: skip
_DEFAULTS["binary"] = "binary"
#: Bytes per character of the multi-byte character sets (the others take one).
_MAX_BYTES = {"big5": 2, "cp932": 2, "eucjpms": 3, "euckr": 2, "gb18030": 4, "gb2312": 2,
              "gbk": 2, "sjis": 2, "ucs2": 2, "ujis": 3, "utf16": 4, "utf16le": 4, "utf32": 4,
              "utf8mb3": 3, "utf8mb4": 4}  # fmt: skip
#: Names both servers read as another (``utf8`` is utf8mb3 on MySQL 8.4 and MariaDB 10.11).
_ALIASES = {"utf8": "utf8mb3"}


def charset_of(collation: str) -> str:
    """The character set of ``collation`` (``utf8mb4_bin`` -> ``utf8mb4``)."""
    return collation if collation == "binary" else collation.split("_", 1)[0]


def max_bytes(charset: str) -> int:
    """The most bytes one character of ``charset`` takes (CHARACTER_OCTET_LENGTH's factor)."""
    return _MAX_BYTES.get(charset, 1)


def _charset_name(name: str) -> str:
    lowered = name.lower()
    return _ALIASES.get(lowered, lowered)


def _collation_name(name: str) -> str:
    lowered = name.lower()
    head, sep, tail = lowered.partition("_")
    return f"{_ALIASES.get(head, head)}{sep}{tail}"


@dataclass(frozen=True, slots=True)
class CharsetDefaults:
    """What the source used where a statement names no collation: ``server`` (its
    ``collation_server``) and ``utf8mb4`` (utf8mb4's default collation). ``mariadb``: the
    source is MariaDB, which names unnamed CHECK constraints its own way (``constraints``)."""

    server: str = MYSQL_DEFAULT
    utf8mb4: str = MYSQL_DEFAULT
    mariadb: bool = False

    @classmethod
    def of_source(
        cls,
        charset_ids: tuple[int, int, int] | None,
        utf8mb4_id: int | None,
        *,
        mariadb: bool,
    ) -> CharsetDefaults:
        """From a Query event's ``charset`` status (client, connection, server collation
        ids) and ``default_collation_for_utf8mb4``; ``mariadb``: the source is MariaDB."""
        utf8mb4 = _MARIADB_UTF8MB4 if mariadb else NAMES.get(utf8mb4_id or 0, MYSQL_DEFAULT)
        server = NAMES.get(charset_ids[2], "") if charset_ids is not None else ""
        return cls(server or (utf8mb4 if mariadb else MYSQL_DEFAULT), utf8mb4, mariadb)

    def resolve(self, charset: str | None, collation: str | None) -> str | None:
        """The collation ``CHARACTER SET charset COLLATE collation`` names (either may be
        None or ``DEFAULT``); None when neither names one (the enclosing default applies).

        Raises ``EngineError`` 1115 for an unknown character set, 1253 for a collation of
        another character set."""
        charset = None if charset is None or charset.upper() == "DEFAULT" else charset
        collation = None if collation is None or collation.upper() == "DEFAULT" else collation
        if collation is not None:
            name = _collation_name(collation)
            if charset is not None and charset_of(name) != _charset_name(charset):
                raise EngineError.of(ErrorCode.COLLATION_CHARSET_MISMATCH, name, charset)
            return name
        if charset is None:
            return None
        return self.default_of(charset)

    def default_of(self, charset: str) -> str:
        """The default collation of ``charset``; 1115 when there is no such character set."""
        name = _charset_name(charset)
        if name == "utf8mb4":
            return self.utf8mb4
        found = _DEFAULTS.get(name)
        if found is None:
            raise EngineError.of(ErrorCode.UNKNOWN_CHARACTER_SET, charset)
        return found


#: Where no Query event says otherwise (tables the replica did not see created).
SERVER_DEFAULTS = CharsetDefaults()


#: A column declared ``BINARY`` without a collation: its character set's ``_bin`` one.
BIN_OF_CHARSET = "_bin"
_TEXT_TYPES = frozenset(
    {"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET"}
)


def is_text_type(type_text: str) -> bool:
    """Whether a column of this MySQL type has a character set (CHAR ... SET)."""
    name = type_text.split("(", 1)[0].strip().upper()
    return name in _TEXT_TYPES


def column_collation(column: Column, table_collation: str) -> str:
    """The collation ``column`` ends with in a table whose default is ``table_collation``:
    its own, else the table's (or, for ``BINARY``, the ``_bin`` collation of the table's
    character set); empty for a column without a character set."""
    if not is_text_type(column.type):
        return ""
    if column.collation == BIN_OF_CHARSET:
        return f"{charset_of(table_collation or MYSQL_DEFAULT)}_bin"
    return column.collation or table_collation or MYSQL_DEFAULT


def with_collations(definition: TableDef, default: str, *, convert: str = "") -> TableDef:
    """``definition`` with its table collation (its own, else ``default``, the database's)
    and every text column's filled in; ``convert`` (CONVERT TO CHARACTER SET) sets both."""
    table = convert or definition.collation or default
    columns = tuple(
        replace(c, collation=column_collation(replace(c, collation=convert) if convert else c,
                                              table))
        for c in definition.columns
    )  # fmt: skip
    return replace(definition, columns=columns, collation=table)
