"""Log batches: headers per magic, CRC, trailing fragments, ARROW and row-format records."""

from __future__ import annotations

import struct
from datetime import datetime

import pyarrow as pa
import pytest

from fluss_proto.errors import DecodeError
from fluss_proto.records import (
    AmbiguousMagicError,
    ChangeType,
    CompactedRowDecoder,
    CorruptBatchError,
    CrcMismatchError,
    DataType,
    IndexedRowDecoder,
    Magic1Layout,
    TruncatedBatchError,
    UnknownMagicError,
    decode_arrow_batch,
    decode_row_batch,
    iter_log_batches,
    magic1_layout_for_api_keys,
    magic1_layout_for_version,
    parse_log_batch,
    read_log_batches,
    row_batch_table,
    row_type,
    to_arrow_schema,
)
from fluss_proto.records.crc32c import crc32c, crc32c_python
from tests._testutil import records_encoder as enc

T = DataType
ROW = row_type([("id", T("BIGINT", nullable=False)), ("name", T("STRING"))])
SCHEMA = to_arrow_schema(ROW)


def arrow_payload(ids: list[int], names: list[str | None], compression: str | None = None):
    data = pa.RecordBatch.from_arrays([pa.array(ids, pa.int64()), pa.array(names)], schema=SCHEMA)
    return enc.arrow_message(data, compression)


# ------------------------------------------------------------------ CRC-32C


def test_crc32c_known_vectors() -> None:
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    assert crc32c(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    data = bytes(range(256)) * 7
    assert crc32c_python(data[100:], crc32c_python(data[:100])) == crc32c_python(data)


# ------------------------------------------------------------------ headers per magic


@pytest.mark.parametrize(
    "magic,layout,header,epoch",
    [
        (0, Magic1Layout.LEADER_EPOCH, 48, -1),
        (1, Magic1Layout.LEADER_EPOCH, 52, 9),
        (1, Magic1Layout.STATISTICS, 52, -1),
        (2, Magic1Layout.LEADER_EPOCH, 56, 9),  # V2 ignores the magic-1 choice
    ],
)
def test_header_fields_per_magic(magic, layout, header, epoch) -> None:
    stats = b"\x01stats!" if magic == 2 or layout is Magic1Layout.STATISTICS else b""
    payload = arrow_payload([1, 2, 3], ["a", None, "c"])
    raw = enc.log_batch(
        payload,
        magic=magic,
        layout=layout.value,
        base_offset=1000,
        record_count=3,
        commit_timestamp=1_700_000_000_123,
        schema_id=7,
        writer_id=42,
        batch_sequence=5,
        leader_epoch=9,
        statistics=stats,
    )
    batch = parse_log_batch(raw, magic1_layout=layout)
    assert batch.magic == magic and batch.header_size == header
    assert batch.size == len(raw)
    assert batch.base_offset == 1000 and batch.last_offset == 1002 and batch.next_offset == 1003
    assert batch.commit_timestamp == 1_700_000_000_123
    assert batch.leader_epoch == epoch
    assert batch.schema_id == 7 and batch.writer_id == 42 and batch.batch_sequence == 5
    assert batch.record_count == 3 and batch.append_only
    assert bytes(batch.statistics) == stats
    assert bytes(batch.records) == payload and batch.looks_like_arrow
    assert batch.crc_start == (29 if epoch == 9 else 25)
    rows = decode_arrow_batch(batch, SCHEMA)
    assert rows.change_types is None
    assert rows.data.to_pylist() == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": None},
        {"id": 3, "name": "c"},
    ]
    assert list(rows.offsets()) == [1000, 1001, 1002]


def test_magic1_needs_a_layout_and_the_layouts_differ() -> None:
    raw = enc.log_batch(b"", magic=1, layout="1.0", record_count=0)
    with pytest.raises(AmbiguousMagicError) as info:
        parse_log_batch(raw)
    assert isinstance(info.value, UnknownMagicError) and info.value.magic == 1
    # read as the 0.9 layout, the CRC sits somewhere else and does not match
    with pytest.raises(CrcMismatchError):
        parse_log_batch(raw, magic1_layout=Magic1Layout.LEADER_EPOCH)
    assert parse_log_batch(raw, magic1_layout=Magic1Layout.STATISTICS).record_count == 0


