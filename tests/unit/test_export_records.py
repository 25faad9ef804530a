"""The history's records written out (konsole.export.records): the one writer behind
`konsole history export` and the listings' --format csv/json, the same bytes as before it
moved out of the command line (issue 39)."""

from __future__ import annotations

import io
import json
from typing import Any

import pyarrow.parquet as pq
import pytest

from konsole.cli.history import EXPORT_FORMATS
from konsole.export.records import RECORD_COLUMNS, RECORD_FORMATS, flat_cell, write_records

EVENT: dict[str, Any] = {
    "type": "event",
    "time": "2026-01-01T00:00:00.000Z",
    "time_ms": 1_767_225_600_000,
    "kind": "server_lost",
    "severity": "critical",
    "subject": {"kind": "tablet_server", "name": "tablet-server 2"},
    "message": 'tablet server 2 is gone, "quoted", and a comma',
    "count": 1,
    "samples": [1, 2],
    "details": {"node": 2},
}


def _written(rows: list[dict[str, Any]], columns: tuple[str, ...], fmt: str) -> bytes:
    sink = io.BytesIO()
    write_records(rows, columns, fmt, sink)
    return sink.getvalue()


def test_the_commands_formats_are_the_writers() -> None:
    assert EXPORT_FORMATS == RECORD_FORMATS


def test_an_events_subject_splits_and_nested_values_become_json_text() -> None:
    assert flat_cell(EVENT, "subject") == "tablet-server 2"
    assert flat_cell(EVENT, "subject_kind") == "tablet_server"
    assert flat_cell(EVENT, "details") == '{"node": 2}'
    assert flat_cell(EVENT, "samples") == "[1, 2]"
    assert flat_cell(EVENT, "missing") is None


def test_csv_has_the_eleven_columns_of_an_event_quoting_text() -> None:
    text = _written([EVENT], RECORD_COLUMNS["events"], "csv").decode()
    header, row = text.splitlines()
    assert header.split(",") == [f'"{c}"' for c in RECORD_COLUMNS["events"]]
    assert '"tablet server 2 is gone, ""quoted"", and a comma"' in row
    assert '"{""node"": 2}"' in row


def test_an_empty_csv_still_has_its_header() -> None:
    assert _written([], RECORD_COLUMNS["notes"], "csv") == b'"time","time_ms","subject","text"\n'


def test_json_and_json_lines_keep_the_rows_as_they_are() -> None:
    assert json.loads(_written([EVENT], (), "json")) == [EVENT]
    lines = _written([EVENT, EVENT], (), "jsonl").decode().splitlines()
    assert [json.loads(line) for line in lines] == [EVENT, EVENT]


def test_parquet_has_one_column_per_flat_column() -> None:
    table = pq.read_table(io.BytesIO(_written([EVENT], RECORD_COLUMNS["events"], "parquet")))
    assert table.column_names == list(RECORD_COLUMNS["events"])
    assert table.to_pylist()[0]["subject"] == "tablet-server 2"


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="not written as 'xml'"):
        _written([EVENT], RECORD_COLUMNS["events"], "xml")
