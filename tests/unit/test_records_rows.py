"""CompactedRow, IndexedRow, BinaryArray and BinaryMap decoding, table-driven per type.

Vectors come from tests/_testutil/records_encoder.py, which follows the Java writers.
"""

from __future__ import annotations

import math
import struct
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from fluss_proto.errors import DecodeError
from fluss_proto.records import (
    CompactedRowDecoder,
    DataType,
    Field,
    IndexedRowDecoder,
    RowDecodeError,
    row_type,
)
from fluss_proto.records._values import read_varint32, read_varint64
from tests._testutil import records_encoder as enc
from tests._testutil.records import SCALAR_CASES
from tests._testutil.records_encoder import Ts

T = DataType
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def expected(dt: DataType, value: Any) -> Any:
    """What the Python-mode decoder gives back for a written value."""
    if value is None:
        return None
    if isinstance(value, Ts):
        base = datetime(1970, 1, 1)
        if dt.root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
            base = base.replace(tzinfo=UTC)
        return base + timedelta(microseconds=value.millis * 1000 + value.nanos // 1000)
    if dt.root == "FLOAT":
        return struct.unpack("<f", struct.pack("<f", value))[0]
    return value


def same(got: Any, want: Any) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(same, got, want))
    if isinstance(want, tuple):
        return isinstance(got, tuple) and all(map(same, got, want))
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(same(got[k], want[k]) for k in want)
        )
    if type(want) is not type(got) and not (isinstance(want, int) and isinstance(got, int)):
        return False
    return bool(got == want)


FORMATS = [
    ("compacted", CompactedRowDecoder, enc.compacted_row),
    ("indexed", IndexedRowDecoder, enc.indexed_row),
]


def _case_id(case: tuple[DataType, list[Any]]) -> str:
    return str(case[0])


@pytest.mark.parametrize("fmt,decoder_cls,encode", FORMATS, ids=[f[0] for f in FORMATS])
@pytest.mark.parametrize("case", SCALAR_CASES, ids=[_case_id(c) for c in SCALAR_CASES])
def test_scalar_round_trip(case, fmt, decoder_cls, encode) -> None:
    dt, values = case
    # a field before and after: the decoder must consume exactly the field's bytes
    rt = row_type([("head", T("INTEGER")), ("v", dt), ("tail", T("STRING"))])
    decoder = decoder_cls(rt)
    for v in values:
        raw = encode(rt, [-7, v, "tail!"])
        got = decoder.decode(raw)
        assert got["head"] == -7 and got["tail"] == "tail!"
        assert same(got["v"], expected(dt, v)), (v, got["v"])


@pytest.mark.parametrize("fmt,decoder_cls,encode", FORMATS, ids=[f[0] for f in FORMATS])
@pytest.mark.parametrize("case", SCALAR_CASES, ids=[_case_id(c) for c in SCALAR_CASES])
def test_array_and_map_of_every_type(case, fmt, decoder_cls, encode) -> None:
    dt, values = case
    rt = row_type(
        [
            ("arr", T("ARRAY", element=dt)),
            ("m", T("MAP", key=T("INTEGER", nullable=False), value=dt)),
            ("n", T("BIGINT")),
        ]
    )
    pairs = [(i, v) for i, v in enumerate(values)]
    raw = encode(rt, [values, pairs, I64_MIN])
    got = decoder_cls(rt).decode(raw)
    want = [expected(dt, v) for v in values]
    assert same(got["arr"], want)
    assert same(got["m"], [(i, w) for i, w in enumerate(want)])
    assert got["n"] == I64_MIN


@pytest.mark.parametrize("fmt,decoder_cls,encode", FORMATS, ids=[f[0] for f in FORMATS])
def test_all_null_and_empty_values(fmt, decoder_cls, encode) -> None:
    rt = row_type([(f"f{i}", dt) for i, (dt, _) in enumerate(SCALAR_CASES)])
    decoder = decoder_cls(rt)
    assert decoder.decode(encode(rt, [None] * len(SCALAR_CASES))) == {
        f"f{i}": None for i in range(len(SCALAR_CASES))
    }
    empty = row_type([("s", T("STRING")), ("b", T("BYTES")), ("a", T("ARRAY", element=T("INT")))])
    assert decoder_cls(empty).decode(encode(empty, ["", b"", []])) == {"s": "", "b": b"", "a": []}


