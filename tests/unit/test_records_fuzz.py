"""Fuzz every record decoder: on arbitrary or mutated bytes only DecodeError may escape."""

from __future__ import annotations

import contextlib
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluss_proto.errors import DecodeError
from fluss_proto.records import (
    CompactedRowDecoder,
    DataType,
    IndexedRowDecoder,
    Magic1Layout,
    decode_arrow_batch,
    decode_arrow_message,
    decode_row_batch,
    decode_value_batch,
    iter_log_batches,
    parse_log_batch,
    read_log_batches,
    read_value_batch,
    row_batch_table,
    row_type,
    split_value,
    to_arrow_schema,
    value_batch_table,
)
from tests.unit import records_encoder as enc

# At least 1,000 examples per fuzz test; more with a bigger profile (`make fuzz`).
FUZZ = settings(
    max_examples=max(1000, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

T = DataType
INNER = row_type([("a", T("INTEGER")), ("s", T("STRING")), ("b", T("BINARY", length=2))])
# One field of every type, nested ones included.
RICH = row_type(
    [
        ("bool", T("BOOLEAN")),
        ("i8", T("TINYINT")),
        ("i16", T("SMALLINT")),
        ("i32", T("INTEGER")),
        ("i64", T("BIGINT")),
        ("f32", T("FLOAT")),
        ("f64", T("DOUBLE")),
        ("s", T("STRING")),
        ("c", T("CHAR", length=3)),
        ("bytes", T("BYTES")),
        ("bin", T("BINARY", length=3)),
        ("d10", T("DECIMAL", precision=10, scale=2)),
        ("d30", T("DECIMAL", precision=30, scale=5)),
        ("date", T("DATE")),
        ("time", T("TIME", precision=3)),
        ("ts3", T("TIMESTAMP", precision=3)),
        ("ts9", T("TIMESTAMP", precision=9)),
        ("ltz6", T("TIMESTAMP_LTZ", precision=6)),
        ("arr_i", T("ARRAY", element=T("INTEGER"))),
        ("arr_s", T("ARRAY", element=T("STRING"))),
        ("arr_d", T("ARRAY", element=T("DECIMAL", precision=25, scale=2))),
        ("arr_ts", T("ARRAY", element=T("TIMESTAMP_LTZ", precision=9))),
        ("arr_row", T("ARRAY", element=INNER)),
        ("arr_arr", T("ARRAY", element=T("ARRAY", element=T("BOOLEAN")))),
        ("m", T("MAP", key=T("STRING", nullable=False), value=T("DATE"))),
        ("r", INNER),
    ]
)
RICH_VALUES = [
    True,
    -1,
    -300,
    -(2**31),
    -(2**63),
    1.5,
    -2.5,
    "a string longer than seven",
    "ab",
    b"\x00\x01",
    b"xyz",
    enc.Decimal("-12.34"),
    enc.Decimal("123456789012345678901.23456"),
    enc.date(1969, 1, 1),
    enc.time(1, 2, 3),
    enc.datetime(1960, 1, 1),
    enc.Ts(-1, 999_999),
    enc.datetime(2024, 1, 1, tzinfo=enc.UTC),
    [1, None, 3],
    ["x", None, "long long long"],
    [enc.Decimal("1.50"), None],
    [enc.Ts(5, 5), None],
    [{"a": 1, "s": "s", "b": b"ab"}, None],
    [[True, None], None, []],
    [("k", enc.date(2000, 1, 1)), ("k2", None)],
    {"a": None, "s": "inner string!", "b": None},
]
COMPACTED = CompactedRowDecoder(RICH)
INDEXED = IndexedRowDecoder(RICH)
VALID_COMPACTED = enc.compacted_row(RICH, RICH_VALUES)
VALID_INDEXED = enc.indexed_row(RICH, RICH_VALUES)
SMALL = row_type([("id", T("BIGINT")), ("name", T("STRING"))])
SMALL_SCHEMA = to_arrow_schema(SMALL)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "records"
REAL_LOG = (FIXTURES / "pk_changelog_lz4.bin").read_bytes()
REAL_LOG_SCHEMA = to_arrow_schema(
    json.loads((FIXTURES / "pk_changelog_lz4.json").read_text())["table_json"]["schema"]
)
REAL_VALUES = (FIXTURES / "pk_limitscan_compacted.bin").read_bytes()
REAL_DECODER = CompactedRowDecoder(
    json.loads((FIXTURES / "pk_limitscan_compacted.json").read_text())["table_json"]["schema"]
)


def only_decode_errors(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    with contextlib.suppress(DecodeError):
        fn(*args, **kwargs)


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    """``base`` with a few bytes overwritten, inserted or cut (shaped like real input)."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["set", "set", "insert", "cut", "int32"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "set" and data:
            data[pos] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "cut":
            del data[pos : pos + draw(st.integers(1, 16))]
        elif kind == "int32" and len(data) >= pos + 4:
            value = draw(st.sampled_from([-1, 0, 1, 7, 8, 2**31 - 1, -(2**31), 1 << 20]))
            struct.pack_into("<i", data, pos, value)
    return bytes(data)


# ------------------------------------------------------------------ rows


@FUZZ
@given(st.binary(max_size=300))
def test_compacted_row_arbitrary_bytes(data: bytes) -> None:
    only_decode_errors(COMPACTED.decode, data)


@FUZZ
@given(mutated(VALID_COMPACTED))
def test_compacted_row_mutated(data: bytes) -> None:
    only_decode_errors(COMPACTED.decode, data)
    only_decode_errors(COMPACTED.to_table, [data])


@FUZZ
@given(st.binary(max_size=300))
def test_indexed_row_arbitrary_bytes(data: bytes) -> None:
    only_decode_errors(INDEXED.decode, data)


@FUZZ
@given(mutated(VALID_INDEXED))
def test_indexed_row_mutated(data: bytes) -> None:
    only_decode_errors(INDEXED.decode, data)
    only_decode_errors(INDEXED.to_table, [data])


@FUZZ
@given(st.lists(st.binary(max_size=60), max_size=4))
def test_columnar_arbitrary_rows(rows: list[bytes]) -> None:
    only_decode_errors(COMPACTED.to_table, rows)
    only_decode_errors(INDEXED.to_table, rows)


# ------------------------------------------------------------------ log batches


@FUZZ
@given(st.binary(max_size=200), st.booleans(), st.sampled_from(list(Magic1Layout)))
def test_log_batches_arbitrary_bytes(data: bytes, check_crc: bool, layout: Magic1Layout) -> None:
    only_decode_errors(read_log_batches, data, check_crc=check_crc, magic1_layout=layout)
    only_decode_errors(read_log_batches, data, check_crc=check_crc)
    only_decode_errors(lambda: list(iter_log_batches(data, allow_incomplete_tail=False)))
    only_decode_errors(parse_log_batch, data, check_crc=check_crc, magic1_layout=layout)


@st.composite
def framed_batches(draw: st.DrawFn) -> bytes:
    """A well-framed batch (valid CRC) around arbitrary header values and records."""
    return enc.log_batch(
        draw(st.binary(max_size=120)),
        magic=draw(st.sampled_from([0, 1, 2])),
        layout=draw(st.sampled_from(["0.9", "1.0"])),
        record_count=draw(st.integers(-2, 6)),
        append_only=draw(st.booleans()),
        statistics=b"",
    )


@FUZZ
@given(framed_batches(), st.sampled_from(list(Magic1Layout)))
def test_records_areas_of_framed_batches(raw: bytes, layout: Magic1Layout) -> None:
    try:
        batches = read_log_batches(raw, magic1_layout=layout).batches
    except DecodeError:
        return
    for batch in batches:
        only_decode_errors(decode_arrow_batch, batch, SMALL_SCHEMA)
        only_decode_errors(decode_row_batch, batch, CompactedRowDecoder(SMALL))
        only_decode_errors(decode_row_batch, batch, IndexedRowDecoder(SMALL))
        only_decode_errors(row_batch_table, batch, CompactedRowDecoder(SMALL))


@FUZZ
@given(mutated(REAL_LOG))
def test_real_log_blob_mutated(data: bytes) -> None:
    schema = REAL_LOG_SCHEMA
    try:
        batches = read_log_batches(data, check_crc=False).batches
    except DecodeError:
        return
    for batch in batches:
        only_decode_errors(decode_arrow_batch, batch, schema)


@FUZZ
@given(
    mutated(
        enc.arrow_message(
            enc.pa.RecordBatch.from_pylist(
                [{"id": 1, "name": "a"}, {"id": None, "name": None}], schema=SMALL_SCHEMA
            ),
            "lz4",
        )
    )
)
def test_arrow_message_mutated(data: bytes) -> None:
    only_decode_errors(decode_arrow_message, data, SMALL_SCHEMA)


@FUZZ
@given(st.binary(max_size=200))
def test_arrow_message_arbitrary_bytes(data: bytes) -> None:
    only_decode_errors(decode_arrow_message, b"\xff\xff\xff\xff" + data, SMALL_SCHEMA)
    only_decode_errors(decode_arrow_message, data, SMALL_SCHEMA)


# ------------------------------------------------------------------ value batches


@FUZZ
@given(st.binary(max_size=200))
def test_value_batch_arbitrary_bytes(data: bytes) -> None:
    only_decode_errors(read_value_batch, data)
    only_decode_errors(decode_value_batch, data, COMPACTED)
    only_decode_errors(decode_value_batch, data, {1: INDEXED})
    only_decode_errors(value_batch_table, data, COMPACTED)
    only_decode_errors(split_value, data)


@FUZZ
@given(mutated(REAL_VALUES))
def test_real_value_batch_mutated(data: bytes) -> None:
    only_decode_errors(decode_value_batch, data, REAL_DECODER)
    only_decode_errors(value_batch_table, data, REAL_DECODER)
