"""Preview rows without pyarrow: a light columnar chunk and the decoding that fills it.

A *light* preview (``stream_preview(..., light=True)``) hands out :class:`Rows` instead of
``pyarrow.Table`` chunks, for tables whose columns are all of the plain types
(:data:`~fluss_proto.records.arrow_ipc.PLAIN_ROOTS`); a table with a nested column takes
the Arrow path whatever was asked. Values per column are those of the row decoders'
``"arrow"`` mode: dates, times and timestamps as integers in their Arrow unit, DECIMAL as
an exact ``Decimal``, BINARY(n) padded to n bytes, NULL as None; the columns are those of
the Arrow path (the table's, then ``_offset`` / ``_change_type``, ``_partition``,
``_bucket``), so :class:`RowsSchema` carries each column's Fluss type instead of an Arrow
one.

Where the rows come from:

- value batches (ScanKv, LimitScan of a primary-key table): split without numpy and decoded
  row by row (:meth:`~fluss_proto.records._base.RowDecoder.decode_columns`);
- log batches of the INDEXED / COMPACTED formats: the same row decoders;
- Arrow log batches: :func:`fluss_proto.records.arrow_ipc.read_columns` (uncompressed or
  ZSTD bodies); one it cannot read (LZ4_FRAME) is read by pyarrow and converted
  (:func:`rows_from_arrow`), so pyarrow is imported only when such a batch comes.

The point is start-up: a preview that never imports pyarrow and numpy starts ~200 ms sooner
(docs/performance.md, "Issue 22: the preview's first row without pyarrow").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from fluss_proto.records.arrow_ipc import PLAIN_ROOTS, read_columns
from fluss_proto.records.errors import RecordDecodeError
from fluss_proto.records.log_batch import ChangeType, LogBatch, decode_change_types
from fluss_proto.records.rowtype import DataType, as_row_type

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Rows", "RowsSchema", "arrow_log_columns", "is_plain", "rows_from_arrow"]

BIGINT = DataType("BIGINT", nullable=False)
STRING = DataType("STRING", nullable=False)
INT = DataType("INTEGER", nullable=False)


@dataclass(frozen=True)
class RowsSchema:
    """The columns of light chunks: names and Fluss types (``records.rowtype.DataType``)."""

    names: tuple[str, ...]
    types: tuple[DataType, ...]

    @classmethod
    def of_table(cls, schema: Any) -> RowsSchema:
        row = as_row_type(schema)
        return cls(tuple(row.field_names), tuple(row.field_types))

    def append(self, name: str, dt: DataType) -> RowsSchema:
        return RowsSchema((*self.names, name), (*self.types, dt))

    def empty(self) -> Rows:
        return Rows(self, [[] for _ in self.names], 0)


def is_plain(schema: Any) -> bool:
    """Whether every column of a table schema is of a type light chunks carry."""
    return all(t.root in PLAIN_ROOTS for t in as_row_type(schema).field_types)


class Rows:
    """A light chunk: one list of values per column of :attr:`schema`, ``num_rows`` long."""

    __slots__ = ("columns", "num_rows", "schema")

    def __init__(self, schema: RowsSchema, columns: list[list[Any]], num_rows: int) -> None:
        self.schema = schema
        self.columns = columns
        self.num_rows = num_rows

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)

    def slice(self, offset: int = 0, length: int | None = None) -> Rows:
        stop = self.num_rows if length is None else min(self.num_rows, offset + length)
        offset = min(offset, self.num_rows)
        return Rows(self.schema, [c[offset:stop] for c in self.columns], max(0, stop - offset))

    def with_column(self, name: str, dt: DataType, values: list[Any]) -> Rows:
        return Rows(self.schema.append(name, dt), [*self.columns, values], self.num_rows)

    def with_constant(self, name: str, dt: DataType, value: Any) -> Rows:
        return self.with_column(name, dt, [value] * self.num_rows)

    def conform(self, schema: RowsSchema) -> Rows:
        """The same values under ``schema`` (same names; the table's own types)."""
        if schema.names != self.schema.names:
            raise ValueError(f"columns {self.schema.names} are not {schema.names}")
        return Rows(schema, self.columns, self.num_rows)

    @staticmethod
    def concat(pieces: Sequence[Rows]) -> Rows:
        first = pieces[0]
        if len(pieces) == 1:
            return first
        columns = [
            list(chain.from_iterable(p.columns[i] for p in pieces))
            for i in range(len(first.columns))
        ]
        return Rows(first.schema, columns, sum(p.num_rows for p in pieces))


def arrow_log_columns(
    batch: LogBatch, types: list[DataType]
) -> tuple[list[list[Any]], list[ChangeType] | None] | None:
    """An Arrow log batch's columns and change types (None for append-only), or None when
    :func:`~fluss_proto.records.arrow_ipc.read_columns` cannot read it."""
    area = bytes(batch.records)
    count = batch.record_count
    change_types = None
    if not batch.append_only:
        change_types = decode_change_types(area[:count])
        area = area[count:]
    try:
        columns = read_columns(area, types, count)
    except RecordDecodeError as exc:
        raise exc.with_context(
            bucket=batch.bucket, offset=batch.base_offset, position=batch.position
        ) from None
    return None if columns is None else (columns, change_types)


def rows_from_arrow(table: pa.Table | pa.RecordBatch) -> list[list[Any]]:
    """A pyarrow table's columns as light values (temporal types as their integers)."""
    import pyarrow as pa

    out: list[list[Any]] = []
    for column in table.columns:
        t = column.type
        if pa.types.is_temporal(t):
            width = pa.int32() if pa.types.is_date32(t) or pa.types.is_time32(t) else pa.int64()
            column = column.cast(width)
        out.append(column.to_pylist())
    return out
