"""Little- and big-endian integers and MySQL's packed integers over bytes.

``Reader`` raises ``BinlogError`` (never ``IndexError`` or ``struct.error``) when the input
ends early, so a truncated event gives a clear error.
"""

from __future__ import annotations

import builtins
import struct

from spark_replica.applier_core.binlog.errors import BinlogError

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


class Reader:
    """A cursor over ``data``; every read checks the bounds."""

    __slots__ = ("data", "pos", "end")

    def __init__(
        self, data: builtins.bytes | memoryview, pos: int = 0, end: int | None = None
    ) -> None:
        self.data = memoryview(data) if not isinstance(data, memoryview) else data
        self.pos = pos
        self.end = len(self.data) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def _take(self, size: int) -> int:
        start = self.pos
        if size < 0 or start + size > self.end:
            raise BinlogError(f"event is too short: needs {size} more bytes at offset {start}, "
                              f"has {self.end - start}")  # fmt: skip
        self.pos = start + size
        return start

    def bytes(self, size: int) -> builtins.bytes:
        start = self._take(size)
        return bytes(self.data[start : start + size])

    def rest(self) -> builtins.bytes:
        return self.bytes(self.remaining)

    def skip(self, size: int) -> None:
        self._take(size)

    def u8(self) -> int:
        return self.data[self._take(1)]

    def u16(self) -> int:
        return int(_U16.unpack_from(self.data, self._take(2))[0])

    def u24(self) -> int:
        start = self._take(3)
        return int.from_bytes(self.data[start : start + 3], "little")

    def u32(self) -> int:
        return int(_U32.unpack_from(self.data, self._take(4))[0])

    def u48(self) -> int:
        start = self._take(6)
        return int.from_bytes(self.data[start : start + 6], "little")

    def u64(self) -> int:
        return int(_U64.unpack_from(self.data, self._take(8))[0])

    def i64(self) -> int:
        return int(_I64.unpack_from(self.data, self._take(8))[0])

    def uint(self, size: int) -> int:
        """An unsigned little-endian integer of ``size`` bytes."""
        start = self._take(size)
        return int.from_bytes(self.data[start : start + size], "little")

    def uint_be(self, size: int) -> int:
        """An unsigned big-endian integer of ``size`` bytes."""
        start = self._take(size)
        return int.from_bytes(self.data[start : start + size], "big")

    def f32(self) -> float:
        return float(_F32.unpack_from(self.data, self._take(4))[0])

    def f64(self) -> float:
        return float(_F64.unpack_from(self.data, self._take(8))[0])

    def packed(self) -> int:
        """A MySQL packed (length-encoded) integer."""
        first = self.u8()
        if first < 251:
            return first
        if first == 0xFC:
            return self.u16()
        if first == 0xFD:
            return self.u24()
        if first == 0xFE:
            return self.u64()
        raise BinlogError(f"invalid packed integer prefix 0x{first:02x} at offset {self.pos - 1}")

    def cstring(self) -> builtins.bytes:
        """Bytes up to a NUL, which is consumed."""
        view = bytes(self.data[self.pos : self.end])
        index = view.find(b"\x00")
        if index < 0:
            raise BinlogError(f"unterminated string at offset {self.pos}")
        self.pos += index + 1
        return view[:index]


def pack_int(value: int) -> bytes:
    """A MySQL packed (length-encoded) integer.

    >>> pack_int(250), pack_int(251), pack_int(70000)
    (b'\\xfa', b'\\xfc\\xfb\\x00', b'\\xfdp\\x11\\x01')
    """
    if value < 0:
        raise ValueError("packed integers are unsigned")
    if value < 251:
        return bytes((value,))
    if value < 1 << 16:
        return b"\xfc" + _U16.pack(value)
    if value < 1 << 24:
        return b"\xfd" + value.to_bytes(3, "little")
    return b"\xfe" + _U64.pack(value)


def u8(value: int) -> bytes:
    return bytes((value,))


def u16(value: int) -> bytes:
    return _U16.pack(value)


def u32(value: int) -> bytes:
    return _U32.pack(value)


def u64(value: int) -> bytes:
    return _U64.pack(value)


def uint(value: int, size: int) -> bytes:
    return value.to_bytes(size, "little")
