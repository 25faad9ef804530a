"""Fuzz every record decoder against a reference, on arbitrary and mutated bytes.

Only DecodeError may escape, and where a second decoder exists the two must agree
(the same rows, or the same typed error):

- rows: the columnar path against the row-at-a-time reference (``reference_table``), and
  decoded values written again by the tests' encoder (``records_encoder``) decode the same;
- log batches: ``read_log_batches``, ``iter_log_batches`` and ``parse_log_batch`` agree,
  and every parsed batch written again by the tests' encoder gives back its bytes;
- Arrow: every message fluss_proto decodes, pyarrow's stream reader decodes the same;
- value batches: row-at-a-time against columnar, and the batch written again gives back
  its bytes.
"""

from __future__ import annotations

import contextlib
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluss_proto.records import (
    CompactedRowDecoder,
    DataType,
    IndexedRowDecoder,
    Magic1Layout,
    RowDecodeError,
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
from fluss_proto.records.arrow import _fix_empty_compressed_buffers
from fluss_proto.records.log_batch import LogBatch
from tests._testutil import records_encoder as enc
from tests._testutil.records import _cell, assert_same_outcome, outcome

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


def rows_agree(decoder: Any, encode: Callable[[DataType, list[Any]], bytes], data: bytes) -> None:
    """Columnar and row-at-a-time agree on ``data``; decoded values survive re-encoding."""
    assert_same_outcome(outcome(decoder.to_table, [data]), outcome(decoder.reference_table, [data]))
    got = outcome(decoder.decode_values, data)
    if got[0] == "ok" and not _replaced_text(got[1]):
        again = encode(decoder.row_type, got[1])
        assert _cell(decoder.decode_values(again)) == _cell(got[1])


def _replaced_text(value: Any) -> bool:
    """A string decoded with U+FFFD for invalid UTF-8: it no longer has its byte length, so
    a fixed-length CHAR written again would not fit."""
    if isinstance(value, str):
        return "\ufffd" in value
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return any(_replaced_text(v) for v in value)
    return False


def batch_bytes(data: bytes, batch: LogBatch) -> bytes:
    return bytes(data[batch.position : batch.position + batch.size])


def reencodes(data: bytes, batch: LogBatch, check_crc: bool) -> None:
    """The batch written again from its parsed fields is its own bytes (the CRC field
    aside when it was not checked)."""
    raw = batch_bytes(data, batch)
    if batch.attributes not in (0, 1):  # the encoder writes only the append-only flag
        return
    fields: dict[str, Any] = {
        "magic": batch.magic,
        "base_offset": batch.base_offset,
        "record_count": batch.record_count,
        "last_offset_delta": batch.last_offset_delta,
        "commit_timestamp": batch.commit_timestamp,
        "schema_id": batch.schema_id,
        "append_only": batch.append_only,
        "writer_id": batch.writer_id,
        "batch_sequence": batch.batch_sequence,
        "leader_epoch": batch.leader_epoch,
        "statistics": bytes(batch.statistics),
    }
    crc_at = batch.crc_start - 4
    candidates = []
    for layout in ("0.9", "1.0"):
        with contextlib.suppress(ValueError):  # statistics on a layout without them
            candidates.append(enc.log_batch(bytes(batch.records), layout=layout, **fields))
    if check_crc:
        assert raw in candidates
    else:
        masked = raw[:crc_at] + raw[crc_at + 4 :]
        assert masked in [c[:crc_at] + c[crc_at + 4 :] for c in candidates]


def pyarrow_reads(payload: bytes, schema: pa.Schema) -> pa.RecordBatch | None:
    """The message read by pyarrow's stream reader (the schema message before it), fully
    validated; None when pyarrow cannot read it. The same Java-compatibility rewrite of
    empty compressed buffers is applied first (see ``_fix_empty_compressed_buffers``)."""
    stream = (
        schema.serialize().to_pybytes()
        + _fix_empty_compressed_buffers(payload)
        + b"\xff\xff\xff\xff\x00\x00\x00\x00"
    )
    try:
        batch = pa.ipc.open_stream(pa.py_buffer(stream)).read_next_batch()
        batch.validate(full=True)
    except (pa.ArrowException, ValueError, OSError, EOFError, TypeError, IndexError, StopIteration):
        return None
    return batch


def arrow_agrees(payload: bytes, schema: pa.Schema) -> None:
    """fluss_proto decodes a message only when pyarrow reads the same batch from it."""
    ours = outcome(decode_arrow_message, payload, schema)
    if ours[0] == "ok":
        reference = pyarrow_reads(payload, schema)
        assert reference is not None
        assert ours[1].equals(reference)


def arrow_batch_agrees(batch: LogBatch, schema: pa.Schema) -> None:
    got = outcome(decode_arrow_batch, batch, schema)
    if got[0] != "ok" or got[1].num_rows == 0:
        return
    records = got[1]
    assert records.num_rows == batch.record_count
    payload = (
        bytes(batch.records) if batch.append_only else bytes(batch.records[batch.record_count :])
    )
    reference = pyarrow_reads(payload, schema)
    assert reference is not None and records.data.equals(reference)


def value_batch_agrees(data: bytes, decoder: Any) -> None:
    """Row-at-a-time and columnar decoding of a value batch agree; the batch written again
    from its records gives back its bytes."""
    split = outcome(read_value_batch, data)
    rows = outcome(decode_value_batch, data, decoder)
    table = outcome(value_batch_table, data, decoder)
    if split[0] != "ok":
        assert rows[:2] == table[:2] == split[:2]
        return
    batch = split[1]
    again = enc.value_batch(
        [(r.schema_id, bytes(r.buffer[r.start : r.end])) for r in batch.records]
    )
    # magic, count and records are the input's (its declared length may cover more bytes
    # than the records take: the reader accepts that)
    assert again[4:] == bytes(data[4 : len(again)])
    # the columnar path against the row-at-a-time reference of the same (Arrow) values;
    # Python values (decode_value_batch) may fail where Arrow's do not (a TIME past one day)
    reference = outcome(
        decoder.reference_table, [(r.buffer, r.start, r.end) for r in batch.records]
    )
    assert_same_outcome(table, reference)
    if rows[0] == "ok" and table[0] == "ok":
        assert table[1].num_rows == len(rows[1])


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
    rows_agree(COMPACTED, enc.compacted_row, data)


@FUZZ
@given(mutated(VALID_COMPACTED))
def test_compacted_row_mutated(data: bytes) -> None:
    rows_agree(COMPACTED, enc.compacted_row, data)


@FUZZ
@given(st.binary(max_size=300))
def test_indexed_row_arbitrary_bytes(data: bytes) -> None:
    rows_agree(INDEXED, enc.indexed_row, data)


@FUZZ
@given(mutated(VALID_INDEXED))
def test_indexed_row_mutated(data: bytes) -> None:
    rows_agree(INDEXED, enc.indexed_row, data)


@FUZZ
@given(st.lists(st.binary(max_size=60), max_size=4))
def test_columnar_arbitrary_rows(rows: list[bytes]) -> None:
    for decoder in (COMPACTED, INDEXED):
        assert_same_outcome(outcome(decoder.to_table, rows), outcome(decoder.reference_table, rows))


# ------------------------------------------------------------------ log batches


@FUZZ
@given(st.binary(max_size=200), st.booleans(), st.sampled_from(list(Magic1Layout)))
def test_log_batches_arbitrary_bytes(data: bytes, check_crc: bool, layout: Magic1Layout) -> None:
    whole = outcome(read_log_batches, data, check_crc=check_crc, magic1_layout=layout)
    lazily = outcome(
        lambda: list(iter_log_batches(data, check_crc=check_crc, magic1_layout=layout))
    )
    strict = outcome(
        lambda: list(
            iter_log_batches(
                data, check_crc=check_crc, magic1_layout=layout, allow_incomplete_tail=False
            )
        )
    )
    first = outcome(parse_log_batch, data, check_crc=check_crc, magic1_layout=layout)
    outcome(read_log_batches, data, check_crc=check_crc)  # the layout guessed: errors only
    assert whole[0] == lazily[0]
    if whole[0] != "ok":
        assert whole[1:] == lazily[1:]
        return
    batches = whole[1].batches
    assert batches == lazily[1]
    if strict[0] == "ok":  # no incomplete tail allowed: the same batches, nothing left over
        assert strict[1] == batches and whole[1].bytes_remaining == 0
    if batches:
        assert first[0] == "ok" and first[1] == batches[0]
    for batch in batches:
        reencodes(data, batch, check_crc)


@st.composite
def framed_batches(draw: st.DrawFn) -> tuple[bytes, dict[str, Any]]:
    """A well-framed batch (valid CRC) around arbitrary header values and records."""
    fields = {
        "records": draw(st.binary(max_size=120)),
        "magic": draw(st.sampled_from([0, 1, 2])),
        "layout": draw(st.sampled_from(["0.9", "1.0"])),
        "record_count": draw(st.integers(-2, 6)),
        "append_only": draw(st.booleans()),
    }
    return enc.log_batch(statistics=b"", **fields), fields


@FUZZ
@given(framed_batches(), st.sampled_from(list(Magic1Layout)))
def test_records_areas_of_framed_batches(
    case: tuple[bytes, dict[str, Any]], layout: Magic1Layout
) -> None:
    raw, fields = case
    got = outcome(read_log_batches, raw, magic1_layout=layout)
    same_layout = fields["magic"] != 1 or layout.value == fields["layout"]
    if same_layout and got[0] == "ok":
        # read with the layout it was written in: the header comes back as written
        (batch,) = got[1].batches
        assert (batch.magic, batch.record_count, batch.append_only) == (
            fields["magic"],
            fields["record_count"],
            fields["append_only"],
        )
        assert bytes(batch.records) == fields["records"] and batch.size == len(raw)
    if got[0] != "ok":
        return
    for batch in got[1].batches:
        reencodes(raw, batch, check_crc=True)
        arrow_batch_agrees(batch, SMALL_SCHEMA)
        for decoder in (CompactedRowDecoder(SMALL), IndexedRowDecoder(SMALL)):
            rows = outcome(decode_row_batch, batch, decoder)
            table = outcome(row_batch_table, batch, decoder, with_metadata=False)
            assert rows[0] == table[0] or (rows[0] == "ok" and table[1] is RowDecodeError)
            if rows[0] == "ok" and table[0] == "ok":  # BIGINT and STRING: the same values
                assert table[1].to_pylist() == [r.row for r in rows[1]]


@FUZZ
@given(mutated(REAL_LOG))
def test_real_log_blob_mutated(data: bytes) -> None:
    got = outcome(read_log_batches, data, check_crc=False)
    if got[0] != "ok":
        return
    for batch in got[1].batches:
        reencodes(data, batch, check_crc=False)
        arrow_batch_agrees(batch, REAL_LOG_SCHEMA)


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
    arrow_agrees(data, SMALL_SCHEMA)


@FUZZ
@given(st.binary(max_size=200))
def test_arrow_message_arbitrary_bytes(data: bytes) -> None:
    arrow_agrees(b"\xff\xff\xff\xff" + data, SMALL_SCHEMA)
    arrow_agrees(data, SMALL_SCHEMA)


# ------------------------------------------------------------------ value batches


@FUZZ
@given(st.binary(max_size=200))
def test_value_batch_arbitrary_bytes(data: bytes) -> None:
    value_batch_agrees(data, COMPACTED)
    value_batch_agrees(data, INDEXED)
    outcome(decode_value_batch, data, {1: INDEXED})
    outcome(split_value, data)


@FUZZ
@given(mutated(REAL_VALUES))
def test_real_value_batch_mutated(data: bytes) -> None:
    value_batch_agrees(data, REAL_DECODER)
