"""Row image decoders compiled once per (table definition, columns-present bitmap).

For a table and the set of columns a row image carries, Python source is generated for a
loop over the images of WRITE and DELETE events (``rows``);
``compile_update`` generates the loop of UPDATE events over (before, after) pairs:

* each image reads its NULL bitmap; when no present column is NULL (the common case) a
  straight-line body inlined in the loop runs, where each run of consecutive fixed-size
  columns is one ``struct.Struct.unpack_from`` call and each variable-length column is a
  length read, a bounds check and a slice, with the type's conversion inlined where it is an
  expression;
* otherwise a generated helper that tests each column's NULL bit decodes the image.

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
    """``rows(buf, pos, end, out) -> pos`` decodes images up to ``end``, appending each row to
    ``out`` (the loop of WRITE and DELETE events); ``source`` is its generated code."""

    rows: RowsDecoder
    source: str


def _image_parts(
    emitter: _Emitter, columns: tuple[ColumnSpec, ...], present: int, width: int, tag: str
) -> tuple[list[int], str, str, int]:
    """Register the codecs of one image; returns its columns, the row expression, the NULL
    bitmap read and the NULL mask. ``tag`` names the image's NULL-aware helper."""
    indexes = [i for i in range(width) if present >> i & 1]
    for i in indexes:
        emitter.codecs[i] = codec_for(columns[i])
    count = len(indexes)
    null_bytes = (count + 7) // 8
    row = "(" + "".join(f"v{i}, " if i in indexes else "ABSENT, " for i in range(width)) + ")"
    if null_bytes == 0:
        read_nulls = "nulls = 0"
    elif null_bytes == 1:
        read_nulls = "nulls = buf[pos]"
    else:
        read_nulls = f"nulls = int.from_bytes(buf[pos:pos + {null_bytes}], 'little')"
    emitter.emit(0, f"def _with_nulls{tag}(buf, pos, end, nulls):")
    for bit, index in enumerate(indexes):
        emitter.emit(1, f"if nulls & {1 << bit}:")
        emitter.emit(2, f"v{index} = None")
        emitter.emit(1, "else:")
        emitter.columns(2, [index])
    emitter.emit(1, f"return {row}, pos")
    emitter.emit(0, "")
    return indexes, row, read_nulls, (1 << count) - 1


def _inline_image(
    emitter: _Emitter, indent: int, parts: tuple[list[int], str, str, int], tag: str, target: str
) -> None:
    """Decode one image into ``target``: the no-NULL body inline, else the helper."""
    indexes, row, read_nulls, mask = parts
    emit = emitter.emit
    emit(indent, read_nulls)
    emit(indent, f"pos += {(len(indexes) + 7) // 8}")
    emit(indent, f"if nulls & {mask}:")
    emit(indent + 1, f"{target}, pos = _with_nulls{tag}(buf, pos, end, nulls)")
    emit(indent, "else:")
    emitter.columns(indent + 1, indexes)
    emit(indent + 1, f"{target} = {row}")


def _build(emitter: _Emitter, name: str) -> dict[str, Any]:
    source = "\n".join(emitter.lines) + "\n"
    namespace = emitter.namespace
    namespace["__source__"] = source
    exec(compile(source, name, "exec"), namespace)
    return namespace


def compile_image(columns: tuple[ColumnSpec, ...], present: int, width: int) -> CompiledImage:
    """Decoders for row images of ``columns`` whose columns-present bitmap is ``present``."""
    emitter = _Emitter({})
    parts = _image_parts(emitter, columns, present, width, "")
    emit = emitter.emit
    emit(0, "def rows(buf, pos, end, out):")
    emit(1, "append = out.append")
    emit(1, "while pos < end:")
    _inline_image(emitter, 2, parts, "", "row")
    emit(2, "append(row)")
    emit(1, "return pos")
    namespace = _build(emitter, f"<row image of {width} columns, present {present:#x}>")
    return CompiledImage(namespace["rows"], namespace["__source__"])


def compile_update(
    columns: tuple[ColumnSpec, ...], before: int, after: int, width: int
) -> RowsDecoder:
    """``pairs(buf, pos, end, out) -> pos``: the loop of UPDATE events, appending a
    ``(before, after)`` pair per row, with both images' no-NULL bodies inlined."""
    emitter = _Emitter({})
    old_parts = _image_parts(emitter, columns, before, width, "_old")
    new_parts = _image_parts(emitter, columns, after, width, "_new")
    emit = emitter.emit
    emit(0, "def pairs(buf, pos, end, out):")
    emit(1, "append = out.append")
    emit(1, "while pos < end:")
    _inline_image(emitter, 2, old_parts, "_old", "old")
    _inline_image(emitter, 2, new_parts, "_new", "new")
    emit(2, "append((old, new))")
    emit(1, "return pos")
    name = f"<update images of {width} columns, present {before:#x} and {after:#x}>"
    pairs: RowsDecoder = _build(emitter, name)["pairs"]
    return pairs
