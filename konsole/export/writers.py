"""The Arrow format writers (pyarrow; see :mod:`konsole.export`).

The writer base is :mod:`konsole.export.rowwriter`; the one writer factory
(:func:`konsole.export.stream.make_writer`, which picks these writers for a
``pyarrow.Schema``) and the streaming export live in :mod:`konsole.export.stream` (no
pyarrow); the one-call export of a collected preview is :mod:`konsole.export.collected`; the
writers of light rows are in :mod:`konsole.export.plain`."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, Final

import pyarrow as pa
import pyarrow.compute as pc

from konsole.export.frames import JsonDocument, TextTable
from konsole.export.rowwriter import RowWriter
from konsole.render.arrow import (
    cell_text_array,
    json_rows_text,
    plain_text,
    string_buffer,
    text_widths,
)
from konsole.render.values import right_aligned, type_label

if TYPE_CHECKING:
    from konsole.export.rowwriter import Report

__all__ = [
    "WRITERS",
    "ArrowIpcWriter",
    "CsvWriter",
    "JsonLinesWriter",
    "JsonWriter",
    "ParquetWriter",
    "RowWriter",
    "TextTableWriter",
]

TABLE_KEY: Final = b"fluss.table"


# =========================================================================== writers


class CsvWriter(RowWriter):
    def __init__(self, sink: BinaryIO, schema: pa.Schema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        import pyarrow.csv as pacsv

        self._text_schema = pa.schema([pa.field(f.name, _csv_type(f.type)) for f in schema])
        header = io.StringIO()
        csv.writer(header, lineterminator="\n").writerow(schema.names)
        self.sink.write(header.getvalue().encode())
        self._csv = pacsv.CSVWriter(
            sink,
            self._text_schema,
            write_options=pacsv.WriteOptions(include_header=False, quoting_style="needed"),
        )

    def _write(self, data: pa.Table) -> None:
        columns = []
        for field, column in zip(self._text_schema, data.columns, strict=True):
            if field.type == column.type:
                columns.append(column)
            else:
                columns.append(plain_text(column, self.types.get(field.name)))
        self._csv.write_table(pa.Table.from_arrays(columns, schema=self._text_schema))

    def _finish(self, report: Report | None) -> None:
        self._csv.close()

    def _close(self) -> None:
        self._csv.close()


def _csv_type(t: pa.DataType) -> pa.DataType:
    """Types pyarrow's CSV writer already writes as :func:`plain_text` does stay as they
    are (integers, booleans, strings, dates, times); the others become text."""
    if (
        pa.types.is_integer(t)
        or pa.types.is_boolean(t)
        or pa.types.is_string(t)
        or pa.types.is_date(t)
        or pa.types.is_time(t)
    ):
        return t
    return pa.string()


class JsonLinesWriter(RowWriter):
    def _write(self, data: pa.Table) -> None:
        self.sink.write(string_buffer(json_rows_text(data, self.types)))


class JsonWriter(JsonDocument):
    """The JSON document (:class:`konsole.export.frames.JsonDocument`)."""

    def __init__(self, sink: BinaryIO, schema: pa.Schema, **kw: Any) -> None:
        super().__init__(sink, schema, labels=[type_label(f) for f in schema], **kw)

    def _rows_text(self, data: pa.Table) -> memoryview:
        rows = json_rows_text(data, self.types, end="")
        return string_buffer(pc.binary_join_element_wise(",\n", rows, ""))


class TextTableWriter(TextTable):
    """The aligned text table (:class:`konsole.export.frames.TextTable`), a column at a
    time with ``pyarrow.compute``."""

    def __init__(self, sink: BinaryIO, schema: pa.Schema, **kw: Any) -> None:
        right = right_aligned(schema)
        super().__init__(sink, schema, right=[n in right for n in schema.names], **kw)

    def _join(self, held: list[pa.Table]) -> pa.Table:
        return pa.concat_tables(held)

    def _cells(self, data: pa.Table) -> tuple[list[Any], list[int]]:
        cells = [
            cell_text_array(column, self.types.get(name))
            for name, column in zip(data.column_names, data.columns, strict=True)
        ]
        return cells, text_widths(cells)

    def _padded(self, cells: list[Any], widths: list[int]) -> memoryview:
        padded = [
            pc.utf8_lpad(c, width=w) if right else pc.utf8_rpad(c, width=w)
            for c, w, right in zip(cells, widths, self._right, strict=True)
        ]
        rows = pc.utf8_rtrim_whitespace(pc.binary_join_element_wise(*padded, "  "))
        return string_buffer(pc.binary_join_element_wise(rows, "\n", ""))


class _ArrowFileWriter(RowWriter):
    def __init__(self, sink: BinaryIO, schema: pa.Schema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        meta = dict(schema.metadata or {})
        meta[TABLE_KEY] = self.table.encode()
        self.file_schema = schema.with_metadata(meta)

    def _conform(self, data: pa.Table) -> pa.Table:
        return pa.Table.from_arrays(data.columns, schema=self.file_schema)


class ParquetWriter(_ArrowFileWriter):
    def __init__(self, sink: BinaryIO, schema: pa.Schema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        import pyarrow.parquet as pq

        # store_schema (the default) keeps the Arrow schema and its field metadata.
        # Dictionary encoding and column statistics cost over half the writing time (1M
        # rows: 0.99 s -> 0.27 s) and these files are read whole; Snappy stays.
        self._pq = pq.ParquetWriter(
            sink, self.file_schema, use_dictionary=False, write_statistics=False
        )

    def _write(self, data: pa.Table) -> None:
        self._pq.write_table(self._conform(data))

    def _finish(self, report: Report | None) -> None:
        self._pq.close()

    def _close(self) -> None:
        self._pq.close()


class ArrowIpcWriter(_ArrowFileWriter):
    def __init__(self, sink: BinaryIO, schema: pa.Schema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        self._ipc = pa.ipc.new_file(sink, self.file_schema)

    def _write(self, data: pa.Table) -> None:
        self._ipc.write_table(self._conform(data))

    def _finish(self, report: Report | None) -> None:
        self._ipc.close()

    def _close(self) -> None:
        self._ipc.close()


#: The writer of each format, for :func:`konsole.export.stream.make_writer`.
WRITERS: Final[Mapping[str, type[RowWriter]]] = {
    "csv": CsvWriter,
    "jsonl": JsonLinesWriter,
    "json": JsonWriter,
    "table": TextTableWriter,
    "parquet": ParquetWriter,
    "arrow": ArrowIpcWriter,
}
