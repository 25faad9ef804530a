"""fluss_proto.records.arrow_ipc: the plain-type Arrow reader gives pyarrow's values, and
malformed messages raise CorruptBatchError only (truncations, flipped bytes)."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from fluss_proto.records._values import decimal_from_unscaled
from fluss_proto.records.arrow import to_arrow_schema
from fluss_proto.records.arrow_ipc import read_columns
from fluss_proto.records.errors import CorruptBatchError
from fluss_proto.records.rowtype import DataType, Field, row_type
from fluss_proto.scan.rows import rows_from_arrow
from tests._testutil import records_encoder as enc

ROW = row_type(
    [
        Field("b", DataType("BOOLEAN")),
        Field("i8", DataType("TINYINT")),
        Field("i64", DataType("BIGINT")),
        Field("f", DataType("FLOAT")),
        Field("d", DataType("DOUBLE")),
        Field("s", DataType("STRING")),
        Field("bin", DataType("BINARY", length=3)),
        Field("by", DataType("BYTES")),
        Field("dec", DataType("DECIMAL", precision=38, scale=4)),
        Field("day", DataType("DATE")),
        Field("t3", DataType("TIME_WITHOUT_TIME_ZONE", precision=3)),
        Field("t9", DataType("TIME_WITHOUT_TIME_ZONE", precision=9)),
        Field("ts6", DataType("TIMESTAMP_WITHOUT_TIME_ZONE", precision=6)),
        Field("ltz0", DataType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", precision=0)),
    ]
)
TYPES = ROW.field_types


def _batch(rows: int, seed: int = 1) -> pa.RecordBatch:
    """Random values with some NULLs in every column (temporal ones cast from their ints)."""
    rng = random.Random(seed)
    schema = to_arrow_schema(ROW)
    arrays = []
    for field in schema:
        t = field.type
        values = [None if rng.random() < 0.2 else _value(t, rng) for _ in range(rows)]
        if pa.types.is_temporal(t):
            storage = pa.int32() if pa.types.is_date32(t) or pa.types.is_time32(t) else pa.int64()
            arrays.append(pa.array(values, storage).cast(t))
        else:
            arrays.append(pa.array(values, t))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _value(t: pa.DataType, rng: random.Random) -> object:
    if pa.types.is_boolean(t):
        return rng.random() < 0.5
    if pa.types.is_integer(t):
        return rng.randint(-100, 100)
    if pa.types.is_floating(t):
        return rng.uniform(-1e6, 1e6)
    if pa.types.is_string(t):
        return rng.choice(["", "a", "ünï", "x" * 40])
    if pa.types.is_fixed_size_binary(t):
        return rng.randbytes(3)
    if pa.types.is_binary(t):
        return rng.randbytes(rng.randint(0, 9))
    if pa.types.is_decimal(t):
        return decimal_from_unscaled(rng.randint(-(10**30), 10**30), 4)
    if pa.types.is_time(t):
        return rng.randint(0, 86_399_999 if t.unit == "ms" else 86_399 * 10**9)
    if pa.types.is_date(t):
        return rng.randint(-100_000, 100_000)
    return rng.randint(-(10**12), 10**12)  # timestamps


@pytest.mark.parametrize("compression", [None, "zstd"])
@pytest.mark.parametrize("rows", [0, 1, 37])
def test_columns_are_pyarrows_values(compression: str | None, rows: int) -> None:
    batch = _batch(rows)
    payload = enc.arrow_message(batch, compression)
    assert read_columns(payload, TYPES, rows) == rows_from_arrow(batch)


def test_lz4_and_nested_columns_are_left_to_pyarrow() -> None:
    payload = enc.arrow_message(_batch(5), "lz4")
    assert read_columns(payload, TYPES, 5) is None
    nested = DataType("ARRAY", element=DataType("INTEGER"))
    assert read_columns(enc.arrow_message(_batch(5)), [*TYPES, nested], 5) is None


def test_a_huge_declared_buffer_is_refused_not_allocated() -> None:
    import struct

    from fluss_proto.records.arrow_ipc import MAX_BUFFER_BYTES, _layout

    payload = bytearray(enc.arrow_message(_batch(3), "zstd"))
    layout = _layout(bytes(payload))
    assert layout is not None
    _, buffers, _, body = layout
    offset = next(o for o, n in buffers if n > 8)  # a compressed buffer: int64 length first
    payload[body + offset : body + offset + 8] = struct.pack("<q", MAX_BUFFER_BYTES + 1)
    with pytest.raises(CorruptBatchError, match="declares"):
        read_columns(bytes(payload), TYPES, 3)


def test_malformed_messages_raise_corrupt_batch_errors_only() -> None:
    rng = random.Random(22)
    for compression in (None, "zstd"):
        payload = enc.arrow_message(_batch(20, seed=2), compression)
        cases = [payload[:n] for n in range(0, len(payload), 7)]
        for _ in range(300):
            bad = bytearray(payload)
            for _ in range(rng.randint(1, 4)):
                bad[rng.randrange(len(bad))] = rng.randrange(256)
            cases.append(bytes(bad))
        refused = 0
        for case in cases:
            try:
                read_columns(case, TYPES, 20)
            except CorruptBatchError:  # anything else escaping fails the test
                refused += 1
        assert refused > len(cases) // 2  # the truncations at least
