"""CompactedRow field readers: one compiled reader per Fluss type, and the readers of
length-prefixed payloads (non-compact DECIMAL, ARRAY, MAP, ROW).

Apart from :mod:`.compacted_row` so that the vectorised decoder (:mod:`.columnar`) can use
them without importing the decoder class, which itself uses the vectorised decoder. The
row layout is described in :mod:`.compacted_row`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fluss_proto.records._base import ValuesReader
from fluss_proto.records._values import (
    Mode,
    check_nanos,
    date_converter,
    decimal_from_bytes,
    decimal_from_unscaled,
    pad_binary,
    read_varint32,
    read_varint64,
    time_converter,
    timestamp_converter,
    truncated,
)
from fluss_proto.records.binary_array import compile_array_reader, compile_map_reader
from fluss_proto.records.errors import RowDecodeError
from fluss_proto.records.rowtype import DataType, is_compact_decimal, is_compact_timestamp

if TYPE_CHECKING:
    pass

__all__ = [
    "FieldReader",
    "PayloadReader",
    "compile_compacted_field",
    "compile_compacted_payload",
    "compile_compacted_row",
]

FieldReader = Callable[[bytes, int, int], tuple[Any, int]]
PayloadReader = Callable[[bytes, int, int], Any]

_SHORT = struct.Struct("<h")
_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")


def compile_compacted_row(row: DataType, mode: Mode) -> ValuesReader:
    """``(buf, start, end) -> [values]`` for a CompactedRow of ``row``."""
    readers = [compile_compacted_field(f.type, mode) for f in row.fields]
    count = len(readers)
    null_bytes = (count + 7) // 8

    def read_row(buf: bytes, start: int, end: int) -> list[Any]:
        pos = start + null_bytes
        if pos > end:
            raise truncated("CompactedRow null bitmap", start)
        bits = int.from_bytes(buf[start:pos], "little")
        out: list[Any] = []
        append = out.append
        if bits:
            for i, read in enumerate(readers):
                if (bits >> i) & 1:
                    append(None)
                else:
                    value, pos = read(buf, pos, end)
                    append(value)
        else:
            for read in readers:
                value, pos = read(buf, pos, end)
                append(value)
        return out

    return read_row


def _length_prefixed(buf: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    """Read a varint length and check the bytes it announces are there -> (start, stop)."""
    n, p = read_varint32(buf, pos, end)
    if n < 0:
        raise RowDecodeError(f"{what} with negative length {n}", position=pos)
    stop = p + n
    if stop > end:
        raise truncated(what, pos)
    return p, stop


def compile_compacted_field(dt: DataType, mode: Mode) -> FieldReader:
    """``(buf, pos, end) -> (value, next pos)`` for one non-null field of type ``dt``."""
    root = dt.root

    if root == "BOOLEAN":

        def read_bool(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            if pos >= end:
                raise truncated("BOOLEAN", pos)
            return buf[pos] != 0, pos + 1

        return read_bool

    if root == "TINYINT":

        def read_tinyint(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            if pos >= end:
                raise truncated("TINYINT", pos)
            b = buf[pos]
            return (b - 256 if b > 127 else b), pos + 1

        return read_tinyint

    if root == "SMALLINT":
        return _fixed(_SHORT, "SMALLINT")
    if root == "FLOAT":
        return _fixed(_FLOAT, "FLOAT")
    if root == "DOUBLE":
        return _fixed(_DOUBLE, "DOUBLE")

    if root == "INTEGER":
        return read_varint32
    if root == "BIGINT":
        return read_varint64
    if root in ("DATE", "TIME_WITHOUT_TIME_ZONE"):
        post = date_converter(mode) if root == "DATE" else time_converter(dt.precision or 0, mode)
        if post is None:
            return read_varint32

        def read_int_converted(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            v, pos = read_varint32(buf, pos, end)
            return post(v), pos

        return read_int_converted

    if root in ("STRING", "CHAR"):

        def read_string(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            a, b = _length_prefixed(buf, pos, end, root)
            return buf[a:b].decode("utf-8", "replace"), b

        return read_string

    if root in ("BYTES", "BINARY"):
        pad = pad_binary(dt.length or 1) if root == "BINARY" and mode == "arrow" else None

        def read_bytes(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            a, b = _length_prefixed(buf, pos, end, root)
            return (buf[a:b] if pad is None else pad(buf[a:b])), b

        return read_bytes

    if root == "DECIMAL":
        return _compile_decimal(dt, mode)
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return _compile_timestamp(root, dt, mode)

    if root in ("ARRAY", "MAP", "ROW"):
        nested = compile_compacted_payload(dt, mode)

        def read_nested(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            a, b = _length_prefixed(buf, pos, end, root)
            return nested(buf, a, b), b

        return read_nested

    raise TypeError(f"unsupported type for CompactedRow: {dt}")  # pragma: no cover


def _compile_decimal(dt: DataType, mode: Mode) -> FieldReader:
    """A DECIMAL field: a varint unscaled value when compact, else length-prefixed bytes."""
    precision, scale = dt.precision or 10, dt.scale or 0
    if is_compact_decimal(precision):

        def read_compact_decimal(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            u, pos = read_varint64(buf, pos, end)
            return decimal_from_unscaled(u, scale), pos

        return read_compact_decimal

    payload = compile_compacted_payload(dt, mode)

    def read_decimal(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
        a, b = _length_prefixed(buf, pos, end, "DECIMAL")
        return payload(buf, a, b), b

    return read_decimal


def _compile_timestamp(root: str, dt: DataType, mode: Mode) -> FieldReader:
    """A TIMESTAMP field: varint millis, then varint nanos when not compact."""
    precision = dt.precision if dt.precision is not None else 6
    conv = timestamp_converter(root, precision, mode)
    if is_compact_timestamp(precision):

        def read_compact_ts(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            ms, pos = read_varint64(buf, pos, end)
            return conv(ms, 0), pos

        return read_compact_ts

    def read_ts(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
        ms, pos = read_varint64(buf, pos, end)
        nanos, pos = read_varint32(buf, pos, end)
        return conv(ms, check_nanos(nanos)), pos

    return read_ts


def compile_compacted_payload(dt: DataType, mode: Mode) -> PayloadReader:
    """``(buf, start, end) -> value`` for the bytes after the varint length of a
    length-prefixed field: non-compact DECIMAL, ARRAY, MAP or ROW."""
    root = dt.root
    if root == "DECIMAL":
        precision, scale = dt.precision or 10, dt.scale or 0

        def read_decimal(buf: bytes, start: int, end: int) -> Any:
            return decimal_from_bytes(buf[start:end], precision, scale)

        return read_decimal
    if root == "ARRAY":
        assert dt.element is not None
        return compile_array_reader(dt.element, compile_compacted_row, mode)
    if root == "MAP":
        return compile_map_reader(dt, compile_compacted_row, mode)
    if root == "ROW":
        values = compile_compacted_row(dt, mode)
        names = dt.field_names

        def read_row(buf: bytes, start: int, end: int) -> Any:
            return dict(zip(names, values(buf, start, end), strict=True))

        return read_row
    raise TypeError(f"{dt} is not a length-prefixed type")  # pragma: no cover


def _fixed(st: struct.Struct, what: str) -> FieldReader:
    size = st.size
    unpack = st.unpack_from

    def read(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
        if pos + size > end:
            raise truncated(what, pos)
        return unpack(buf, pos)[0], pos + size

    return read
