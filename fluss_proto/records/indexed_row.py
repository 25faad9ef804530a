"""IndexedRow: KV value format ``table.kv.format=INDEXED`` and the row of log format INDEXED.

Layout (``IndexedRow`` / ``IndexedRowWriter``, identical at Fluss 0.9.1 and 1.0):

1. null bitmap of ``(fields + 7) // 8`` bytes (bit order as CompactedRow, 1 = NULL);
2. variable-length list: one ``int32 LE`` slot per *variable-length column* of the schema
   (STRING, BYTES, ARRAY, MAP, ROW, DECIMAL with precision > 18). The slots hold the byte
   lengths of the **non-null** variable columns, in column order; a NULL column consumes no
   slot, so the unused tail stays zero;
3. the non-null fields back to back (NULL fields take no bytes):

=======================================  =================================================
BOOLEAN, TINYINT                         1 byte
SMALLINT                                 2 bytes LE
INTEGER, FLOAT, DATE, TIME               4 bytes LE
BIGINT, DOUBLE, DECIMAL(p<=18)           8 bytes LE (the unscaled long for DECIMAL)
TIMESTAMP[_LTZ](p<=3)                    8 bytes: epoch millis
TIMESTAMP[_LTZ](p>3)                     12 bytes: int64 millis + int32 nano-of-milli
CHAR(n)                                  n bytes, UTF-8 zero-padded; trailing zero bytes are
                                         dropped on read (``IndexedRow.getChar``)
BINARY(n)                                n bytes zero-padded; trailing zero bytes are
                                         dropped on read (``IndexedRow.getBinary``)
variable-length columns                  their bytes (STRING UTF-8, BYTES raw, DECIMAL
                                         big-endian two's complement, ARRAY/MAP BinaryArray/
                                         BinaryMap, ROW a nested IndexedRow)
=======================================  =================================================

Nested rows inside arrays and maps are IndexedRows too (``IndexedArray``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from fluss_proto.records._base import RowDecoder, ValuesReader
from fluss_proto.records._values import (
    NARROW_SIZES,
    Mode,
    check_nanos,
    date_converter,
    decimal_from_bytes,
    decimal_from_unscaled,
    time_converter,
    timestamp_converter,
    truncated,
)
from fluss_proto.records.binary_array import compile_array_reader, compile_map_reader
from fluss_proto.records.errors import RowDecodeError
from fluss_proto.records.rowtype import DataType, is_compact_decimal, is_compact_timestamp

__all__ = ["IndexedRowDecoder", "compile_indexed_row", "fixed_length", "is_fixed_length"]

# (buf, pos, length) -> value; the caller has checked pos + length <= end.
FieldReader = Callable[[bytes, int, int], Any]


class IndexedRowDecoder(RowDecoder):
    """Decoder of IndexedRows of one ROW type; see ``RowDecoder`` for the methods."""

    format = "INDEXED"

    @staticmethod
    def _compile(row: DataType, mode: Mode) -> ValuesReader:
        return compile_indexed_row(row, mode)


def is_fixed_length(dt: DataType) -> bool:
    """Java ``IndexedRow.isFixedLength``."""
    if dt.root in ("STRING", "BYTES", "ARRAY", "MAP", "ROW"):
        return False
    if dt.root == "DECIMAL":
        return is_compact_decimal(dt.precision or 10)
    return True


def fixed_length(dt: DataType) -> int:
    """Java ``IndexedRow.getLength`` for fixed-length types."""
    root = dt.root
    narrow = NARROW_SIZES.get(root)
    if narrow is not None:
        return narrow
    if root in ("BIGINT", "DOUBLE", "DECIMAL"):
        return 8
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        precision = dt.precision if dt.precision is not None else 6
        return 8 if is_compact_timestamp(precision) else 12
    if root in ("CHAR", "BINARY"):
        return dt.length or 1
    raise TypeError(f"{dt} is not a fixed-length type")  # pragma: no cover


def compile_indexed_row(row: DataType, mode: Mode) -> ValuesReader:
    """``(buf, start, end) -> [values]`` for an IndexedRow of ``row``."""
    specs: list[tuple[int | None, FieldReader]] = []
    for f in row.fields:
        length = fixed_length(f.type) if is_fixed_length(f.type) else None
        specs.append((length, compile_indexed_field(f.type, mode)))
    null_bytes = (len(specs) + 7) // 8
    var_count = sum(1 for length, _ in specs if length is None)
    lengths_struct = struct.Struct(f"<{var_count}i")
    header = null_bytes + 4 * var_count

    def read_row(buf: bytes, start: int, end: int) -> list[Any]:
        pos = start + header
        if pos > end:
            raise truncated("IndexedRow header", start)
        bits = int.from_bytes(buf[start : start + null_bytes], "little")
        var_lengths = lengths_struct.unpack_from(buf, start + null_bytes)
        vi = 0
        out: list[Any] = []
        append = out.append
        for i, (length, read) in enumerate(specs):
            if bits and (bits >> i) & 1:
                append(None)
                continue
            if length is None:
                length = var_lengths[vi]
                vi += 1
                if length < 0:
                    raise RowDecodeError(
                        f"IndexedRow field {i} with negative length {length}", position=start
                    )
            stop = pos + length
            if stop > end:
                raise truncated(f"IndexedRow field {i}", pos)
            append(read(buf, pos, length))
            pos = stop
        return out

    return read_row


def _unpack(fmt: str) -> FieldReader:
    unpack = struct.Struct(fmt).unpack_from
    return lambda buf, pos, length: unpack(buf, pos)[0]


def compile_indexed_field(dt: DataType, mode: Mode) -> FieldReader:
    """``(buf, pos, length) -> value`` for one non-null field of type ``dt``."""
    root = dt.root
    if root == "BOOLEAN":
        return lambda buf, pos, length: buf[pos] != 0
    if root == "TINYINT":
        return _unpack("<b")
    if root == "SMALLINT":
        return _unpack("<h")
    if root == "INTEGER":
        return _unpack("<i")
    if root == "FLOAT":
        return _unpack("<f")
    if root == "BIGINT":
        return _unpack("<q")
    if root == "DOUBLE":
        return _unpack("<d")
    if root in ("DATE", "TIME_WITHOUT_TIME_ZONE"):
        post = date_converter(mode) if root == "DATE" else time_converter(dt.precision or 0, mode)
        read_int = _unpack("<i")
        if post is None:
            return read_int
        return lambda buf, pos, length: post(read_int(buf, pos, length))
    if root == "STRING":
        return lambda buf, pos, length: buf[pos : pos + length].decode("utf-8", "replace")
    if root == "BYTES":
        return lambda buf, pos, length: buf[pos : pos + length]
    if root == "CHAR":
        return lambda buf, pos, length: (
            buf[pos : pos + length].rstrip(b"\x00").decode("utf-8", "replace")
        )
    if root == "BINARY":
        if mode == "arrow":  # FixedSizeBinary(n) keeps all n bytes
            return lambda buf, pos, length: buf[pos : pos + length]
        return lambda buf, pos, length: buf[pos : pos + length].rstrip(b"\x00")
    if root == "DECIMAL":
        precision, scale = dt.precision or 10, dt.scale or 0
        if is_compact_decimal(precision):
            read_long = _unpack("<q")
            return lambda buf, pos, length: decimal_from_unscaled(
                read_long(buf, pos, length), scale
            )
        return lambda buf, pos, length: decimal_from_bytes(
            buf[pos : pos + length], precision, scale
        )
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        precision = dt.precision if dt.precision is not None else 6
        conv = timestamp_converter(root, precision, mode)
        if is_compact_timestamp(precision):
            read_ms = _unpack("<q")
            return lambda buf, pos, length: conv(read_ms(buf, pos, length), 0)
        unpack_ts = struct.Struct("<qi").unpack_from

        def read_ts(buf: bytes, pos: int, length: int) -> Any:
            ms, nanos = unpack_ts(buf, pos)
            return conv(ms, check_nanos(nanos))

        return read_ts
    if root == "ARRAY":
        assert dt.element is not None
        read_array = compile_array_reader(dt.element, compile_indexed_row, mode)
        return lambda buf, pos, length: read_array(buf, pos, pos + length)
    if root == "MAP":
        read_map = compile_map_reader(dt, compile_indexed_row, mode)
        return lambda buf, pos, length: read_map(buf, pos, pos + length)
    if root == "ROW":
        read_values = compile_indexed_row(dt, mode)
        names = dt.field_names
        return lambda buf, pos, length: dict(
            zip(names, read_values(buf, pos, pos + length), strict=True)
        )
    raise TypeError(f"unsupported type for IndexedRow: {dt}")  # pragma: no cover
