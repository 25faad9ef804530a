"""The common shape of the two row decoders (CompactedRow and IndexedRow)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import repeat
from typing import TYPE_CHECKING, Any

from fluss_proto.records._values import MALFORMED, Buffer, Mode, as_bytes
from fluss_proto.records.errors import RecordDecodeError, RowDecodeError
from fluss_proto.records.rowtype import DataType, as_row_type

if TYPE_CHECKING:  # imported by the columnar methods only (decode_values needs none)
    import pyarrow as pa

ValuesReader = Callable[[bytes, int, int], list[Any]]
#: A row given to the columnar path: its own bytes, or ``(buffer, start, end)``.
RowSource = Buffer | tuple[bytes, int, int]


class RowDecoder:
    """Decode rows of one ROW type. Subclasses set ``format`` and ``_compile``.

    - :meth:`decode` -> ``{field name: value}`` with Python values;
    - :meth:`decode_values` -> the values in field order;
    - :meth:`decode_columns` / :meth:`to_table` -> columnar decoding of many rows straight into
      per-column lists, then ``pyarrow.array`` with the Arrow type of each column.

    Only :class:`~fluss_proto.records.errors.RowDecodeError` escapes on malformed bytes.
    """

    format: str = ""

    def __init__(self, row_type: Any) -> None:
        self.row_type: DataType = as_row_type(row_type)
        self.field_names: list[str] = self.row_type.field_names
        self._read_py: ValuesReader = self._compile(self.row_type, "python")
        self._read_arrow: ValuesReader | None = None
        self._schema: pa.Schema | None = None

    @staticmethod
    def _compile(row: DataType, mode: Mode) -> ValuesReader:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.row_type}>"

    # ------------------------------------------------------------------ row at a time

    def decode_values(self, data: Buffer, start: int = 0, end: int | None = None) -> list[Any]:
        """Values of the row in ``data[start:end]``, in field order (None for NULL)."""
        buf, start, end = as_bytes(data, start, end)
        return _guarded(self._read_py, buf, start, end)

    def decode(self, data: Buffer, start: int = 0, end: int | None = None) -> dict[str, Any]:
        """The row in ``data[start:end]`` as ``{field name: value}``."""
        return dict(zip(self.field_names, self.decode_values(data, start, end), strict=True))

    # ------------------------------------------------------------------ columnar

    @property
    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema of :meth:`to_table` (``ArrowUtils`` mapping)."""
        if self._schema is None:
            from fluss_proto.records.arrow import to_arrow_schema

            self._schema = to_arrow_schema(self.row_type)
        return self._schema

    def decode_columns(self, rows: Iterable[RowSource]) -> list[list[Any]]:
        """Decode many rows into one list per column, with values ``pyarrow.array`` takes
        for the column's Arrow type (temporal values as integers in the Arrow unit)."""
        if self._read_arrow is None:
            self._read_arrow = self._compile(self.row_type, "arrow")
        read = self._read_arrow
        columns: list[list[Any]] = [[] for _ in self.field_names]
        appends = [c.append for c in columns]
        for item in rows:
            if isinstance(item, tuple):
                buf, start, end = item
                if not isinstance(buf, bytes):
                    buf, start, end = as_bytes(buf, start, end)
                elif not 0 <= start <= end <= len(buf):
                    raise RowDecodeError(f"row bounds [{start}, {end}) outside the buffer")
            else:
                buf, start, end = as_bytes(item)
            values = _guarded(read, buf, start, end)
            for append, value in zip(appends, values, strict=True):
                append(value)
        return columns

    def to_table(self, rows: Iterable[RowSource]) -> pa.Table:
        """Decode many rows into a ``pyarrow.Table`` with :attr:`arrow_schema`."""
        return self.reference_table(rows)

    def decode_table(self, buffer: bytes, starts: Any, ends: Any) -> pa.Table:
        """The rows ``buffer[starts[i]:ends[i]]`` (sequences or numpy arrays of offsets, as
        :class:`~fluss_proto.records.kv_batch.ValueBatch` holds them) -> Table."""
        first, last = _ints(starts), _ints(ends)
        if len(first) != len(last):
            raise ValueError(f"{len(first)} row starts but {len(last)} row ends")
        return self.reference_table(zip(repeat(buffer), first, last))

    def reference_table(self, rows: Iterable[RowSource]) -> pa.Table:
        """:meth:`to_table` row at a time (:meth:`decode_columns`, then ``pyarrow.array``):
        the reference any faster path must match."""
        return columns_to_table(self.decode_columns(rows), self.arrow_schema)


def _ints(values: Any) -> list[int]:
    return values.tolist() if hasattr(values, "tolist") else list(values)


def columns_to_table(columns: list[list[Any]], schema: pa.Schema) -> pa.Table:
    """Per-column value lists -> Table; Arrow conversion failures become RowDecodeError."""
    import pyarrow as pa

    try:
        arrays = [
            pa.array(col, type=field.type) for col, field in zip(columns, schema, strict=True)
        ]
        return pa.Table.from_arrays(arrays, schema=schema)
    except (pa.ArrowException, *MALFORMED, TypeError) as exc:
        raise RowDecodeError(f"decoded values do not fit the Arrow schema: {exc}") from exc


def _guarded(read: ValuesReader, buf: bytes, start: int, end: int) -> list[Any]:
    try:
        return read(buf, start, end)
    except RecordDecodeError:
        raise
    except MALFORMED as exc:
        raise RowDecodeError(f"malformed row: {type(exc).__name__}: {exc}") from exc