def test_magic1_layout_helpers() -> None:
    assert magic1_layout_for_version("0.9.1-incubating") is Magic1Layout.LEADER_EPOCH
    assert magic1_layout_for_version("1.0-SNAPSHOT") is Magic1Layout.STATISTICS
    assert magic1_layout_for_version("1.2.0") is Magic1Layout.STATISTICS
    with pytest.raises(ValueError):
        magic1_layout_for_version("main")
    assert magic1_layout_for_api_keys([1000, 1012, 1015]) is Magic1Layout.LEADER_EPOCH
    assert magic1_layout_for_api_keys([1000, 1061]) is Magic1Layout.STATISTICS  # SCAN_KV


def test_unknown_magic() -> None:
    raw = bytearray(enc.log_batch(b"", record_count=0))
    raw[12] = 3
    with pytest.raises(UnknownMagicError) as info:
        list(iter_log_batches(bytes(raw), bucket="t1/b0"))
    assert info.value.magic == 3 and info.value.bucket == "t1/b0" and info.value.position == 0
    raw[12] = 0xFF
    with pytest.raises(UnknownMagicError, match="-1"):
        list(iter_log_batches(bytes(raw)))


# ------------------------------------------------------------------ CRC


def test_crc_mismatch_and_skipping_it() -> None:
    raw = bytearray(enc.log_batch(arrow_payload([1], ["x"]), base_offset=5, record_count=1))
    parse_log_batch(bytes(raw))
    raw[-3] ^= 0x40  # inside the Arrow body: covered by the CRC
    with pytest.raises(CrcMismatchError) as info:
        read_log_batches(bytes(raw), bucket=3)
    err = info.value
    assert err.offset == 5 and err.bucket == 3 and err.stored != err.computed
    assert isinstance(err, DecodeError) and "0x" in str(err)
    # projected fetches have a stale CRC: skip the check
    assert len(read_log_batches(bytes(raw), check_crc=False)) == 1


def test_crc_does_not_cover_offset_timestamp_or_epoch() -> None:
    raw = bytearray(enc.log_batch(b"", magic=1, layout="0.9", record_count=0, commit_timestamp=1))
    struct.pack_into("<q", raw, 0, 999)  # base offset (set by the server)
    struct.pack_into("<q", raw, 13, 123456)  # commit timestamp (set by the server)
    struct.pack_into("<i", raw, 21, 77)  # leader epoch
    batch = parse_log_batch(bytes(raw), magic1_layout=Magic1Layout.LEADER_EPOCH)
    assert (batch.base_offset, batch.commit_timestamp, batch.leader_epoch) == (999, 123456, 77)


# ------------------------------------------------------------------ blobs and fragments


def _blob() -> tuple[bytes, list[bytes]]:
    batches = [
        enc.log_batch(arrow_payload([0, 1], ["a", "b"]), base_offset=0, record_count=2),
        enc.log_batch(b"", base_offset=2, record_count=0, last_offset_delta=0),  # empty batch
        enc.log_batch(arrow_payload([3], ["c"], "zstd"), base_offset=3, record_count=1),
    ]
    return b"".join(batches), batches


def test_blob_of_batches_and_offsets() -> None:
    blob, parts = _blob()
    result = read_log_batches(blob)
    assert [b.base_offset for b in result] == [0, 2, 3]
    assert [b.position for b in result] == [0, len(parts[0]), len(parts[0]) + len(parts[1])]
    assert result.bytes_consumed == len(blob) and not result.truncated_tail
    assert result.next_offset == 4
    empty = result.batches[1]
    assert empty.record_count == 0 and empty.next_offset == 3 and len(empty.records) == 0
    decoded = decode_arrow_batch(empty, SCHEMA)
    assert decoded.num_rows == 0
    assert decode_arrow_batch(result.batches[2], SCHEMA).data.to_pylist() == [
        {"id": 3, "name": "c"}
    ]


@pytest.mark.parametrize("cut", [1, 11, 12, 20, 47, 48, 60])
def test_incomplete_trailing_batch_stops_silently(cut: int) -> None:
    blob, parts = _blob()
    head = len(parts[0]) + len(parts[1])
    truncated = blob[: head + cut]
    result = read_log_batches(truncated)
    assert [b.base_offset for b in result] == [0, 2]
    assert result.bytes_consumed == head and result.bytes_remaining == cut
    assert result.truncated_tail and result.next_offset == 3
    with pytest.raises(TruncatedBatchError):
        list(iter_log_batches(truncated, allow_incomplete_tail=False))
    with pytest.raises(TruncatedBatchError):
        parse_log_batch(truncated, head)


