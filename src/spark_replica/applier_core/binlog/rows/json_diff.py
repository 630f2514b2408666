"""Partial JSON updates (``binlog_row_value_options=PARTIAL_JSON``; sql/json_diff.cc).

A partially updated JSON column carries, instead of the new document, a 4-byte length and a
list of diffs: operation (0 REPLACE, 1 INSERT, 2 REMOVE), path (packed length + text such as
``$.a[2]."b c"``) and, except for REMOVE, the new value (packed length + binary JSON).
``apply_diffs`` applies them to the old document as ``apply_json_diffs`` does.
"""

from __future__ import annotations

import copy
import enum
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.packing import Reader, pack_int
from spark_replica.applier_core.binlog.rows.json_binary import (
    JsonValue,
    decode_json,
    encode_json,
    key_order,
)


class DiffOperation(enum.IntEnum):
    REPLACE = 0
    INSERT = 1
    REMOVE = 2


@dataclass(frozen=True, slots=True)
class JsonDiff:
    operation: DiffOperation
    path: str
    #: The new value (a JSON tree); None for REMOVE. JSON null is the tree value None too,
    #: so ``has_value`` tells them apart.
    value: JsonValue = None

    @property
    def has_value(self) -> bool:
        return self.operation != DiffOperation.REMOVE


@dataclass(frozen=True, slots=True)
class PartialJson:
    """A JSON column value given only as diffs, with no old document to apply them to."""

    diffs: tuple[JsonDiff, ...]


def decode_diffs(data: bytes) -> tuple[JsonDiff, ...]:
    """The diffs of a partial JSON value (after its 4-byte length)."""
    reader = Reader(data)
    diffs: list[JsonDiff] = []
    while reader.remaining:
        code = reader.u8()
        try:
            operation = DiffOperation(code)
        except ValueError:
            raise BinlogError(f"unknown JSON diff operation {code}") from None
        raw_path = reader.bytes(reader.packed())
        try:
            path = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            raise BinlogError("JSON diff path is not utf8mb4") from None
        value: JsonValue = None
        if operation != DiffOperation.REMOVE:
            value = decode_json(reader.bytes(reader.packed()))
        diffs.append(JsonDiff(operation, path, value))
    return tuple(diffs)


def encode_diffs(diffs: tuple[JsonDiff, ...]) -> bytes:
    out = bytearray()
    for diff in diffs:
        path = diff.path.encode("utf-8")
        out += bytes((diff.operation,)) + pack_int(len(path)) + path
        if diff.has_value:
            value = encode_json(diff.value)
            out += pack_int(len(value)) + value
    return bytes(out)


Leg = str | int  # member name, or array index (negative: counted from the end, -1 = last)


def parse_path(path: str) -> list[Leg]:
    """The legs of a concrete JSON path such as ``$.a[3]."x y"[last]``."""
    text = path.strip()
    if not text.startswith("$"):
        raise BinlogError(f"JSON diff path {path!r} does not start with $")
    legs: list[Leg] = []
    pos = 1
    while pos < len(text):
        char = text[pos]
        if char == ".":
            pos += 1
            if text.startswith('"', pos):
                try:
                    name, pos = scanstring(text, pos + 1)
                except ValueError:
                    raise BinlogError(f"bad member name in JSON path {path!r}") from None
            else:
                end = pos
                while end < len(text) and text[end] not in ".[":
                    end += 1
                name, pos = text[pos:end], end
                if not name:
                    raise BinlogError(f"empty member name in JSON path {path!r}")
            legs.append(name)
        elif char == "[":
            end = text.find("]", pos)
            if end < 0:
                raise BinlogError(f"unterminated array index in JSON path {path!r}")
            legs.append(_index(text[pos + 1 : end].strip(), path))
            pos = end + 1
        else:
            raise BinlogError(f"unexpected {char!r} in JSON path {path!r}")
    return legs


def _index(text: str, path: str) -> int:
    if text.isdigit():
        return int(text)
    if text == "last":
        return -1
    if text.startswith("last") and text[4:].replace(" ", "").startswith("-"):
        offset = text[4:].replace(" ", "")[1:]
        if offset.isdigit():
            return -1 - int(offset)
    raise BinlogError(f"unsupported array index {text!r} in JSON path {path!r}")


def _position(leg: int, size: int) -> int:
    return leg if leg >= 0 else size + leg


def _child(node: JsonValue, leg: Leg, path: str) -> JsonValue:
    if isinstance(leg, str) and isinstance(node, dict) and leg in node:
        return node[leg]
    if isinstance(leg, int) and isinstance(node, list):
        position = _position(leg, len(node))
        if 0 <= position < len(node):
            return node[position]
    raise BinlogError(f"JSON diff path {path!r} does not exist in the old document")


def _sorted_insert(node: dict[str, JsonValue], key: str, value: JsonValue) -> None:
    node[key] = value
    items = sorted(node.items(), key=lambda item: key_order(item[0]))
    node.clear()
    node.update(items)


def apply_diffs(document: JsonValue, diffs: tuple[JsonDiff, ...]) -> JsonValue:
    """The document after the diffs (the old document is not modified)."""
    result = copy.deepcopy(document)
    for diff in diffs:
        legs = parse_path(diff.path)
        if not legs:
            if diff.operation != DiffOperation.REPLACE:
                raise BinlogError(f"JSON diff {diff.operation.name} on the whole document")
            result = copy.deepcopy(diff.value)
            continue
        parent = result
        for leg in legs[:-1]:
            parent = _child(parent, leg, diff.path)
        last = legs[-1]
        if diff.operation == DiffOperation.INSERT:
            if isinstance(parent, dict) and isinstance(last, str) and last not in parent:
                _sorted_insert(parent, last, copy.deepcopy(diff.value))
            elif isinstance(parent, list) and isinstance(last, int):
                position = min(max(_position(last, len(parent)), 0), len(parent))
                parent.insert(position, copy.deepcopy(diff.value))
            else:
                raise BinlogError(f"JSON diff cannot insert at {diff.path!r}")
            continue
        _child(parent, last, diff.path)  # the value must exist
        if isinstance(parent, dict):
            assert isinstance(last, str)
            if diff.operation == DiffOperation.REPLACE:
                parent[last] = copy.deepcopy(diff.value)
            else:
                del parent[last]
        else:
            assert isinstance(parent, list) and isinstance(last, int)
            position = _position(last, len(parent))
            if diff.operation == DiffOperation.REPLACE:
                parent[position] = copy.deepcopy(diff.value)
            else:
                del parent[position]
    return result
