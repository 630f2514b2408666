"""Collation ids to character sets, and how a character set's bytes become a ``str``.

Only the character sets a replica meets in practice are decoded: utf8mb4, utf8mb3, latin1,
ascii and binary. Any other collation leaves the value as ``bytes``.

MySQL's ``latin1`` is decoded by ``text.decode_latin1``.
"""

from __future__ import annotations

from collections.abc import Callable

from spark_replica.applier_core.binlog.text import decode_latin1, encode_latin1

UTF8MB4 = "utf8mb4"
UTF8MB3 = "utf8mb3"
LATIN1 = "latin1"
ASCII = "ascii"
BINARY = "binary"

BINARY_COLLATION = 63


def _ids(*ranges: range | int) -> list[int]:
    out: list[int] = []
    for item in ranges:
        out.extend(item if isinstance(item, range) else (item,))
    return out


# MySQL ids, then MariaDB's NO PAD variants (id + 1024) and its UCA 14.0.0 ranges (10.10+).
_CHARSET_IDS: dict[str, list[int]] = {
    UTF8MB4: _ids(45, 46, range(224, 248), range(255, 324), 1069, 1070, range(1248, 1272),
                  range(2304, 2560)),
    UTF8MB3: _ids(33, 76, 83, range(192, 216), 223, 1057, 1107, range(1216, 1240),
                  range(2048, 2304)),
    LATIN1: _ids(5, 8, 15, 31, 47, 48, 49, 94, 1032, 1071),
    ASCII: _ids(11, 65, 1035, 1089),
    BINARY: _ids(BINARY_COLLATION),
}  # fmt: skip

CHARSET_OF_COLLATION: dict[int, str] = {
    collation: name for name, ids in _CHARSET_IDS.items() for collation in ids
}


def charset_of(collation: int | None) -> str | None:
    """The character set name of a collation id, or None when unknown."""
    if collation is None:
        return None
    return CHARSET_OF_COLLATION.get(collation)


def _decode_utf8(data: bytes) -> str:
    return data.decode("utf-8")


def _decode_ascii(data: bytes) -> str:
    return data.decode("ascii")


def _encode_utf8(text: str) -> bytes:
    return text.encode("utf-8")


def _encode_ascii(text: str) -> bytes:
    return text.encode("ascii")


#: charset name -> (decoder, encoder, inline decode expression suffix for generated code)
TEXT_CODECS: dict[str, tuple[Callable[[bytes], str], Callable[[str], bytes], str]] = {
    UTF8MB4: (_decode_utf8, _encode_utf8, ".decode('utf-8')"),
    UTF8MB3: (_decode_utf8, _encode_utf8, ".decode('utf-8')"),
    ASCII: (_decode_ascii, _encode_ascii, ".decode('ascii')"),
    LATIN1: (decode_latin1, encode_latin1, ""),
}


def name_text(data: bytes) -> str:
    """Identifiers and ENUM/SET member names of an unknown character set: lossless."""
    return data.decode("utf-8", "surrogateescape")


def name_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def member_codec(collation: int | None) -> tuple[Callable[[bytes], str], Callable[[str], bytes]]:
    """How ENUM/SET member names of a column's character set decode and encode."""
    charset = charset_of(collation)
    if charset == LATIN1:
        return decode_latin1, encode_latin1
    return name_text, name_bytes