def test_empty_blob_and_fragment_only() -> None:
    assert read_log_batches(b"").batches == [] and read_log_batches(b"").next_offset is None
    result = read_log_batches(b"\x00" * 5)
    assert result.batches == [] and result.bytes_remaining == 5


def test_batch_smaller_than_its_header() -> None:
    raw = bytearray(enc.log_batch(b"x" * 40, record_count=0))
    struct.pack_into("<i", raw, 8, 30)  # 42 bytes: less than the V0 header (48)
    with pytest.raises(TruncatedBatchError, match="smaller than its magic-0 header"):
        parse_log_batch(bytes(raw))
    struct.pack_into("<i", raw, 8, -5)
    with pytest.raises(CorruptBatchError, match="invalid length"):
        read_log_batches(bytes(raw))


def test_negative_record_count_and_bad_statistics_length() -> None:
    raw = bytearray(enc.log_batch(b"", record_count=0))
    struct.pack_into("<i", raw, 44, -1)
    with pytest.raises(CorruptBatchError, match="negative record count"):
        parse_log_batch(bytes(raw), check_crc=False)
    raw = bytearray(enc.log_batch(b"", magic=2, record_count=0, statistics=b"\x01"))
    struct.pack_into("<i", raw, 52, 1000)
    with pytest.raises(CorruptBatchError, match="statistics length"):
        parse_log_batch(bytes(raw), check_crc=False)


# ------------------------------------------------------------------ ARROW records area


@pytest.mark.parametrize("compression", [None, "zstd", "lz4"])
def test_arrow_change_type_vector(compression) -> None:
    kinds = [ChangeType.INSERT, ChangeType.UPDATE_BEFORE, ChangeType.UPDATE_AFTER, 4]
    payload = bytes(kinds) + arrow_payload([1, 2, 2, 3], ["a", "b", "B", None], compression)
    raw = enc.log_batch(payload, magic=0, record_count=4, append_only=False, base_offset=10)
    batch = parse_log_batch(raw)
    assert not batch.append_only and batch.looks_like_arrow
    decoded = decode_arrow_batch(batch, SCHEMA)
    assert decoded.change_types == [
        ChangeType.INSERT,
        ChangeType.UPDATE_BEFORE,
        ChangeType.UPDATE_AFTER,
        ChangeType.DELETE,
    ]
    assert [c.short_string for c in decoded.change_types] == ["+I", "-U", "+U", "-D"]
    assert decoded.data.column("name").to_pylist() == ["a", "b", "B", None]


def test_arrow_bad_change_type_and_row_count() -> None:
    payload = b"\x01\x09" + arrow_payload([1, 2], ["a", "b"])
    raw = enc.log_batch(payload, record_count=2, append_only=False, base_offset=4)
    with pytest.raises(CorruptBatchError, match="change type byte 9") as info:
        decode_arrow_batch(parse_log_batch(raw), SCHEMA)
    assert info.value.offset == 4
    raw = enc.log_batch(arrow_payload([1, 2], ["a", "b"]), record_count=3)
    with pytest.raises(CorruptBatchError, match="2 rows"):
        decode_arrow_batch(parse_log_batch(raw), SCHEMA)
    raw = enc.log_batch(b"\x01", record_count=5, append_only=False)
    with pytest.raises(CorruptBatchError, match="change-type vector"):
        decode_arrow_batch(parse_log_batch(raw), SCHEMA)


def test_arrow_garbage_payload_is_a_decode_error() -> None:
    raw = enc.log_batch(b"\xff\xff\xff\xff\x10\x00\x00\x00" + b"\x00" * 16, record_count=1)
    with pytest.raises(CorruptBatchError, match="Arrow"):
        decode_arrow_batch(parse_log_batch(raw), SCHEMA)


def test_arrow_projected_schema() -> None:
    full = row_type([("a", T("INT")), ("b", T("STRING")), ("c", T("DOUBLE"))])
    schema = to_arrow_schema(full, projection=[2, 0])  # the server sorts the positions
    assert schema.names == ["a", "c"]
    data = pa.RecordBatch.from_arrays([pa.array([1], pa.int32()), pa.array([0.5])], schema=schema)
    raw = enc.log_batch(enc.arrow_message(data), record_count=1)
    assert decode_arrow_batch(parse_log_batch(raw), schema).data.to_pylist() == [{"a": 1, "c": 0.5}]


