"""fluss_proto.scan.stream_preview against the fake scan cluster: order, the shared limit,
back-pressure, sessions closed when the reader stops, and expiry after rows went out."""

from __future__ import annotations

import asyncio
from typing import Any

import pyarrow as pa
import pytest

from fluss_proto.api_keys import ApiKey
from fluss_proto.error_codes import ScannerExpiredError
from fluss_proto.scan import BucketStatus, ScanReport, preview_table, stream_preview
from tests._testutil.scan import FakeScanCluster, kv_cluster

pytestmark = pytest.mark.timeout(30)


async def _read(fake: Any, **kw: Any) -> tuple[list[int], list[pa.Table], ScanReport]:
    chunks: list[pa.Table] = []
    async with stream_preview(fake, "db.t", **kw) as stream:
        async for chunk in stream:
            assert chunk.schema == stream.schema
            chunks.append(chunk)
    assert stream.report is not None
    ids = [i for c in chunks for i in c.column("id").to_pylist()]
    return ids, chunks, stream.report


async def test_bucket_order_gives_every_row_bucket_by_bucket_with_the_preview_schema() -> None:
    ids, chunks, report = await _read(kv_cluster(), limit=100, fair_share_rows=0)
    assert ids == [b * 100 + i for b in range(3) for i in range(10)]
    assert len(chunks) > 3  # ScanKv pages of 4 rows come out one by one
    whole = await preview_table(kv_cluster(), "db.t", limit=100)
    assert pa.concat_tables(chunks).equals(whole.table)
    assert report.complete and not report.limit_cut and report.rows_returned == 30
    assert [b.rows_returned for b in report.buckets] == [10, 10, 10]


async def test_a_small_limit_is_shared_fairly_as_preview_table_does() -> None:
    fake = kv_cluster()
    ids, chunks, report = await _read(fake, limit=13)
    assert ids == [0, 1, 2, 3, 4, 100, 101, 102, 103, 200, 201, 202, 203]
    assert [b.rows_returned for b in report.buckets] == [5, 4, 4] and len(chunks) == 1
    assert report.limit_cut and report.complete and report.rows_returned == 13
    whole = await preview_table(kv_cluster(), "db.t", limit=13)
    assert chunks[0].equals(whole.table) and not fake.sessions


async def test_a_streamed_limit_takes_whole_buckets_in_order_and_closes_the_rest() -> None:
    fake = kv_cluster()
    fake.honour_limit = False
    ids, chunks, report = await _read(fake, limit=13, fair_share_rows=0)
    assert ids == [*range(10), 100, 101, 102]
    assert [b.rows_returned for b in report.buckets] == [10, 3, 0]
    assert report.buckets[2].detail == "not read: earlier buckets filled the limit"
    assert report.limit_cut and report.complete and len(chunks) > 1
    assert not fake.sessions  # bucket 1 stopped half-way and bucket 2 were closed
    assert sum(b.sessions_closed for b in report.buckets) >= 1


async def test_a_bucket_with_few_rows_leaves_its_share_to_the_next() -> None:
    fake = FakeScanCluster(pk=True)
    fake.put_rows((None, 0), [1])
    fake.put_rows((None, 1), list(range(100, 120)))
    fake.put_rows((None, 2), list(range(200, 220)))
    ids, _, report = await _read(fake, limit=9)
    assert ids == [1, 100, 101, 102, 103, 200, 201, 202, 203]
    assert [b.rows_returned for b in report.buckets] == [1, 4, 4]


async def test_arrival_order_takes_the_first_rows_to_come() -> None:
    fake = kv_cluster()
    fake.honour_limit = False
    ids, _, report = await _read(fake, limit=6, order="arrival")
    assert len(ids) == 6 and len(set(ids)) == 6
    assert sum(b.rows_returned for b in report.buckets) == 6 and report.limit_cut
    assert not fake.sessions
    ids, _, _ = await _read(kv_cluster(), limit=100, order="arrival")
    assert sorted(ids) == [b * 100 + i for b in range(3) for i in range(10)]


