"""The text formats (CSV, JSON lines, JSON, the text table) of light rows, without pyarrow.

A light preview stream (:mod:`fluss_proto.scan.rows`) hands out
:class:`~fluss_proto.scan.rows.Rows` of Python values; these writers write them as the
vectorised writers of :mod:`konsole.export.writers` write the same rows as Arrow tables,
byte for byte (``tests/unit/test_plain_writers.py`` compares both on every plain type and
corner value, with the pyarrow writers as the oracle). Values are rendered by
:mod:`konsole.render.plain`.

Parquet and Arrow files need pyarrow: a preview asks for a light stream only for the text
formats (``LIGHT_FORMATS``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from konsole.export import FORMATS, LIGHT_FORMATS, ExportFormatError
from konsole.export.stream import RowWriter
from konsole.render.plain import cell_text, json_renderer, renderer

if TYPE_CHECKING:
    from fluss_proto.records.rowtype import DataType as RowDataType
    from fluss_proto.scan import ScanReport
    from fluss_proto.scan.rows import Rows, RowsSchema
    from fluss_proto.types import DataType

__all__ = ["LIGHT_FORMATS", "make_plain_writer"]

_RIGHT = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"})
#: What pyarrow's CSV writer writes unquoted, as it is (the others are text, quoted).
_CSV_RAW = frozenset(
    {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "BOOLEAN", "DATE", "TIME_WITHOUT_TIME_ZONE"}
)
#: The Arrow type names of the added columns, as the Arrow path labels them.
_ARROW_LABELS: Final = {"BIGINT": "int64", "STRING": "string", "INTEGER": "int32"}


class _PlainWriter(RowWriter):
    schema: RowsSchema

    def __init__(self, sink: BinaryIO, schema: RowsSchema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        self.names = list(schema.names)
        self.kinds: list[RowDataType] = list(schema.types)


def _json_rows(data: Rows, end: str) -> list[str]:
    """One compact JSON object per row, each followed by ``end``."""
    keys = [json.dumps(n, ensure_ascii=False) + ":" for n in data.schema.names]
    rendered = []
    for key, dt, values in zip(keys, data.schema.types, data.columns, strict=True):
        text = json_renderer(dt)
        rendered.append([key + ("null" if v is None else text(v)) for v in values])
    return ["{" + ",".join(parts) + "}" + end for parts in zip(*rendered, strict=True)]


class PlainJsonLinesWriter(_PlainWriter):
    def _write(self, data: Rows) -> None:
        self.sink.write("".join(_json_rows(data, "\n")).encode())


class PlainJsonWriter(_PlainWriter):
    """The JSON document of :class:`konsole.export.writers.JsonWriter`."""

    def __init__(self, sink: BinaryIO, schema: RowsSchema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        pairs = zip(self.names, self.kinds, strict=True)
        columns = [{"name": n, "type": self._label(n, t)} for n, t in pairs]
        head = (
            f'{{"table": {json.dumps(self.table, ensure_ascii=False)}, '
            f'"columns": {json.dumps(columns, ensure_ascii=False)}, "rows": ['
        )
        self.sink.write(head.encode())

    def _label(self, name: str, dt: RowDataType) -> str:
        fluss = self.types.get(name)
        return str(fluss) if fluss is not None else _ARROW_LABELS.get(dt.root, str(dt))

    def _write(self, data: Rows) -> None:
        text = "".join(",\n" + row for row in _json_rows(data, ""))
        if not self.rows:  # the document's first row follows "[" on a new line
            text = "\n" + text[2:]
        self.sink.write(text.encode())

    def _finish(self, report: ScanReport | None) -> None:
        tail = "\n]" if self.rows else "]"
        if report is not None:
            tail += f', "report": {json.dumps(report.to_dict(), ensure_ascii=False)}'
        self.sink.write((tail + "}\n").encode())


class PlainCsvWriter(_PlainWriter):
    """pyarrow's CSV writer with ``needed`` quoting, as :class:`CsvWriter` uses it: text
    values always quoted (inner quotes doubled), NULL an empty field."""

    def __init__(self, sink: BinaryIO, schema: RowsSchema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        header = io.StringIO()
        csv.writer(header, lineterminator="\n").writerow(self.names)
        self.sink.write(header.getvalue().encode())
        self._cells = [self._cell(dt) for dt in self.kinds]

    @staticmethod
    def _cell(dt: RowDataType) -> Callable[[Any], str]:
        text = renderer(dt)
        if dt.root in _CSV_RAW:
            return text
        return lambda v: '"' + text(v).replace('"', '""') + '"'

    def _write(self, data: Rows) -> None:
        columns = [
            ["" if v is None else cell(v) for v in values]
            for cell, values in zip(self._cells, data.columns, strict=True)
        ]
        self.sink.write("".join(",".join(r) + "\n" for r in zip(*columns, strict=True)).encode())


class PlainTextTableWriter(_PlainWriter):
    """:class:`konsole.export.writers.TextTableWriter` on light rows."""

    block_rows: int = 1_000

    def __init__(self, sink: BinaryIO, schema: RowsSchema, **kw: Any) -> None:
        super().__init__(sink, schema, **kw)
        self._right = [dt.root in _RIGHT for dt in self.kinds]
        self._widths: list[int] | None = None
        self._held: list[Rows] = []
        self._held_rows = 0

    def _write(self, data: Rows) -> None:
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
            from fluss_proto.scan.rows import Rows

            self._lines(Rows.concat(held))

    def _lines(self, data: Rows) -> None:
        cells = [cell_text(v, dt) for v, dt in zip(data.columns, self.kinds, strict=True)]
        needed = [
            max([len(n), *(len(c) for c in column)])
            for n, column in zip(self.names, cells, strict=True)
        ]
        head: list[str] = []
        if self._widths is None or any(n > w for n, w in zip(needed, self._widths, strict=True)):
            if self._widths is not None:
                needed = [max(a, b) for a, b in zip(needed, self._widths, strict=True)]
                head.append("")
            self._widths = needed
            head += self._header()
        padded = [
            [c.rjust(w) for c in column] if right else [c.ljust(w) for c in column]
            for column, w, right in zip(cells, self._widths, self._right, strict=True)
        ]
        text = "".join("  ".join(row).rstrip() + "\n" for row in zip(*padded, strict=True))
        if head:
            self.sink.write(("\n".join(head) + "\n").encode())
        self.sink.write(text.encode())

    def _header(self) -> list[str]:
        assert self._widths is not None
        title = "  ".join(
            n.rjust(w) if right else n.ljust(w)
            for n, w, right in zip(self.names, self._widths, self._right, strict=True)
        )
        return [title.rstrip(), "  ".join("-" * w for w in self._widths)]

    def _finish(self, report: ScanReport | None) -> None:
        self._release()
        if self._widths is None:  # no rows: the header alone
            self._widths = [len(n) for n in self.names]
            self.sink.write(("\n".join(self._header()) + "\n").encode())


_WRITERS: Final[Mapping[str, type[_PlainWriter]]] = {
    "csv": PlainCsvWriter,
    "jsonl": PlainJsonLinesWriter,
    "json": PlainJsonWriter,
    "table": PlainTextTableWriter,
}


def make_plain_writer(
    fmt: str,
    sink: BinaryIO,
    schema: RowsSchema,
    *,
    table: str = "",
    types: Mapping[str, DataType] | None = None,
) -> RowWriter:
    """A writer of ``fmt`` (one of ``LIGHT_FORMATS``) for light rows of ``schema``."""
    try:
        cls = _WRITERS[fmt]
    except KeyError:
        known = ", ".join(f for f in FORMATS if f in LIGHT_FORMATS)
        raise ExportFormatError(
            f"format {fmt!r} is not written from light rows ({known})"
        ) from None
    return cls(sink, schema, table=table, types=types)