def test_arrow_type_mapping() -> None:
    rt = row_type(
        [
            ("t0", T("TIME", precision=0)),
            ("t3", T("TIME", precision=3)),
            ("t6", T("TIME", precision=6)),
            ("t9", T("TIME", precision=9)),
            ("ts0", T("TIMESTAMP", precision=0)),
            ("ltz7", T("TIMESTAMP_LTZ", precision=7)),
            ("bin", T("BINARY", length=3)),
            ("dec", T("DECIMAL", precision=38, scale=4)),
            ("c", T("CHAR", length=2)),
            ("arr", T("ARRAY", element=T("INT", nullable=False))),
            ("m", T("MAP", key=T("STRING", nullable=False), value=T("TINYINT"))),
            ("r", row_type([("x", T("SMALLINT"))], nullable=False)),
        ]
    )
    schema = to_arrow_schema(rt)
    assert [f.type for f in schema] == [
        pa.time32("s"),
        pa.time32("ms"),
        pa.time64("us"),
        pa.time64("ns"),
        pa.timestamp("s"),
        pa.timestamp("ns"),
        pa.binary(3),
        pa.decimal128(38, 4),
        pa.string(),
        pa.list_(pa.field("element", pa.int32(), nullable=False)),
        pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int8())),
        pa.struct([("x", pa.int16())]),
    ]
    assert not schema.field("r").nullable
    assert to_arrow_schema(rt, ltz_timezone="UTC").field("ltz7").type == pa.timestamp("ns", "UTC")


# ------------------------------------------------------------------ INDEXED / COMPACTED logs


ROWS = [[1, "one"], [2, None], [-(2**63), "a string longer than seven bytes"]]


@pytest.mark.parametrize(
    "decoder_cls,encode",
    [(IndexedRowDecoder, enc.indexed_row), (CompactedRowDecoder, enc.compacted_row)],
)
def test_row_format_log_batches(decoder_cls, encode) -> None:
    kinds = [ChangeType.APPEND_ONLY, ChangeType.INSERT, ChangeType.DELETE]
    records = b"".join(enc.log_record(k, encode(ROW, r)) for k, r in zip(kinds, ROWS, strict=True))
    raw = enc.log_batch(records, record_count=3, base_offset=100, commit_timestamp=77)
    batch = parse_log_batch(raw)
    assert not batch.looks_like_arrow
    decoder = decoder_cls(ROW)
    got = decode_row_batch(batch, decoder)
    assert [(r.offset, r.timestamp, r.change_type) for r in got] == [
        (100, 77, ChangeType.APPEND_ONLY),
        (101, 77, ChangeType.INSERT),
        (102, 77, ChangeType.DELETE),
    ]
    assert [list(r.row.values()) for r in got] == ROWS
    table = row_batch_table(batch, decoder)
    assert table.column_names == ["_offset", "_change_type", "_timestamp", "id", "name"]
    assert table.column("_change_type").to_pylist() == ["+A", "+I", "-D"]
    assert table.column("name").to_pylist() == ["one", None, "a string longer than seven bytes"]


def test_row_format_record_errors() -> None:
    good = enc.log_record(1, enc.compacted_row(ROW, ROWS[0]))
    decoder = CompactedRowDecoder(ROW)
    cases = [
        (good, 2, TruncatedBatchError),  # record count larger than the records
        (good[:-1], 1, TruncatedBatchError),  # record longer than the batch
        (struct.pack("<ib", 0, 1), 1, CorruptBatchError),  # length 0: no attributes byte
        (good[:4] + b"\x07" + good[5:], 1, CorruptBatchError),  # change type 7
    ]
    for records, count, error in cases:
        raw = enc.log_batch(records, record_count=count, base_offset=9)
        with pytest.raises(error) as info:
            decode_row_batch(parse_log_batch(raw), decoder)
        assert info.value.offset == 9
    bad_row = enc.log_record(1, b"\x00\x7f")  # string of 127 bytes that are not there
    with pytest.raises(DecodeError) as info:
        decode_row_batch(parse_log_batch(enc.log_batch(bad_row, record_count=1)), decoder)
    assert info.value.offset == 0


def test_timestamps_and_statistics_do_not_shift_records() -> None:
    rt = row_type([("ts", T("TIMESTAMP", precision=3))])
    records = enc.log_record(0, enc.compacted_row(rt, [datetime(2020, 1, 1)]))
    raw = enc.log_batch(records, magic=2, record_count=1, statistics=b"\x01" + b"\x00" * 30)
    got = decode_row_batch(parse_log_batch(raw), CompactedRowDecoder(rt))
    assert got[0].row == {"ts": datetime(2020, 1, 1)}
