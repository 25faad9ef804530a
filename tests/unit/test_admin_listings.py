"""FlussAdmin's Fluss 1.0 storage listings (ListKvSnapshots 1064, ListRemoteLogManifests 1063)
against canned replies: the fake client of test_admin.py, and the real FlussClient over the
fake sockets of test_client.py for "0.9 sends nothing"."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.admin import FlussAdmin
from fluss_proto.api_keys import ApiKey
from fluss_proto.client import COORDINATOR
from fluss_proto.error_codes import PartitionNotExistError, TableNotExistError
from fluss_proto.errors import UnsupportedByServer
from fluss_proto.model import ActiveKvSnapshot, RemoteLogManifest
from tests._testutil.admin import FakeClient, standard
from tests._testutil.fakes import FakeCluster
from tests._testutil.fakes import connect as connect_fake

pytestmark = pytest.mark.timeout(20)


def fluss_1_0() -> FakeClient:
    client = standard()
    client.fluss_1_0 = True
    return client


def kv_reply(table_id: int, pairs: list[tuple[int, int]], pid: int | None = None) -> Message:
    resp = pb.ListKvSnapshotsResponse(table_id=table_id)
    if pid is not None:
        resp.partition_id = pid
    for bucket, snap in pairs:
        resp.active_snapshots.add(bucket_id=bucket, snapshot_id=snap)
    return resp


def manifest(table_id: int, bucket: int, end: int, pid: int | None = None) -> Any:
    entry = pb.PbRemoteLogManifestEntry(
        remote_log_manifest_path=f"/remote/log/db/t-{table_id}/{bucket}/metadata/x.manifest",
        remote_log_end_offset=end,
    )
    entry.table_bucket.table_id, entry.table_bucket.bucket_id = table_id, bucket
    if pid is not None:
        entry.table_bucket.partition_id = pid
    return entry


async def test_active_kv_snapshots_by_path_are_sorted_and_grouped() -> None:
    client = fluss_1_0()
    # the server lists buckets from a hash set: any order, several snapshots per bucket
    client.overrides[ApiKey.LIST_KV_SNAPSHOTS] = lambda t, r: kv_reply(
        r.table_id, [(1, 4), (0, 3), (1, 2), (0, 2)]
    )
    got = await FlussAdmin(client).active_kv_snapshots("db.pk")
    assert (got.table_id, got.partition_id) == (2, None)
    assert got.snapshots == (
        ActiveKvSnapshot(0, 2),
        ActiveKvSnapshot(0, 3),
        ActiveKvSnapshot(1, 2),
        ActiveKvSnapshot(1, 4),
    )
    assert dict(got.by_bucket) == {0: (2, 3), 1: (2, 4)}
    assert dict(got.newest) == {0: 3, 1: 4}
    [(target, request)] = client.sent(ApiKey.LIST_KV_SNAPSHOTS)
    assert target == COORDINATOR and request.table_id == 2
    assert not request.HasField("partition_id")
    assert len(client.sent(ApiKey.GET_TABLE_INFO)) == 1  # the path cost one lookup


async def test_active_kv_snapshots_by_table_id_send_one_request() -> None:
    client = fluss_1_0()
    client.overrides[ApiKey.LIST_KV_SNAPSHOTS] = lambda t, r: kv_reply(r.table_id, [])
    got = await FlussAdmin(client).active_kv_snapshots(2)
    assert got.snapshots == () and dict(got.by_bucket) == {}
    assert len(client.batches) == 1


async def test_partition_by_name_is_resolved_and_echoed() -> None:
    client = fluss_1_0()
    client.overrides[ApiKey.LIST_KV_SNAPSHOTS] = lambda t, r: kv_reply(
        r.table_id, [(0, 1)], r.partition_id
    )
    got = await FlussAdmin(client).active_kv_snapshots("db.part", "us")
    assert (got.table_id, got.partition_id) == (3, 8)
    assert client.sent(ApiKey.LIST_KV_SNAPSHOTS)[0][1].partition_id == 8
    by_id = await FlussAdmin(client).active_kv_snapshots(3, 7)
    assert by_id.partition_id == 7
    with pytest.raises(PartitionNotExistError):
        await FlussAdmin(client).active_kv_snapshots("db.part", "mars")
    with pytest.raises(ValueError, match="path"):
        await FlussAdmin(client).active_kv_snapshots(3, "us")


async def test_errors_stay_typed() -> None:
    client = fluss_1_0()

    def missing(_t: Any, r: Any) -> Message:
        raise TableNotExistError(f"Table {r.table_id} does not exist")

    client.overrides[ApiKey.LIST_KV_SNAPSHOTS] = missing
    with pytest.raises(TableNotExistError):
        await FlussAdmin(client).active_kv_snapshots(999)
    with pytest.raises(TableNotExistError):  # the path lookup fails first
        await FlussAdmin(client).active_kv_snapshots("db.nope")
    assert len(client.sent(ApiKey.LIST_KV_SNAPSHOTS)) == 1


async def test_a_snapshot_entry_without_id_is_skipped() -> None:
    client = fluss_1_0()
    reply = kv_reply(2, [(0, 5)])
    reply.active_snapshots.add(bucket_id=1)  # GetLatestKvSnapshots' "none yet" shape
    client.overrides[ApiKey.LIST_KV_SNAPSHOTS] = lambda t, r: reply
    got = await FlussAdmin(client).active_kv_snapshots(2)
    assert got.snapshots == (ActiveKvSnapshot(0, 5),)


async def test_remote_log_manifests() -> None:
    client = fluss_1_0()

    def answer(_t: Any, r: Any) -> Message:
        resp = pb.ListRemoteLogManifestsResponse()
        resp.manifests.extend([manifest(r.table_id, 4, 900), manifest(r.table_id, 1, 1000)])
        return resp

    client.overrides[ApiKey.LIST_REMOTE_LOG_MANIFESTS] = answer
    got = await FlussAdmin(client).remote_log_manifests("db.log")
    assert (got.table_id, got.partition_id) == (1, None)
    assert [m.bucket_id for m in got.manifests] == [1, 4]
    assert dict(got.end_offsets) == {1: 1000, 4: 900}
    first = got.manifests[0]
    assert first == RemoteLogManifest(1, None, 1, "/remote/log/db/t-1/1/metadata/x.manifest", 1000)
    [(target, request)] = client.sent(ApiKey.LIST_REMOTE_LOG_MANIFESTS)
    assert target == COORDINATOR and request.table_id == 1


async def test_remote_log_manifests_of_a_partition_and_empty() -> None:
    client = fluss_1_0()

    def answer(_t: Any, r: Any) -> Message:
        resp = pb.ListRemoteLogManifestsResponse()
        if r.HasField("partition_id"):
            resp.manifests.append(manifest(r.table_id, 0, 17, r.partition_id))
        return resp

    client.overrides[ApiKey.LIST_REMOTE_LOG_MANIFESTS] = answer
    part = await FlussAdmin(client).remote_log_manifests("db.part", "eu")
    assert part.partition_id == 7 and part.manifests[0].partition_id == 7
    assert dict(part.end_offsets) == {0: 17}
    # an unknown table id answers an empty listing on the 1.0 line, not an error
    none = await FlussAdmin(client).remote_log_manifests(12345)
    assert (none.table_id, none.manifests) == (12345, ())


@pytest.mark.parametrize("method", ["active_kv_snapshots", "remote_log_manifests"])
async def test_on_0_9_unsupported(method: str) -> None:
    client = standard()  # a 0.9 cluster (the fake logs what the real client would refuse)
    with pytest.raises(UnsupportedByServer):
        await getattr(FlussAdmin(client), method)(2)
    with pytest.raises(UnsupportedByServer):
        await getattr(FlussAdmin(client), method)("db.pk")


@pytest.mark.parametrize(
    ("method", "api"),
    [
        ("active_kv_snapshots", ApiKey.LIST_KV_SNAPSHOTS),
        ("remote_log_manifests", ApiKey.LIST_REMOTE_LOG_MANIFESTS),
    ],
)
async def test_through_the_real_client_on_0_9_nothing_goes_out(method: str, api: ApiKey) -> None:
    async with FakeCluster(tablets=1) as fc, await connect_fake(fc.tablets[0].address) as client:
        with pytest.raises(UnsupportedByServer):
            await getattr(FlussAdmin(client), method)(5)
        assert client.sent_api_keys[api] == 0
        assert all(s.count(api) == 0 for s in [fc.coordinator, *fc.tablets])
