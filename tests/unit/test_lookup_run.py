"""Lookuper routing against the scan fake (real value bytes, Fluss's leader errors): one
LOOKUP per leader however many keys, a moved leader asked again after one refresh, absent
keys, a Lookuper reused without reading the table again."""

from __future__ import annotations

from typing import Any

import pytest

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.lookup import KeyStatus, Lookuper, lookup_rows
from fluss_proto.lookup.keys import bucket_candidates, encode_key
from fluss_proto.records.rowtype import DataType
from tests._testutil import records_encoder as enc
from tests._testutil.scan import FakeScanCluster

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(30)]

BIGINT = DataType("BIGINT")


def _bucket(i: int) -> int:
    return bucket_candidates(encode_key([i], [BIGINT]), 3)[0]


def _cluster(ids: range, refuse: frozenset[int] = frozenset()) -> FakeScanCluster:
    """The PK table with each row in the bucket Fluss's Java hash puts it in, and a LOOKUP
    handler answering from the bucket asked (wrong leader, or a bucket in ``refuse``:
    error 12)."""
    fake = FakeScanCluster(pk=True)
    for i in ids:
        fake.put_rows((None, _bucket(i)), [i])

    def lookup(node: Any, req: pb.LookupRequest) -> pb.LookupResponse:
        resp = pb.LookupResponse()
        for b in req.buckets_req:
            key = (b.partition_id if b.HasField("partition_id") else None, b.bucket_id)
            out = resp.buckets_resp.add(bucket_id=b.bucket_id)
            if fake.leaders[key] != node or b.bucket_id in refuse:
                out.error_code, out.error_message = 12, "not the leader"
                continue
            by_key = {
                encode_key([row["id"]], [BIGINT]): (sid, row) for sid, row in fake.data[key].rows
            }
            for k in b.keys:
                hit = by_key.get(k)
                value = out.values.add()
                if hit is not None:
                    sid, row = hit
                    value.values = sid.to_bytes(2, "little") + enc.compacted_row(
                        fake.row_type(sid), row
                    )
        return resp

    fake.overrides[ApiKey.LOOKUP] = lookup
    return fake


async def test_one_request_per_leader_however_many_keys() -> None:
    fake = _cluster(range(60))
    keys = [{"id": str(i)} for i in (*range(0, 60, 2), 1000)]
    result = await lookup_rows(fake, "db.t", keys)  # type: ignore[arg-type]
    sent = fake.sent(ApiKey.LOOKUP)
    assert len(sent) == len({n for n, _ in sent}) == 3  # every leader once
    sent_keys = [k for _, r in sent for b in r.buckets_req for k in b.keys]
    ours = [encode_key([int(k["id"])], [BIGINT]) for k in keys]
    assert set(sent_keys) == set(ours)  # 1000 = e8 07: a high tail byte, two buckets asked
    assert len(sent_keys) == sum(len(bucket_candidates(k, 3)) for k in ours) == len(ours) + 1
    assert result.rows.column("id").to_pylist() == list(range(0, 60, 2))  # key order
    report = result.report
    assert report.found == 30 and report.absent == 1 and report.complete
    assert report.keys[-1].status is KeyStatus.ABSENT


async def test_a_moved_leader_is_asked_again_after_one_refresh() -> None:
    fake = _cluster(range(10))
    moved = _bucket(4)
    fake.stale_leaders[(None, moved)] = fake.leaders[(None, moved)] % 3 + 1
    result = await lookup_rows(fake, "db.t", [{"id": "4"}, {"id": "5"}])  # type: ignore[arg-type]
    assert result.report.found == 2 and result.report.complete
    metadata = fake.sent(ApiKey.GET_METADATA)
    assert len(metadata) == 2  # the table, then one refresh
    nodes = [
        n for n, r in fake.sent(ApiKey.LOOKUP) if any(b.bucket_id == moved for b in r.buckets_req)
    ]
    assert nodes == [fake.stale_leaders[(None, moved)], fake.leaders[(None, moved)]]


async def test_a_leader_that_keeps_refusing_fails_its_keys_only() -> None:
    bad = _bucket(4)
    fake = _cluster(range(10), refuse=frozenset({bad}))  # its leader never takes it
    result = await lookup_rows(fake, "db.t", [{"id": str(i)} for i in range(10)])  # type: ignore[arg-type]
    failed = [k for k in result.report.keys if k.status is KeyStatus.FAILED]
    assert failed and all(k.bucket == bad for k in failed)
    assert not result.report.complete and not result.report.nothing_read
    assert result.report.found == 10 - len(failed)


async def test_a_lookuper_reads_the_table_once() -> None:
    fake = _cluster(range(10))
    lookuper = await Lookuper.open(fake, "db.t")  # type: ignore[arg-type]
    for i in range(5):
        assert (await lookuper.lookup([{"id": i}])).report.found == 1
    assert len(fake.sent(ApiKey.GET_METADATA)) == 1
    assert len(fake.sent(ApiKey.LOOKUP)) == 5
