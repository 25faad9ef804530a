"""The vectorised CompactedRow -> Arrow path (fluss_proto.records.columnar) against the
row-at-a-time reference decoder: table-driven per type, real fixtures, random schemas and rows
(hypothesis), and malformed input (same typed errors, never a numpy/pyarrow exception)."""

from __future__ import annotations

import json
import struct
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from fluss_proto.records import (
    CompactedRowDecoder,
    DataType,
    RecordDecodeError,
    RowDecodeError,
    as_row_type,
    columnar,
    read_log_batches,
    read_value_batch,
    row_batch_table,
    row_type,
    value_batch_table,
)
from fluss_proto.records.columnar import compile_columnar
from fluss_proto.records.log_records import iter_raw_records
from tests._testutil import records_encoder as enc
from tests._testutil.records import SCALAR_CASES, assert_same_outcome, assert_same_table, outcome
from tests._testutil.records_encoder import Ts

T = DataType
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "records"

EQUALITY = settings(
    max_examples=max(300, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ = settings(
    max_examples=max(1000, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ------------------------------------------------------------------ helpers


def batch_of(rt: DataType, rows: list[list[Any]], schema_id: int = 1) -> bytes:
    return enc.value_batch([(schema_id, enc.compacted_row(rt, r)) for r in rows])


def fast_and_reference(decoder: CompactedRowDecoder, raw: bytes) -> tuple[pa.Table, pa.Table]:
    """The batch through the vectorised path (asserting it did not fall back) and the
    reference."""
    batch = read_value_batch(raw)
    fast = compile_columnar(decoder.row_type, decoder.arrow_schema).decode(
        batch.buffer, batch.starts, batch.ends
    )
    assert fast is not None, "the vectorised path gave up on valid rows"
    ref = decoder.reference_table((r.buffer, r.start, r.end) for r in batch.records)
    return fast, ref


# ------------------------------------------------------------------ table-driven per type

EDGE_CASES: list[tuple[DataType, list[Any]]] = [
    (T("BOOLEAN"), [True, False, None, True]),
    (T("TINYINT"), [-128, 127, 0, -1, None]),
    (T("SMALLINT"), [-32768, 32767, 0, -1, None]),
    (
        T("INTEGER"),
        [0, 1, 127, 128, 16383, 16384, 2**21, 2**28, -1, I32_MIN, I32_MAX, -300, None],
    ),
    (
        T("BIGINT"),
        [0, 127, 128, 2**35, 2**49 - 1, 2**56 - 1, 2**56, 2**62, I64_MAX, -1, I64_MIN, None],
    ),
    (T("FLOAT"), [1.5, -0.0, float("inf"), float("-inf"), float("nan"), 1e-45, None]),
    (T("DOUBLE"), [0.25, -0.0, float("nan"), 5e-324, -1.7976931348623157e308, None]),
    (
        T("STRING"),
        ["", "a", "héllo ✓ 𝄞", "x" * 127, "y" * 128, "z" * 20_000, "\x00\x7f", None, ""],
    ),
    (T("CHAR", length=3), ["", "ab", "abc", None]),
    (T("BYTES"), [b"", b"\x00\xff", bytes(range(256)), b"\x80" * 300, None]),
    (T("BINARY", length=4), [b"", b"\x01", b"\xff\x00\xff", b"\x01\x02\x03\x04", None]),
    (T("BINARY", length=1), [b"", b"\x07", None]),
    (
        T("DECIMAL", precision=10, scale=2),
        [Decimal("-12.34"), Decimal("99999999.99"), Decimal("-99999999.99"), Decimal(0), None],
    ),
    (T("DECIMAL", precision=18, scale=0), [Decimal(10**18 - 1), Decimal(-(10**18) + 1), None]),
    (T("DECIMAL", precision=18, scale=18), [Decimal("0.999999999999999999"), Decimal("-1E-18")]),
    (T("DECIMAL", precision=1, scale=0), [Decimal(9), Decimal(-9), None]),
    (
        T("DECIMAL", precision=30, scale=5),
        [Decimal("123456789012345678901.23456"), Decimal("-0.00001"), Decimal(0), None],
    ),
    (T("DATE"), [date(1969, 1, 1), date(9999, 12, 31), 0, I32_MIN, I32_MAX, None]),
    (T("TIME", precision=0), [time(1, 2, 3), 999, -1, -1001, 86_399_999, None]),
    (T("TIME", precision=3), [time(23, 59, 59, 999000), 0, -1, I32_MIN, None]),
    (T("TIME", precision=6), [time(12, 0, 0, 1000), I32_MAX, I32_MIN, None]),
    (T("TIME", precision=9), [time(0, 0, 1), I32_MIN, None]),
    (T("TIMESTAMP", precision=0), [Ts(-1), Ts(-1000), Ts(-1001), Ts(1999), Ts(I64_MIN), None]),
    (T("TIMESTAMP", precision=3), [Ts(0), Ts(-1), Ts(I64_MAX), Ts(I64_MIN), Ts(2**62), None]),
    (
        T("TIMESTAMP", precision=6),
        [Ts(-1, 999_999), Ts(0, 1), Ts(1_700_000_000_123, 456_789), Ts(-(2**53), 0), None],
    ),
    (
        T("TIMESTAMP", precision=9),
        [Ts(-1, 1), Ts(9_223_372_036_853, 999_999), Ts(-9_223_372_036_854, 0), Ts(5), None],
    ),
    (T("TIMESTAMP_LTZ", precision=3), [datetime(2024, 1, 1, tzinfo=UTC), Ts(-5), None]),
    (T("TIMESTAMP_LTZ", precision=7), [Ts(-5, 999_999), Ts(1, 0), None]),
    (T("ARRAY", element=T("INTEGER")), [[1, None, -3], [], None]),
    (T("ARRAY", element=T("STRING")), [["a", None, "longer than seven"], None, []]),
    (T("MAP", key=T("STRING", nullable=False), value=T("INTEGER")), [[("k", 1)], [], None]),
    (row_type([("a", T("INTEGER")), ("s", T("STRING"))]), [{"a": 1, "s": "x"}, None]),
    (T("INTEGER", nullable=False), [0, -1, I32_MAX]),
    (T("STRING", nullable=False), ["never null", ""]),
]
CASES = EDGE_CASES + [(dt, vals) for dt, vals in SCALAR_CASES]


@pytest.mark.parametrize("dt,values", CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_each_type_matches_the_reference(dt: DataType, values: list[Any]) -> None:
    """The column between a varint id and a string: positions must advance exactly."""
    rt = row_type([("id", T("BIGINT", nullable=False)), ("x", dt), ("tail", T("STRING"))])
    rows = [[i - 3, v, f"t{i}" if i % 3 else None] for i, v in enumerate(values)]
    decoder = CompactedRowDecoder(rt)
    fast, ref = fast_and_reference(decoder, batch_of(rt, rows))
    assert_same_table(fast, ref)
    assert fast.column("tail").to_pylist() == [r[2] for r in rows]


@pytest.mark.parametrize("dt,values", CASES, ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_each_type_all_null_and_never_null(dt: DataType, values: list[Any]) -> None:
    rt = row_type([("x", dt), ("y", dt)])
    present = [v for v in values if v is not None]
    rows = [[None, v] for v in present] + [[None, None]]
    decoder = CompactedRowDecoder(rt)
    fast, ref = fast_and_reference(decoder, batch_of(rt, rows))
    assert_same_table(fast, ref)
    assert fast.column("x").null_count == len(rows)


def test_every_type_in_one_wide_row() -> None:
    """All cases side by side (more than 8 fields: a multi-byte null bitmap), with nulls
    moving across rows so each column sees both the all-rows and the subset path."""
    fields = [(f"c{i}", dt) for i, (dt, _) in enumerate(CASES)]
    rt = row_type(fields)
    width = max(len(v) for _, v in CASES)
    rows = []
    for r in range(width * 2):
        row = []
        for i, (_, vals) in enumerate(CASES):
            v = vals[(r + i) % len(vals)]
            row.append(None if (r + i) % 5 == 0 and fields[i][1].nullable else v)
        rows.append(row)
    decoder = CompactedRowDecoder(rt)
    fast, ref = fast_and_reference(decoder, batch_of(rt, rows))
    assert_same_table(fast, ref)


def test_many_rows_with_random_nulls_and_lengths() -> None:
    import random

    rng = random.Random(7)
    rt = row_type(
        [
            ("id", T("BIGINT", nullable=False)),
            ("name", T("STRING")),
            ("amount", T("DECIMAL", precision=10, scale=2)),
            ("ts", T("TIMESTAMP", precision=3)),
            ("v", T("DOUBLE")),
            ("n", T("INTEGER")),
            ("ts9", T("TIMESTAMP_LTZ", precision=9)),
            ("b", T("BYTES")),
        ]
    )
    rows = []
    for i in range(5000):
        rows.append(
            [
                rng.choice([i, -i, rng.randrange(I64_MIN, I64_MAX)]),
                None if rng.random() < 0.2 else "é" * rng.randrange(0, 200),
                None if rng.random() < 0.2 else Decimal(rng.randrange(-(10**10) + 1, 10**10)) / 100,
                None if rng.random() < 0.2 else Ts(rng.randrange(-(2**62), 2**62)),
                None if rng.random() < 0.2 else rng.uniform(-1e9, 1e9),
                None if rng.random() < 0.5 else rng.randrange(I32_MIN, I32_MAX + 1),
                None if rng.random() < 0.2 else Ts(rng.randrange(-(2**40), 2**40), 999_999),
                None if rng.random() < 0.2 else rng.randbytes(rng.randrange(0, 40)),
            ]
        )
    decoder = CompactedRowDecoder(rt)
    fast, ref = fast_and_reference(decoder, batch_of(rt, rows))
    assert_same_table(fast, ref)
    assert fast.column("name").null_count > 0


def test_rows_out_of_order_overlapping_or_separate() -> None:
    """Rows not in buffer order (the numpy gather path), the same row twice, and rows given
    as their own bytes objects (copied into one buffer)."""
    rt = row_type([("s", T("STRING")), ("b", T("BYTES")), ("i", T("INTEGER"))])
    rows = [["first", b"\x01", 1], [None, b"", -1], ["thïrd", None, None], ["", b"\xff" * 9, 7]]
    raws = [enc.compacted_row(rt, r) for r in rows]
    blob = b"".join(raws)
    spans, at = [], 0
    for r in raws:
        spans.append((at, at + len(r)))
        at += len(r)
    decoder = CompactedRowDecoder(rt)
    vec = compile_columnar(decoder.row_type, decoder.arrow_schema)
    order = [3, 1, 1, 0, 2]
    got = vec.decode(blob, [spans[i][0] for i in order], [spans[i][1] for i in order])
    assert got is not None
    assert_same_table(got, decoder.reference_table([raws[i] for i in order]))
    assert_same_table(decoder.to_table(raws), decoder.reference_table(raws))
    mixed = [raws[0], (blob, *spans[1]), bytearray(raws[2]), (memoryview(blob), *spans[3])]
    assert_same_table(decoder.to_table(mixed), decoder.reference_table(mixed))
    assert decoder.to_table([]).num_rows == 0


@pytest.mark.parametrize(
    "bad",
    [
        b"\xff",  # invalid start byte
        b"\xc0\x80",  # overlong NUL
        b"\xed\xa0\x80",  # UTF-16 surrogate
        b"\xf4\x90\x80\x80",  # above U+10FFFF
        b"ok\xe2\x82",  # truncated at the end of the value
        b"\x80abc",  # starts with a continuation byte
    ],
)
def test_invalid_utf8_is_replaced_like_the_reference(bad: bytes) -> None:
    rt = row_type([("s", T("STRING")), ("b", T("BYTES"))])
    rows = [enc.compacted_row(rt, ["fine", b"x"]), b"\x00" + enc._lp(bad) + enc._lp(b"y")]
    raw = enc.value_batch([(1, r) for r in rows])
    decoder = CompactedRowDecoder(rt)
    fast, ref = fast_and_reference(decoder, raw)
    assert_same_table(fast, ref)
    assert "\ufffd" in fast.column("s")[1].as_py()


def test_character_split_across_two_values_is_invalid() -> None:
    """'€' is e2 82 ac: split over two rows the data buffer is valid UTF-8, the values not."""
    rt = row_type([("s", T("STRING"))])
    rows = [b"\x00" + enc._lp(b"\xe2\x82"), b"\x00" + enc._lp(b"\xac")]
    raw = enc.value_batch([(1, r) for r in rows])
    fast, ref = fast_and_reference(CompactedRowDecoder(rt), raw)
    assert_same_table(fast, ref)
    assert fast.column("s").to_pylist() == ["\ufffd", "\ufffd"]


def test_varints_without_popcount(monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy < 2 has no bitwise_count: the frexp fallback gives the same lengths."""
    monkeypatch.setattr(columnar, "_HAS_POPCOUNT", False)
    rt = row_type([("i", T("INTEGER")), ("l", T("BIGINT")), ("s", T("STRING"))])
    rows = [[v, w, "s" * (v % 300)] for v in (0, 200, 70_000, I32_MAX) for w in (-1, 2**60, 5)]
    fast, ref = fast_and_reference(CompactedRowDecoder(rt), batch_of(rt, rows))
    assert_same_table(fast, ref)


def test_zero_rows_and_trailing_bytes_in_rows() -> None:
    rt = row_type([("a", T("INTEGER")), ("s", T("STRING"))])
    decoder = CompactedRowDecoder(rt)
    empty = value_batch_table(enc.value_batch([]), decoder)
    assert empty.num_rows == 0 and empty.schema == decoder.arrow_schema
    # bytes after the last field are ignored by the reference, so by the fast path too
    raw = enc.value_batch([(1, enc.compacted_row(rt, [1, "x"]) + b"\xff\xff")])
    fast, ref = fast_and_reference(decoder, raw)
    assert_same_table(fast, ref)


# ------------------------------------------------------------------ wiring


def test_value_batch_table_and_decode_table_use_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt = row_type([("id", T("BIGINT", nullable=False)), ("name", T("STRING"))])
    raw = batch_of(rt, [[i, f"name-{i}"] for i in range(50)])
    decoder = CompactedRowDecoder(rt)

    def no_reference(*_: Any) -> pa.Table:
        raise AssertionError("the reference decoder was used")

    monkeypatch.setattr(decoder, "reference_table", no_reference)
    table = value_batch_table(raw, decoder)
    assert table.column("name").to_pylist()[:2] == ["name-0", "name-1"]
    batch = read_value_batch(raw)
    assert decoder.decode_table(batch.buffer, batch.starts[5:7], batch.ends[5:7]).num_rows == 2


def test_value_batch_arrays() -> None:
    rt = row_type([("id", T("BIGINT", nullable=False))])
    raw = enc.value_batch([(1, enc.compacted_row(rt, [1])), (7, enc.compacted_row(rt, [2]))])
    batch = read_value_batch(memoryview(raw))
    assert batch.starts.tolist() == [15, 23] and batch.ends.tolist() == [17, 25]
    assert batch.schema_ids.tolist() == [1, 7]
    assert [(r.schema_id, r.start, r.end) for r in batch] == [(1, 15, 17), (7, 23, 25)]


# ------------------------------------------------------------------ real fixtures


def _fixture(name: str) -> tuple[bytes, dict[str, Any]]:
    meta = json.loads((FIXTURES / f"{name}.json").read_text())
    return (FIXTURES / f"{name}.bin").read_bytes(), meta["table_json"]


def test_real_limit_scan_fixture() -> None:
    payload, table_json = _fixture("pk_limitscan_compacted")
    decoder = CompactedRowDecoder(table_json["schema"])
    fast, ref = fast_and_reference(decoder, payload)
    assert_same_table(fast, ref)
    assert_same_table(value_batch_table(payload, decoder), ref)
    # nanoseconds of the TIMESTAMP(9) column survive
    assert fast.schema.field("ts9").type == pa.timestamp("ns")


def test_real_compacted_changelog_fixture() -> None:
    payload, table_json = _fixture("pk_changelog_compacted")
    decoder = CompactedRowDecoder(as_row_type(table_json["schema"]))
    vec = compile_columnar(decoder.row_type, decoder.arrow_schema)
    for batch in read_log_batches(payload):
        raws = list(iter_raw_records(batch))
        got = vec.decode(raws[0].buffer, [r.start for r in raws], [r.end for r in raws])
        assert got is not None
        ref = decoder.reference_table((r.buffer, r.start, r.end) for r in raws)
        assert_same_table(got, ref)
        full = row_batch_table(batch, decoder)
        assert_same_table(full.drop_columns(["_offset", "_change_type", "_timestamp"]), ref)


# ------------------------------------------------------------------ random schemas and rows

SCALAR_ROOTS = [
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "STRING",
    "CHAR",
    "BYTES",
    "BINARY",
    "DECIMAL",
    "DATE",
    "TIME",
    "TIMESTAMP",
    "TIMESTAMP_LTZ",
]


@st.composite
def scalar_types(draw: st.DrawFn, nullable: bool | None = None) -> DataType:
    root = draw(st.sampled_from(SCALAR_ROOTS))
    if nullable is None:
        nullable = draw(st.booleans())
    kw: dict[str, Any] = {"nullable": nullable}
    if root in ("CHAR", "BINARY"):
        kw["length"] = draw(st.integers(1, 12))
    elif root == "DECIMAL":
        kw["precision"] = draw(st.sampled_from([1, 2, 9, 10, 17, 18, 19, 25, 38]))
        kw["scale"] = draw(st.integers(0, kw["precision"]))
    elif root == "TIME" or root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        kw["precision"] = draw(st.integers(0, 9))
    return T(root, **kw)


@st.composite
def field_types(draw: st.DrawFn) -> DataType:
    kind = draw(st.sampled_from(["scalar"] * 8 + ["array", "map", "row"]))
    if kind == "scalar":
        return draw(scalar_types())
    if kind == "array":
        return T("ARRAY", element=draw(scalar_types()), nullable=draw(st.booleans()))
    if kind == "map":
        key = draw(scalar_types(nullable=False).filter(lambda t: t.root != "FLOAT"))
        return T("MAP", key=key, value=draw(scalar_types()), nullable=draw(st.booleans()))
    inner = draw(st.lists(scalar_types(), min_size=1, max_size=3))
    return row_type([(f"f{i}", t) for i, t in enumerate(inner)], nullable=draw(st.booleans()))


def _interesting_ints(bits: int) -> st.SearchStrategy[int]:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    edges = [lo, hi, -1, 0, 1, 127, 128, 16383, 16384, lo + 1, hi - 1]
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi), st.integers(-300, 300))


def values_of(dt: DataType) -> st.SearchStrategy[Any]:
    r = dt.root
    if r == "BOOLEAN":
        strat: st.SearchStrategy[Any] = st.booleans()
    elif r == "TINYINT":
        strat = st.integers(-128, 127)
    elif r == "SMALLINT":
        strat = st.integers(-32768, 32767)
    elif r in ("INTEGER", "DATE", "TIME_WITHOUT_TIME_ZONE"):
        strat = _interesting_ints(32)
    elif r == "BIGINT":
        strat = _interesting_ints(64)
    elif r == "FLOAT":
        strat = st.floats(width=32)
    elif r == "DOUBLE":
        strat = st.floats()
    elif r in ("STRING", "CHAR"):
        strat = st.text(max_size=40) | st.sampled_from(["", "é", "😀" * 50, "x" * 130])
    elif r == "BYTES":
        strat = st.binary(max_size=40) | st.sampled_from([b"", b"\x00" * 200])
    elif r == "BINARY":
        strat = st.binary(max_size=dt.length or 1)
    elif r == "DECIMAL":
        p, s = dt.precision or 10, dt.scale or 0
        bound = 10**p - 1
        unscaled = st.one_of(st.integers(-bound, bound), st.sampled_from([bound, -bound, 0, -1]))
        strat = unscaled.map(lambda u: Decimal(f"{u}E-{s}"))
    elif r in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        millis = st.one_of(
            st.integers(-(2**43), 2**43), _interesting_ints(64), st.integers(-(10**13), 10**13)
        )
        strat = st.builds(Ts, millis, st.integers(0, 999_999))
    elif r == "ARRAY":
        assert dt.element is not None
        strat = st.lists(values_of(dt.element), max_size=4)
    elif r == "MAP":
        assert dt.key is not None and dt.value is not None
        strat = st.lists(st.tuples(values_of(dt.key), values_of(dt.value)), max_size=3)
    elif r == "ROW":
        strat = st.tuples(*(values_of(f.type) for f in dt.fields)).map(
            lambda vals: dict(zip(dt.field_names, vals, strict=True))
        )
    else:  # pragma: no cover
        raise AssertionError(dt)
    return st.none() | strat if dt.nullable else strat


@st.composite
def schemas_and_rows(draw: st.DrawFn) -> tuple[DataType, list[list[Any]]]:
    types = draw(st.lists(field_types(), min_size=1, max_size=12))
    rt = row_type([(f"c{i}", t) for i, t in enumerate(types)])
    rows = draw(st.lists(st.tuples(*(values_of(t) for t in types)).map(list), max_size=12))
    return rt, rows


def _both_paths(decoder: CompactedRowDecoder, raw: bytes) -> None:
    batch = read_value_batch(raw)
    fast = outcome(value_batch_table, raw, decoder)
    ref = outcome(
        lambda: decoder.reference_table((r.buffer, r.start, r.end) for r in batch.records)
    )
    assert_same_outcome(fast, ref)
    event(f"reference: {ref[0]}")
    if ref[0] == "ok":  # valid rows: the vectorised path must not have given up
        vec = compile_columnar(decoder.row_type, decoder.arrow_schema)
        direct = vec.decode(batch.buffer, batch.starts, batch.ends)
        assert direct is not None
        assert_same_table(direct, ref[1])


@EQUALITY
@given(schemas_and_rows())
def test_random_schemas_and_rows_decode_identically(case: tuple[DataType, list[Any]]) -> None:
    rt, rows = case
    decoder = CompactedRowDecoder(rt)
    _both_paths(decoder, batch_of(rt, rows))


@EQUALITY
@given(schemas_and_rows())
def test_random_rows_through_to_table(case: tuple[DataType, list[Any]]) -> None:
    rt, rows = case
    decoder = CompactedRowDecoder(rt)
    raws = [enc.compacted_row(rt, r) for r in rows]
    ref = outcome(decoder.reference_table, raws)
    assert_same_outcome(outcome(decoder.to_table, raws), ref)
    if ref[0] == "ok":
        vec = compile_columnar(decoder.row_type, decoder.arrow_schema)
        assert vec.decode(b"".join(raws), *_offsets(raws)) is not None


def _offsets(raws: list[bytes]) -> tuple[list[int], list[int]]:
    starts, ends, at = [], [], 0
    for r in raws:
        starts.append(at)
        at += len(r)
        ends.append(at)
    return starts, ends


# ------------------------------------------------------------------ malformed input

SCALAR_ROW = row_type(
    [
        ("b", T("BOOLEAN")),
        ("i8", T("TINYINT")),
        ("i16", T("SMALLINT")),
        ("i32", T("INTEGER")),
        ("i64", T("BIGINT", nullable=False)),
        ("f", T("FLOAT")),
        ("d", T("DOUBLE")),
        ("s", T("STRING")),
        ("bytes", T("BYTES")),
        ("bin", T("BINARY", length=3)),
        ("dec", T("DECIMAL", precision=10, scale=2)),
        ("big", T("DECIMAL", precision=30, scale=2)),
        ("date", T("DATE")),
        ("t", T("TIME", precision=6)),
        ("ts0", T("TIMESTAMP", precision=0)),
        ("ts3", T("TIMESTAMP", precision=3)),
        ("ts6", T("TIMESTAMP_LTZ", precision=6)),
        ("ts9", T("TIMESTAMP", precision=9)),
        ("arr", T("ARRAY", element=T("STRING"))),
    ]
)
SCALAR_DECODER = CompactedRowDecoder(SCALAR_ROW)
SCALAR_VALUES = [
    [
        True,
        -5,
        -300,
        -(2**31),
        -(2**63),
        1.5,
        -2.5,
        "strïng",
        b"\x00\x01",
        b"ab",
        Decimal("-1.25"),
        Decimal("-123456789012345678.91"),
        -1,
        12345,
        Ts(-1001),
        Ts(1_700_000_000_000),
        Ts(-1, 999_999),
        Ts(123, 456_789),
        ["a", None, "long long string"],
    ],
    [None] * 4 + [7] + [None] * 14,
    [
        False,
        1,
        2,
        3,
        2**62,
        float("nan"),
        0.0,
        "",
        b"",
        b"",
        Decimal("0.01"),
        Decimal(0),
        0,
        0,
        Ts(0),
        Ts(-1),
        Ts(5, 5),
        Ts(-5, 0),
        [],
    ],
]
VALID_BATCH = enc.value_batch([(1, enc.compacted_row(SCALAR_ROW, r)) for r in SCALAR_VALUES])


def _row_with(dt: DataType, field_bytes: bytes) -> tuple[CompactedRowDecoder, bytes]:
    rt = row_type([("x", dt), ("s", T("STRING"))])
    return CompactedRowDecoder(rt), enc.value_batch([(1, b"\x00" + field_bytes + b"\x00")])


@pytest.mark.parametrize(
    "dt,field_bytes",
    [
        (T("BIGINT"), b"\xff" * 9 + b"\x80"),  # 10th byte with a continuation bit
        (T("BIGINT"), b"\xff\xff"),  # truncated varint
        (T("INTEGER"), b"\x80"),
        (T("STRING"), b"\x05ab"),  # shorter than its length
        (T("STRING"), enc.varint(-1, 32)),  # negative length
        (T("BYTES"), enc.varint(2**30, 32)),
        (T("BINARY", length=2), enc._lp(b"abc")),  # longer than BINARY(2)
        (T("DECIMAL", precision=4, scale=0), enc.varint(123_456, 64)),  # too many digits
        (T("DECIMAL", precision=20, scale=0), enc._lp(b"")),  # zero bytes
        (T("TIMESTAMP", precision=9), enc.varint(0, 64) + enc.varint(1_000_000, 32)),
        (T("TIMESTAMP", precision=9), enc.varint(0, 64) + enc.varint(-1, 32)),
        (T("TIMESTAMP", precision=9), enc.varint(I64_MAX, 64) + enc.varint(0, 32)),
        (T("TIMESTAMP", precision=6), enc.varint(I64_MIN, 64) + enc.varint(0, 32)),
        (T("DOUBLE"), b"\x00" * 3),
        (T("SMALLINT"), b"\x01"),
        (T("ARRAY", element=T("INTEGER")), enc._lp(struct.pack("<i", -1))),
        (T("ARRAY", element=T("INTEGER")), b"\x20\x00"),
    ],
)
def test_malformed_fields_raise_the_reference_error(dt: DataType, field_bytes: bytes) -> None:
    decoder, raw = _row_with(dt, field_bytes)
    batch = read_value_batch(raw)
    vec = compile_columnar(decoder.row_type, decoder.arrow_schema)
    assert vec.decode(batch.buffer, batch.starts, batch.ends) is None
    with pytest.raises(RowDecodeError) as fast:
        value_batch_table(raw, decoder, bucket=3)
    with pytest.raises(RowDecodeError) as ref:
        decoder.reference_table((r.buffer, r.start, r.end) for r in batch.records)
    assert type(fast.value) is type(ref.value)
    assert fast.value.detail == ref.value.detail
    assert fast.value.position == ref.value.position
    assert fast.value.bucket == 3


def test_rows_outside_the_buffer_raise() -> None:
    decoder = SCALAR_DECODER
    with pytest.raises(RowDecodeError):
        decoder.decode_table(VALID_BATCH, [0, 10], [5, len(VALID_BATCH) + 1])
    with pytest.raises(RowDecodeError):
        decoder.to_table([(VALID_BATCH, 10, 5)])
    with pytest.raises(RowDecodeError):  # an empty row has no null bitmap
        decoder.decode_table(VALID_BATCH, [3], [3])


def test_valid_scalar_batch_takes_the_fast_path() -> None:
    fast, ref = fast_and_reference(SCALAR_DECODER, VALID_BATCH)
    assert_same_table(fast, ref)


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    """``base`` with a few bytes overwritten, inserted or cut (shaped like real input)."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["set", "set", "bit", "insert", "cut", "int32"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "set" and data:
            data[pos] = draw(st.integers(0, 255))
        elif kind == "bit" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "cut":
            del data[pos : pos + draw(st.integers(1, 16))]
        elif kind == "int32" and len(data) >= pos + 4:
            value = draw(st.sampled_from([-1, 0, 1, 2, 7, 2**31 - 1, -(2**31), 1 << 20]))
            struct.pack_into("<i", data, pos, value)
    return bytes(data)


def _fast_vs_reference_on(decoder: CompactedRowDecoder, raw: bytes) -> None:
    try:
        batch = read_value_batch(raw)
    except RecordDecodeError:
        return
    fast = outcome(decoder.decode_table, batch.buffer, batch.starts, batch.ends)
    ref = outcome(
        lambda: decoder.reference_table((r.buffer, r.start, r.end) for r in batch.records)
    )
    assert_same_outcome(fast, ref)


@FUZZ
@given(mutated(VALID_BATCH))
def test_mutated_batches_decode_like_the_reference(raw: bytes) -> None:
    _fast_vs_reference_on(SCALAR_DECODER, raw)


@FUZZ
@given(mutated((FIXTURES / "pk_limitscan_compacted.bin").read_bytes()))
def test_mutated_real_batch_decodes_like_the_reference(raw: bytes) -> None:
    schema = json.loads((FIXTURES / "pk_limitscan_compacted.json").read_text())
    _fast_vs_reference_on(CompactedRowDecoder(schema["table_json"]["schema"]), raw)


@FUZZ
@given(st.lists(st.binary(max_size=80), max_size=6))
def test_arbitrary_rows_decode_like_the_reference(rows: list[bytes]) -> None:
    assert_same_outcome(
        outcome(SCALAR_DECODER.to_table, rows), outcome(SCALAR_DECODER.reference_table, rows)
    )


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_batches_raise_only_decode_errors(raw: bytes) -> None:
    outcome(value_batch_table, raw, SCALAR_DECODER)
    _fast_vs_reference_on(SCALAR_DECODER, raw)
