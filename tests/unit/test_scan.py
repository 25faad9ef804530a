"""fluss_proto.scan (table previews) against a fake cluster (``tests._testutil``).

The fake answers like Fluss servers, from a small table model, with real record bytes built
by ``records_encoder``: ScanKv follows ``TabletService.scanKv`` / ``ScannerManager`` (call
sequence ids from 0, sessions dropped after the last page, close accepted for any id, per
bucket session cap), LimitScan follows ``Replica.limitKvScan`` / ``limitLogScan``, FetchLog
returns whole batches from the one *containing* the fetch offset, cut at the byte budget (so
the reply may end in a fragment), or ``remote_log_fetch_info`` for offsets below the local
log. ScanKv exists only in Fluss 1.0, which is not available as a server: these fakes are
the only place its sessions are exercised.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from fluss_proto.api_keys import ApiKey
from fluss_proto.error_codes import (
    LogOffsetOutOfRangeError,
    PartitionNotExistError,
    ScannerExpiredError,
    TooManyScannersError,
    UnknownScannerIdError,
    from_code,
)
from fluss_proto.errors import RequestTimeoutError
from fluss_proto.records import CompactedRowDecoder
from fluss_proto.scan import (
    BucketStatus,
    PreviewArgumentError,
    ScanMethod,
    _fair_quota,
    preview_table,
)
from fluss_proto.types import parse_schema
from tests._testutil.scan import COLUMNS_V1, FakeScanCluster, ids, kv_cluster, schema_doc
from tests._testutil.unstarved import Stopwatch

pytestmark = pytest.mark.timeout(30)

# =========================================================================== ScanKv


async def test_scan_kv_pages_with_call_seq_ids_and_never_closes_a_drained_session() -> None:
    fake = kv_cluster()
    result = await preview_table(fake, "db.t", limit=100, batch_size_bytes=4096)
    assert sorted(ids(result)) == sorted(b * 100 + i for b in range(3) for i in range(10))
    # Key order inside each bucket, buckets in order.
    assert ids(result) == [b * 100 + i for b in range(3) for i in range(10)]
    report = result.report
    assert report.complete and not report.limit_cut
    assert {b.method for b in report.buckets} == {ScanMethod.SCAN_KV}
    assert [b.rows_read for b in report.buckets] == [10, 10, 10]
    sent = [r for _, r in fake.sent(ApiKey.SCAN_KV)]
    assert not any(r.close_scanner for r in sent)
    per_session: dict[bytes, list[int]] = {}
    for r in sent:
        if r.HasField("bucket_scan_req"):
            assert r.call_seq_id == 0 and r.batch_size_bytes == 4096
            assert r.bucket_scan_req.limit == 100
        else:
            per_session.setdefault(r.scanner_id, []).append(r.call_seq_id)
    assert all(seqs == [1, 2] for seqs in per_session.values())  # 10 rows, 4 per page
    assert not fake.sessions
    # Types stay Fluss's: decimal128 and microsecond timestamps; _bucket is added.
    schema = result.table.schema
    assert schema.field("amount").type == pa.decimal128(10, 2)
    assert schema.field("ts").type == pa.timestamp("us")
    assert schema.field("id").nullable is False
    assert schema.names[-1] == "_bucket" and "_offset" not in schema.names
    assert result.table.column("_bucket").to_pylist() == [b for b in range(3) for _ in range(10)]
    first = result.table.slice(0, 1).to_pylist()[0]
    assert first["amount"] == Decimal("0.00") and first["ts"] == datetime(2024, 1, 1)


async def test_scan_kv_closes_a_session_it_stops_early_and_shares_the_limit() -> None:
    fake = kv_cluster()
    fake.honour_limit = False  # the server would go on: we must close
    result = await preview_table(fake, "db.t", limit=6)
    assert result.table.num_rows == 6
    assert result.report.limit_cut
    assert [b.rows_returned for b in result.report.buckets] == [2, 2, 2]
    closes = [r for _, r in fake.sent(ApiKey.SCAN_KV) if r.close_scanner]
    assert len(closes) == 3
    assert all(r.scanner_id and not r.HasField("bucket_scan_req") for r in closes)
    assert not fake.sessions
    assert sum(b.sessions_closed for b in result.report.buckets) == 3


@pytest.mark.parametrize(
    ("code", "error"), [(66, ScannerExpiredError), (67, UnknownScannerIdError)]
)
async def test_expired_session_is_reopened_once(code: int, error: type) -> None:
    fake = kv_cluster()
    fake.expire_code = code
    fake.expire_at[(None, 1)] = [2]
    result = await preview_table(fake, "db.t", limit=100)
    b1 = result.report.buckets[1]
    assert b1.status is BucketStatus.SCANNED and b1.reopened
    assert ids(result).count(105) == 1 and len(ids(result)) == 30  # no duplicates
    opens = [r for n, r in fake.sent(ApiKey.SCAN_KV) if r.HasField("bucket_scan_req")]
    assert len(opens) == 4
    assert not any(r.close_scanner for _, r in fake.sent(ApiKey.SCAN_KV))  # nothing to close

    fake = kv_cluster()
    fake.expire_code = code
    fake.expire_at[(None, 1)] = [1, 1]
    result = await preview_table(fake, "db.t", limit=100)
    b1 = result.report.buckets[1]
    assert b1.status is BucketStatus.FAILED and isinstance(b1.error, error)
    # The first session's page was dropped (a new session is a new snapshot); the second
    # session's page is kept and shown, as for any bucket that failed half-way.
    assert b1.rows_read == 4
    assert not result.report.complete and result.report.failed == (b1,)
    assert len(ids(result)) == 24


async def test_too_many_scanners_is_reported_for_that_bucket_only() -> None:
    fake = kv_cluster()
    fake.too_many.add((None, 2))
    result = await preview_table(fake, "db.t", limit=100)
    b0, b1, b2 = result.report.buckets
    assert b0.status is b1.status is BucketStatus.SCANNED
    assert b2.status is BucketStatus.FAILED and isinstance(b2.error, TooManyScannersError)
    assert b2.error.code == 69 and b2.method is ScanMethod.SCAN_KV
    assert b2.requests == 3  # the open and two retries after a back-off
    assert sorted(set(result.table.column("_bucket").to_pylist())) == [0, 1]
    assert "bucket-2 [ScanKv] failed" in "\n".join(result.report.summary_lines())


async def test_deadline_times_out_a_bucket_keeps_its_rows_and_closes_its_session() -> None:
    fake = kv_cluster()
    fake.hang_scan_kv_at_seq[(None, 1)] = 1  # first page arrives, the second never does
    watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
    result = await preview_table(fake, "db.t", limit=100, deadline_s=0.5)
    assert watch.elapsed() < 3
    b0, b1, b2 = result.report.buckets
    assert b1.status is BucketStatus.TIMED_OUT and isinstance(b1.error, RequestTimeoutError)
    assert b1.rows_read == 4 and b1.rows_returned == 4  # what it had is still shown
    assert b0.status is b2.status is BucketStatus.SCANNED
    assert result.report.timed_out == (b1,) and not result.report.complete
    assert not result.report.nothing_read
    closes = [(n, r) for n, r in fake.sent(ApiKey.SCAN_KV) if r.close_scanner]
    assert len(closes) == 1 and closes[0][0] == fake.leaders[(None, 1)]


async def test_a_hanging_bucket_is_timed_out_never_empty() -> None:
    fake = FakeScanCluster(pk=False)
    for b in range(3):
        fake.append_log((None, b), [b * 100 + i for i in range(5)])
    fake.hang.add((ApiKey.LIMIT_SCAN, (None, 0)))
    result = await preview_table(fake, "db.t", deadline_s=0.3)
    b0 = result.report.buckets[0]
    assert b0.status is BucketStatus.TIMED_OUT and b0.rows_read == 0
    assert result.report.empty == ()
    assert len(ids(result)) == 10


async def test_cancelling_the_preview_closes_open_sessions() -> None:
    fake = kv_cluster()
    fake.hang_scan_kv_at_seq[(None, 0)] = 1
    task = asyncio.ensure_future(preview_table(fake, "db.t", deadline_s=30))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if any(r.call_seq_id == 1 for _, r in fake.sent(ApiKey.SCAN_KV)):
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    closes = [r for _, r in fake.sent(ApiKey.SCAN_KV) if r.close_scanner]
    assert len(closes) == 1


async def test_leaders_without_scan_kv_get_limit_scan() -> None:
    fake = kv_cluster(scan_kv_nodes={2})  # bucket 1's leader is node 2
    result = await preview_table(fake, "db.t", limit=100)
    methods = [b.method for b in result.report.buckets]
    assert methods == [ScanMethod.LIMIT_SCAN, ScanMethod.SCAN_KV, ScanMethod.LIMIT_SCAN]
    assert len(ids(result)) == 30 and result.report.complete
    assert all(n == 2 for n, _ in fake.sent(ApiKey.SCAN_KV))


async def test_unknown_versions_try_scan_kv_and_fall_back_without_sending() -> None:
    fake = kv_cluster(scan_kv_nodes=set())
    fake.api_versions_of = lambda *a, **k: None  # type: ignore[method-assign]
    result = await preview_table(fake, "db.t", limit=100)
    assert {b.method for b in result.report.buckets} == {ScanMethod.LIMIT_SCAN}
    assert [b.requests for b in result.report.buckets] == [1, 1, 1]
    assert len(ids(result)) == 30


@pytest.mark.parametrize("scan_kv_nodes", [set(), {1, 2, 3}], ids=["limit_scan", "scan_kv"])
async def test_only_the_rows_shown_are_decoded_by_the_vectorised_path(
    monkeypatch: pytest.MonkeyPatch, scan_kv_nodes: set[int]
) -> None:
    """Every bucket is asked for ``limit`` rows; the value records are kept undecoded and
    only the fair share shown goes through CompactedRowDecoder.decode_table (the columnar
    fast path), never through the row-at-a-time reference."""
    decoded: list[int] = []
    original = CompactedRowDecoder.decode_table

    def counting(self: CompactedRowDecoder, buffer: bytes, starts: Any, ends: Any) -> pa.Table:
        decoded.append(len(starts))
        return original(self, buffer, starts, ends)

    def no_reference(*_: Any) -> pa.Table:
        raise AssertionError("the row-at-a-time reference decoder was used")

    monkeypatch.setattr(CompactedRowDecoder, "decode_table", counting)
    monkeypatch.setattr(CompactedRowDecoder, "reference_table", no_reference)
    fake = kv_cluster(scan_kv_nodes=scan_kv_nodes)
    fake.honour_limit = False
    result = await preview_table(fake, "db.t", limit=6)
    assert ids(result) == [0, 1, 100, 101, 200, 201]
    assert sum(decoded) == 6
    assert sum(b.rows_read for b in result.report.buckets) >= 18
    method = ScanMethod.SCAN_KV if scan_kv_nodes else ScanMethod.LIMIT_SCAN
    assert {b.method for b in result.report.buckets} == {method}


async def test_rows_of_an_older_schema_map_onto_the_latest_by_column_id() -> None:
    fake = FakeScanCluster(pk=True, buckets=1, schema_id=2)
    fake.put_rows((None, 0), [1, 3], schema_id=1)
    fake.put_rows((None, 0), [2, 4], schema_id=2)
    result = await preview_table(fake, "db.t")
    rows = result.table.to_pylist()
    assert [r["id"] for r in rows] == [1, 2, 3, 4]
    assert [r["note"] for r in rows] == [None, "note2", None, "note4"]
    assert result.report.schema_ids == (1, 2) and result.report.schema_id == 2
    assert len(fake.sent(ApiKey.GET_TABLE_SCHEMA)) == 1  # cached per schema id


async def test_stale_leader_is_refreshed_once_and_retried() -> None:
    fake = kv_cluster(scan_kv_nodes=set())
    fake.stale_leaders[(None, 0)] = 3  # the real leader is node 1
    result = await preview_table(fake, "db.t", limit=100)
    b0 = result.report.buckets[0]
    assert b0.status is BucketStatus.SCANNED and b0.leader_id == 1 and b0.requests == 2
    assert len(ids(result)) == 30


# =========================================================================== LimitScan on logs


async def test_limit_scan_on_a_log_keeps_the_last_rows_with_offsets() -> None:
    fake = FakeScanCluster(pk=False, buckets=1)
    fake.append_log((None, 0), list(range(0, 10)))
    fake.append_log((None, 0), list(range(10, 20)))
    result = await preview_table(fake, "db.t", limit=5)
    assert ids(result) == [15, 16, 17, 18, 19]  # the batch started at 10: rows cut on our side
    assert result.table.column("_offset").to_pylist() == [15, 16, 17, 18, 19]
    assert set(result.table.column("_change_type").to_pylist()) == {"+A"}
    assert result.report.buckets[0].method is ScanMethod.LIMIT_SCAN
    assert result.report.limit_cut


# =========================================================================== FetchLog tail


def log_cluster(buckets: int = 1, batches: int = 3, per_batch: int = 10) -> FakeScanCluster:
    fake = FakeScanCluster(pk=False, buckets=buckets)
    for b in range(buckets):
        for n in range(batches):
            start = b * 1000 + n * per_batch
            fake.append_log((None, b), list(range(start, start + per_batch)))
    return fake


async def test_tail_drops_rows_before_the_fetch_offset() -> None:
    fake = log_cluster()
    result = await preview_table(fake, "db.t", limit=15, tail=True)
    assert ids(result) == list(range(15, 30))
    assert result.table.column("_offset").to_pylist() == list(range(15, 30))
    fetches = fake.sent(ApiKey.FETCH_LOG)
    assert fetches[0][1].tables_req[0].buckets_req[0].fetch_offset == 15
    b = result.report.buckets[0]
    assert (b.start_offset, b.end_offset, b.earliest_offset) == (15, 30, 0)
    assert b.method is ScanMethod.FETCH_LOG_TAIL and b.limit_reached
    # ListOffsets LATEST and EARLIEST, one request each per leader
    assert sorted(r.offset_type for _, r in fake.sent(ApiKey.LIST_OFFSETS)) == [0, 1]


async def test_tail_resumes_after_a_truncated_trailing_batch() -> None:
    fake = log_cluster(batches=4)
    batch_size = len(fake.data[(None, 0)].batches[0][2])
    result = await preview_table(
        fake, "db.t", limit=40, tail=True, fetch_max_bytes_per_bucket=batch_size + 10
    )
    assert ids(result) == list(range(40))
    offsets = [r.tables_req[0].buckets_req[0].fetch_offset for _, r in fake.sent(ApiKey.FETCH_LOG)]
    assert offsets == [0, 10, 20, 30]  # each reply: one batch + a fragment of the next
    assert result.report.complete


async def test_tail_bucket_whose_batch_exceeds_its_budget_gets_more_room() -> None:
    fake = log_cluster(buckets=4, batches=2)  # node 1 leads buckets 0 and 3
    result = await preview_table(fake, "db.t", limit=100, tail=True, fetch_max_bytes_per_bucket=64)
    assert sorted(ids(result)) == sorted(b * 1000 + i for b in range(4) for i in range(20))
    assert result.report.complete
    budgets = [
        [b.max_fetch_bytes for b in r.tables_req[0].buckets_req]
        for _, r in fake.sent(ApiKey.FETCH_LOG)
    ]
    assert any(max(b) > 64 for b in budgets)


async def test_tail_uses_list_offsets_earliest_not_log_start_offset() -> None:
    fake = log_cluster()
    fake.data[(None, 0)].earliest = 10  # FetchLog still says log_start_offset=0
    result = await preview_table(fake, "db.t", limit=100, tail=True)
    assert ids(result) == list(range(10, 30))
    assert fake.sent(ApiKey.FETCH_LOG)[0][1].tables_req[0].buckets_req[0].fetch_offset == 10


async def test_tail_in_remote_storage_is_reported_not_empty() -> None:
    fake = log_cluster()
    fake.data[(None, 0)].remote_end = 20
    result = await preview_table(fake, "db.t", limit=100, tail=True)
    b = result.report.buckets[0]
    assert b.status is BucketStatus.REMOTE and "[0, 20)" in (b.detail or "")
    assert ids(result) == list(range(20, 30))  # the local part is still read
    assert not result.report.complete and result.report.empty == ()

    fake = log_cluster()
    fake.data[(None, 0)].remote_end = 30  # everything is remote
    result = await preview_table(fake, "db.t", limit=100, tail=True)
    b = result.report.buckets[0]
    assert b.status is BucketStatus.REMOTE and b.rows_read == 0
    assert "in remote storage" in "\n".join(result.report.summary_lines())


async def test_tail_per_bucket_errors_stay_per_bucket() -> None:
    fake = log_cluster(buckets=3)
    fake.fetch_errors[(None, 1)] = 19
    result = await preview_table(fake, "db.t", limit=100, tail=True)
    b0, b1, b2 = result.report.buckets
    assert isinstance(b1.error, LogOffsetOutOfRangeError) and b1.status is BucketStatus.FAILED
    assert b0.status is b2.status is BucketStatus.SCANNED
    assert len(ids(result)) == 60
    # all buckets of one leader go in one request: three leaders, one request each
    assert len(fake.sent(ApiKey.FETCH_LOG)) == 3


async def test_tail_groups_buckets_per_leader_and_times_out_a_hanging_leader() -> None:
    fake = log_cluster(buckets=6)
    fake.hang.add((ApiKey.FETCH_LOG, (None, 1)))  # node 2 leads buckets 1 and 4
    result = await preview_table(fake, "db.t", limit=100, tail=True, deadline_s=0.5)
    statuses = [b.status for b in result.report.buckets]
    assert statuses == [
        BucketStatus.SCANNED,
        BucketStatus.TIMED_OUT,
        BucketStatus.SCANNED,
        BucketStatus.SCANNED,
        BucketStatus.TIMED_OUT,
        BucketStatus.SCANNED,
    ]
    requests = fake.sent(ApiKey.FETCH_LOG)
    assert len(requests) == 3 and all(len(r.tables_req[0].buckets_req) == 2 for _, r in requests)


async def test_changelog_tail_of_a_pk_table_keeps_change_types() -> None:
    fake = FakeScanCluster(pk=True, buckets=1)
    fake.append_log((None, 0), [1, 1, 2], change_types=[1, 2, 3])
    result = await preview_table(fake, "db.t", tail=True)
    assert result.table.column("_change_type").to_pylist() == ["+I", "-U", "+U"]


# =========================================================================== partitions, args


async def test_all_partitions_bounded_by_max_partitions() -> None:
    fake = FakeScanCluster(pk=False, buckets=2, partitions={5: "a", 6: "b", 7: "c"})
    for key in fake.data:
        fake.append_log(key, [key[0] * 100 + key[1] * 10 + i for i in range(3)])
    result = await preview_table(fake, "db.t", partition="all", max_partitions=2)
    assert result.report.partitions == ("b", "c") and result.report.partitions_skipped == ("a",)
    assert set(result.table.column("_partition").to_pylist()) == {"b", "c"}
    assert result.table.num_rows == 12
    one = await preview_table(fake, "db.t", partition="name=a")
    assert set(one.table.column("_partition").to_pylist()) == {"a"}
    with pytest.raises(PartitionNotExistError):
        await preview_table(fake, "db.t", partition="zzz")


async def test_bad_arguments() -> None:
    fake = kv_cluster()
    with pytest.raises(PreviewArgumentError):
        await preview_table(fake, "db.t", partition="x")
    with pytest.raises(PreviewArgumentError):
        await preview_table(fake, "db.t", limit=0)
    with pytest.raises(ValueError):
        await preview_table(fake, "nodot")


def test_fair_quota() -> None:
    assert _fair_quota([10, 10, 10], 6) == [2, 2, 2]
    assert _fair_quota([1, 10, 10], 7) == [1, 3, 3]
    assert _fair_quota([0, 5, 100], 50) == [0, 5, 45]
    assert _fair_quota([3, 3], 100) == [3, 3]
    assert sum(_fair_quota([7, 1, 9, 2], 10)) == 10


def test_errors_from_codes_are_typed() -> None:
    assert isinstance(from_code(69, None), TooManyScannersError)


async def test_scan_kv_sessions_per_leader_are_bounded() -> None:
    from fluss_proto.scan import KV_SESSIONS_PER_LEADER

    fake = FakeScanCluster(pk=True, buckets=40)
    for b in range(40):
        fake.leaders[(None, b)] = 1
        fake.put_rows((None, b), [b * 100 + i for i in range(10)])
    peak = 0
    handler = fake._h_scan_kv

    async def slow(node: Any, req: Any) -> Any:
        nonlocal peak
        await asyncio.sleep(0.001)
        resp = handler(node, req)
        peak = max(peak, len(fake.sessions))
        return resp

    fake.overrides[ApiKey.SCAN_KV] = slow
    result = await preview_table(fake, "db.t", limit=1000)
    assert result.report.complete and result.table.num_rows == 400
    assert 1 < peak <= KV_SESSIONS_PER_LEADER


def test_the_fake_schema_document_names_its_primary_key() -> None:
    # was the last line of test_json_values_render_every_kind (now in test_render.py)
    assert parse_schema(json.dumps(schema_doc(COLUMNS_V1, True))).primary_key == ("id",)