async def test_workers_wait_for_a_slow_reader() -> None:
    fake = FakeScanCluster(pk=True)
    for b in range(3):
        fake.put_rows((None, b), [b * 100 + i for i in range(40)])
    fake.page_rows = 2
    async with stream_preview(fake, "db.t", limit=1000, capacity=1, fair_share_rows=0) as stream:
        iterator = aiter(stream)
        first = await anext(iterator)
        assert first.column("id").to_pylist() == [0, 1]
        for _ in range(20):  # let the workers run as far as they may
            await asyncio.sleep(0.01)
        pages = [r for _, r in fake.sent(ApiKey.SCAN_KV) if not r.close_scanner]
        # each of 3 buckets: one page taken or waiting, one held, one in flight at most
        assert len(pages) <= 3 * 3, len(pages)
        rest = [i for c in [t async for t in iterator] for i in c.column("id").to_pylist()]
    assert [0, 1, *rest] == [b * 100 + i for b in range(3) for i in range(40)]


async def test_leaving_early_closes_every_open_session() -> None:
    fake = kv_cluster()
    async with stream_preview(fake, "db.t", limit=100, capacity=1, fair_share_rows=0) as stream:
        async for _ in stream:
            break
    assert stream.report is not None
    assert not fake.sessions
    assert sum(b.sessions_closed for b in stream.report.buckets) >= 1
    assert not stream.report.complete  # buckets stopped half-way are not called complete


async def test_cancelling_a_stream_closes_sessions() -> None:
    fake = kv_cluster()
    fake.hang_scan_kv_at_seq[(None, 0)] = 1
    reached = asyncio.Event()

    async def read() -> None:
        async with stream_preview(
            fake, "db.t", limit=100, deadline_s=30, fair_share_rows=0
        ) as stream:
            async for _ in stream:
                reached.set()

    task = asyncio.ensure_future(read())
    await asyncio.wait_for(reached.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not fake.sessions


async def test_an_expired_session_after_rows_went_out_fails_the_bucket() -> None:
    fake = kv_cluster()
    fake.expire_at[(None, 1)] = [2]
    ids, _, report = await _read(fake, limit=100, fair_share_rows=0)
    b1 = report.buckets[1]
    assert b1.status is BucketStatus.FAILED and isinstance(b1.error, ScannerExpiredError)
    assert len(ids) == len(set(ids))  # never a row twice
    # the pages before the expiry (call_seq 0 and 1) stay; nothing is read again
    assert [i for i in ids if 100 <= i < 200] == list(range(100, 108))


async def test_log_buckets_keep_their_last_rows() -> None:
    fake = FakeScanCluster(pk=False, buckets=2)
    fake.append_log((None, 0), list(range(0, 10)))
    fake.append_log((None, 1), list(range(100, 110)))
    ids, chunks, report = await _read(fake, limit=6)
    assert ids == [7, 8, 9, 107, 108, 109]
    assert pa.concat_tables(chunks).column("_offset").to_pylist() == [7, 8, 9, 7, 8, 9]
    assert [b.rows_returned for b in report.buckets] == [3, 3]  # small: fair, last rows
    ids, _, report = await _read(fake, limit=6, fair_share_rows=0)
    assert ids == [4, 5, 6, 7, 8, 9]  # streamed: bucket 0's last rows fill the limit


async def test_table_errors_come_from_entering_the_stream() -> None:
    from fluss_proto.error_codes import TableNotExistError

    with pytest.raises(TableNotExistError):
        async with stream_preview(kv_cluster(), "db.nope"):
            pass  # pragma: no cover
    with pytest.raises(ValueError, match="order"):
        async with stream_preview(kv_cluster(), "db.t", order="random"):  # type: ignore[arg-type]
            pass  # pragma: no cover
