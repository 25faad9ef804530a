"""The text formats (CSV, JSON lines, JSON, the text table) of light rows, without pyarrow.

A light preview stream (:mod:`fluss_proto.scan.rows`) hands out
:class:`~fluss_proto.scan.rows.Rows` of Python values; these writers write them as the
vectorised writers of :mod:`konsole.export.writers` write the same rows as Arrow tables,
byte for byte (``tests/unit/test_plain_writers.py`` compares both on every plain type and
corner value, with the pyarrow writers as the oracle). Values are rendered by
:mod:`konsole.render.plain`.

Parquet and Arrow files need pyarrow: a preview asks for a light stream only for the text
formats (``LIGHT_FORMATS``). :func:`konsole.export.stream.make_writer` picks these writers
(``WRITERS``) for a ``RowsSchema``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from konsole.export import LIGHT_FORMATS
from konsole.export.frames import JsonDocument, TextTable
from konsole.export.rowwriter import RowWriter
from konsole.render.plain import cell_text, json_renderer, renderer

if TYPE_CHECKING:
    from fluss_proto.records.rowtype import DataType as RowDataType
    from fluss_proto.scan.rows import Rows, RowsSchema
    from fluss_proto.types import DataType

__all__ = ["LIGHT_FORMATS", "WRITERS"]

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


class PlainJsonWriter(_PlainWriter, JsonDocument):
    """The JSON document of :class:`konsole.export.writers.JsonWriter`."""

    def __init__(self, sink: BinaryIO, schema: RowsSchema, **kw: Any) -> None:
        types: Mapping[str, DataType] = kw.get("types") or {}
        labels = [
            str(types[n]) if n in types else _ARROW_LABELS.get(t.root, str(t))
            for n, t in zip(schema.names, schema.types, strict=True)
        ]
        super().__init__(sink, schema, labels=labels, **kw)

    def _rows_text(self, data: Rows) -> bytes:
        return "".join(",\n" + row for row in _json_rows(data, "")).encode()


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


class PlainTextTableWriter(_PlainWriter, TextTable):
    """:class:`konsole.export.writers.TextTableWriter` on light rows."""

    def __init__(self, sink: BinaryIO, schema: RowsSchema, **kw: Any) -> None:
        super().__init__(sink, schema, right=[t.root in _RIGHT for t in schema.types], **kw)

    def _join(self, held: list[Rows]) -> Rows:
        return type(held[0]).concat(held)

    def _cells(self, data: Rows) -> tuple[list[Any], list[int]]:
        cells = [cell_text(v, dt) for v, dt in zip(data.columns, self.kinds, strict=True)]
        return cells, [max(map(len, column), default=0) for column in cells]

    def _padded(self, cells: list[Any], widths: list[int]) -> bytes:
        padded = [
            [c.rjust(w) for c in column] if right else [c.ljust(w) for c in column]
            for column, w, right in zip(cells, widths, self._right, strict=True)
        ]
        return "".join("  ".join(row).rstrip() + "\n" for row in zip(*padded, strict=True)).encode()


#: The writer of each light format, for :func:`konsole.export.stream.make_writer`.
WRITERS: Final[Mapping[str, type[RowWriter]]] = {
    "csv": PlainCsvWriter,
    "jsonl": PlainJsonLinesWriter,
    "json": PlainJsonWriter,
    "table": PlainTextTableWriter,
}
