"""FlussAdmin and gather_cluster against the session cluster, checked against pyfluss.

pyfluss (the official client) creates the objects and writes a known number of rows; every
admin answer is compared with what pyfluss reports for the same objects. One FlussClient
serves the whole module, so the last test can check every API key the read paths sent.
Every wait is bounded (pyfluss helpers carry their own deadlines).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import fluss
import pyarrow as pa
import pytest
import pytest_asyncio

from fluss_proto.admin import FlussAdmin
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client import FlussClient, TablePath
from fluss_proto.error_codes import (
    InvalidTimestampError,
    NonPrimaryKeyTableError,
    TableNotExistError,
    TableNotPartitionedError,
)
from fluss_proto.errors import UnsupportedByServer
from fluss_proto.gather import gather_cluster
from fluss_proto.model import (
    EARLIEST,
    LATEST,
    AtTimestamp,
    ClusterView,
    GatherError,
    HealthStatus,
    TableView,
)
from konsole.localcluster.settle import SettledConnection
from tests._testutil import pyfluss_data as pf
from tests.conftest import FlussServer

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(120)]

CONNECT = {"connect_timeout": 5.0, "request_timeout": 15.0, "retry_backoff": 0.2}
LOG_ROWS, PK_ROWS, PK_UPDATES, LOG8_ROWS = 60, 25, 10, 80
PART_ROWS = {"eu": 7, "us": 5}


@dataclass
class World:
    conn: SettledConnection
    padmin: fluss.FlussAdmin
    client: FlussClient
    admin: FlussAdmin
    db: str
    log: TablePath
    pk: TablePath
    log8: TablePath
    part: TablePath

    @property
    def tables(self) -> list[TablePath]:
        return [self.log, self.pk, self.log8, self.part]


def fp(path: TablePath) -> fluss.TablePath:
    return fluss.TablePath(path.database, path.table)


async def write_partitioned(conn: SettledConnection, path: TablePath) -> None:
    table = await conn.table_for_writing(fp(path), 30)
    writer = table.new_append().create_writer()
    handles = []
    next_id = 0
    for region, n in PART_ROWS.items():
        for _ in range(n):
            handles.append(writer.append({"id": next_id, "region": region}))
            next_id += 1
    async with asyncio.timeout(60):
        await writer.flush()
        await asyncio.gather(*(h.wait() for h in handles))


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def world(bootstrap: str) -> AsyncIterator[World]:
    conn = await pf.connect(bootstrap)
    padmin = conn.get_admin()
    db = pf.unique_name("admin_live")
    client: FlussClient | None = None
    try:
        await pf.create_database(padmin, db)
        log = await pf.create_log_table(conn, db, "log3", buckets=3, replication_factor=3)
        pk = await pf.create_pk_table(conn, db, "pk2", buckets=2, replication_factor=2)
        log8 = await pf.create_log_table(conn, db, "log8", buckets=8, replication_factor=1)
        part = fluss.TablePath(db, "part")
        schema = fluss.Schema(
            pa.schema([pa.field("id", pa.int64()), pa.field("region", pa.string())])
        )
        descriptor = fluss.TableDescriptor(
            schema,
            partition_keys=["region"],
            bucket_count=2,
            bucket_keys=["id"],
            properties={"table.replication.factor": "2"},
        )
        await pf.create_ready(padmin, part, descriptor, 2, dict.fromkeys(PART_ROWS, "region"))
        await pf.write_rows(conn, log, LOG_ROWS)
        await pf.write_rows(conn, pk, PK_ROWS)
        await pf.write_rows(conn, pk, PK_UPDATES)  # updates: changelog grows, keys do not
        await pf.write_rows(conn, log8, LOG8_ROWS)
        ours = [TablePath(db, n) for n in ("log3", "pk2", "log8", "part")]
        await write_partitioned(conn, ours[3])
        client = await FlussClient.connect(bootstrap, **CONNECT)
        yield World(conn, padmin, client, FlussAdmin(client), db, *ours)
    finally:
        if client is not None:
            await client.close()
        await pf.drop_database(padmin, db)
        await pf.close_connection(conn)


# =========================================================================== catalog


async def test_servers_match_pyfluss(world: World) -> None:
    servers = await world.admin.servers()
    nodes = await asyncio.wait_for(world.padmin.get_server_nodes(), 30)
    ours = {(s.role, s.node_id, s.host, s.port) for s in servers}
    theirs = {
        ("coordinator" if n.server_type == "CoordinatorServer" else "tablet", n.id, n.host, n.port)
        for n in nodes
    }
    assert ours == theirs
    coordinator = servers[0]
    assert coordinator.role == "coordinator" and coordinator.server_type == 1
    assert coordinator.advertises(ApiKey.LIST_REBALANCE_PROGRESS)
    assert not coordinator.advertises(ApiKey.LIST_OFFSETS)
    tablets = servers[1:]
    assert [s.node_id for s in tablets] == sorted(s.node_id for s in tablets)
    assert all(s.server_type == 2 and s.advertises(ApiKey.LIST_OFFSETS) for s in tablets)
    assert all(s.error is None and s.generation for s in servers)


async def test_catalog_matches_pyfluss(world: World) -> None:
    admin, padmin = world.admin, world.padmin
    ours = await admin.list_databases()
    assert world.db in ours
    assert set(ours) == set(await padmin.list_databases())
    summaries = {s.name: s for s in await admin.list_database_summaries()}
    assert summaries[world.db].table_count == 4

    info = await admin.database_info(world.db)
    pinfo = await padmin.get_database_info(world.db)
    assert (info.name, info.created_ms, info.modified_ms) == (
        pinfo.database_name,
        pinfo.created_time,
        pinfo.modified_time,
    )
    assert info.comment == pinfo.get_database_descriptor().comment
    assert await admin.database_exists(world.db)
    assert not await admin.database_exists(world.db + "_missing")

    tables = await admin.list_tables(world.db)
    assert (
        sorted(tables)
        == sorted(await padmin.list_tables(world.db))
        == sorted(p.table for p in world.tables)
    )
    assert await admin.table_exists(world.log)
    assert not await admin.table_exists((world.db, "missing"))


async def test_table_info_and_schema_match_pyfluss(world: World) -> None:
    for path in world.tables:
        ours = await world.admin.table_info(path)
        theirs = await world.padmin.get_table_info(fp(path))
        assert (ours.table_id, ours.schema_id) == (theirs.table_id, theirs.schema_id)
        assert (ours.created_ms, ours.modified_ms) == (theirs.created_time, theirs.modified_time)
        assert ours.bucket_count == theirs.num_buckets
        assert list(ours.primary_key) == theirs.get_primary_keys()
        assert list(ours.bucket_keys) == theirs.get_bucket_keys()
        assert list(ours.partition_keys) == theirs.get_partition_keys()
        assert ours.properties.to_dict() == theirs.get_properties()
        assert ours.custom_properties.to_dict() == theirs.get_custom_properties()
        assert ours.comment == theirs.comment
        columns = [(c.name, str(c.type).replace(" ", "").lower()) for c in ours.schema.columns]
        assert columns == [
            (name, kind.replace(" ", "").lower())
            for name, kind in theirs.get_schema().get_columns()
        ]
        schema = await world.admin.table_schema(path)
        assert schema.schema_id == ours.schema_id and schema.schema == ours.schema
        assert (await world.admin.table_schema(path, ours.schema_id)).schema == ours.schema
    assert (await world.admin.table_info(world.log8)).bucket_count == 8
    with pytest.raises(TableNotExistError):
        await world.admin.table_info((world.db, "missing"))


async def test_partitions_match_pyfluss(world: World) -> None:
    ours = await world.admin.list_partitions(world.part)
    theirs = await world.padmin.list_partition_infos(fp(world.part))
    assert {(p.partition_id, p.name) for p in ours} == {
        (p.partition_id, p.partition_name) for p in theirs
    }
    assert {p.name: dict(p.spec) for p in ours} == {r: {"region": r} for r in PART_ROWS}
    with pytest.raises(TableNotPartitionedError):
        await world.admin.list_partitions(world.log)


async def test_bucket_metadata_agrees_with_get_metadata(world: World) -> None:
    admin, client = world.admin, world.client
    parts = {p.name: p.partition_id for p in await admin.list_partitions(world.part)}
    md = await client.refresh_metadata(world.tables, partition_ids=parts.values())
    for path, rf in ((world.log, 3), (world.pk, 2), (world.log8, 1)):
        ours = await admin.bucket_metadata(path)
        table = md.tables[path]
        assert [(b.bucket_id, b.leader_id, b.replica_ids, b.leader_epoch) for b in ours] == [
            (b.bucket_id, b.leader_id, b.replica_ids, b.leader_epoch) for b in table.buckets
        ]
        assert all(b.isr is None for b in ours)
        assert all(len(b.replica_ids) == rf and b.leader_id in b.replica_ids for b in ours)
    # partitioned: no table-level buckets; each partition has its own
    assert md.tables[world.part].buckets == ()
    ours = await admin.bucket_metadata(world.part)
    assert {(b.partition_name, b.bucket_id) for b in ours} == {
        (name, b) for name in PART_ROWS for b in range(2)
    }
    for b in ours:
        want = next(x for x in md.partitions[b.partition_id].buckets if x.bucket_id == b.bucket_id)
        assert (b.leader_id, b.replica_ids) == (want.leader_id, want.replica_ids)
    only_us = await admin.bucket_metadata(world.part, "us")
    assert {b.partition_id for b in only_us} == {parts["us"]}


# =========================================================================== offsets, stats


async def test_offsets_match_pyfluss(world: World) -> None:
    admin = world.admin
    for path, buckets, rows in ((world.log, 3, LOG_ROWS), (world.log8, 8, LOG8_ROWS)):
        latest = await admin.list_offsets(path, LATEST)
        assert not latest.errors and latest.total == rows
        assert dict(latest.by_bucket) == await pf.latest_offsets(world.conn, fp(path), buckets)
        earliest = await admin.list_offsets(path, EARLIEST)
        assert dict(earliest.by_bucket) == dict.fromkeys(range(buckets), 0)
        assert (await admin.list_offsets(path, AtTimestamp(0))).by_bucket == earliest.by_bucket
    # a PK table's offsets count its changelog; compare per bucket with pyfluss
    pk = await admin.list_offsets(world.pk, LATEST)
    assert dict(pk.by_bucket) == await pf.latest_offsets(world.conn, fp(world.pk), 2)
    assert pk.total is not None and pk.total > PK_ROWS
    # one bucket only
    one = await admin.list_offsets(world.log8, LATEST, buckets=[5])
    assert list(one.by_bucket) == [5]
    # partitions: by name, and all at once
    for name, rows in PART_ROWS.items():
        mine = await admin.list_offsets(world.part, LATEST, partition=name)
        assert sum(mine.by_bucket.values()) == rows
        theirs = await pf.latest_offsets(world.conn, fp(world.part), 2, partition=name)
        assert dict(mine.by_bucket) == theirs
    everything = await admin.list_offsets(world.part, LATEST)
    assert everything.total == sum(PART_ROWS.values()) and len(everything.buckets) == 4
    # a timestamp after the server's clock fails per bucket, typed, without raising
    future = await admin.list_offsets(world.log, AtTimestamp(int(time.time() * 1000) + 3_600_000))
    assert len(future.errors) == 3
    assert all(isinstance(e, InvalidTimestampError) for e in future.errors.values())


async def test_table_stats_count_rows(world: World) -> None:
    log = await world.admin.table_stats(world.log8)
    assert log.row_count == LOG8_ROWS and not log.errors and len(log.buckets) == 8
    offsets = await world.admin.list_offsets(world.log8, LATEST)
    assert {b.bucket_id: b.row_count for b in log.buckets} == dict(offsets.by_bucket)
    pk = await world.admin.table_stats(world.pk)
    assert pk.row_count == PK_ROWS  # live keys, not changelog records
    part = await world.admin.table_stats(world.part)
    assert part.row_count == sum(PART_ROWS.values())


async def test_snapshots_configs_acls_rebalance_lake_and_health(
    world: World, fluss_server: FlussServer
) -> None:
    admin = world.admin
    snaps = await admin.latest_kv_snapshots(world.pk)
    assert [s.bucket_id for s in snaps.buckets] == [0, 1]
    assert snaps.table_id == (await admin.table_info(world.pk)).table_id
    with pytest.raises(NonPrimaryKeyTableError):
        await admin.latest_kv_snapshots(world.log)

    configs = {c.key: c for c in await admin.cluster_configs()}
    assert "zookeeper.address" in configs
    assert all(
        c.source in ("INITIAL_SERVER_CONFIG", "DYNAMIC_SERVER_CONFIG") for c in configs.values()
    )

    acls = await admin.list_acls()  # the session cluster runs without an authorizer
    assert not acls.enabled and acls.bindings == () and acls.reason

    progress = await admin.rebalance_progress()
    assert not progress.exists and progress.tables == ()

    lake = await admin.lake_snapshot(world.log)
    assert not lake.exists and lake.reason

    if fluss_server.is_1_0:
        health = await admin.cluster_health()
        assert health.status is HealthStatus.GREEN, health
        assert health.num_leader_replicas > 0
    else:
        before = world.client.sent_api_keys[ApiKey.GET_CLUSTER_HEALTH]
        with pytest.raises(UnsupportedByServer):
            await admin.cluster_health()
        assert world.client.sent_api_keys[ApiKey.GET_CLUSTER_HEALTH] == before == 0


async def test_storage_listings_per_generation(world: World, fluss_server: FlussServer) -> None:
    """ListKvSnapshots / ListRemoteLogManifests: 1.0 answers (what gets listed once snapshots
    and tiering happen is in test_storage_live.py); 0.9.1 gets nothing sent."""
    admin, client = world.admin, world.client
    table_id = (await admin.table_info(world.pk)).table_id
    if fluss_server.is_1_0:
        assert client.features.list_kv_snapshots and client.features.list_remote_log_manifests
        for _ in range(3):  # a periodic snapshot (every 10 min here) may land in between
            latest = await admin.latest_kv_snapshots(world.pk)
            active = await admin.active_kv_snapshots(world.pk)
            if latest == await admin.latest_kv_snapshots(world.pk):
                break
        assert (active.table_id, active.partition_id) == (table_id, None)
        assert set(active.by_bucket) <= {0, 1}
        for snap in latest.buckets:
            if snap.exists:
                assert snap.snapshot_id in active.by_bucket[snap.bucket_id]
            else:
                assert snap.bucket_id not in active.by_bucket
        # 1 GB segments (the default) never roll here: nothing is tiered
        manifests = await admin.remote_log_manifests(world.log8)
        assert manifests.manifests == () and manifests.table_id != table_id
    else:
        assert not client.features.list_kv_snapshots
        assert not client.features.list_remote_log_manifests
        for call in (admin.active_kv_snapshots, admin.remote_log_manifests):
            with pytest.raises(UnsupportedByServer):
                await call(table_id)
        assert client.sent_api_keys[ApiKey.LIST_KV_SNAPSHOTS] == 0
        assert client.sent_api_keys[ApiKey.LIST_REMOTE_LOG_MANIFESTS] == 0


async def test_tables_metadata_isolates_a_missing_table(world: World) -> None:
    admin = FlussAdmin(world.client)
    missing = TablePath(world.db, "never_created")
    result = await admin.tables_metadata([*world.tables, missing])
    assert isinstance(result[missing], TableNotExistError)
    assert all(not isinstance(result[p], Exception) for p in world.tables)
    assert admin.round_trips == 2  # the combined request failed; then one per table, at once


# =========================================================================== gather


async def create_led_tables(world: World, db: str, buckets: dict[str, int]) -> dict[str, TablePath]:
    """Create log tables one at a time and make sure every bucket got a leader; returns
    each asked name's table (a table created again has a new name).

    Fluss 0.9.1 sometimes never processes a table creation (its coordinator logs no "New
    table" for it): the table exists, GetMetadata lists its replicas, but no bucket ever
    gets a leader (seen for 1 to 12 tables out of 300 created in a row on the shared
    cluster). Such a table is dropped and created again under a new name, at most twice.
    """
    admin = FlussAdmin(world.client)
    pending = dict(buckets)
    made = {name: TablePath(db, name) for name in buckets}
    asked = {name: name for name in buckets}  # the name in play -> the name asked for
    for attempt in range(3):
        for name, n in pending.items():
            await pf.create_log_table(world.conn, db, name, buckets=n)
        leaderless: list[TablePath] = []
        for _ in range(12):  # up to ~3 s for leaders to appear
            md = await admin.tables_metadata(TablePath(db, name) for name in pending)
            leaderless = [
                p
                for p, t in md.items()
                if isinstance(t, Exception) or any(b.leader_id is None for b in t.buckets)
            ]
            if not leaderless:
                return made
            await asyncio.sleep(0.25)
        for path in leaderless:
            async with asyncio.timeout(30):
                await world.padmin.drop_table(fp(path), True)
        pending = {f"{p.table}_r{attempt}": pending[p.table] for p in leaderless}
        for p in leaderless:
            asked[f"{p.table}_r{attempt}"] = asked[p.table]
            made[asked[p.table]] = TablePath(db, f"{p.table}_r{attempt}")
    raise AssertionError(f"tables without leaders after 3 attempts: {sorted(pending)}")


async def settled_gather(client: FlussClient, *databases: str) -> ClusterView:
    """A gather without errors on ``databases``. Right after CREATE TABLE a tablet server
    may not host the new replicas yet (ListOffsets answers 21 / 12 and gather spends its
    refresh-and-retry round trips), so wait until a gather comes back clean for our
    databases (other tests' tables are not ours to judge); bounded in count and time."""

    def ours(view: ClusterView) -> list[GatherError]:
        return [e for e in view.errors if e.subject.split(".")[0] in databases]

    deadline = time.monotonic() + 20
    view = await gather_cluster(client, earliest=True)
    for _ in range(80):
        if not ours(view) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.25)
        view = await gather_cluster(client, earliest=True)
    assert not ours(view), ours(view)[:5]
    return view


def check_against_individual_calls(view: TableView, world_offsets: dict, info, buckets) -> None:
    assert view.error is None
    assert view.info == info
    assert [
        (b.partition_id, b.bucket_id, b.leader_id, b.replica_ids, b.leader_epoch)
        for b in view.buckets
    ] == [
        (b.partition_id, b.bucket_id, b.leader_id, b.replica_ids, b.leader_epoch) for b in buckets
    ]
    assert {(b.partition_id, b.bucket_id): b.latest_offset for b in view.buckets} == world_offsets
    assert all(b.earliest_offset == 0 and b.latest_error is None for b in view.buckets)


async def test_gather_agrees_with_individual_calls_and_round_trips_stay_constant(
    world: World,
) -> None:
    admin = world.admin
    view = await settled_gather(world.client, world.db)
    assert world.db in view.databases
    assert {t.path for t in view.tables_in(world.db)} == set(world.tables)
    for path in world.tables:
        t = view.table(path)
        latest = await admin.list_offsets(path, LATEST)
        check_against_individual_calls(
            t, dict(latest.offsets), await admin.table_info(path), await admin.bucket_metadata(path)
        )
    assert {p.name for p in view.table(world.part).partitions} == set(PART_ROWS)
    assert len(view.table(world.log8).buckets) == 8
    assert sum(b.latest_offset or 0 for b in view.table(world.log).buckets) == LOG_ROWS
    assert view.coordinator is not None and len(view.tablet_servers) == 3

    # 2 tables vs 20 tables (plus whatever else the cluster holds): same round trips
    extra_db = pf.unique_name("admin_live_more")
    await pf.create_database(world.padmin, extra_db)
    try:
        await create_led_tables(world, extra_db, {"x00": 1, "x01": 2})
        small = await settled_gather(world.client, world.db, extra_db)
        assert len(small.tables_in(extra_db)) == 2
        await create_led_tables(world, extra_db, {f"x{i:02d}": 1 + i % 4 for i in range(2, 20)})
        big = await settled_gather(world.client, world.db, extra_db)
        assert len(big.tables_in(extra_db)) == 20
        assert all(t.error is None and t.buckets for t in big.tables_in(extra_db))
        assert small.round_trips == big.round_trips == view.round_trips
        assert big.requests > small.requests
        assert len(big.buckets) > len(small.buckets)
    finally:
        await pf.drop_database(world.padmin, extra_db)


async def test_guided_gather_reads_an_unchanged_cluster_in_one_round_trip(world: World) -> None:
    """Given the previous view, an unchanged cluster is read in one round trip, and the
    result equals a gather without a guide; rows written in between show up in it (the
    latest offsets come from FetchLog high watermarks, checked against ListOffsets)."""
    # (0.9.1 may leave a new table leaderless: it is then made again under a new name)
    path = (await create_led_tables(world, world.db, {"guided": 4}))["guided"]
    first = await settled_gather(world.client, world.db)
    assert all(b.latest_offset == 0 for b in first.table(path).buckets)
    again = await gather_cluster(world.client, previous=first)
    assert again.round_trips == 1, again.errors[:3]
    assert summary(again, world.db) == summary(first, world.db)

    await pf.write_rows(world.conn, fp(path), 300)
    after = await gather_cluster(world.client, previous=again)
    assert after.round_trips == 1
    latest = await world.admin.list_offsets(path, LATEST)
    buckets = after.table(path).buckets
    assert {(b.partition_id, b.bucket_id): b.latest_offset for b in buckets} == dict(latest.offsets)
    assert sum(b.latest_offset or 0 for b in after.table(path).buckets) == 300
    cold = await gather_cluster(world.client)
    assert summary(after, world.db) == summary(cold, world.db)


def summary(view: ClusterView, db: str) -> list[tuple[object, ...]]:
    """Placement and latest offsets of ``db``'s buckets (what two gathers can agree on)."""
    return [
        (t.path, t.table_id, b.partition_id, b.bucket_id, b.leader_id, b.latest_offset)
        for t in view.tables_in(db)
        for b in t.buckets
    ]


async def test_read_paths_send_only_read_only_apis(world: World) -> None:
    sent = {key for key, count in world.client.sent_api_keys.items() if count}
    assert ApiKey.LIST_OFFSETS in sent and ApiKey.GET_METADATA in sent
    offenders = [k.name for k in sent if API_INFO[k].mutating or API_INFO[k].private]
    assert offenders == [], offenders
