"""MySQL column types: the type text of a column definition read once, into ``MySqlType``.

A catalog column keeps its type as text (``Column.type``): sqlglot's MySQL rendering of the
replicated CREATE TABLE (``INT UNSIGNED``, ``DECIMAL(10, 2)``, ``ENUM('a', 'b')``), or MySQL's
own ``COLUMN_TYPE`` (``int unsigned``, ``decimal(10,2)``). ``parse_type`` reads either, with
MySQL 8.4's synonyms resolved as MySQL resolves them when it creates a table, and gives the
type MySQL stores: its ``information_schema`` DATA_TYPE name and its arguments. The Spark
mapping (``storage.spark.types``), ALTER TABLE's value conversions (``ddl_convert``) and
SHOW COLUMNS / ``information_schema.COLUMNS`` (``sql_handlers.tables.replica_types``) all read
types through it, so they agree on every synonym.

Synonyms (https://dev.mysql.com/doc/refman/8.4/en/other-vendor-data-types.html and the data
type pages of https://dev.mysql.com/doc/refman/8.4/en/data-types.html):

* BOOL, BOOLEAN → TINYINT(1); INT1 → TINYINT; INT2 → SMALLINT; INT3, MIDDLEINT → MEDIUMINT;
  INTEGER, INT4 → INT; INT8 → BIGINT; SERIAL → BIGINT UNSIGNED (NOT NULL AUTO_INCREMENT UNIQUE,
  which are column attributes: ``MySqlType.serial``);
* DEC, NUMERIC, FIXED → DECIMAL; FLOAT4 → FLOAT; FLOAT8, DOUBLE PRECISION, REAL → DOUBLE (REAL
  is FLOAT under the REAL_AS_FLOAT SQL mode, which is not modelled); FLOAT(p) is FLOAT up to
  24 bits, DOUBLE from 25 to 53;
* CHARACTER → CHAR; CHARACTER VARYING, CHAR VARYING, VARCHARACTER → VARCHAR; NCHAR, NATIONAL
  CHAR[ACTER] → CHAR and NVARCHAR, NATIONAL VARCHAR, NCHAR VARCHAR, NCHAR VARYING, NATIONAL
  CHAR[ACTER] VARYING → VARCHAR, in utf8mb3; CHAR BYTE → BINARY; LONG, LONG VARCHAR → MEDIUMTEXT;
  LONG VARBINARY → MEDIUMBLOB; TEXT(M) and BLOB(M) → the smallest TEXT/BLOB type for M
  characters (bytes); GEOMETRYCOLLECTION → GEOMCOLLECTION (MySQL 8's name, WL#2388).

Text that is no MySQL type, or whose arguments are outside MySQL's ranges, raises
``ValueError``; each caller keeps its own answer to that (the Spark mapping refuses the
column, ALTER TABLE conversions refuse its values, ``information_schema`` shows the text).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from spark_replica.applier_core.storage.collations import max_bytes

INTEGERS = frozenset({"tinyint", "smallint", "mediumint", "int", "bigint"})
#: Approximate numbers: FLOAT (4 bytes) and DOUBLE (8 bytes).
REALS = frozenset({"float", "double"})
NUMBERS = INTEGERS | REALS | {"decimal", "bit"}
TEMPORALS = frozenset({"date", "datetime", "timestamp", "time", "year"})
#: Byte limits of the TEXT and BLOB types.
TEXT_LIMITS = {"tinytext": 255, "text": 65535, "mediumtext": 16777215, "longtext": 4294967295}
BLOB_LIMITS = {"tinyblob": 255, "blob": 65535, "mediumblob": 16777215, "longblob": 4294967295}
#: Types with a character set.
STRINGS = frozenset({"char", "varchar", *TEXT_LIMITS, "enum", "set"})
BINARIES = frozenset({"binary", "varbinary", *BLOB_LIMITS})
SPATIALS = frozenset(
    {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring"}
    | {"multipolygon", "geomcollection"}
)

#: The number of dimensions of a VECTOR without one, and the most it takes.
VECTOR_DEFAULT = 2048
VECTOR_MAX = 16383
_NATIONAL = "utf8mb3"
#: Synonyms of each DATA_TYPE (besides its own name in upper case).
_SYNONYMS = {
    "tinyint": ("INT1", "BOOL", "BOOLEAN"),
    "smallint": ("INT2",),
    "mediumint": ("INT3", "MIDDLEINT"),
    "int": ("INTEGER", "INT4"),
    "bigint": ("INT8", "SERIAL"),
    "decimal": ("DEC", "NUMERIC", "FIXED"),
    "float": ("FLOAT4",),
    "double": ("DOUBLE PRECISION", "REAL", "FLOAT8"),
    "char": ("CHARACTER",),
    "varchar": ("CHARACTER VARYING", "CHAR VARYING", "VARCHARACTER"),
    "mediumtext": ("LONG", "LONG VARCHAR", "LONG CHAR VARYING", "LONG CHARACTER VARYING"),
    "mediumblob": ("LONG VARBINARY",),
    "geomcollection": ("GEOMETRYCOLLECTION",),
}
#: The national character types: CHAR and VARCHAR in utf8mb3.
_NATIONALS = {
    "char": ("NCHAR", "NATIONAL CHAR", "NATIONAL CHARACTER"),
    "varchar": ("NVARCHAR", "NATIONAL VARCHAR", "NCHAR VARCHAR", "NCHAR VARYING",
                "NATIONAL CHAR VARYING", "NATIONAL CHARACTER VARYING"),
}  # fmt: skip
_DATA_TYPES = (
    *INTEGERS, "decimal", *REALS, "bit", *TEMPORALS, "char", "varchar", "binary", "varbinary",
    *TEXT_LIMITS, *BLOB_LIMITS, "enum", "set", "json", *SPATIALS, "vector",
)  # fmt: skip
#: Each name a type text may start with: (DATA_TYPE, national).
_NAMES: dict[str, tuple[str, bool]] = {
    **{name.upper(): (name, False) for name in _DATA_TYPES},
    **{alias: (name, False) for name, aliases in _SYNONYMS.items() for alias in aliases},
    **{alias: (name, True) for name, aliases in _NATIONALS.items() for alias in aliases},
}
#: Words after the name (and its arguments) that are attributes, not part of the name.
_ATTRIBUTES = frozenset(
    {"UNSIGNED", "SIGNED", "ZEROFILL", "CHARSET", "COLLATE", "BINARY", "ASCII", "UNICODE"}
    | {"BYTE", "SRID"}
)
_TOKEN = re.compile(
    r"\s*(?:(?P<word>\w+)|(?P<string>'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\")"
    r"|(?P<punct>[(),]))",
    re.DOTALL,
)
_UNESCAPE = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}
_ESCAPE = {"\\": "\\\\", "'": "''", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}
_ESCAPE |= {"\x1a": "\\Z", "\b": "\\b"}


@dataclass(frozen=True, slots=True)
class MySqlType:
    """A column type as MySQL stores it.

    ``name`` is the type's ``information_schema`` DATA_TYPE (``tinyint``, ``decimal``,
    ``varchar``, ``mediumtext``, ``geomcollection``); synonyms are resolved (INT8 is ``bigint``,
    BOOL ``tinyint`` of ``width`` 1, TEXT(100) ``text``). The other fields are None, 0, False
    or empty where the type has no such part.
    """

    name: str
    #: Integer display width as written (MySQL keeps it for TINYINT(1) and ZEROFILL only).
    width: int | None = None
    #: CHAR/VARCHAR length in characters, BINARY/VARBINARY in bytes, BIT in bits.
    length: int | None = None
    #: DECIMAL(M,D), FLOAT(M,D) and DOUBLE(M,D): M and D (DECIMAL's defaults are 10 and 0).
    precision: int | None = None
    scale: int | None = None
    #: Fractional seconds digits of DATETIME, TIMESTAMP and TIME.
    fsp: int = 0
    unsigned: bool = False
    zerofill: bool = False
    #: ENUM and SET members, as values (quotes and escapes undone).
    values: tuple[str, ...] = ()
    #: The character set and collation the text names (lower case), if any; a national
    #: type's is utf8mb3.
    charset: str | None = None
    collation: str | None = None
    #: The BINARY attribute of a string type: its character set's ``_bin`` collation.
    binary: bool = False
    #: A spatial type's SRID attribute.
    srid: int | None = None
    #: VECTOR's number of dimensions.
    dimension: int | None = None
    #: SERIAL: BIGINT UNSIGNED that is also NOT NULL AUTO_INCREMENT UNIQUE.
    serial: bool = False

    def column_type(self) -> str:
        """MySQL 8.4's ``COLUMN_TYPE`` text (SHOW COLUMNS' Type): ``int unsigned``,
        ``decimal(10,2)``, ``tinyint(1)``, ``enum('a','b')``, ``datetime(3)``.

        >>> parse_type("INT(11) UNSIGNED").column_type()
        'int unsigned'
        >>> parse_type("NUMERIC(8, 3)").column_type(), parse_type("BOOL").column_type()
        ('decimal(8,3)', 'tinyint(1)')
        """
        name = self.name
        if name in INTEGERS:
            keep = self.zerofill or (name == "tinyint" and self.width == 1)
            text = f"{name}({self.width})" if keep and self.width is not None else name
        elif self.precision is not None:  # DECIMAL, FLOAT(M,D), DOUBLE(M,D)
            text = f"{name}({self.precision},{self.scale})"
        elif self.length is not None:
            text = f"{name}({self.length})"
        elif self.fsp:
            text = f"{name}({self.fsp})"
        elif self.values or name in ("enum", "set"):
            text = f"{name}({','.join(_quoted(value) for value in self.values)})"
        elif self.dimension is not None:
            text = f"{name}({self.dimension})"
        else:
            text = name
        return text + (" unsigned" if self.unsigned else "") + (" zerofill" * self.zerofill)


def _quoted(value: str) -> str:
    return "'" + "".join(_ESCAPE.get(char, char) for char in value) + "'"


@functools.lru_cache(maxsize=4096)
def parse_type(text: str) -> MySqlType:
    """The type a column definition's type text stands for (cached: catalogs repeat a few
    types over many columns).

    >>> parse_type("INT8").name, parse_type("double precision").name
    ('bigint', 'double')

    Raises:
        ValueError: the text is not a MySQL type, or its arguments are outside MySQL's
            ranges; the message starts ``MySQL type '<text>':``.
    """
    try:
        return _Reader(text).read()
    except ValueError as exc:
        raise ValueError(f"MySQL type {text!r}: {exc}") from None


@dataclass(slots=True)
class _Attributes:
    """What follows a type's name and arguments."""

    unsigned: bool = False
    zerofill: bool = False
    charset: str | None = None
    collation: str | None = None
    binary: bool = False
    srid: int | None = None


