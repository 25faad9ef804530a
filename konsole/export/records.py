"""Writing the history's records out: events, notes and polls as CSV, JSON, JSON lines or
Parquet, for ``konsole history export`` and the history listings' ``--format csv/json``.

The rows are plain dicts (an event as :func:`konsole.collect.history.rows.event_document` makes
it); :data:`RECORD_COLUMNS` gives each kind's columns in order. JSON and JSON lines write the
rows as they are; CSV and Parquet (pyarrow's writers, as a preview's export) one column per
key, an event's subject as ``subject_kind`` and ``subject`` (its name), other nested values
as JSON text. pyarrow is imported only for CSV and Parquet.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any, BinaryIO, Final

__all__ = ["RECORD_COLUMNS", "RECORD_FORMATS", "flat_cell", "write_records"]

#: The formats a record export writes.
RECORD_FORMATS: Final = ("csv", "json", "jsonl", "parquet")

#: The columns of each kind of record, in order (CSV and Parquet: nested values as JSON text).
RECORD_COLUMNS: Final[dict[str, tuple[str, ...]]] = {
    "events": (
        "type",
        "time",
        "time_ms",
        "kind",
        "severity",
        "subject_kind",
        "subject",
        "message",
        "count",
        "samples",
        "details",
    ),
    "notes": ("time", "time_ms", "subject", "text"),
    "polls": ("time", "time_ms", "seq", "latency_ms", "ok", "error", "errors", "resolution"),
}


def flat_cell(row: dict[str, Any], column: str) -> Any:
    """``row``'s value for the flat ``column``: an event's subject split into its kind and
    name, any other dict or list as JSON text, a scalar as it is (a missing key: None)."""
    subject = row.get("subject")
    if isinstance(subject, dict) and column in ("subject", "subject_kind"):
        return subject["name" if column == "subject" else "kind"]
    value = row.get(column)
    return json.dumps(value) if isinstance(value, dict | list) else value


def write_records(
    rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str, sink: BinaryIO
) -> None:
    """``rows`` in ``fmt`` (one of :data:`RECORD_FORMATS`) to the binary ``sink``; the
    flat formats take ``columns`` (the header of an empty CSV too). A value JSON cannot
    hold is written as its text."""
    if fmt == "jsonl":
        for row in rows:
            sink.write((json.dumps(row, default=str) + "\n").encode())
        return
    if fmt == "json":
        sink.write((json.dumps(list(rows), indent=2, default=str) + "\n").encode())
        return
    if fmt not in RECORD_FORMATS:
        raise ValueError(f"records are not written as {fmt!r}")
    import pyarrow as pa

    flat = [{c: flat_cell(r, c) for c in columns} for r in rows]
    if flat:
        table = pa.Table.from_pylist(flat)
    else:
        table = pa.Table.from_pylist([], schema=pa.schema([(c, pa.string()) for c in columns]))
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, sink)
        return
    import pyarrow.csv as pacsv

    buffer = io.BytesIO()
    pacsv.write_csv(table, buffer)
    sink.write(buffer.getvalue())
