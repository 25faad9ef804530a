"""BinaryArray and BinaryMap, the nested encodings inside CompactedRow and IndexedRow.

Layout of a BinaryArray (``BinaryArray``, ``BinaryArrayWriter``, ``AbstractBinaryWriter``;
the same at Fluss 0.9.1 and 1.0, and the same bytes whatever the row format around it):

- ``int32 LE size`` (number of elements);
- null bitmap: ``((size + 31) // 32) * 4`` bytes, bit *i* = bit ``i & 7`` of byte ``i >> 3``,
  1 = null;
- one fixed-size slot per element: 1 byte (BOOLEAN, TINYINT), 2 (SMALLINT), 4 (INTEGER,
  FLOAT, DATE, TIME), 8 for everything else; the writer pads this part to a multiple of 8;
- a variable-length part; every offset stored in a slot is relative to the array's start:

  - STRING/CHAR/BYTES/BINARY: if the slot's top bit is set the data (at most 7 bytes) is
    inline in the slot's low bytes and its length is in bits 56..62; otherwise the slot is
    ``offset << 32 | length``;
  - DECIMAL with precision > 18: ``offset << 32 | length`` of the big-endian two's-complement
    unscaled bytes (the writer reserves 16 bytes; never inline);
  - TIMESTAMP with precision > 3: ``offset << 32 | nano_of_milli``, the int64 epoch millis at
    the offset;
  - nested ARRAY, MAP, ROW: ``offset << 32 | length``; a nested ROW is a CompactedRow inside a
    CompactedRow, an IndexedRow inside an IndexedRow (``CompactedArray``/``IndexedArray``);
  - compact DECIMAL (unscaled long) and TIMESTAMP with precision <= 3 (epoch millis) are stored
    in the slot itself.

A BinaryMap is ``int32 LE key_array_bytes | key BinaryArray | value BinaryArray``. Maps decode
to a list of ``(key, value)`` tuples (keys may be unhashable, e.g. arrays), in stored order.

Every offset and length is checked against the bounds of the enclosing array before use.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from fluss_proto.records._values import (
    NARROW_SIZES,
    Mode,
    check_nanos,
    date_converter,
    decimal_from_bytes,
    decimal_from_unscaled,
    pad_binary,
    time_converter,
    timestamp_converter,
)
from fluss_proto.records.errors import RowDecodeError
from fluss_proto.records.rowtype import DataType, is_compact_decimal, is_compact_timestamp

__all__ = ["compile_array_reader", "compile_map_reader", "fixed_part_size"]

ArrayReader = Callable[[bytes, int, int], list[Any]]
MapReader = Callable[[bytes, int, int], list[tuple[Any, Any]]]
#: Compiles the values reader of a nested ROW: ``compile_compacted_row`` or
#: ``compile_indexed_row``. Passed in by the row module (a nested ROW has the format of the
#: row around it), so this module imports neither row module.
RowCompiler = Callable[[DataType, Mode], Callable[[bytes, int, int], list[Any]]]

_HIGH_BIT = 1 << 63
_INT32 = struct.Struct("<i")
_INT64 = struct.Struct("<q")

# (struct code, slot size) of types whose value is the slot itself.
_PRIMITIVE = {
    "BOOLEAN": ("?", 1),
    "TINYINT": ("b", 1),
    "SMALLINT": ("h", 2),
    "INTEGER": ("i", 4),
    "DATE": ("i", 4),
    "TIME_WITHOUT_TIME_ZONE": ("i", 4),
    "FLOAT": ("f", 4),
    "BIGINT": ("q", 8),
    "DOUBLE": ("d", 8),
}


def fixed_part_size(dt: DataType) -> int:
    """Java ``BinaryArray.calculateFixLengthPartSize``."""
    return NARROW_SIZES.get(dt.root, 8)


def _header(buf: bytes, start: int, end: int, slot: int) -> tuple[int, int, int]:
    """-> (size, first slot position, null bits as an int)."""
    if end - start < 4:
        raise RowDecodeError("BinaryArray shorter than its size field", position=start)
    (size,) = _INT32.unpack_from(buf, start)
    if size < 0:
        raise RowDecodeError(f"BinaryArray with negative size {size}", position=start)
    header = 4 + ((size + 31) // 32) * 4
    base = start + header
    if base + size * slot > end:
        raise RowDecodeError(
            f"BinaryArray of {size} elements does not fit in {end - start} bytes",
            position=start,
        )
    bits = int.from_bytes(buf[start + 4 : base], "little")
    return size, base, bits


def _null_positions(bits: int, size: int) -> list[int]:
    out = []
    while bits:
        low = bits & -bits
        i = low.bit_length() - 1
        if i >= size:
            break
        out.append(i)
        bits ^= low
    return out


def _region(slot: int, start: int, end: int, what: str) -> tuple[int, int]:
    """``offset << 32 | length`` slot -> absolute [a, b) checked inside [start, end)."""
    if slot & _HIGH_BIT:
        raise RowDecodeError(f"{what} slot has the inline mark set", position=start)
    off = slot >> 32
    length = slot & 0xFFFFFFFF
    if length & 0x80000000:
        raise RowDecodeError(f"{what} with negative length", position=start)
    a = start + off
    b = a + length
    if b > end:
        raise RowDecodeError(
            f"{what} at +{off} (+{length} bytes) outside its array", position=start
        )
    return a, b


def compile_array_reader(elem: DataType, compile_row: RowCompiler, mode: Mode) -> ArrayReader:
    """A function ``(buf, start, end) -> list`` decoding a BinaryArray of ``elem``."""
    root = elem.root
    prim = _PRIMITIVE.get(root)
    if prim is not None:
        code, slot_size = prim
        if root == "DATE":
            post = date_converter(mode)
        elif root == "TIME_WITHOUT_TIME_ZONE":
            post = time_converter(elem.precision or 0, mode)
        else:
            post = None
        return _fixed_reader(code, slot_size, post)

    if root == "DECIMAL" and is_compact_decimal(elem.precision or 10):
        scale = elem.scale or 0
        return _fixed_reader("q", 8, lambda u: decimal_from_unscaled(u, scale))

    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        precision = elem.precision if elem.precision is not None else 6
        conv = timestamp_converter(root, precision, mode)
        if is_compact_timestamp(precision):
            return _fixed_reader("q", 8, lambda ms: conv(ms, 0))
        return _slot_reader(_timestamp_element(conv))

    if root in ("STRING", "CHAR"):
        return _slot_reader(_string_element)
    if root == "BYTES":
        return _slot_reader(_bytes_element)
    if root == "BINARY":
        if mode == "arrow":
            pad = pad_binary(elem.length or 1)

            def padded_element(buf: bytes, p: int, s: int, start: int, end: int) -> bytes:
                return pad(_var_bytes(buf, p, s, start, end))

            return _slot_reader(padded_element)
        return _slot_reader(_bytes_element)
    if root == "DECIMAL":
        precision, scale = elem.precision or 10, elem.scale or 0

        def decimal_element(buf: bytes, p: int, s: int, start: int, end: int) -> Any:
            a, b = _region(s, start, end, "DECIMAL")
            return decimal_from_bytes(buf[a:b], precision, scale)

        return _slot_reader(decimal_element)
    if root == "ARRAY":
        assert elem.element is not None
        inner = compile_array_reader(elem.element, compile_row, mode)
        return _slot_reader(_nested(inner, "ARRAY"))
    if root == "MAP":
        inner_map = compile_map_reader(elem, compile_row, mode)
        return _slot_reader(_nested(inner_map, "MAP"))
    if root == "ROW":
        return _slot_reader(_nested(_row_reader(elem, compile_row, mode), "ROW"))
    raise TypeError(f"unsupported array element type {elem}")  # pragma: no cover


def compile_map_reader(map_type: DataType, compile_row: RowCompiler, mode: Mode) -> MapReader:
    """A function ``(buf, start, end) -> [(key, value), ...]`` decoding a BinaryMap."""
    assert map_type.key is not None and map_type.value is not None
    keys_reader = compile_array_reader(map_type.key, compile_row, mode)
    values_reader = compile_array_reader(map_type.value, compile_row, mode)

    def read_map(buf: bytes, start: int, end: int) -> list[tuple[Any, Any]]:
        if end - start < 4:
            raise RowDecodeError("BinaryMap shorter than its key-array size", position=start)
        (key_bytes,) = _INT32.unpack_from(buf, start)
        if not 0 <= key_bytes <= end - start - 4:
            raise RowDecodeError(f"BinaryMap key array size {key_bytes} is invalid", position=start)
        split = start + 4 + key_bytes
        keys = keys_reader(buf, start + 4, split)
        values = values_reader(buf, split, end)
        if len(keys) != len(values):
            raise RowDecodeError(
                f"BinaryMap with {len(keys)} keys but {len(values)} values", position=start
            )
        return list(zip(keys, values, strict=True))

    return read_map


def _row_reader(
    row: DataType, compile_row: RowCompiler, mode: Mode
) -> Callable[[bytes, int, int], Any]:
    read_values = compile_row(row, mode)
    names = row.field_names

    def read_row(buf: bytes, start: int, end: int) -> dict[str, Any]:
        return dict(zip(names, read_values(buf, start, end), strict=True))

    return read_row


# ------------------------------------------------------------------ reader shapes


def _fixed_reader(code: str, slot_size: int, post: Callable[[Any], Any] | None) -> ArrayReader:
    def read(buf: bytes, start: int, end: int) -> list[Any]:
        size, base, bits = _header(buf, start, end, slot_size)
        values: list[Any] = list(struct.unpack_from(f"<{size}{code}", buf, base))
        nulls = _null_positions(bits, size) if bits else ()
        for i in nulls:
            values[i] = None
        if post is not None:
            if nulls:
                values = [None if v is None else post(v) for v in values]
            else:
                values = [post(v) for v in values]
        return values

    return read


ElementReader = Callable[[bytes, int, int, int, int], Any]


def _slot_reader(element: ElementReader) -> ArrayReader:
    """Arrays with 8-byte slots whose content needs per-element interpretation."""

    def read(buf: bytes, start: int, end: int) -> list[Any]:
        size, base, bits = _header(buf, start, end, 8)
        slots = struct.unpack_from(f"<{size}Q", buf, base)
        out: list[Any] = []
        append = out.append
        p = base
        for i, s in enumerate(slots):
            if bits and (bits >> i) & 1:
                append(None)
            else:
                append(element(buf, p, s, start, end))
            p += 8
        return out

    return read


def _var_bytes(buf: bytes, p: int, s: int, start: int, end: int) -> bytes:
    if s & _HIGH_BIT:
        length = (s >> 56) & 0x7F
        if length > 7:
            raise RowDecodeError(f"inline value of {length} bytes (max 7)", position=p)
        return buf[p : p + length]
    a, b = _region(s, start, end, "variable-length element")
    return buf[a:b]


def _string_element(buf: bytes, p: int, s: int, start: int, end: int) -> str:
    return _var_bytes(buf, p, s, start, end).decode("utf-8", "replace")


def _bytes_element(buf: bytes, p: int, s: int, start: int, end: int) -> bytes:
    return _var_bytes(buf, p, s, start, end)


def _timestamp_element(conv: Callable[[int, int], Any]) -> ElementReader:
    def element(buf: bytes, p: int, s: int, start: int, end: int) -> Any:
        off = s >> 32
        if off & 0x80000000:
            raise RowDecodeError("TIMESTAMP element with negative offset", position=p)
        nanos = s & 0xFFFFFFFF
        if nanos & 0x80000000:
            nanos -= 1 << 32
        a = start + off
        if a + 8 > end:
            raise RowDecodeError("TIMESTAMP element millis outside its array", position=p)
        (ms,) = _INT64.unpack_from(buf, a)
        return conv(ms, check_nanos(nanos))

    return element


def _nested(reader: Callable[[bytes, int, int], Any], what: str) -> ElementReader:
    def element(buf: bytes, p: int, s: int, start: int, end: int) -> Any:
        a, b = _region(s, start, end, what)
        return reader(buf, a, b)

    return element
