"""Row image decoders compiled once per (table map, columns-present bitmap).

For a table and the set of columns a row image carries, Python source is generated for a
function ``image(buf, pos, end) -> (row, pos)`` and a loop over many images (``rows``):

* it reads the NULL bitmap; when no present column is NULL (the common case) it runs a
  straight-line body where each run of consecutive fixed-size columns is one
  ``struct.Struct.unpack_from`` call and each variable-length column is a length read, a
  bounds check and a slice, with the type's conversion inlined where it is an expression;
* otherwise it runs a second generated body that tests each column's NULL bit.

The row is a tuple with one entry per table column: the value, None for NULL, ``ABSENT`` for
a column the image does not include. ``end`` is the end of the event's row data; reads past it
raise ``BinlogError`` (slices by an explicit check, ``struct`` and indexing by their own
errors, which the rows decoder turns into ``BinlogError``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, NamedTuple

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.rows.columns import ColumnSpec
from spark_replica.applier_core.binlog.rows.values import ABSENT, Codec, codec_for

Row = tuple[Any, ...]
ImageDecoder = Callable[[bytes, int, int], tuple[Row, int]]
RowsDecoder = Callable[[bytes, int, int, list[Any]], int]


def _short(column: str) -> BinlogError:
    return BinlogError(f"rows event is truncated inside the value of {column}")


class _Emitter:
    def __init__(self, codecs: dict[int, Codec]) -> None:
        self.codecs = codecs
        self.namespace: dict[str, Any] = {"ABSENT": ABSENT, "_short": _short}
        self.lines: list[str] = []

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def _convert(self, index: int, raw: str) -> str:
        codec = self.codecs[index]
        if codec.inline is not None:
            return codec.inline.format(v=raw)
        if codec.convert is not None:
            self.namespace[f"_c{index}"] = codec.convert
            return f"_c{index}({raw})"
        return raw

    def fixed_run(self, indent: int, run: list[int]) -> None:
        """One unpack for consecutive fixed-size columns, then their conversions."""
        codecs = [self.codecs[i] for i in run if self.codecs[i].fmt]
        for index in run:
            if not self.codecs[index].fmt:  # the NULL type: no bytes
                self.emit(indent, f"v{index} = None")
        if not codecs:
            return
        name = f"_S{len(self.namespace)}"
        layout = struct.Struct("<" + "".join(c.fmt for c in codecs))
        self.namespace[name] = layout.unpack_from
        targets = "".join(f"v{c.spec.index}, " for c in codecs)
        self.emit(indent, f"{targets}= {name}(buf, pos)")
        self.emit(indent, f"pos += {layout.size}")
        for codec in codecs:
            expr = self._convert(codec.spec.index, f"v{codec.spec.index}")
            if expr != f"v{codec.spec.index}":
                self.emit(indent, f"v{codec.spec.index} = {expr}")

    def variable(self, indent: int, index: int) -> None:
        codec = self.codecs[index]
        prefix = codec.prefix
        if prefix == 1:
            self.emit(indent, "n = buf[pos]")
        elif prefix == 2:
            self.emit(indent, "n = buf[pos] | buf[pos + 1] << 8")
        else:
            self.emit(indent, f"n = int.from_bytes(buf[pos:pos + {prefix}], 'little')")
        self.emit(indent, f"pos += {prefix}")
        self.emit(indent, "e = pos + n")
        self.emit(indent, "if e > end:")
        self.emit(indent + 1, f"raise _short({codec.spec.describe()!r})")
        self.emit(indent, f"v{index} = {self._convert(index, 'buf[pos:e]')}")
        self.emit(indent, "pos = e")

    def columns(self, indent: int, present: list[int]) -> None:
        run: list[int] = []
        for index in present:
            if self.codecs[index].prefix:
                if run:
                    self.fixed_run(indent, run)
                    run = []
                self.variable(indent, index)
            else:
                run.append(index)
        if run:
            self.fixed_run(indent, run)


class CompiledImage(NamedTuple):
    """``image(buf, pos, end) -> (row, pos)`` decodes one row image; ``rows(buf, pos, end,
    out) -> pos`` decodes images up to ``end``, appending each row to ``out`` (the loop of
    WRITE and DELETE events, with the no-NULL body inlined)."""

    image: ImageDecoder
    rows: RowsDecoder
    source: str


def compile_image(columns: tuple[ColumnSpec, ...], present: int, width: int) -> CompiledImage:
    """Decoders for row images of ``columns`` whose columns-present bitmap is ``present``."""
    indexes = [i for i in range(width) if present >> i & 1]
    codecs = {i: codec_for(columns[i]) for i in indexes}
    emitter = _Emitter(codecs)
    count = len(indexes)
    null_bytes = (count + 7) // 8
    mask = (1 << count) - 1
    row = "(" + "".join(f"v{i}, " if i in codecs else "ABSENT, " for i in range(width)) + ")"
    emit = emitter.emit
    if null_bytes == 0:
        read_nulls = "nulls = 0"
    elif null_bytes == 1:
        read_nulls = "nulls = buf[pos]"
    else:
        read_nulls = f"nulls = int.from_bytes(buf[pos:pos + {null_bytes}], 'little')"

    emit(0, "def _with_nulls(buf, pos, end, nulls):")
    for bit, index in enumerate(indexes):
        emit(1, f"if nulls & {1 << bit}:")
        emit(2, f"v{index} = None")
        emit(1, "else:")
        emitter.columns(2, [index])
    emit(1, f"return {row}, pos")
    emit(0, "")
    emit(0, "def image(buf, pos, end):")
    emit(1, read_nulls)
    emit(1, f"pos += {null_bytes}")
    emit(1, f"if nulls & {mask}:")
    emit(2, "return _with_nulls(buf, pos, end, nulls)")
    emitter.columns(1, indexes)
    emit(1, f"return {row}, pos")
    emit(0, "")
    emit(0, "def rows(buf, pos, end, out):")
    emit(1, "append = out.append")
    emit(1, "while pos < end:")
    emit(2, read_nulls)
    emit(2, f"pos += {null_bytes}")
    emit(2, f"if nulls & {mask}:")
    emit(3, "row, pos = _with_nulls(buf, pos, end, nulls)")
    emit(3, "append(row)")
    emit(3, "continue")
    emitter.columns(2, indexes)
    emit(2, f"append({row})")
    emit(1, "return pos")
    source = "\n".join(emitter.lines) + "\n"
    namespace = emitter.namespace
    filename = f"<row image of {width} columns, present {present:#x}>"
    exec(compile(source, filename, "exec"), namespace)
    return CompiledImage(namespace["image"], namespace["rows"], source)
