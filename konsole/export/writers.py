"""The format writers and the one-call exports (pyarrow; see :mod:`konsole.export`).

The writer base and the streaming export live in :mod:`konsole.export.stream` (no pyarrow),
the writers of light rows in :mod:`konsole.export.plain`; both are re-exported here."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final

import pyarrow as pa
import pyarrow.compute as pc

from konsole.export import (
    FORMATS,
    ExportFormatError,
    io_error,
    open_output,
    resolve_format,
)
from konsole.export.stream import (
    PAUSE_ENV,
    PAUSE_SECONDS_ENV,
    RowWriter,
    export_stream,
    finish_export,
)
from konsole.render.arrow import (
    cell_text_array,
    json_rows_text,
    plain_text,
    string_buffer,
    text_widths,
)
from konsole.render.values import right_aligned, type_label

if TYPE_CHECKING:
    from fluss_proto.scan import Preview, ScanReport
    from fluss_proto.types import DataType

__all__ = [
    "ArrowIpcWriter",
    "CsvWriter",
    "ExportResult",
    "JsonLinesWriter",
    "JsonWriter",
    "ParquetWriter",
    "RowWriter",
    "TextTableWriter",
    "export_preview",
    "export_stream",
    "finish_export",
    "make_writer",
]

TABLE_KEY: Final = b"fluss.table"
__all__ += ["PAUSE_ENV", "PAUSE_SECONDS_ENV"]  # re-exported from konsole.export.stream


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

    def _finish(self, report: ScanReport | None) -> None:
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


class JsonWriter(RowWriter):
    """``{"table": ..., "columns": [...], "rows": [`` rows ``], "report": {...}}``."""

    def __init__(self, sink: BinaryIO, schema: pa.Schema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        columns = [{"name": f.name, "type": type_label(f)} for f in schema]
        head = (
            f'{{"table": {json.dumps(self.table, ensure_ascii=False)}, '
            f'"columns": {json.dumps(columns, ensure_ascii=False)}, "rows": ['
        )
        self.sink.write(head.encode())

    def _write(self, data: pa.Table) -> None:
        rows = pc.binary_join_element_wise(",\n", json_rows_text(data, self.types, end=""), "")
        text = string_buffer(rows)
        if not self.rows:  # the document's first row follows "[" on a new line
            self.sink.write(b"\n")
            text = text[2:]
        self.sink.write(text)

    def _finish(self, report: ScanReport | None) -> None:
        tail = "\n]" if self.rows else "]"
        if report is not None:
            tail += f', "report": {json.dumps(report.to_dict(), ensure_ascii=False)}'
        self.sink.write((tail + "}\n").encode())


class TextTableWriter(RowWriter):
    """The aligned text table. The first ``block_rows`` rows (or all, if fewer) are held
    back to size the columns, so a small preview looks as it always did; later chunks
    use those widths, and one that needs wider columns grows them and repeats the header
    (after a blank line) above itself."""

    block_rows: int = 1_000

    def __init__(self, sink: BinaryIO, schema: pa.Schema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        self._right = right_aligned(schema)
        self._widths: list[int] | None = None
        self._held: list[pa.Table] = []
        self._held_rows = 0

    def _write(self, data: pa.Table) -> None:
        if self._widths is None:
            self._held.append(data)
            self._held_rows += data.num_rows
            if self._held_rows >= self.block_rows:
                self._release()
            return
        self._lines(data)

    def _release(self) -> None:
        held, self._held, self._held_rows = self._held, [], 0
        if held:
            self._lines(held[0] if len(held) == 1 else pa.concat_tables(held))

    def _lines(self, data: pa.Table) -> None:
        names = data.column_names
        cells = [
            cell_text_array(column, self.types.get(name))
            for name, column in zip(names, data.columns, strict=True)
        ]
        needed = [max(len(n), w) for n, w in zip(names, text_widths(cells), strict=True)]
        head: list[str] = []
        if self._widths is None or any(n > w for n, w in zip(needed, self._widths, strict=True)):
            if self._widths is not None:
                needed = [max(a, b) for a, b in zip(needed, self._widths, strict=True)]
                head.append("")
            self._widths = needed
            head += self._header()
        padded = [
            pc.utf8_lpad(c, width=w) if n in self._right else pc.utf8_rpad(c, width=w)
            for c, w, n in zip(cells, self._widths, names, strict=True)
        ]
        rows = pc.utf8_rtrim_whitespace(pc.binary_join_element_wise(*padded, "  "))
        if head:
            self.sink.write(("\n".join(head) + "\n").encode())
        self.sink.write(string_buffer(pc.binary_join_element_wise(rows, "\n", "")))

    def _header(self) -> list[str]:
        assert self._widths is not None
        names = self.schema.names
        title = "  ".join(
            n.rjust(w) if n in self._right else n.ljust(w)
            for n, w in zip(names, self._widths, strict=True)
        )
        return [title.rstrip(), "  ".join("-" * w for w in self._widths)]

    def _finish(self, report: ScanReport | None) -> None:
        self._release()
        if self._widths is None:  # no rows: the header alone, as before
            self._widths = [len(n) for n in self.schema.names]
            self.sink.write(("\n".join(self._header()) + "\n").encode())


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

    def _finish(self, report: ScanReport | None) -> None:
        self._pq.close()

    def _close(self) -> None:
        self._pq.close()


class ArrowIpcWriter(_ArrowFileWriter):
    def __init__(self, sink: BinaryIO, schema: pa.Schema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        self._ipc = pa.ipc.new_file(sink, self.file_schema)

    def _write(self, data: pa.Table) -> None:
        self._ipc.write_table(self._conform(data))

    def _finish(self, report: ScanReport | None) -> None:
        self._ipc.close()

    def _close(self) -> None:
        self._ipc.close()


_WRITERS: Final[Mapping[str, type[RowWriter]]] = {
    "csv": CsvWriter,
    "jsonl": JsonLinesWriter,
    "json": JsonWriter,
    "table": TextTableWriter,
    "parquet": ParquetWriter,
    "arrow": ArrowIpcWriter,
}


def make_writer(
    fmt: str,
    sink: BinaryIO,
    schema: pa.Schema,
    *,
    table: str = "",
    types: Mapping[str, DataType] | None = None,
) -> RowWriter:
    """A writer of ``fmt`` onto ``sink`` (its header, if any, is written now)."""
    try:
        cls = _WRITERS[fmt]
    except KeyError:
        raise ExportFormatError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}") from None
    return cls(sink, schema, table=table, types=types)


# =========================================================================== one call


@dataclass(frozen=True)
class ExportResult:
    rows: int
    path: Path | None


def export_preview(
    preview: Preview, path: Path | str | None, fmt: str | None = None
) -> ExportResult:
    """Write a collected preview to ``path`` (None: stdout) in ``fmt`` (None: from the
    suffix). Raises :class:`ExportFormatError` / :class:`ExportIOError`."""
    chosen = resolve_format(fmt, path)
    types = {c.name: c.type for c in preview.info.schema.columns}
    with open_output(path) as out:
        writer: RowWriter | None = None
        try:
            writer = make_writer(
                chosen, out.sink, preview.table.schema, table=preview.report.table_path, types=types
            )
            for batch in preview.table.to_batches(max_chunksize=65_536):
                writer.write(pa.Table.from_batches([batch], schema=preview.table.schema))
            writer.finish(preview.report)
        except OSError as exc:
            if writer is not None:
                writer.abort()
            raise io_error(out.path, exc) from None
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        out.commit()
        return ExportResult(writer.rows, out.path)
