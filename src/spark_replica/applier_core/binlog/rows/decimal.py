"""NEWDECIMAL binary format (``decimal2bin`` / ``bin2decimal``, strings/decimal.cc).

A DECIMAL(p, s) value is stored as big-endian groups of nine decimal digits in four bytes,
integer part first; a leading group of fewer digits takes {0,1,1,2,2,3,3,4,4,4}[n] bytes, and so
does the trailing fraction group. The first byte's top bit is inverted (set = positive), and a
negative number has every byte inverted.

>>> encode_decimal(Decimal("1234567890.1234"), 14, 4).hex()
'810dfb38d204d2'
>>> decode_decimal(bytes.fromhex("810dfb38d204d2"), 14, 4)
Decimal('1234567890.1234')
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from spark_replica.applier_core.binlog.errors import BinlogError

DIG_PER_DEC = 9
DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
BASE = 10**9


def _layout(precision: int, scale: int) -> tuple[int, int, int, int]:
    if not 0 < precision <= 65 or not 0 <= scale <= 30 or scale > precision:
        raise BinlogError(f"invalid DECIMAL({precision},{scale})")
    intg = precision - scale
    return intg // DIG_PER_DEC, intg % DIG_PER_DEC, scale // DIG_PER_DEC, scale % DIG_PER_DEC


def decimal_size(precision: int, scale: int) -> int:
    """``decimal_bin_size``: bytes of a DECIMAL(precision, scale) value."""
    intg0, intg0x, frac0, frac0x = _layout(precision, scale)
    return intg0 * 4 + DIG2BYTES[intg0x] + frac0 * 4 + DIG2BYTES[frac0x]


def decimal_decoder(precision: int, scale: int) -> Callable[[bytes], Decimal]:
    """A decoder for DECIMAL(precision, scale) values of exactly ``decimal_size`` bytes."""
    intg0, intg0x, frac0, frac0x = _layout(precision, scale)
    size = decimal_size(precision, scale)
    lead = DIG2BYTES[intg0x]
    trail = DIG2BYTES[frac0x]
    lead_limit = 10**intg0x
    trail_limit = 10**frac0x
    trail_scale = 10**frac0x
    frac_start = lead + intg0 * 4
    sign_flip = 0x80 << (8 * (size - 1))
    all_ones = (1 << (8 * size)) - 1
    fmt = "{}{}.{:0" + str(scale) + "d}" if scale else "{}{}"

    def decode(raw: bytes) -> Decimal:
        if len(raw) != size:
            raise BinlogError(f"DECIMAL({precision},{scale}) needs {size} bytes, got {len(raw)}")
        value = int.from_bytes(raw, "big") ^ sign_flip
        negative = not raw[0] & 0x80
        if negative:
            value ^= all_ones
        data = value.to_bytes(size, "big")
        integer = int.from_bytes(data[:lead], "big") if lead else 0
        if integer >= lead_limit:
            raise BinlogError(f"invalid DECIMAL({precision},{scale}) bytes {raw.hex()}")
        for pos in range(lead, frac_start, 4):
            group = int.from_bytes(data[pos : pos + 4], "big")
            if group >= BASE:
                raise BinlogError(f"invalid DECIMAL({precision},{scale}) bytes {raw.hex()}")
            integer = integer * BASE + group
        fraction = 0
        for pos in range(frac_start, frac_start + frac0 * 4, 4):
            group = int.from_bytes(data[pos : pos + 4], "big")
            if group >= BASE:
                raise BinlogError(f"invalid DECIMAL({precision},{scale}) bytes {raw.hex()}")
            fraction = fraction * BASE + group
        if trail:
            last = int.from_bytes(data[size - trail :], "big")
            if last >= trail_limit:
                raise BinlogError(f"invalid DECIMAL({precision},{scale}) bytes {raw.hex()}")
            fraction = fraction * trail_scale + last
        return Decimal(fmt.format("-" if negative else "", integer, fraction))

    return decode


def decode_decimal(raw: bytes, precision: int, scale: int) -> Decimal:
    return decimal_decoder(precision, scale)(raw)


def _scaled(value: Decimal, precision: int, scale: int) -> tuple[bool, int]:
    """(negative, value * 10**scale as an exact integer)."""
    if not value.is_finite():
        raise BinlogError(f"DECIMAL value {value} is not a finite number")
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    coefficient = int("".join(map(str, digits))) if digits else 0
    shift = exponent + scale
    if shift >= 0:
        scaled = coefficient * 10**shift
    else:
        scaled, rest = divmod(coefficient, 10**-shift)
        if rest:
            raise BinlogError(f"DECIMAL value {value} has more than {scale} fractional digits")
    if scaled >= 10**precision:
        raise BinlogError(f"DECIMAL value {value} does not fit DECIMAL({precision},{scale})")
    return bool(sign), scaled


def encode_decimal(value: Decimal, precision: int, scale: int) -> bytes:
    """The binary form of ``value`` in a DECIMAL(precision, scale) column (exact or error)."""
    intg0, intg0x, frac0, frac0x = _layout(precision, scale)
    negative, scaled = _scaled(value, precision, scale)
    integer, fraction = divmod(scaled, 10**scale)
    out = bytearray()
    lead = DIG2BYTES[intg0x]
    if lead:
        out += (integer // BASE**intg0).to_bytes(lead, "big")
    for i in range(intg0 - 1, -1, -1):
        out += (integer // BASE**i % BASE).to_bytes(4, "big")
    trail = DIG2BYTES[frac0x]
    if frac0x:
        head, last = divmod(fraction, 10**frac0x)
    else:
        head, last = fraction, 0
    for i in range(frac0 - 1, -1, -1):
        out += (head // BASE**i % BASE).to_bytes(4, "big")
    if trail:
        out += last.to_bytes(trail, "big")
    if negative:
        out = bytearray(b ^ 0xFF for b in out)
    out[0] ^= 0x80
    return bytes(out)
