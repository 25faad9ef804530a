"""Value batches (ScanKv / LimitScan on PK tables) and lookup values."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest

from fluss_proto.records import (
    CompactedRowDecoder,
    CorruptBatchError,
    DataType,
    IndexedRowDecoder,
    RecordDecodeError,
    TruncatedBatchError,
    UnknownMagicError,
    decode_value_batch,
    make_row_decoder,
    read_value_batch,
    row_type,
    split_value,
    value_batch_table,
)
from tests._testutil import records_encoder as enc

T = DataType
V1 = row_type([("id", T("BIGINT", nullable=False)), ("v", T("STRING"))])
V2 = row_type(
    [
        ("id", T("BIGINT", nullable=False)),
        ("v", T("STRING")),
        ("d", T("DECIMAL", precision=20, scale=2)),
    ]
)


@pytest.mark.parametrize(
    "fmt,encode", [("COMPACTED", enc.compacted_row), ("INDEXED", enc.indexed_row)]
)
def test_value_batch_round_trip(fmt, encode) -> None:
    rows = [[1, "a"], [2, None], [3, ""]]
    raw = enc.value_batch([(1, encode(V1, r)) for r in rows])
    batch = read_value_batch(raw)
    assert batch.magic == 0 and len(batch) == 3 and batch.size == len(raw)
    assert {r.schema_id for r in batch} == {1}
    decoder = make_row_decoder(V1, fmt)
    assert isinstance(decoder, CompactedRowDecoder if fmt == "COMPACTED" else IndexedRowDecoder)
    assert decode_value_batch(raw, decoder) == [
        {"id": 1, "v": "a"},
        {"id": 2, "v": None},
        {"id": 3, "v": ""},
    ]
    table = value_batch_table(raw, decoder)
    assert table.column("id").to_pylist() == [1, 2, 3]


def test_rows_of_several_schemas() -> None:
    raw = enc.value_batch(
        [
            (1, enc.compacted_row(V1, [1, "old"])),
            (2, enc.compacted_row(V2, [2, "new", Decimal("1.50")])),
        ]
    )
    decoders = {1: CompactedRowDecoder(V1), 2: CompactedRowDecoder(V2)}
    assert decode_value_batch(raw, decoders) == [
        {"id": 1, "v": "old"},
        {"id": 2, "v": "new", "d": Decimal("1.50")},
    ]
    assert decode_value_batch(raw, decoders.__getitem__)[1]["d"] == Decimal("1.50")
    with pytest.raises(RecordDecodeError, match="schema id 2"):
        decode_value_batch(raw, {1: decoders[1]})


def test_empty_batch_and_trailing_bytes() -> None:
    raw = enc.value_batch([])
    assert raw == struct.pack("<iBi", 5, 0, 0)
    assert decode_value_batch(raw + b"ignored", CompactedRowDecoder(V1)) == []


@pytest.mark.parametrize(
    "mutate,error",
    [
        (lambda b: b[:8], TruncatedBatchError),
        (lambda b: b[:4] + b"\x01" + b[5:], UnknownMagicError),
        (lambda b: struct.pack("<i", 2) + b[4:], CorruptBatchError),
        (lambda b: struct.pack("<i", len(b) + 10) + b[4:], TruncatedBatchError),
        (lambda b: b[:5] + struct.pack("<i", -1) + b[9:], CorruptBatchError),
        (lambda b: b[:5] + struct.pack("<i", 2) + b[9:], TruncatedBatchError),
        (lambda b: b[:9] + struct.pack("<i", 1) + b[13:], CorruptBatchError),
        (lambda b: b[:9] + struct.pack("<i", 1000) + b[13:], TruncatedBatchError),
    ],
)
def test_malformed_value_batches(mutate, error) -> None:
    raw = enc.value_batch([(1, enc.compacted_row(V1, [1, "a"]))])
    with pytest.raises(error) as info:
        read_value_batch(mutate(raw), bucket=("t", 0))
    assert info.value.bucket == ("t", 0)


def test_row_errors_carry_context() -> None:
    raw = enc.value_batch([(1, b"\x00")])  # id missing
    with pytest.raises(RecordDecodeError) as info:
        decode_value_batch(raw, CompactedRowDecoder(V1), bucket=7)
    # position: where the missing varint should start (9 header + 6 record head + 1 bitmap)
    assert info.value.bucket == 7 and info.value.position == 16


def test_split_lookup_value() -> None:
    row = enc.compacted_row(V1, [5, "x"])
    schema_id, body = split_value(struct.pack("<h", 3) + row)
    assert schema_id == 3 and CompactedRowDecoder(V1).decode(body) == {"id": 5, "v": "x"}
    with pytest.raises(TruncatedBatchError):
        split_value(b"\x01")


def test_make_row_decoder_rejects_unknown_format() -> None:
    with pytest.raises(ValueError):
        make_row_decoder(V1, "ARROW")