class _Reader:
    """Reads one type text: name words, then ``(arguments)``, then attributes."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.position = 0

    def peek(self, offset: int = 0) -> str:
        index = self.position + offset
        return self.tokens[index] if index < len(self.tokens) else ""

    def take(self) -> str:
        token = self.peek()
        self.position += 1
        return token

    def read(self) -> MySqlType:
        written = self._name()
        name, national = _NAMES[written]
        args = self._arguments(name in ("enum", "set"))
        found = self._attributes(name)
        if national and found.charset is None:
            found.charset = _NATIONAL
        if found.charset == "binary" and name in ("char", "varchar"):  # CHAR(M) BYTE
            name, found.charset = ("binary" if name == "char" else "varbinary"), None
        if written in ("BOOL", "BOOLEAN"):
            args = args or ["1"]
        base = _sized(_build(name, args), found.charset)
        return replace(
            base,
            unsigned=found.unsigned or written == "SERIAL",
            zerofill=found.zerofill,
            charset=found.charset,
            collation=found.collation,
            binary=found.binary,
            srid=found.srid,
            serial=written == "SERIAL",
        )

    def _name(self) -> str:
        words: list[str] = []
        while _is_word(self.peek()) and not self._attribute_starts(bool(words)):
            words.append(self.take().upper())
        written = " ".join(words)
        if written not in _NAMES:
            raise ValueError(f"unknown type {written!r}" if words else "no type name")
        return written

    def _attribute_starts(self, after_name: bool) -> bool:
        word = self.peek().upper()
        if word in ("CHARACTER", "CHAR"):
            return self.peek(1).upper() == "SET"
        return after_name and word in _ATTRIBUTES

    def _arguments(self, strings: bool) -> list[str]:
        if self.peek() != "(":
            if strings:
                raise ValueError("ENUM or SET without members")
            return []
        self.take()
        args: list[str] = []
        while True:
            token = self.take()
            if strings and token[:1] in ("'", '"'):
                args.append(_unquote(token))
            elif not strings and token.isdigit():
                args.append(token)
            else:
                raise ValueError(f"argument {token!r}" if token else "unbalanced parentheses")
            separator = self.take()
            if separator == ")":
                return args
            if separator != ",":
                raise ValueError("unbalanced parentheses")

    def _attributes(self, name: str) -> _Attributes:
        found = _Attributes()
        while self.peek():
            word = self.take().upper()
            if word in ("UNSIGNED", "SIGNED", "ZEROFILL") and name in NUMBERS - {"bit"}:
                # ZEROFILL implies UNSIGNED; SIGNED is the default.
                found.unsigned = found.unsigned or word != "SIGNED"
                found.zerofill = found.zerofill or word == "ZEROFILL"
            elif word == "SRID" and name in SPATIALS and self.peek().isdigit():
                found.srid = int(self.take())
            elif name in STRINGS or (word == "BYTE" and name in ("char", "varchar")):
                self._string_attribute(word, found)
            else:
                raise ValueError(f"unexpected {word!r}")
        return found

    def _string_attribute(self, word: str, found: _Attributes) -> None:
        if word in ("CHARACTER", "CHAR") and self.peek().upper() == "SET":
            self.take()
            word = "CHARSET"
        if word in ("CHARSET", "COLLATE"):
            value = self.take()
            if not _is_word(value) and value[:1] not in ("'", '"'):
                raise ValueError(f"{word} without a name")
            value = (_unquote(value) if value[0] in "'\"" else value).lower()
            if word == "CHARSET":
                found.charset = value
            else:
                found.collation = value
        elif word == "BINARY":
            found.binary = True
        elif word in _CHARSET_WORDS:
            found.charset = _CHARSET_WORDS[word]
        else:
            raise ValueError(f"unexpected {word!r}")


#: Attributes that name a character set: ASCII is latin1, UNICODE ucs2, BYTE binary.
_CHARSET_WORDS = {"ASCII": "latin1", "UNICODE": "ucs2", "BYTE": "binary"}


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    position, end = 0, len(text.rstrip())
    while position < end:
        match = _TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"unexpected {text[position:].strip()[:20]!r}")
        tokens.append(match.group(match.lastgroup or 0))
        position = match.end()
    return tokens


def _is_word(token: str) -> bool:
    return bool(token) and token not in "()," and token[0] not in "'\"" and not token.isdigit()


def _unquote(literal: str) -> str:
    quote, body = literal[0], literal[1:-1]
    body = body.replace(quote * 2, quote)
    return re.sub(r"\\(.)", _unescape, body, flags=re.DOTALL)


def _unescape(match: re.Match[str]) -> str:
    char = match.group(1)
    if char in "%_":  # kept with the backslash outside patterns, as MySQL does
        return "\\" + char
    return _UNESCAPE.get(char, char)


def _build(name: str, args: list[str]) -> MySqlType:
    """The type of DATA_TYPE ``name`` with its arguments, range-checked."""
    if name in ("enum", "set"):
        return MySqlType(name, values=tuple(args))
    numbers = [int(arg) for arg in args]
    if name in INTEGERS:
        _arity(numbers, 1)
        return MySqlType(name, width=numbers[0] if numbers else None)
    if name == "decimal":
        _arity(numbers, 2)
        precision = numbers[0] if numbers else 10
        scale = numbers[1] if len(numbers) == 2 else 0
        _check(1 <= precision <= 65, f"DECIMAL precision {precision}")
        _check(0 <= scale <= min(30, precision), f"DECIMAL scale {scale}")
        return MySqlType(name, precision=precision, scale=scale)
    if name in REALS:
        _arity(numbers, 2)
        if len(numbers) == 1:  # FLOAT(p): the precision in bits picks FLOAT or DOUBLE
            _check(name == "float" and numbers[0] <= 53, f"{name.upper()}({numbers[0]})")
            return MySqlType("float" if numbers[0] <= 24 else "double")
        if numbers:
            return MySqlType(name, precision=numbers[0], scale=numbers[1])
        return MySqlType(name)
    return _build_other(name, numbers)


def _build_other(name: str, numbers: list[int]) -> MySqlType:
    if name == "bit":
        _arity(numbers, 1)
        bits = numbers[0] if numbers else 1
        _check(1 <= bits <= 64, f"BIT({bits})")
        return MySqlType(name, length=bits)
    if name in ("datetime", "timestamp", "time"):
        _arity(numbers, 1)
        fsp = numbers[0] if numbers else 0
        _check(0 <= fsp <= 6, f"fractional seconds precision {fsp}")
        return MySqlType(name, fsp=fsp)
    if name == "year":  # YEAR(4): the display width is dropped
        _arity(numbers, 1)
        return MySqlType(name)
    if name in ("char", "varchar", "binary", "varbinary"):
        _arity(numbers, 1)
        length = numbers[0] if numbers else None
        if length is None and name in ("char", "binary"):
            length = 1  # VARCHAR and VARBINARY need one: kept None
        return MySqlType(name, length=length)
    if name in TEXT_LIMITS or name in BLOB_LIMITS:
        _arity(numbers, 1)
        return MySqlType(name, length=numbers[0] if numbers else None)
    if name == "vector":
        _arity(numbers, 1)
        dimension = numbers[0] if numbers else VECTOR_DEFAULT
        _check(1 <= dimension <= VECTOR_MAX, "VECTOR dimension out of range")
        return MySqlType(name, dimension=dimension)
    _arity(numbers, 0)  # DATE, JSON, spatial types
    return MySqlType(name)


def _sized(found: MySqlType, charset: str | None) -> MySqlType:
    """TEXT(M) and BLOB(M) are the smallest TEXT/BLOB type for M characters (bytes; a
    character takes up to 4, utf8mb4's most, unless the text names a character set)."""
    if found.length is None or found.name not in TEXT_LIMITS.keys() | BLOB_LIMITS.keys():
        return found
    limits = BLOB_LIMITS if found.name in BLOB_LIMITS else TEXT_LIMITS
    unit = 1 if limits is BLOB_LIMITS else max_bytes(charset) if charset else 4
    fitting = [name for name, limit in limits.items() if limit >= found.length * unit]
    return MySqlType(fitting[0] if fitting else list(limits)[-1])


def _arity(numbers: list[int], most: int) -> None:
    _check(len(numbers) <= most, f"{len(numbers)} arguments")


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise ValueError(what)