@pytest.mark.parametrize("fmt,decoder_cls,encode", FORMATS, ids=[f[0] for f in FORMATS])
def test_nested_arrays_of_rows_maps_with_null_values(fmt, decoder_cls, encode) -> None:
    inner = row_type(
        [
            ("a", T("INTEGER")),
            ("s", T("STRING")),
            ("d", T("DECIMAL", precision=25, scale=3)),
            ("ts", T("TIMESTAMP", precision=9)),
            ("tags", T("ARRAY", element=T("STRING"))),
        ]
    )
    rt = row_type(
        [
            ("rows", T("ARRAY", element=inner)),
            ("deep", T("ARRAY", element=T("ARRAY", element=T("ARRAY", element=T("BIGINT"))))),
            (
                "m",
                T(
                    "MAP",
                    key=T("STRING", nullable=False),
                    value=T("MAP", key=T("INTEGER", nullable=False), value=T("STRING")),
                ),
            ),
            ("r", row_type([("x", T("BIGINT")), ("inner", inner)])),
            ("map_of_rows", T("MAP", key=T("BIGINT", nullable=False), value=inner)),
        ]
    )
    row1 = {
        "a": 1,
        "s": "a string longer than seven",
        "d": Decimal("-123.456"),
        "ts": Ts(-1, 5),
        "tags": ["x", None, "yyyyyyyyyy"],
    }
    row2 = {"a": None, "s": None, "d": None, "ts": None, "tags": None}
    values = [
        [row1, None, row2],
        [[[1, None], []], None, [[I64_MAX]]],
        [("k", [(1, "v"), (2, None)]), ("", None), ("long key, longer than 7", [])],
        {"x": -1, "inner": row1},
        [(5, row2), (6, None)],
    ]
    got = decoder_cls(rt).decode(encode(rt, values))
    want_row1 = dict(row1, ts=datetime(1969, 12, 31, 23, 59, 59, 999000))
    assert got["rows"] == [want_row1, None, row2]
    assert got["deep"] == [[[1, None], []], None, [[I64_MAX]]]
    assert got["m"] == [("k", [(1, "v"), (2, None)]), ("", None), ("long key, longer than 7", [])]
    assert got["r"] == {"x": -1, "inner": want_row1}
    assert got["map_of_rows"] == [(5, row2), (6, None)]


def test_varint_lengths() -> None:
    # negative ints always take 5 bytes, negative longs 10 (not zigzag)
    assert len(enc.varint(-1, 32)) == 5 and len(enc.varint(I32_MIN, 32)) == 5
    assert len(enc.varint(-1, 64)) == 10 and len(enc.varint(I64_MIN, 64)) == 10
    assert enc.varint(300, 32) == b"\xac\x02"
    for v in (0, 1, 127, 128, 16383, 16384, I32_MAX, I32_MIN, -1):
        data = enc.varint(v, 32)
        assert read_varint32(data, 0, len(data)) == (v, len(data))
    for v in (0, 1, I64_MAX, I64_MIN, -1, 2**62, -(2**62)):
        data = enc.varint(v, 64)
        assert read_varint64(data, 0, len(data)) == (v, len(data))


def test_varint_malformed() -> None:
    with pytest.raises(RowDecodeError):
        read_varint32(b"\x80\x80", 0, 2)  # truncated
    with pytest.raises(RowDecodeError):
        read_varint64(b"\xff" * 10 + b"\x01", 0, 11)  # continuation on the 10th byte
    with pytest.raises(RowDecodeError):
        read_varint64(b"", 0, 0)
    # Java readInt takes 5 bytes whatever the 5th byte's high bit says
    assert read_varint32(b"\xff\xff\xff\xff\x8f", 0, 5) == (-1, 5)


