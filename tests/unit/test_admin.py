"""FlussAdmin and gather_cluster against a fake client (canned protobuf replies, no sockets).

The fake implements what FlussAdmin uses (``call``, ``call_many``, ``metadata``) and
answers like a Fluss server: GetMetadata from a table model (a missing table fails the
whole request with UNKNOWN_SERVER_ERROR wrapping TableNotExistException, as 0.9.1 does),
ListOffsets / GetTableStats only from the bucket's current leader (others answer
NOT_LEADER_OR_FOLLOWER per bucket), UnsupportedByServer for an API a server does not
advertise (the real client raises it before sending). Fluss 1.0 paths (GetClusterHealth,
a standby coordinator) are also run through the real FlussClient against the fake
servers of test_client.py, since no 1.0 server is available.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.admin import METADATA_CHUNK, FlussAdmin
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client import (
    COORDINATOR,
    TablePath,
)
from fluss_proto.error_codes import (
    InvalidTimestampError,
    LeaderNotAvailableError,
    NonPrimaryKeyTableError,
    NotCoordinatorLeaderError,
    NotLeaderOrFollowerError,
    PartitionNotExistError,
    TableNotExistError,
    from_code,
)
from fluss_proto.errors import ConnectionClosedError, UnsupportedByServer
from fluss_proto.gather import gather_cluster
from fluss_proto.model import (
    EARLIEST,
    LATEST,
    AclFilter,
    AtTimestamp,
    HealthStatus,
    OperationType,
    PermissionType,
    RebalanceStatus,
    ResourceType,
)
from tests._testutil.admin import FakeClient, FakeTable, db_with, standard
from tests._testutil.fakes import FakeCluster, FakeServer, Frame, default_apis
from tests._testutil.fakes import connect as connect_fake

pytestmark = pytest.mark.timeout(20)


# =========================================================================== catalog


async def test_catalog_calls_are_typed_and_go_to_any_server():
    client = standard()
    admin = FlussAdmin(client)
    assert await admin.list_databases() == ("db",)
    assert await admin.list_tables("db") == ("log", "pk", "part")
    info = await admin.table_info("db.pk")
    assert (info.table_id, info.bucket_count, info.primary_key) == (2, 2, ("id",))
    parts = await admin.list_partitions(("db", "part"))
    assert [(p.partition_id, p.name, dict(p.spec)) for p in parts] == [
        (7, "eu", {"region": "eu"}),
        (8, "us", {"region": "us"}),
    ]
    # read-only catalog calls carry no routing: the client picks any server
    assert {t for batch in client.batches for t, _, _ in batch} == {None}
    assert admin.round_trips == len(client.batches) == 4


async def test_partition_name_joins_values_in_spec_order():
    client = standard()
    client.tables[TablePath("db", "two")] = FakeTable(
        9, buckets=1, partitions={5: ("eu$2024", {"region": "eu", "year": "2024"})}
    )
    [part] = await FlussAdmin(client).list_partitions("db.two")
    assert part.name == "eu$2024"


async def test_servers_ask_every_server_at_once_and_keep_failures_in_place():
    client = standard()
    client.down.add(2)
    servers = await FlussAdmin(client).servers()
    assert [(s.role, s.node_id) for s in servers] == [
        ("coordinator", 0),
        ("tablet", 0),
        ("tablet", 1),
        ("tablet", 2),
    ]
    coord, t0, _t1, t2 = servers
    assert coord.server_type == 1 and coord.advertises(ApiKey.LIST_REBALANCE_PROGRESS)
    assert not coord.advertises(ApiKey.LIST_OFFSETS)
    assert t0.server_type == 2 and t0.advertises(ApiKey.LIST_OFFSETS)
    assert t0.rack == "r0" and t0.address == "127.0.0.1:9100"
    assert t0.generation == "0.9"
    assert isinstance(t2.error, ConnectionClosedError) and t2.api_versions == ()
    assert len(client.batches) == 2  # GetMetadata, then all ApiVersions together
    assert len(client.batches[1]) == 4


async def test_bucket_metadata_has_no_isr_and_covers_every_partition():
    client = standard()
    admin = FlussAdmin(client)
    buckets = await admin.bucket_metadata("db.log")
    assert [b.bucket_id for b in buckets] == list(range(6))
    assert all(b.isr is None for b in buckets)
    assert buckets[4].leader_id == 1 and buckets[4].leader_epoch == 3
    parts = await admin.bucket_metadata("db.part")
    assert [(b.partition_name, b.bucket_id) for b in parts] == [
        ("eu", 0),
        ("eu", 1),
        ("us", 0),
        ("us", 1),
    ]
    one = await admin.bucket_metadata("db.part", 8)
    assert {b.partition_id for b in one} == {8}


# =========================================================================== offsets


async def test_list_offsets_groups_per_leader_in_one_concurrent_batch():
    client = standard()
    admin = FlussAdmin(client)
    result = await admin.list_offsets("db.log", LATEST)
    assert result.by_bucket == {b: 10 * (b + 1) for b in range(6)}
    assert result.total == sum(10 * (b + 1) for b in range(6))
    assert not result.errors
    sent = client.sent(ApiKey.LIST_OFFSETS)
    # 6 buckets on 3 leaders: one request per leader, all in the same batch
    assert sorted((t, list(r.bucket_id)) for t, r in sent) == [
        (0, [0, 3]),
        (1, [1, 4]),
        (2, [2, 5]),
    ]
    [batch] = [b for b in client.batches if b[0][1] == ApiKey.LIST_OFFSETS]
    assert len(batch) == 3
    assert all(r.offset_type == 1 for _, r in sent)
    assert {b.leader_id for b in result.buckets} == {0, 1, 2}


async def test_list_offsets_subset_of_buckets_and_a_partition():
    client = standard()
    admin = FlussAdmin(client)
    result = await admin.list_offsets("db.log", EARLIEST, buckets=[4, 1])
    assert result.by_bucket == {4: 0, 1: 0}
    result = await admin.list_offsets("db.part", LATEST, partition="us")
    assert result.offsets == {(8, 0): 10, (8, 1): 20}
    sent = client.sent(ApiKey.LIST_OFFSETS)[-2:]
    assert {r.partition_id for _, r in sent} == {8}
    everything = await admin.list_offsets("db.part", LATEST)
    assert set(everything.offsets) == {(7, 0), (7, 1), (8, 0), (8, 1)}


async def test_per_bucket_errors_stay_per_bucket():
    client = standard()
    client.bucket_errors[(1, None, 2)] = 10  # LOG_STORAGE_EXCEPTION: retriable, no refresh
    result = await FlussAdmin(client).list_offsets("db.log", LATEST)
    assert set(result.by_bucket) == {0, 1, 3, 4, 5}
    err = result.errors[(None, 2)]
    assert err.code == 10 and err.api == "LIST_OFFSETS" and "node 2" in err.message
    assert result.total is None
    # no refresh, no second round
    assert len(client.sent(ApiKey.GET_METADATA)) == 1


async def test_timestamp_spec_and_a_future_timestamp_gives_typed_errors_not_an_exception():
    client = standard()
    admin = FlussAdmin(client)
    ok = await admin.list_offsets("db.log", AtTimestamp(5))
    assert ok.by_bucket == dict.fromkeys(range(6), 0)
    assert all(
        r.startTimestamp == 5 and r.offset_type == 2 for _, r in client.sent(ApiKey.LIST_OFFSETS)
    )
    future = await admin.list_offsets("db.log", AtTimestamp(2 * 10**12))
    assert len(future.errors) == 6
    assert all(isinstance(e, InvalidTimestampError) for e in future.errors.values())


async def test_stale_leader_is_retried_once_after_a_metadata_refresh():
    client = standard()
    client.leaders[(1, None, 0)] = 2  # bucket 0 moved from node 0 to node 2
    client.stale_leaders[(1, None, 0)] = 0
    client.stale_metadata = 1
    admin = FlussAdmin(client)
    result = await admin.list_offsets("db.log", LATEST)
    assert result.by_bucket[0] == 10 and not result.errors
    assert [b.leader_id for b in result.buckets if b.bucket_id == 0] == [2]
    assert len(client.sent(ApiKey.GET_METADATA)) == 2  # the placement, then one refresh
    retried = client.sent(ApiKey.LIST_OFFSETS)[3:]
    assert [(t, list(r.bucket_id)) for t, r in retried] == [(2, [0])]
    # placement, first round, refresh, second round
    assert admin.round_trips == 4


async def test_a_bucket_that_keeps_failing_is_retried_only_once():
    client = standard()
    client.bucket_errors[(1, None, 3)] = 12
    admin = FlussAdmin(client)
    result = await admin.list_offsets("db.log", LATEST)
    assert isinstance(result.errors[(None, 3)], NotLeaderOrFollowerError)
    assert len(result.by_bucket) == 5
    assert sum(3 in r.bucket_id for _, r in client.sent(ApiKey.LIST_OFFSETS)) == 2
    assert admin.round_trips == 4


async def test_a_dead_leader_fails_only_its_buckets():
    client = standard()
    client.down.add(1)
    result = await FlussAdmin(client).list_offsets("db.log", LATEST)
    assert set(result.by_bucket) == {0, 2, 3, 5}
    assert {k for k in result.errors} == {(None, 1), (None, 4)}
    assert all(isinstance(e, ConnectionClosedError) for e in result.errors.values())


async def test_a_bucket_without_leader_gets_a_typed_error_without_a_request():
    client = standard()
    client.leaders[(1, None, 5)] = None
    result = await FlussAdmin(client).list_offsets("db.log", LATEST)
    assert isinstance(result.errors[(None, 5)], LeaderNotAvailableError)
    assert all(5 not in r.bucket_id for _, r in client.sent(ApiKey.LIST_OFFSETS))


async def test_missing_table_raises_typed():
    with pytest.raises(TableNotExistError):
        await FlussAdmin(standard()).list_offsets("db.nope", LATEST)


# =========================================================================== stats


async def test_table_stats_per_leader_only_where_advertised():
    client = standard()
    client.unadvertised[2] = {ApiKey.GET_TABLE_STATS}
    stats = await FlussAdmin(client).table_stats("db.log")
    counts = {b.bucket_id: b.row_count for b in stats.buckets}
    assert counts == {0: 100, 1: 101, 2: None, 3: 103, 4: 104, 5: None}
    assert all(isinstance(e, UnsupportedByServer) for e in stats.errors.values())
    assert stats.row_count is None  # unknown buckets make the total unknown, never 0
    assert sorted(t for t, _ in client.sent(ApiKey.GET_TABLE_STATS)) == [0, 1, 2]


async def test_table_stats_partitioned_carry_partition_ids():
    client = standard()
    stats = await FlussAdmin(client).table_stats("db.part")
    assert stats.row_count == 2 * (100 + 101)
    sent = client.sent(ApiKey.GET_TABLE_STATS)
    assert {(b.partition_id, b.bucket_id) for _, r in sent for b in r.buckets_req} == {
        (7, 0),
        (7, 1),
        (8, 0),
        (8, 1),
    }
    # one request per leader for the whole table (partitions ride in the buckets)
    assert len({t for t, _ in sent}) == len(sent)


# =========================================================================== coordinator APIs


async def test_coordinator_calls_are_routed_to_the_coordinator():
    client = standard()
    client.overrides[ApiKey.DESCRIBE_CLUSTER_CONFIGS] = lambda t, r: (
        pb.DescribeClusterConfigsResponse(
            configs=[
                pb.PbDescribeConfig(
                    config_key="a", config_value="1", config_source="INITIAL_SERVER_CONFIG"
                ),
                pb.PbDescribeConfig(config_key="secret", config_source="DYNAMIC_SERVER_CONFIG"),
            ]
        )
    )
    client.overrides[ApiKey.LIST_REBALANCE_PROGRESS] = lambda t, r: (
        pb.ListRebalanceProgressResponse()
    )
    client.overrides[ApiKey.LIST_ACLS] = lambda t, r: pb.ListAclsResponse()
    admin = FlussAdmin(client)
    configs = await admin.cluster_configs()
    assert [(c.key, c.value, c.source) for c in configs] == [
        ("a", "1", "INITIAL_SERVER_CONFIG"),
        ("secret", None, "DYNAMIC_SERVER_CONFIG"),
    ]
    assert not (await admin.rebalance_progress()).exists
    assert (await admin.list_acls()).enabled
    assert {t for batch in client.batches for t, _, _ in batch} == {COORDINATOR}


async def test_list_acls_without_authorizer_is_a_typed_not_enabled_result():
    client = standard()

    def disabled(_t: Any, _r: Any) -> Message:
        raise from_code(47, "No Authorizer is configured.")

    client.overrides[ApiKey.LIST_ACLS] = disabled
    listing = await FlussAdmin(client).list_acls()
    assert not listing.enabled and listing.bindings == ()
    assert listing.reason == "No Authorizer is configured."


async def test_list_acls_filter_and_bindings():
    client = standard()
    seen: list[Any] = []

    def acls(_t: Any, req: Any) -> Message:
        seen.append(req)
        resp = pb.ListAclsResponse()
        resp.acl.add(
            resource_name="db",
            resource_type=3,
            principal_name="alice",
            principal_type="User",
            host="*",
            operation_type=3,
            permission_type=2,
        )
        resp.acl.add(
            resource_name="x",
            resource_type=99,
            principal_name="bob",
            principal_type="User",
            host="*",
            operation_type=42,
            permission_type=2,
        )
        return resp

    client.overrides[ApiKey.LIST_ACLS] = acls
    listing = await FlussAdmin(client).list_acls(
        AclFilter(resource_type=ResourceType.DATABASE, resource_name="db", principal_name="alice")
    )
    f = seen[0].acl_filter
    assert (f.resource_type, f.resource_name, f.operation_type, f.permission_type) == (
        3,
        "db",
        1,
        1,
    )
    assert f.principal_name == "alice" and not f.HasField("host")
    a, b = listing.bindings
    assert (a.resource_type, a.operation, a.permission) == (
        ResourceType.DATABASE,
        OperationType.READ,
        PermissionType.ALLOW,
    )
    assert (b.resource_type, b.operation) == (99, 42)  # unknown codes are kept as ints
    # an empty filter is ANY/ANY/ANY with nothing else set
    await FlussAdmin(client).list_acls()
    f = seen[1].acl_filter
    assert (f.resource_type, f.operation_type, f.permission_type) == (1, 1, 1)
    assert not f.HasField("resource_name") and not f.HasField("principal_name")


async def test_rebalance_progress_parsing_and_no_rebalance():
    client = standard()

    def progress(_t: Any, req: Any) -> Message:
        if req.HasField("rebalance_id") and req.rebalance_id != "r1":
            raise from_code(62, "no rebalance in progress")
        resp = pb.ListRebalanceProgressResponse(rebalance_id="r1", rebalance_status=1)
        table = resp.table_progress.add(table_id=5)
        item = table.buckets_progress.add(rebalance_status=3)
        item.rebalance_plan.MergeFrom(
            pb.PbRebalancePlanForBucket(
                bucket_id=2,
                original_leader=0,
                new_leader=1,
                original_replicas=[0, 2],
                new_replicas=[1, 2],
            )
        )
        return resp

    client.overrides[ApiKey.LIST_REBALANCE_PROGRESS] = progress
    admin = FlussAdmin(client)
    p = await admin.rebalance_progress()
    assert p.exists and p.rebalance_id == "r1" and p.status is RebalanceStatus.REBALANCING
    [table] = p.tables
    [bucket] = table.buckets
    assert (bucket.bucket_id, bucket.original_leader, bucket.new_leader) == (2, 0, 1)
    assert (bucket.original_replicas, bucket.new_replicas) == ((0, 2), (1, 2))
    assert bucket.status is RebalanceStatus.COMPLETED and bucket.partition_id is None
    assert not (await admin.rebalance_progress("other")).exists


async def test_kv_snapshots_and_lake_snapshot():
    client = standard()

    def kv(_t: Any, req: Any) -> Message:
        if req.table_path.table_name == "log":
            raise from_code(20, "not a primary key table")
        resp = pb.GetLatestKvSnapshotsResponse(table_id=2)
        resp.latest_snapshots.add(bucket_id=1, snapshot_id=4, log_offset=40)
        resp.latest_snapshots.add(bucket_id=0)
        if req.HasField("partition_name"):
            resp.partition_id = 7 if req.partition_name == "eu" else 8
        return resp

    def lake(_t: Any, req: Any) -> Message:
        if req.table_path.table_name != "lake":
            raise from_code(53, "Lake table snapshot doesn't exist")
        resp = pb.GetLakeSnapshotResponse(table_id=4, snapshotId=9)
        resp.bucket_snapshots.add(bucket_id=0, log_offset=5)
        return resp

    client.overrides[ApiKey.GET_LATEST_KV_SNAPSHOTS] = kv
    client.overrides[ApiKey.GET_LAKE_SNAPSHOT] = lake
    admin = FlussAdmin(client)
    snaps = await admin.latest_kv_snapshots("db.pk")
    assert [(s.bucket_id, s.snapshot_id, s.log_offset, s.exists) for s in snaps.buckets] == [
        (0, None, None, False),
        (1, 4, 40, True),
    ]
    by_id = await admin.latest_kv_snapshots("db.part", 8)
    assert by_id.partition_id == 8
    assert client.sent(ApiKey.GET_LATEST_KV_SNAPSHOTS)[-1][1].partition_name == "us"
    with pytest.raises(NonPrimaryKeyTableError):
        await admin.latest_kv_snapshots("db.log")
    none = await admin.lake_snapshot("db.log")
    assert not none.exists and "doesn't exist" in (none.reason or "")
    some = await admin.lake_snapshot("db.lake")
    assert some.exists and some.snapshot_id == 9 and some.buckets[0].log_offset == 5


# =========================================================================== 1.0 only


async def test_cluster_health_on_0_9_raises_unsupported_and_sends_nothing():
    client = standard()
    with pytest.raises(UnsupportedByServer):
        await FlussAdmin(client).cluster_health()


async def test_cluster_health_on_1_0():
    client = standard()
    client.fluss_1_0 = True
    client.overrides[ApiKey.GET_CLUSTER_HEALTH] = lambda t, r: pb.GetClusterHealthResponse(
        num_replicas=9,
        in_sync_replicas=8,
        num_leader_replicas=3,
        active_leader_replicas=3,
        status=1,
    )
    health = await FlussAdmin(client).cluster_health()
    assert health.status is HealthStatus.YELLOW
    assert {s.generation for s in await FlussAdmin(client).servers()} == {"1.0"}
    assert (health.num_replicas, health.in_sync_replicas) == (9, 8)
    assert client.batches[-1][0][0] == COORDINATOR
    client.overrides[ApiKey.GET_CLUSTER_HEALTH] = lambda t, r: pb.GetClusterHealthResponse(
        num_replicas=1,
        in_sync_replicas=1,
        num_leader_replicas=1,
        active_leader_replicas=1,
        status=17,
    )
    assert (await FlussAdmin(client).cluster_health()).status is HealthStatus.UNKNOWN


async def test_not_coordinator_leader_left_by_the_client_surfaces_typed():
    client = standard()

    def standby(_t: Any, _r: Any) -> Message:
        raise NotCoordinatorLeaderError("This coordinator server is not the current leader.")

    client.overrides[ApiKey.DESCRIBE_CLUSTER_CONFIGS] = standby
    with pytest.raises(NotCoordinatorLeaderError):
        await FlussAdmin(client).cluster_configs()


async def test_cluster_health_through_the_real_client_and_a_standby_coordinator():
    """End to end over sockets: a standby coordinator answers 65; the client follows the
    leader named by a tablet server and FlussAdmin gets the 1.0 health reply."""

    def health(_s: FakeServer, _f: Frame) -> Any:
        return pb.GetClusterHealthResponse(
            num_replicas=6,
            in_sync_replicas=6,
            num_leader_replicas=2,
            active_leader_replicas=2,
            status=0,
        )

    async with FakeCluster(tablets=2, fluss_1_0=True) as fc:
        standby = fc.coordinator
        standby.standby = True
        active = fc.add(
            FakeServer(
                1,
                apis=default_apis(1, fluss_1_0=True),
                handlers={ApiKey.GET_CLUSTER_HEALTH: health},
            )
        )
        await active.start()
        async with await connect_fake(fc.tablets[0].address) as client:
            fc.active = active
            got = await FlussAdmin(client).cluster_health()
            assert got.status is HealthStatus.GREEN and got.num_leader_replicas == 2
            assert active.count(ApiKey.GET_CLUSTER_HEALTH) == 1
            assert [e.new_address for e in client.events] == [active.address]


async def test_cluster_health_through_the_real_client_on_0_9_sends_nothing():
    async with FakeCluster(tablets=1) as fc, await connect_fake(fc.tablets[0].address) as client:
        with pytest.raises(UnsupportedByServer):
            await FlussAdmin(client).cluster_health()
        assert all(s.count(ApiKey.GET_CLUSTER_HEALTH) == 0 for s in fc.servers)


# =========================================================================== gather


async def test_gather_collects_everything_in_six_round_trips():
    client = standard()
    view = await gather_cluster(client, earliest=True)
    assert view.latest_read and view.earliest_read
    assert view.round_trips == 6
    # per round: a batch of catalog requests and, sent at the same time, one of offsets
    assert len(client.batches) == 7  # rounds 4 and 6 carry offsets; 6 has nothing else
    assert view.errors == ()
    assert view.databases == ("db",)
    assert [t.path.table for t in view.tables] == ["log", "part", "pk"]
    log = view.table("db.log")
    assert log.info is not None and log.info.bucket_count == 6
    assert [(b.bucket_id, b.earliest_offset, b.latest_offset) for b in log.buckets] == [
        (b, 0, 10 * (b + 1)) for b in range(6)
    ]
    part = view.table("db.part")
    assert [p.name for p in part.partitions] == ["eu", "us"]
    assert [(b.partition_name, b.bucket_id, b.leader_id) for b in part.buckets] == [
        ("eu", 0, 1),
        ("eu", 1, 2),
        ("us", 0, 2),
        ("us", 1, 0),
    ]
    assert all(b.isr is None for b in view.buckets)
    assert view.coordinator is not None and view.coordinator.server_type == 1
    assert [s.node_id for s in view.tablet_servers] == [0, 1, 2]
    # latest offsets: one FetchLog per leader naming all its buckets (non-partitioned
    # tables as soon as their metadata is in, partitions a round later); earliest: one
    # ListOffsets EARLIEST per (leader, table, partition)
    fetches = client.sent(ApiKey.FETCH_LOG)
    assert sorted(t for t, _ in fetches) == [0, 0, 1, 1, 2, 2]
    asked = [
        (t, tr.table_id, b.partition_id if b.HasField("partition_id") else None, b.bucket_id)
        for t, r in fetches
        for tr in r.tables_req
        for b in tr.buckets_req
    ]
    assert len(asked) == len(set(asked)) == len(view.buckets)
    assert all(b.fetch_offset == -2 for _, r in fetches for tr in r.tables_req
               for b in tr.buckets_req)  # fmt: skip
    listed = client.sent(ApiKey.LIST_OFFSETS)
    assert {r.offset_type for _, r in listed} == {0}
    groups = {(t, r.table_id, r.partition_id if r.HasField("partition_id") else None)
              for t, r in listed}  # fmt: skip
    assert len(groups) == len(listed)


async def test_gather_round_trips_do_not_grow_with_tables_or_buckets():
    small = FakeClient()
    db_with(small, "a", 2)
    big = FakeClient()
    db_with(big, "a", 20)
    db_with(big, "b", 20, first_id=100)
    for t in list(big.tables.values())[:5]:
        t.buckets = 64
    for client in (small, big):
        client.tables[TablePath("a", "part")] = FakeTable(
            999, buckets=4, partitions={i: (f"p{i}", {"region": f"p{i}"}) for i in range(1, 30)}
        )
    v_small = await gather_cluster(small)
    v_big = await gather_cluster(big)
    assert v_small.errors == v_big.errors == ()
    assert v_small.round_trips == v_big.round_trips == 6
    assert len(v_big.buckets) > 4 * len(v_small.buckets)
    assert v_big.requests > v_small.requests


async def test_gather_splits_metadata_in_chunks_sent_together():
    client = FakeClient()
    db_with(client, "a", METADATA_CHUNK + 3)
    view = await gather_cluster(client, offsets=False)
    assert not view.latest_read and not view.earliest_read
    [md_batch] = [b for b in client.batches if b[0][1] == ApiKey.GET_METADATA]
    assert [len(r.table_path) for _, _, r in md_batch] == [METADATA_CHUNK, 3]
    assert len(view.tables) == METADATA_CHUNK + 3 and not view.errors
    assert view.round_trips == 3


async def test_gather_table_dropped_between_steps_falls_back_per_table():
    client = standard()
    db_with(client, "other", 3, first_id=50)

    def drop_after_list_tables(batch_index: int) -> None:
        if batch_index == 2:  # ListDatabases, ListTables done; GetMetadata comes next
            del client.tables[TablePath("db", "pk")]

    client.before_batch = drop_after_list_tables
    view = await gather_cluster(client)
    gone = view.table("db.pk")
    assert isinstance(gone.error, TableNotExistError) and gone.buckets == () and gone.info is None
    assert "TableNotExistException" in gone.error.message
    assert [(e.scope, e.subject) for e in view.errors] == [("table", "db.pk")]
    assert all(t.error is None and t.buckets for t in view.tables if t.path.table != "pk")
    assert view.round_trips == 7  # one extra batch: per-table GetMetadata


async def test_gather_partition_dropped_between_steps_is_isolated():
    client = standard()

    def drop_partition(batch_index: int) -> None:
        if batch_index == 4:  # after ListPartitionInfos, before partition GetMetadata
            del client.tables[TablePath("db", "part")].partitions[8]

    client.before_batch = drop_partition
    view = await gather_cluster(client)
    part = view.table("db.part")
    assert {b.partition_id for b in part.buckets} == {7}
    assert [(e.scope, e.subject, type(e.error)) for e in view.errors] == [
        ("partition", "db.part/p=8", PartitionNotExistError)
    ]
    assert view.round_trips == 7  # combined (one table: already per table), per partition


async def test_gather_keeps_database_server_and_bucket_errors_in_place():
    client = standard()
    client.databases.append("ghost")
    client.down.add(2)  # a dead tablet server leading some buckets

    def drop_ghost(batch_index: int) -> None:
        if batch_index == 1:  # listed by ListDatabases, gone before ListTables
            client.databases.remove("ghost")

    client.before_batch = drop_ghost
    view = await gather_cluster(client)
    scopes = {(e.scope, e.subject.split("#")[0]) for e in view.errors}
    assert ("database", "ghost") in scopes
    assert ("server", "127.0.0.1:9102") in scopes
    dead = [b for b in view.buckets if b.leader_id == 2]
    assert dead and all(isinstance(b.latest_error, ConnectionClosedError) for b in dead)
    assert all(b.latest_offset is not None for b in view.buckets if b.leader_id != 2)
    # dead leader: refresh + retry once, then give up
    assert view.round_trips == 8


async def test_gather_survives_list_databases_failing():
    client = standard()

    def broken(_t: Any, _r: Any) -> Message:
        raise from_code(-1, "boom")

    client.overrides[ApiKey.LIST_DATABASES] = broken
    view = await gather_cluster(client)
    assert view.databases == () and view.tables == ()
    assert [e.api for e in view.errors] == ["LIST_DATABASES"]
    assert view.coordinator is not None and len(view.tablet_servers) == 3


async def test_gather_sends_only_read_only_apis():
    client = standard()
    await gather_cluster(client)
    keys = {a for batch in client.batches for _, a, _ in batch}
    assert keys == {
        ApiKey.LIST_DATABASES,
        ApiKey.API_VERSIONS,
        ApiKey.LIST_TABLES,
        ApiKey.GET_METADATA,
        ApiKey.LIST_PARTITION_INFOS,
        ApiKey.FETCH_LOG,
    }
    client.batches.clear()
    await gather_cluster(client, earliest=True)
    keys |= {a for batch in client.batches for _, a, _ in batch}
    assert ApiKey.LIST_OFFSETS in keys
    assert not any(API_INFO[k].mutating or API_INFO[k].private for k in keys)


async def test_gather_without_a_coordinator_asks_a_tablet_server_for_metadata():
    """Many-table GetMetadata goes to the coordinator (much faster on 0.9.1); with the
    coordinator down the same chunk is asked of any tablet server, not lost."""
    client = FakeClient(down={COORDINATOR})
    db_with(client, "a", 5)
    view = await gather_cluster(client, offsets=False)
    md = [b for b in client.batches if b[0][1] == ApiKey.GET_METADATA]
    assert [t for t, _, _ in md[0]] == [COORDINATOR] and [t for t, _, _ in md[1]] == [None]
    assert len(view.tables) == 5 and all(t.error is None and t.buckets for t in view.tables)


# =========================================================================== gather, guided


def content(view: Any) -> tuple[Any, ...]:
    """A view without its timing and request counts; errors by type and place."""

    def err(e: Any) -> Any:
        return None if e is None else type(e).__name__

    tables = tuple(
        (
            t.path,
            t.table_id,
            t.info,
            t.partitions,
            err(t.error),
            tuple(
                (
                    b.table_id,
                    b.partition_id,
                    b.partition_name,
                    b.bucket_id,
                    b.leader_id,
                    b.replica_ids,
                    b.latest_offset,
                    b.earliest_offset,
                    err(b.latest_error),
                    err(b.earliest_error),
                )
                for b in t.buckets
            ),
        )
        for t in view.tables
    )
    errors = sorted((e.scope, e.subject, e.api, err(e.error)) for e in view.errors)
    servers = tuple(
        (s.node_id, s.role, s.address, s.rack, s.server_type, s.api_versions, err(s.error))
        for s in view.servers
    )
    return view.databases, servers, tables, tuple(errors)


async def test_gather_guided_by_the_previous_view_takes_one_round_trip():
    client = standard()
    first = await gather_cluster(client, earliest=True)
    client.batches.clear()
    again = await gather_cluster(client, earliest=True, previous=first)
    assert again.round_trips == 1 and len(client.batches) == 2  # catalog + offsets, at once
    assert content(again) == content(first)
    # the fetch starts where the previous view's latest offset was: no old data comes back
    offsets = {(b.table_id, b.partition_id, b.bucket_id): b.latest_offset for b in first.buckets}
    for _, req in client.sent(ApiKey.FETCH_LOG):
        for tr in req.tables_req:
            for b in tr.buckets_req:
                pid = b.partition_id if b.HasField("partition_id") else None
                assert b.fetch_offset == offsets[(tr.table_id, pid, b.bucket_id)]


def _drop_table(c: FakeClient) -> None:
    del c.tables[TablePath("db", "pk")]


def _add_table(c: FakeClient) -> None:
    c.tables[TablePath("db", "new")] = FakeTable(40, buckets=4)


def _recreate_table(c: FakeClient) -> None:  # same path, new id and bucket count
    c.tables[TablePath("db", "log")] = FakeTable(41, buckets=3)


def _add_database(c: FakeClient) -> None:
    db_with(c, "other", 2, first_id=50)


def _drop_database(c: FakeClient) -> None:
    c.databases.remove("db")


def _move_leaders(c: FakeClient) -> None:
    c.leaders[(1, None, 0)] = 2
    c.leaders[(3, 7, 1)] = 0


def _lose_a_leader(c: FakeClient) -> None:
    c.leaders[(1, None, 2)] = None


def _add_partition(c: FakeClient) -> None:
    parts = c.tables[TablePath("db", "part")].partitions
    assert parts is not None
    parts[9] = ("asia", {"region": "asia"})


def _drop_partition(c: FakeClient) -> None:
    parts = c.tables[TablePath("db", "part")].partitions
    assert parts is not None
    del parts[7]


def _new_rows(c: FakeClient) -> None:
    c.offsets[(1, None, 1)] = (0, 500)
    c.offsets[(3, 8, 0)] = (0, 77)


def _truncated(c: FakeClient) -> None:  # latest below what the previous view saw
    c.offsets[(1, None, 3)] = (0, 1)


def _server_down(c: FakeClient) -> None:
    c.down.add(1)


@pytest.mark.parametrize(
    "change",
    [
        _drop_table,
        _add_table,
        _recreate_table,
        _add_database,
        _drop_database,
        _move_leaders,
        _lose_a_leader,
        _add_partition,
        _drop_partition,
        _new_rows,
        _truncated,
        _server_down,
    ],
)
async def test_gather_guided_by_a_stale_view_still_reads_what_a_fresh_gather_reads(
    change: Callable[[FakeClient], None],
):
    """Nothing of the previous view leaks into the result: whatever changed, a guided
    gather returns exactly what an unguided one returns."""
    client = standard()
    previous = await gather_cluster(client, earliest=True)
    change(client)
    cold = await gather_cluster(client, earliest=True)
    guided = await gather_cluster(client, earliest=True, previous=previous)
    assert content(guided) == content(cold)
    assert guided.round_trips <= cold.round_trips


async def test_gather_asks_list_offsets_for_buckets_the_fetch_cannot_read():
    """FetchLog needs READ on the table; without it (48) the latest offset is asked with
    ListOffsets LATEST, which DESCRIBE allows: one more round, same answers."""
    client = standard()
    refused = {(1, None, 0), (1, None, 4), (3, 8, 1)}
    client.fetch_errors = dict.fromkeys(refused, 48)
    view = await gather_cluster(client)
    assert view.errors == ()
    assert all(b.latest_offset == 10 * (b.bucket_id + 1) for b in view.buckets)
    asked = {
        (r.table_id, r.partition_id if r.HasField("partition_id") else None, b)
        for _, r in client.sent(ApiKey.LIST_OFFSETS)
        for b in r.bucket_id
    }
    assert asked == refused
    assert {r.offset_type for _, r in client.sent(ApiKey.LIST_OFFSETS)} == {1}
    assert view.round_trips == 7


async def test_gather_without_earliest_leaves_earliest_unset():
    client = standard()
    view = await gather_cluster(client)
    assert view.latest_read and not view.earliest_read
    assert all(b.earliest_offset is None and b.earliest_error is None for b in view.buckets)
    assert all(b.latest_offset is not None for b in view.buckets)
    assert client.sent(ApiKey.LIST_OFFSETS) == []


async def test_gather_asks_again_after_fresh_metadata_when_a_leader_moved():
    """The first metadata reply names an old leader: its NOT_LEADER answer sends that
    table's placement to be asked again (alone), then the offset to the new leader."""
    client = standard()
    client.stale_metadata = 2  # round 1's servers-only GetMetadata, then the tables' one
    client.stale_leaders[(1, None, 0)] = 1  # really 0
    view = await gather_cluster(client)
    assert view.errors == ()
    bucket = view.table("db.log").buckets[0]
    assert (bucket.leader_id, bucket.latest_offset) == (0, 10)
    assert view.round_trips == 6


async def test_gather_keeps_the_buckets_and_offsets_of_a_table_whose_json_it_cannot_read():
    client = standard()
    real = client._h_get_metadata

    def unknown_type(target: Any, req: Any) -> Message:
        resp = real(target, req)
        for tm in resp.table_metadata:
            if tm.table_path.table_name == "log":
                tm.table_json = tm.table_json.replace(b'"BIGINT"', b'"HYPERINT"')
        return resp

    client.overrides[ApiKey.GET_METADATA] = unknown_type
    view = await gather_cluster(client)
    log = view.table("db.log")
    assert log.info is None and log.error is not None and "HYPERINT" in str(log.error)
    assert [b.latest_offset for b in log.buckets] == [10 * (b + 1) for b in range(6)]
    assert [(e.scope, e.subject) for e in view.errors] == [("table", "db.log")]
    assert all(t.info is not None for t in view.tables if t.path.table != "log")
