"""Replay payloads captured from a real Fluss 0.9.1 cluster (tests/fixtures/records/).

The expected rows are the ones tests/fixtures/capture_records.py wrote with pyfluss.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from fluss_proto.records import (
    ChangeType,
    CompactedRowDecoder,
    CrcMismatchError,
    as_row_type,
    decode_arrow_batch,
    decode_row_batch,
    read_log_batches,
    read_value_batch,
    to_arrow_schema,
)
from fluss_proto.records.arrow import _fix_empty_compressed_buffers
from tests.fixtures import capture_records as cap

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "records"


def load(name: str) -> tuple[bytes, dict[str, Any]]:
    meta = json.loads((FIXTURES / f"{name}.json").read_text())
    assert meta["captured_from"]["server_version"] == "0.9.1-incubating"
    return (FIXTURES / f"{name}.bin").read_bytes(), meta["table_json"]


def test_every_fixture_is_listed_by_the_capture_script() -> None:
    on_disk = {p.stem for p in FIXTURES.glob("*.bin")}
    assert on_disk == set(cap.FIXTURES)


def test_log_arrow_zstd_all_types() -> None:
    payload, table_json = load("log_arrow_zstd")
    result = read_log_batches(payload)  # CRC checked
    assert not result.truncated_tail and result.bytes_consumed == len(payload)
    (batch,) = result.batches
    assert (batch.magic, batch.base_offset, batch.record_count) == (0, 0, 4)
    assert batch.append_only and batch.next_offset == 4 and batch.leader_epoch == -1
    assert batch.commit_timestamp > 1_600_000_000_000  # set by the server
    schema = to_arrow_schema(table_json["schema"])
    decoded = decode_arrow_batch(batch, schema)
    assert decoded.change_types is None
    got = pa.Table.from_batches([decoded.data])
    assert got.equals(cap.expected_log_table(schema))
    # TIMESTAMP(9) kept its nanoseconds; LTZ comes without a time zone
    assert got.column("ts9").cast(pa.int64()).to_pylist()[0] == 1_704_110_400_123_456_789
    assert got.schema.field("ltz9").type == pa.timestamp("ns")
    # the shared capture check agrees
    cap.check_log_arrow({"fetch": {"records": payload}}, table_json, None)


def test_pk_changelog_lz4_with_change_types() -> None:
    payload, table_json = load("pk_changelog_lz4")
    result = read_log_batches(payload)
    assert [(b.base_offset, b.record_count) for b in result] == [(0, 3), (3, 2), (5, 1)]
    assert [b.batch_sequence for b in result] == [0, 1, 2]
    assert all(not b.append_only for b in result)
    schema = to_arrow_schema(table_json["schema"])
    kinds = []
    for b in result:
        kinds += decode_arrow_batch(b, schema).change_types or []
    assert kinds == [
        ChangeType.INSERT,
        ChangeType.INSERT,
        ChangeType.INSERT,
        ChangeType.UPDATE_BEFORE,
        ChangeType.UPDATE_AFTER,
        ChangeType.DELETE,
    ]
    cap.check_pk_changelog({"fetch": {"records": payload}}, table_json)


def test_pk_changelog_lz4_needs_the_empty_buffer_fix() -> None:
    """Arrow Java writes empty LZ4 buffers that pyarrow cannot read as they are."""
    payload, table_json = load("pk_changelog_lz4")
    schema = to_arrow_schema(table_json["schema"])
    second = read_log_batches(payload).batches[1]
    message = bytes(second.records)[second.record_count :]
    with pytest.raises(OSError, match=r"(?i)lz4"):  # pyarrow.ArrowIOError
        pa.ipc.read_record_batch(pa.py_buffer(message), schema)
    fixed = _fix_empty_compressed_buffers(message)
    assert len(fixed) == len(message) and fixed != message
    assert pa.ipc.read_record_batch(pa.py_buffer(fixed), schema).num_rows == 2


def test_pk_changelog_compacted_rows() -> None:
    payload, table_json = load("pk_changelog_compacted")
    decoder = CompactedRowDecoder(as_row_type(table_json["schema"]))
    records = [r for b in read_log_batches(payload) for r in decode_row_batch(b, decoder)]
    assert [r.offset for r in records] == [0, 1, 2, 3, 4, 5]
    assert [r.change_type.short_string for r in records] == ["+I", "+I", "+I", "-U", "+U", "-D"]
    assert records[4].row["s"] == "second, updated"
    cap.check_row_log({"fetch": {"records": payload}}, table_json, "COMPACTED")


def test_pk_limit_scan_compacted_value_batch() -> None:
    payload, table_json = load("pk_limitscan_compacted")
    batch = read_value_batch(payload)
    assert batch.size == len(payload) and len(batch) == 2
    assert {r.schema_id for r in batch} == {1}
    decoder = CompactedRowDecoder(table_json["schema"])
    rows = {r["id"]: r for r in (decoder.decode(v.buffer, v.start, v.end) for v in batch)}
    one = rows[1]
    assert one["arr_s"] == ["a", None, "a string longer than seven bytes"]
    assert one["m"] == [(1, [1, 2]), (2, None), (3, [])]
    assert one["arr_row"] == [{"a": 1, "b": "x"}, None, {"a": None, "b": "long enough string"}]
    assert one["st"] == {"x": 42, "inner": {"z": "deep"}}
    cap.check_pk_limit_scan({"limit_scan": {"records": payload}}, table_json)


def test_fixture_crc_detects_a_flipped_bit() -> None:
    payload = bytearray(load("log_arrow_zstd")[0])
    payload[-1] ^= 1
    with pytest.raises(CrcMismatchError):
        read_log_batches(bytes(payload))
    assert len(read_log_batches(bytes(payload), check_crc=False)) == 1


def test_fixture_cut_short_stops_before_the_last_batch() -> None:
    payload = load("pk_changelog_lz4")[0]
    full = read_log_batches(payload)
    cut = read_log_batches(payload[:-10])
    assert len(cut) == len(full) - 1
    assert cut.next_offset == full.batches[-2].next_offset == 5
    assert cut.bytes_remaining == full.batches[-1].size - 10