def test_binary_array_slot_layout() -> None:
    """The bytes of a BinaryArray of strings: header, null bits, inline and var-part slots."""
    raw = enc.binary_array(T("STRING"), ["abc", None, "12345678"], "compacted")
    assert struct.unpack_from("<i", raw, 0)[0] == 3
    assert raw[4] == 0b010  # element 1 is null
    slots = struct.unpack_from("<3Q", raw, 8)
    assert slots[0] >> 63 == 1 and (slots[0] >> 56) & 0x7F == 3  # inline, 3 bytes
    assert raw[8:11] == b"abc"
    assert slots[1] == 0
    offset, length = slots[2] >> 32, slots[2] & 0xFFFFFFFF
    assert (offset, length) == (32, 8) and raw[32:40] == b"12345678"
    rt = row_type([("a", T("ARRAY", element=T("STRING")))])
    data = enc.compacted_field(rt.fields[0].type, ["abc", None, "12345678"])
    assert CompactedRowDecoder(rt).decode(b"\x00" + data) == {"a": ["abc", None, "12345678"]}


def test_binary_array_high_precision_timestamp_and_decimal_slots() -> None:
    ts_arr = enc.binary_array(T("TIMESTAMP", precision=9), [Ts(-2, 7)], "indexed")
    (slot,) = struct.unpack_from("<Q", ts_arr, 8)
    assert slot & 0xFFFFFFFF == 7  # nanos in the slot
    assert struct.unpack_from("<q", ts_arr, slot >> 32)[0] == -2  # millis in the var part
    dec = T("DECIMAL", precision=30, scale=2)
    dec_arr = enc.binary_array(dec, [Decimal("-1.00")], "indexed")
    (slot,) = struct.unpack_from("<Q", dec_arr, 8)
    assert slot & 0xFFFFFFFF == 1  # BigInteger(-100).toByteArray() is one byte
    assert len(dec_arr) == 16 + 16  # header+slot rounded to 16, then 16 reserved bytes


def test_indexed_row_binary_and_char_trailing_zeros_are_dropped() -> None:
    """IndexedRow.getBinary/getChar trim trailing zero bytes (Java behaviour)."""
    rt = row_type([("b", T("BINARY", length=4)), ("c", T("CHAR", length=4))])
    raw = enc.indexed_row(rt, [b"\x01\x00", "ab"])
    assert raw[1:5] == b"\x01\x00\x00\x00"
    assert IndexedRowDecoder(rt).decode(raw) == {"b": b"\x01", "c": "ab"}
    # the columnar path keeps all n bytes (FixedSizeBinary(n))
    table = IndexedRowDecoder(rt).to_table([raw])
    assert table.column("b").to_pylist() == [b"\x01\x00\x00\x00"]


def test_indexed_row_null_variable_columns_consume_no_length_slot() -> None:
    rt = row_type([("a", T("STRING")), ("b", T("STRING")), ("c", T("BYTES"))])
    raw = enc.indexed_row(rt, [None, "xy", b"z"])
    assert struct.unpack_from("<3i", raw, 1) == (2, 1, 0)
    assert IndexedRowDecoder(rt).decode(raw) == {"a": None, "b": "xy", "c": b"z"}


def test_decimal_precision_overflow_gives_none_like_java() -> None:
    dt = T("DECIMAL", precision=20, scale=0)
    rt = row_type([("d", dt)])
    raw = b"\x00" + enc.compacted_field(dt, Decimal(10**25))  # 26 digits > 20
    assert CompactedRowDecoder(rt).decode(raw) == {"d": None}


def test_invalid_utf8_is_replaced_like_java() -> None:
    rt = row_type([("s", T("STRING"))])
    assert CompactedRowDecoder(rt).decode(b"\x00\x02\xff\xfe") == {"s": "\ufffd\ufffd"}


@pytest.mark.parametrize(
    "raw",
    [
        b"",  # no null bitmap
        b"\x00",  # field missing
        b"\x00\x05ab",  # string shorter than its length
        b"\x00\x80",  # truncated varint length
    ],
)
def test_truncated_compacted_rows(raw: bytes) -> None:
    rt = row_type([("s", T("STRING"))])
    with pytest.raises(RowDecodeError):
        CompactedRowDecoder(rt).decode(raw)


