"""Replay payloads captured from a real Fluss 1.0-line server (tests/fixtures/records/fluss-1.0/)
and set them beside the 0.9.1 ones captured from the same rows (tests/fixtures/records/).

What the 1.0 server (1.0-SNAPSHOT, commit 545c553) returned: the same batch formats as
0.9.1, byte for byte in the records areas (log batches magic 0, the server's changelog
batches magic 0 with change-type vectors, value batches of CompactedRows). Only the fields
the server sets per append differ (commit timestamp, writer id, hence the CRC). New: a log
table with ``table.statistics.columns`` gets magic-1 batches in the 1.0 layout (statistics
length + a statistics block) from pyfluss 1.0, and a projected fetch of them drops the block;
ScanKv returns the same value batch as LimitScan.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fluss_proto.records import (
    AmbiguousMagicError,
    CorruptBatchError,
    CrcMismatchError,
    LogBatch,
    Magic1Layout,
    RecordDecodeError,
    decode_arrow_batch,
    parse_statistics,
    read_log_batches,
    read_value_batch,
    to_arrow_schema,
)
from tests.fixtures import capture_records as cap

FIXTURES_0_9 = Path(__file__).resolve().parents[1] / "fixtures" / "records"
FIXTURES_1_0 = FIXTURES_0_9 / "fluss-1.0"
STATS = Magic1Layout.STATISTICS
#: The same payload from both generations.
SHARED = ("log_arrow_zstd", "pk_changelog_lz4", "pk_changelog_compacted", "pk_limitscan_compacted")


def load(name: str, directory: Path = FIXTURES_1_0) -> tuple[bytes, dict[str, Any]]:
    meta = json.loads((directory / f"{name}.json").read_text())
    return (directory / f"{name}.bin").read_bytes(), meta


def batches(name: str, directory: Path = FIXTURES_1_0, **kw: Any) -> list[LogBatch]:
    return read_log_batches(load(name, directory)[0], magic1_layout=STATS, **kw).batches


def test_every_1_0_fixture_is_listed_by_the_capture_script_and_from_1_0() -> None:
    on_disk = {p.stem for p in FIXTURES_1_0.glob("*.bin")}
    assert on_disk == set(cap.FIXTURES_1_0)
    for name in on_disk:
        assert load(name)[1]["captured_from"]["server_version"] == "1.0-SNAPSHOT"


@pytest.mark.parametrize("name", ["log_arrow_zstd", "pk_changelog_lz4", "pk_changelog_compacted"])
def test_1_0_log_batches_match_0_9_but_for_what_the_server_sets(name: str) -> None:
    new, old = batches(name), batches(name, FIXTURES_0_9)
    assert len(new) == len(old)
    for a, b in zip(new, old, strict=True):
        assert a.magic == b.magic == 0
        assert bytes(a.records) == bytes(b.records)  # Arrow / row bytes identical
        assert a.commit_timestamp != b.commit_timestamp and a.commit_timestamp > 1_700_000_000_000
        same = ("base_offset", "size", "schema_id", "attributes", "last_offset_delta")
        assert [getattr(a, f) for f in same] == [getattr(b, f) for f in same]
        assert (a.batch_sequence, a.record_count) == (b.batch_sequence, b.record_count)
        assert a.leader_epoch == b.leader_epoch == -1 and len(a.statistics) == 0


def test_1_0_value_batches_equal_0_9_and_scan_kv_equals_limit_scan() -> None:
    limit, _ = load("pk_limitscan_compacted")
    scan, meta = load("pk_scankv_compacted")
    assert limit == load("pk_limitscan_compacted", FIXTURES_0_9)[0]
    assert scan == limit
    assert meta["captured_from"]["api"] == "scan_kv" and meta["scan_kv_log_offset"] == 6
    batch = read_value_batch(scan)
    assert len(batch) == 2 and {r.schema_id for r in batch} == {1}
    cap.check_pk_limit_scan({"scan_kv": {"records": scan}}, meta["table_json"], "scan_kv")


@pytest.mark.parametrize("name", SHARED)
def test_1_0_fixtures_decode_to_what_pyfluss_wrote(name: str) -> None:
    payload, meta = load(name)
    table_json = meta["table_json"]
    if name == "log_arrow_zstd":
        cap.check_log_arrow({"fetch": {"records": payload}}, table_json, None, STATS)
    elif name == "pk_changelog_lz4":
        cap.check_pk_changelog({"fetch": {"records": payload}}, table_json, STATS)
    elif name == "pk_changelog_compacted":
        cap.check_row_log({"fetch": {"records": payload}}, table_json, "COMPACTED", STATS)
    else:
        cap.check_pk_limit_scan({"limit_scan": {"records": payload}}, table_json)


def test_1_0_pk_tables_carry_the_standby_replica_property() -> None:
    new = load("pk_changelog_lz4")[1]["table_json"]["properties"]
    old = load("pk_changelog_lz4", FIXTURES_0_9)[1]["table_json"]["properties"]
    assert new.pop("table.kv.standby-replica.enabled") == "true"
    assert "table.kv.standby-replica.enabled" not in old
    assert new == old


# =========================================================================== statistics


def expected_statistics(schema: pa.Schema, columns: list[str]) -> dict[str, tuple[int, Any, Any]]:
    """(null count, min, max) per column from the rows pyfluss wrote, in Arrow units."""
    table = cap.expected_log_table(schema)
    out = {}
    for name in columns:
        col = table.column(name)
        if pa.types.is_temporal(col.type):
            col = col.cast(pa.int64() if col.type.bit_width == 64 else pa.int32())
        mm = pc.min_max(col).as_py()
        out[name] = (col.null_count, mm["min"], mm["max"])
    return out


def test_statistics_batch_is_magic_1_in_the_1_0_layout() -> None:
    payload, meta = load("log_arrow_stats")
    [batch] = read_log_batches(payload, magic1_layout=STATS).batches  # CRC checked
    assert (batch.magic, batch.header_size, batch.record_count) == (1, 52, 4)
    assert len(batch.statistics) == 525 and batch.statistics[0] == 1
    assert batch.append_only and batch.leader_epoch == -1
    # magic 1 cannot be read without knowing the server generation ...
    with pytest.raises(AmbiguousMagicError):
        read_log_batches(payload)
    # ... and the 0.9 layout (leader epoch) does not fit it
    with pytest.raises(RecordDecodeError):
        read_log_batches(payload, magic1_layout=Magic1Layout.LEADER_EPOCH)
    cap.check_log_arrow({"fetch": {"records": payload}}, meta["table_json"], None, STATS)


def test_statistics_block_matches_the_rows() -> None:
    payload, meta = load("log_arrow_stats")
    fluss_schema = meta["table_json"]["schema"]
    [batch] = read_log_batches(payload, magic1_layout=STATS).batches
    stats = parse_statistics(batch.statistics, fluss_schema, mode="arrow")
    names = [c["name"] for c in fluss_schema["columns"]]
    # "*": every column of a type Fluss keeps statistics for (not BINARY, BYTES, nested)
    skipped = {"bin", "fbin", "arr", "arr_s", "m", "st"}
    assert list(stats.names) == [n for n in names if n not in skipped]
    assert list(stats.columns) == [names.index(n) for n in stats.names]
    want = expected_statistics(to_arrow_schema(fluss_schema), list(stats.names))
    for name, (nulls, low, high) in want.items():
        got = stats.column(name)
        assert (got.null_count, got.min, got.max) == (nulls, low, high), name
    python = parse_statistics(batch.statistics, fluss_schema)
    assert python.column("s").max == "hello" and python.column("dt").min.year == 1900
    # decoded Arrow data agrees with the statistics it came with
    data = decode_arrow_batch(batch, to_arrow_schema(fluss_schema)).data
    assert pc.min_max(data.column("i32")).as_py() == {
        "min": stats.column("i32").min,
        "max": stats.column("i32").max,
    }


def test_projected_fetch_drops_the_statistics_and_keeps_the_old_crc() -> None:
    payload, meta = load("log_arrow_stats_projected")
    assert meta["request"]["projected_fields"] == cap.PROJECTION
    with pytest.raises(CrcMismatchError):
        read_log_batches(payload, magic1_layout=STATS)
    [batch] = read_log_batches(payload, magic1_layout=STATS, check_crc=False).batches
    assert batch.magic == 1 and len(batch.statistics) == 0 and batch.header_size == 52
    cap.check_log_arrow(
        {"fetch_projected": {"records": payload}}, meta["table_json"], cap.PROJECTION, STATS
    )


@given(st.data())
def test_damaged_statistics_raise_only_typed_errors(data: st.DataObject) -> None:
    payload, meta = load("log_arrow_stats")
    [batch] = read_log_batches(payload, magic1_layout=STATS).batches
    block = bytearray(batch.statistics)
    for _ in range(data.draw(st.integers(1, 4))):
        block[data.draw(st.integers(0, len(block) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(block)))
    for candidate in (bytes(block), bytes(block[:cut])):
        with contextlib.suppress(RecordDecodeError):
            parse_statistics(candidate, meta["table_json"]["schema"])


def test_statistics_errors_are_typed() -> None:
    schema = load("log_arrow_stats")[1]["table_json"]["schema"]
    with pytest.raises(CorruptBatchError, match="empty"):
        parse_statistics(b"", schema)
    with pytest.raises(CorruptBatchError, match="version"):
        parse_statistics(b"\x02\x00\x00", schema)
    # a BYTES column (position 8) cannot have statistics
    block = b"\x01\x01\x00\x08\x00" + b"\x00" * 4 + b"\x00" * 8
    with pytest.raises(CorruptBatchError, match="BYTES"):
        parse_statistics(block, schema)
