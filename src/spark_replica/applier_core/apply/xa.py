"""XA statements as a source logs them, and the prepared transaction kept until its commit
(docs/decisions/0015).

A source logs an XA transaction in two GTID transactions. The first holds ``XA START xid``,
the row events, ``XA END xid`` and an XA_prepare event (a MariaDB source: a Gtid event
flagged PREPARED_XA, which the receiver turns into ``XA START``, then the same events); the
second is a single ``XA COMMIT xid`` or ``XA ROLLBACK xid`` Query. ``XA COMMIT xid ONE
PHASE`` is logged as the first form with the XA_prepare event's ``one_phase`` set (MariaDB:
as an ordinary transaction) and commits at once.

https://dev.mysql.com/doc/refman/8.4/en/xa-statements.html
https://dev.mysql.com/doc/refman/8.4/en/xa-restrictions.html

The replica keeps a prepared transaction's row events (``encode_events``) in the storage
engine, under the xid's canonical text (``Xid.text``), committed with the GTID of the
prepare; ``XA COMMIT`` applies them in its own transaction, ``XA ROLLBACK`` drops them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from spark_replica.applier_core.binlog.codecs.registry import (
    decode_bytes,
    encode_event,
    remember_table_map,
)
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import DEFAULT_FDE, Event, Query, XaPrepare
from spark_replica.applier_core.binlog.rows import RowsEvent

_HEADER_LEN = 19
_LENGTH_AT = 9


@dataclass(frozen=True, slots=True)
class Xid:
    """An XA transaction identifier: global and branch qualifiers, format id.

    >>> Xid(b"a", b"", 1).text
    "X'61',X'',1"
    """

    gtrid: bytes
    bqual: bytes = b""
    format_id: int = 1

    @property
    def text(self) -> str:
        """The form MySQL logs and XA RECOVER CONVERT XID shows: ``X'..',X'..',format``."""
        return f"X'{self.gtrid.hex()}',X'{self.bqual.hex()}',{self.format_id}"

    @classmethod
    def of_prepare(cls, event: XaPrepare) -> Xid:
        return cls(event.gtrid, event.bqual, event.format_id)


class XaVerb(enum.Enum):
    START = "START"
    END = "END"
    PREPARE = "PREPARE"
    COMMIT = "COMMIT"
    ROLLBACK = "ROLLBACK"
    RECOVER = "RECOVER"


@dataclass(frozen=True, slots=True)
class XaStatement:
    """One parsed XA statement; ``xid`` is None only for XA RECOVER."""

    verb: XaVerb
    xid: Xid | None
    one_phase: bool = False


_VERB = re.compile(r"\s*XA\s+(START|BEGIN|END|PREPARE|COMMIT|ROLLBACK|RECOVER)\b", re.I)
_STRING = re.compile(
    r"\s*(?:[xX]'(?P<hex>[0-9a-fA-F]*)'|0x(?P<hex0>[0-9a-fA-F]+)|[bB]'(?P<bits>[01]*)'"
    r"|'(?P<single>(?:[^'\\]|\\.|'')*)'|\"(?P<double>(?:[^\"\\]|\\.|\"\")*)\")"
)
_NUMBER = re.compile(r"\s*,\s*(?P<n>[0-9]+)")
_COMMA = re.compile(r"\s*,")
_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}


_LOGGED_VERB = re.compile(r"\s*XA\s+(START|BEGIN|END|PREPARE|COMMIT|ROLLBACK)\b", re.I)


def xa_verb(query: Query) -> str | None:
    """The verb of an XA statement a source may log (``BEGIN`` read as ``START``), else
    None."""
    found = _LOGGED_VERB.match(query.query)
    if found is None:
        return None
    verb = found.group(1).upper()
    return "START" if verb == "BEGIN" else verb


def parse_xa(statement: str) -> XaStatement | None:
    """The XA statement ``statement`` is, or None when it is not one.

    >>> parse_xa("XA COMMIT X'61',X'',1")
    XaStatement(verb=<XaVerb.COMMIT: 'COMMIT'>, xid=Xid(gtrid=b'a', bqual=b'', format_id=1), \
one_phase=False)
    >>> parse_xa("xa commit 'a', 'b', 7 one phase").one_phase
    True

    Raises:
        ValueError: an XA statement whose xid cannot be read.
    """
    found = _VERB.match(statement)
    if found is None:
        return None
    word = found.group(1).upper()
    verb = XaVerb.START if word == "BEGIN" else XaVerb(word)
    if verb is XaVerb.RECOVER:
        return XaStatement(verb, None)
    xid, rest = _xid(statement, found.end())
    one_phase = verb is XaVerb.COMMIT and rest.split() == ["ONE", "PHASE"]
    return XaStatement(verb, xid, one_phase)


def _xid(text: str, at: int) -> tuple[Xid, str]:
    found = _STRING.match(text, at)
    if found is None:
        raise ValueError(f"no xid in {text!r}")
    gtrid, bqual, at = _literal(found), b"", found.end()
    comma = _COMMA.match(text, at)
    if comma is not None and (found := _STRING.match(text, comma.end())) is not None:
        bqual, at = _literal(found), found.end()
    format_id = 1
    number = _NUMBER.match(text, at)
    if number is not None:
        format_id, at = int(number.group("n")), number.end()
    return Xid(gtrid, bqual, format_id), text[at:].upper()


def _literal(found: re.Match[str]) -> bytes:
    if (hex_digits := found.group("hex")) is not None:
        return bytes.fromhex(hex_digits if len(hex_digits) % 2 == 0 else "0" + hex_digits)
    if (hex_digits := found.group("hex0")) is not None:
        return bytes.fromhex(hex_digits if len(hex_digits) % 2 == 0 else "0" + hex_digits)
    if (bits := found.group("bits")) is not None:
        return int(bits, 2).to_bytes((len(bits) + 7) // 8, "big") if bits else b""
    single = found.group("single")
    quote = "'" if single is not None else '"'
    body = single if single is not None else found.group("double")
    return _unescape(body, quote).encode("utf-8")


def _unescape(body: str, quote: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        elif char == quote and body.startswith(quote * 2, i):
            out.append(quote)
            i += 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


# -- the events of a prepared transaction ------------------------------------------------------


def encode_events(events: Iterable[RowsEvent]) -> bytes:
    """The row events (each after its Table_map) as binlog v4 events without checksums,
    concatenated: what the engine keeps of a prepared transaction."""
    out: list[bytes] = []
    written: set[int] = set()
    for event in events:
        table_map = event.table_map
        assert table_map is not None, "the decoder attaches the Table_map"
        maps = {table_map.table_id: table_map}
        if table_map.table_id not in written:
            written.add(table_map.table_id)
            out.append(encode_event(table_map, checksum=False, log_pos=table_map.header.log_pos))
        out.append(encode_event(event, checksum=False, log_pos=event.header.log_pos,
                                table_maps=maps))  # fmt: skip
    return b"".join(out)


def decode_events(data: bytes) -> Iterator[RowsEvent]:
    """The row events ``encode_events`` wrote, their Table_map events attached.

    Raises:
        BinlogError: ``data`` is not what ``encode_events`` writes.
    """
    table_maps: dict[int, object] = {}
    post_header = DEFAULT_FDE.post_header_by_type
    at = 0
    while at < len(data):
        if len(data) - at < _HEADER_LEN:
            raise BinlogError("a prepared XA transaction's events end inside an event header")
        length = int.from_bytes(data[at + _LENGTH_AT : at + _LENGTH_AT + 4], "little")
        event: Event = decode_bytes(data[at : at + length], False, post_header, table_maps)
        at += length
        if event.header.type_code == EventType.TABLE_MAP:
            remember_table_map(event, table_maps)
        elif isinstance(event, RowsEvent):
            yield event
        else:
            raise BinlogError(f"a prepared XA transaction holds a {event.header.type_name}")