def test_bad_values_raise_decode_errors() -> None:
    ts = row_type([("t", T("TIMESTAMP", precision=9))])
    bad_nanos = b"\x00" + enc.varint(0, 64) + enc.varint(1_000_000, 32)
    with pytest.raises(RowDecodeError, match="nano"):
        CompactedRowDecoder(ts).decode(bad_nanos)
    out_of_range = b"\x00" + enc.varint(2**62, 64)
    with pytest.raises(RowDecodeError, match="datetime range"):
        CompactedRowDecoder(row_type([("t", T("TIMESTAMP", precision=3))])).decode(out_of_range)
    with pytest.raises(RowDecodeError):
        CompactedRowDecoder(row_type([("d", T("DATE"))])).decode(b"\x00" + enc.varint(I32_MAX, 32))
    with pytest.raises(RowDecodeError):
        CompactedRowDecoder(row_type([("t", T("TIME"))])).decode(b"\x00" + enc.varint(-1, 32))
    with pytest.raises(RowDecodeError, match="zero bytes"):
        CompactedRowDecoder(row_type([("d", T("DECIMAL", precision=30))])).decode(b"\x00\x00")
    # all of them are DecodeErrors, with no row contents in the message
    with pytest.raises(DecodeError):
        IndexedRowDecoder(row_type([("s", T("STRING"))])).decode(b"\x00\xff\xff\xff\xff")


def test_bad_array_regions_raise() -> None:
    elem = T("STRING")
    rt = row_type([("a", T("ARRAY", element=elem))])
    arr = bytearray(enc.binary_array(elem, ["123456789"], "compacted"))
    struct.pack_into("<Q", arr, 8, (1000 << 32) | 9)  # offset past the array
    with pytest.raises(RowDecodeError, match="outside"):
        CompactedRowDecoder(rt).decode(b"\x00" + enc._lp(bytes(arr)))
    struct.pack_into("<Q", arr, 8, (0x80 | 9) << 56)  # inline length > 7
    with pytest.raises(RowDecodeError, match="inline"):
        CompactedRowDecoder(rt).decode(b"\x00" + enc._lp(bytes(arr)))
    negative_size = struct.pack("<i", -1)
    with pytest.raises(RowDecodeError, match="negative size"):
        CompactedRowDecoder(rt).decode(b"\x00" + enc._lp(negative_size))
    m = T("MAP", key=T("INT", nullable=False), value=T("INT"))
    keys = enc.binary_array(T("INT"), [1, 2], "compacted")
    values = enc.binary_array(T("INT"), [1], "compacted")
    bad_map = struct.pack("<i", len(keys)) + keys + values
    with pytest.raises(RowDecodeError, match="2 keys but 1 values"):
        CompactedRowDecoder(row_type([("m", m)])).decode(b"\x00" + enc._lp(bad_map))


def test_decode_with_offsets_and_memoryview() -> None:
    rt = row_type([("a", T("INT")), ("b", T("STRING"))])
    raw = enc.compacted_row(rt, [5, "x"])
    blob = b"junk" + raw + b"more"
    decoder = CompactedRowDecoder(rt)
    assert decoder.decode(blob, 4, 4 + len(raw)) == {"a": 5, "b": "x"}
    assert decoder.decode(memoryview(blob)[4 : 4 + len(raw)]) == {"a": 5, "b": "x"}
    assert decoder.decode_values(bytearray(raw)) == [5, "x"]
    with pytest.raises(RowDecodeError):
        decoder.decode(blob, 5, 1000)


# ------------------------------------------------------------------ columnar path


