"""CompactedRow: the default KV value format (``table.kv.format=COMPACTED``) and the row of
log format COMPACTED.

Layout (``CompactedRowWriter`` / ``CompactedRowReader``, identical at Fluss 0.9.1 and 1.0):

- null bitmap of ``(fields + 7) // 8`` bytes, bit *i* = bit ``i & 7`` of byte ``i >> 3``,
  1 = NULL;
- then each non-null field in order; NULL fields take no bytes:

======================================  ==================================================
BOOLEAN, TINYINT                        1 byte
SMALLINT                                2 bytes LE
INTEGER, DATE (days), TIME (ms of day)  base-128 varint of the 32-bit value (1-5 bytes;
                                        negative values take 5; not zigzag)
BIGINT                                  base-128 varint of the 64-bit value (1-10 bytes)
FLOAT, DOUBLE                           4 / 8 bytes LE IEEE 754
STRING, CHAR(n)                         varint byte length + UTF-8 (CHAR not padded)
BYTES, BINARY(n)                        varint length + bytes (BINARY not padded)
DECIMAL(p<=18)                          varint64 unscaled value
DECIMAL(p>18)                           varint length + big-endian two's-complement bytes
TIMESTAMP[_LTZ](p<=3)                   varint64 epoch millis
TIMESTAMP[_LTZ](p>3)                    varint64 epoch millis, then varint32 nano-of-milli
ARRAY, MAP                              varint length + BinaryArray / BinaryMap
ROW                                     varint length + nested CompactedRow
======================================  ==================================================

Nested rows inside arrays and maps are CompactedRows too (``CompactedArray``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from fluss_proto.records._base import RowDecoder, RowSource, ValuesReader
from fluss_proto.records._values import Buffer, Mode
from fluss_proto.records.compacted_fields import (
    compile_compacted_field,
    compile_compacted_payload,
    compile_compacted_row,
)
from fluss_proto.records.rowtype import DataType

if TYPE_CHECKING:  # numpy and pyarrow: imported by the columnar path only
    import pyarrow as pa

    from fluss_proto.records.columnar import ColumnarDecoder

__all__ = [
    "CompactedRowDecoder",
    "compile_compacted_field",
    "compile_compacted_payload",
    "compile_compacted_row",
]


class CompactedRowDecoder(RowDecoder):
    """Decoder of CompactedRows of one ROW type; see ``RowDecoder`` for the methods.

    The columnar methods (:meth:`to_table`, :meth:`decode_table`) take the vectorised path of
    :mod:`fluss_proto.records.columnar`; the row-at-a-time decoder stays the reference
    (:meth:`reference_table`): it decodes whatever the fast path gives up on, and raises the
    precise error for malformed rows.
    """

    format = "COMPACTED"
    _columnar: ColumnarDecoder | None = None

    @staticmethod
    def _compile(row: DataType, mode: Mode) -> ValuesReader:
        return compile_compacted_row(row, mode)

    def _vectorised(self) -> ColumnarDecoder:
        if self._columnar is None:
            from fluss_proto.records.columnar import compile_columnar

            self._columnar = compile_columnar(self.row_type, self.arrow_schema)
        return self._columnar

    def decode_table(self, buffer: Buffer, starts: Any, ends: Any) -> pa.Table:
        buf = buffer if isinstance(buffer, bytes) else bytes(buffer)
        table = self._vectorised().decode(buf, starts, ends)
        return table if table is not None else super().decode_table(buf, starts, ends)

    def to_table(self, rows: Iterable[RowSource]) -> pa.Table:
        items = rows if isinstance(rows, list) else list(rows)
        packed = _pack_rows(items)
        table = None if packed is None else self._vectorised().decode(*packed)
        return table if table is not None else self.reference_table(items)


def _pack_rows(items: list[RowSource]) -> tuple[bytes, list[int], list[int]] | None:
    """Rows -> one buffer and row offsets: the rows' own buffer when they all share one
    ``bytes`` object, else the rows copied one after the other. None when a row is not what
    the reference accepts (it then raises the error)."""
    if not items:
        return b"", [], []
    first = items[0]
    if isinstance(first, tuple) and isinstance(first[0], bytes):
        shared = first[0]
        if all(
            type(it) is tuple
            and len(it) == 3
            and it[0] is shared
            and type(it[1]) is int
            and type(it[2]) is int
            for it in items
        ):
            return shared, [it[1] for it in items], [it[2] for it in items]
    pieces: list[bytes] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    try:
        for item in items:
            if isinstance(item, tuple):
                buf, start, end = item
                if not (type(start) is int and type(end) is int and 0 <= start <= end):
                    return None
                raw = bytes(memoryview(buf)[start:end])
                if len(raw) != end - start:
                    return None
            else:
                raw = bytes(item)
            pieces.append(raw)
            starts.append(at)
            at += len(raw)
            ends.append(at)
    except (TypeError, ValueError, IndexError):
        return None
    return b"".join(pieces), starts, ends
