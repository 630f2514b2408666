"""The texts of events: utf-8, or MySQL's latin1.

MySQL's ``latin1`` is Windows-1252 where that code page defines a character, and the C1
control character of the same number where it does not (0x81, 0x8D, 0x8F, 0x90, 0x9D), so
every byte maps to one character and back.
"""

from __future__ import annotations

import codecs
from typing import Literal

from spark_replica.applier_core.binlog.errors import BinlogError

_CP1252_HIGH = "€\x81‚ƒ„…†‡ˆ‰Š‹Œ\x8dŽ\x8f\x90‘’“”•–—˜™š›œ\x9džŸ"  # 0x80-0x9F
#: The character of each byte, and its inverse (charmap codecs: C, no per-character Python).
_LATIN1_TABLE = (
    "".join(map(chr, range(0x80))) + _CP1252_HIGH + "".join(map(chr, range(0xA0, 0x100)))
)
_LATIN1_MAP = codecs.charmap_build(_LATIN1_TABLE)

Charset = Literal["utf-8", "latin1"]


def decode_latin1(data: bytes) -> str:
    """MySQL's latin1 ``data`` as text: every byte is one character."""
    if data.isascii():
        return data.decode("ascii")
    return codecs.charmap_decode(data, "strict", _LATIN1_TABLE)[0]


def encode_latin1(text: str) -> bytes:
    """``text`` in MySQL's latin1.

    Raises:
        UnicodeEncodeError: a character latin1 has no byte for.
    """
    if text.isascii():
        return text.encode("ascii")
    try:
        return codecs.charmap_encode(text, "strict", _LATIN1_MAP)[0]
    except UnicodeEncodeError as exc:
        raise UnicodeEncodeError(
            "latin1", text, exc.start, exc.end, "not a MySQL latin1 character"
        ) from None


def decode_text(raw: bytes, charset: Charset) -> tuple[str, bytes | None]:
    """``(text, raw_if_lossy)``: ``raw`` is returned too when the text cannot re-encode to it."""
    if charset == "latin1":
        return decode_latin1(raw), None
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), raw


def encode_text(text: str, charset: Charset) -> bytes:
    try:
        if charset == "latin1":
            return encode_latin1(text)
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BinlogError(f"text is not representable in {charset}: {exc.reason}") from exc