@pytest.mark.parametrize("fmt,decoder_cls,encode", FORMATS, ids=[f[0] for f in FORMATS])
def test_columnar_table_matches_row_values(fmt, decoder_cls, encode) -> None:
    cases = [c for c in SCALAR_CASES if c[0].root not in ("FLOAT",)]
    width = max(len(v) for _, v in cases)
    fields = []
    for i, (dt, _) in enumerate(cases):
        fields.append((f"f{i}", dt))
        fields.append((f"a{i}", T("ARRAY", element=dt)))
    rt = row_type(fields)
    rows = []
    for r in range(width):
        row = []
        for _dt, vals in cases:
            row += [vals[r % len(vals)], vals]
        rows.append(row)
    decoder = decoder_cls(rt)
    table = decoder.to_table([encode(rt, row) for row in rows])
    assert table.schema == decoder.arrow_schema
    assert table.num_rows == width
    for i, (dt, vals) in enumerate(cases):
        col = table.column(f"f{i}")
        arrow_type = col.type
        want = pa.array(
            [_arrow_value(dt, vals[r % len(vals)], fmt) for r in range(width)], arrow_type
        )
        assert col.combine_chunks().equals(want), (dt, col, want)


def _arrow_value(dt: DataType, v: Any, fmt: str) -> Any:
    """The value in Arrow terms; timestamps with nanos as integers of the Arrow unit."""
    if v is None:
        return None
    if isinstance(v, Ts):
        if (dt.precision or 0) > 6:
            return v.millis * 1_000_000 + v.nanos
        return v.millis * 1000 + v.nanos // 1000
    if isinstance(v, datetime) and v.tzinfo is not None:
        return v.replace(tzinfo=None) - (v.utcoffset() or timedelta())
    if dt.root == "BINARY" and fmt == "compacted":
        return v.ljust(dt.length or 1, b"\x00")
    return v


def test_columnar_keeps_nanoseconds() -> None:
    rt = row_type([("ts", T("TIMESTAMP", precision=9)), ("ltz", T("TIMESTAMP_LTZ", precision=7))])
    raw = enc.compacted_row(rt, [Ts(-1, 1), Ts(1, 999_999)])
    table = CompactedRowDecoder(rt).to_table([raw, (raw, 0, len(raw))])
    assert table.column("ts").cast(pa.int64()).to_pylist() == [-999_999, -999_999]
    assert table.column("ltz").type == pa.timestamp("ns")
    assert table.column("ltz").cast(pa.int64()).to_pylist() == [1_999_999] * 2


def test_columnar_nested_types() -> None:
    inner = row_type([("a", T("INT")), ("ts", T("TIMESTAMP", precision=6))])
    rt = row_type(
        [
            ("arr", T("ARRAY", element=inner)),
            ("m", T("MAP", key=T("STRING", nullable=False), value=T("DATE"))),
            ("t", T("TIME", precision=6)),
        ]
    )
    raw = enc.indexed_row(
        rt,
        [
            [{"a": 1, "ts": datetime(2000, 1, 1, 0, 0, 0, 5)}, None],
            [("k", date(2000, 1, 2)), ("n", None)],
            time(1, 2, 3, 4000),
        ],
    )
    table = IndexedRowDecoder(rt).to_table([raw])
    assert table.to_pylist() == [
        {
            "arr": [{"a": 1, "ts": datetime(2000, 1, 1, 0, 0, 0, 5)}, None],
            "m": [("k", date(2000, 1, 2)), ("n", None)],
            "t": time(1, 2, 3, 4000),
        }
    ]


def test_columnar_value_that_does_not_fit_arrow_raises_decode_error() -> None:
    dt = T("DECIMAL", precision=4, scale=0)  # compact: Java does not check the precision
    rt = row_type([("d", dt)])
    raw = b"\x00" + enc.varint(123456, 64)
    assert CompactedRowDecoder(rt).decode(raw) == {"d": Decimal(123456)}
    with pytest.raises(RowDecodeError, match="Arrow"):
        CompactedRowDecoder(rt).to_table([raw])


def test_decoder_repr_and_field_types() -> None:
    rt = row_type([("a", T("INT", nullable=False)), ("r", row_type([("x", T("BYTES"))]))])
    assert "INTEGER NOT NULL" in repr(CompactedRowDecoder(rt))
    assert rt.field_types[1].fields == (Field("x", T("BYTES")),)
