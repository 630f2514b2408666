"""The texts of events: utf-8, or MySQL's latin1 (cp1252 with its five undefined bytes
mapped to C1 controls)."""

from __future__ import annotations

from typing import Literal

from spark_replica.applier_core.binlog.errors import BinlogError


def _cp1252_tables() -> tuple[dict[int, str], dict[int, int]]:
    decode: dict[int, str] = {}
    for byte in range(0x80, 0xA0):
        try:
            decode[byte] = bytes((byte,)).decode("cp1252")
        except UnicodeDecodeError:
            decode[byte] = chr(byte)
    return decode, {ord(char): byte for byte, char in decode.items()}


_LATIN1_DECODE, _LATIN1_ENCODE = _cp1252_tables()

Charset = Literal["utf-8", "latin1"]


def decode_text(raw: bytes, charset: Charset) -> tuple[str, bytes | None]:
    """``(text, raw_if_lossy)``: ``raw`` is returned too when the text cannot re-encode to it."""
    if charset == "latin1":
        return raw.decode("latin-1").translate(_LATIN1_DECODE), None
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), raw


def encode_text(text: str, charset: Charset) -> bytes:
    try:
        if charset == "latin1":
            return text.translate(_LATIN1_ENCODE).encode("latin-1")
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BinlogError(f"text is not representable in {charset}: {exc.reason}") from exc
