"""Column statistics of a Fluss 1.0 log batch (magic 1 at 1.0, magic 2).

A writer that collects statistics (the table sets ``table.statistics.columns``) puts this
block straight after the batch header; :class:`~fluss_proto.records.log_batch.LogBatch`
keeps it raw in ``statistics``. Layout (little-endian, ``STATISTICS_VERSION`` 1; written
from ``LogRecordBatchStatisticsWriter`` at Fluss main and checked against batches a 1.0
server returned):

======  ===========================================================================
int8    version (1)
int16   n: number of columns with statistics
int16   n column positions in the batch schema, ascending
int32   n null counts
int32   size of the minimum row, then that many bytes (0: no minimum row)
int32   size of the maximum row, then that many bytes (0: no maximum row)
======  ===========================================================================

The min and max rows are "aligned" binary rows of the n statistics columns (Fluss
``AlignedRow``, the Flink BinaryRow layout): a null bit set of ``((n + 63 + 8) // 64) * 8``
bytes (bit ``i + 8`` set = column i null: no value, e.g. every row was null), then one
8-byte slot per column; strings up to 7 bytes sit in their slot (high bit set, length in
bits 56..62), longer ones, non-compact decimals and timestamps point into the variable
part with ``offset << 32 | size`` (``| nano-of-millisecond`` for timestamps).

Server-side projection drops the block (``statistics_length`` becomes 0).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fluss_proto.records._values import (
    MALFORMED,
    Mode,
    check_nanos,
    date_converter,
    decimal_from_bytes,
    decimal_from_unscaled,
    time_converter,
    timestamp_converter,
)
from fluss_proto.records.errors import CorruptBatchError, RowDecodeError
from fluss_proto.records.rowtype import (
    DataType,
    as_row_type,
    is_compact_decimal,
    is_compact_timestamp,
)

__all__ = ["STATISTICS_VERSION", "BatchStatistics", "ColumnStatistics", "parse_statistics"]

STATISTICS_VERSION = 1
_HEADER_BITS = 8
_HIGH_BIT = 1 << 63
_I16 = struct.Struct("<h")
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")

_Slot = Callable[[bytes, int, int, int], Any]  # (buf, slot position, row start, row end)


@dataclass(frozen=True, slots=True)
class ColumnStatistics:
    """Statistics of one column of one batch; min/max None when the batch had no value."""

    position: int
    name: str
    null_count: int
    min: Any
    max: Any


@dataclass(frozen=True, slots=True)
class BatchStatistics:
    """The decoded statistics block of one log batch."""

    #: Positions (in the batch schema) of the columns that have statistics.
    columns: tuple[int, ...]
    null_counts: tuple[int, ...]
    #: One value per statistics column (None: null); the tuple is None without a min row.
    min_values: tuple[Any, ...] | None
    max_values: tuple[Any, ...] | None
    #: Names of the statistics columns, from the row type given to the parser.
    names: tuple[str, ...]

    def column(self, name: str) -> ColumnStatistics:
        i = self.names.index(name)
        return ColumnStatistics(
            self.columns[i],
            name,
            self.null_counts[i],
            None if self.min_values is None else self.min_values[i],
            None if self.max_values is None else self.max_values[i],
        )

    def as_dict(self) -> dict[str, ColumnStatistics]:
        return {name: self.column(name) for name in self.names}


def parse_statistics(
    block: bytes | bytearray | memoryview, row_type: Any, *, mode: Mode = "python"
) -> BatchStatistics:
    """Decode ``LogBatch.statistics`` with the batch's row type (a Fluss schema works).

    ``mode`` as the row decoders: Python values, or integers in the Arrow unit ("arrow").
    Malformed input raises :class:`~fluss_proto.records.errors.CorruptBatchError`.
    """
    buf = bytes(block)
    rt = as_row_type(row_type)
    try:
        return _parse(buf, rt, mode)
    except (CorruptBatchError, RowDecodeError):
        raise
    except MALFORMED as exc:
        raise CorruptBatchError(f"malformed batch statistics: {exc}") from None


def _parse(buf: bytes, rt: DataType, mode: Mode) -> BatchStatistics:
    if not buf:
        raise CorruptBatchError("empty statistics block")
    if buf[0] != STATISTICS_VERSION:
        raise CorruptBatchError(f"statistics version {buf[0]} (known: {STATISTICS_VERSION})")
    (count,) = _I16.unpack_from(buf, 1)
    if count < 0:
        raise CorruptBatchError(f"negative statistics column count {count}")
    pos = 3
    columns = struct.unpack_from(f"<{count}h", buf, pos)
    pos += 2 * count
    nulls = struct.unpack_from(f"<{count}i", buf, pos)
    pos += 4 * count
    fields = rt.fields
    if any(not 0 <= c < len(fields) for c in columns):
        raise CorruptBatchError(f"statistics columns {columns} outside {len(fields)} columns")
    types = [fields[c].type for c in columns]
    readers = [_slot_reader(t, mode) for t in types]
    rows: list[tuple[Any, ...] | None] = []
    for what in ("minimum", "maximum"):
        (size,) = _I32.unpack_from(buf, pos)
        pos += 4
        if size < 0 or pos + size > len(buf):
            raise CorruptBatchError(f"statistics {what} row of {size} bytes does not fit")
        rows.append(_aligned_row(buf, pos, pos + size, readers) if size else None)
        pos += size
    if pos != len(buf):
        raise CorruptBatchError(f"{len(buf) - pos} bytes after the statistics")
    return BatchStatistics(
        columns=tuple(columns),
        null_counts=tuple(nulls),
        min_values=rows[0],
        max_values=rows[1],
        names=tuple(fields[c].name for c in columns),
    )


def _aligned_row(buf: bytes, start: int, end: int, readers: list[_Slot]) -> tuple[Any, ...]:
    n = len(readers)
    bitset = ((n + 63 + _HEADER_BITS) // 64) * 8
    if start + bitset + 8 * n > end:
        raise CorruptBatchError(f"statistics row of {end - start} bytes is too short for {n}")
    out: list[Any] = []
    for i, read in enumerate(readers):
        bit = i + _HEADER_BITS
        if buf[start + (bit >> 3)] & (1 << (bit & 7)):
            out.append(None)
        else:
            out.append(read(buf, start + bitset + 8 * i, start, end))
    return tuple(out)


def _region(buf: bytes, p: int, start: int, end: int) -> tuple[int, int]:
    """``offset << 32 | size`` in the slot at ``p`` -> absolute [a, b)."""
    (slot,) = _U64.unpack_from(buf, p)
    a = start + (slot >> 32)
    b = a + (slot & 0xFFFFFFFF)
    if b > end:
        raise RowDecodeError("statistics value runs past its row", position=p)
    return a, b


def _var_bytes(buf: bytes, p: int, start: int, end: int) -> bytes:
    (slot,) = _U64.unpack_from(buf, p)
    if slot & _HIGH_BIT:  # up to 7 bytes, inline in the slot
        length = (slot >> 56) & 0x7F
        if length > 7:
            raise RowDecodeError(f"inline value of {length} bytes (max 7)", position=p)
        return buf[p : p + length]
    a, b = _region(buf, p, start, end)
    return buf[a:b]


def _fixed(st: struct.Struct, post: Callable[[Any], Any] | None = None) -> _Slot:
    if post is None:
        return lambda buf, p, start, end: st.unpack_from(buf, p)[0]
    return lambda buf, p, start, end: post(st.unpack_from(buf, p)[0])


def _slot_reader(t: DataType, mode: Mode) -> _Slot:
    root = t.root
    if root == "BOOLEAN":
        return lambda buf, p, start, end: buf[p] != 0
    if root == "TINYINT":
        return _fixed(struct.Struct("<b"))
    if root == "SMALLINT":
        return _fixed(_I16)
    if root in ("INTEGER", "DATE", "TIME_WITHOUT_TIME_ZONE"):
        post = (
            date_converter(mode)
            if root == "DATE"
            else time_converter(t.precision or 0, mode)
            if root == "TIME_WITHOUT_TIME_ZONE"
            else None
        )
        return _fixed(_I32, post)
    if root == "BIGINT":
        return _fixed(_I64)
    if root == "FLOAT":
        return _fixed(struct.Struct("<f"))
    if root == "DOUBLE":
        return _fixed(struct.Struct("<d"))
    if root in ("STRING", "CHAR"):
        return lambda buf, p, start, end: _var_bytes(buf, p, start, end).decode("utf-8", "replace")
    if root == "DECIMAL":
        precision, scale = t.precision or 10, t.scale or 0
        if is_compact_decimal(precision):
            return _fixed(_I64, lambda v: decimal_from_unscaled(v, scale))

        def decimal(buf: bytes, p: int, start: int, end: int) -> Any:
            a, b = _region(buf, p, start, end)
            return decimal_from_bytes(buf[a:b], precision, scale)

        return decimal
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        precision = t.precision if t.precision is not None else 6
        conv = timestamp_converter(root, precision, mode)
        if is_compact_timestamp(precision):
            return _fixed(_I64, lambda ms: conv(ms, 0))

        def timestamp(buf: bytes, p: int, start: int, end: int) -> Any:
            (slot,) = _U64.unpack_from(buf, p)
            a = start + (slot >> 32)
            if a + 8 > end:
                raise RowDecodeError("statistics timestamp runs past its row", position=p)
            (ms,) = _I64.unpack_from(buf, a)
            return conv(ms, check_nanos(slot & 0xFFFFFFFF))

        return timestamp
    # Fluss collects no statistics for other types (BINARY, BYTES, ARRAY, MAP, ROW)
    raise CorruptBatchError(f"statistics for a {t} column")
