"""The decoders' small type description and its adapter (JSON, fluss_proto.types)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluss_proto import types
from fluss_proto.records import CompactedRowDecoder, DataType, Field, as_row_type, row_type
from fluss_proto.records.rowtype import as_data_type

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "records" / "pk_limitscan_compacted.json"
)
TABLE_JSON = json.loads(FIXTURE.read_text())["table_json"]


def test_aliases_and_defaults() -> None:
    assert DataType("int").root == "INTEGER"
    assert DataType("TIMESTAMP").root == "TIMESTAMP_WITHOUT_TIME_ZONE"
    assert DataType("TIMESTAMP_LTZ").precision == 6
    assert DataType("TIME").precision == 0
    assert (DataType("DECIMAL").precision, DataType("DECIMAL").scale) == (10, 0)
    assert DataType("CHAR").length == 1
    with pytest.raises(ValueError):
        DataType("VECTOR")
    with pytest.raises(ValueError):
        DataType("ARRAY")
    with pytest.raises(ValueError):
        DataType("MAP", key=DataType("INT"))
    assert str(row_type([("a", DataType("INT", nullable=False))])) == "ROW<a INTEGER NOT NULL>"


def test_from_fluss_json() -> None:
    rt = as_row_type(TABLE_JSON)  # a table document: its schema
    assert rt == as_row_type(TABLE_JSON["schema"])
    assert rt.field_names[:3] == ["id", "s", "i32"]
    assert rt.fields[0].type == DataType("BIGINT", nullable=False)
    by_name = {f.name: f.type for f in rt.fields}
    assert by_name["d2"] == DataType("DECIMAL", precision=25, scale=3)
    assert by_name["ts9"].precision == 9
    assert by_name["ltz6"].root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
    assert by_name["m"].key == DataType("INTEGER", nullable=False)
    assert by_name["arr_row"].element.fields == (
        Field("a", DataType("INTEGER")),
        Field("b", DataType("STRING")),
    )


def test_primary_key_columns_are_not_null() -> None:
    schema = {
        "columns": [{"name": "k", "data_type": {"type": "STRING"}}],
        "primary_key": ["k"],
    }
    assert as_row_type(schema).fields[0].type.nullable is False


def test_from_fluss_proto_types() -> None:
    """fluss_proto.types objects render to the same JSON and adapt to the same row type."""
    schema = types.parse_schema(TABLE_JSON["schema"])
    assert as_row_type(schema) == as_row_type(TABLE_JSON)
    descriptor = types.parse_table_descriptor(TABLE_JSON)
    assert as_row_type(descriptor) == as_row_type(TABLE_JSON)
    decimal = types.parse_data_type({"type": "DECIMAL", "precision": 30, "scale": 2})
    assert as_data_type(decimal) == DataType("DECIMAL", precision=30, scale=2)
    CompactedRowDecoder(schema)  # a decoder takes them directly


def test_pairs_and_bad_input() -> None:
    assert as_row_type([("a", {"type": "INTEGER"})]) == row_type([("a", DataType("INT"))])
    with pytest.raises(TypeError):
        as_row_type(DataType("INT"))
    with pytest.raises(TypeError):
        as_row_type(42)
