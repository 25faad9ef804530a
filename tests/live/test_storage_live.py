"""Fluss 1.0 storage listings on a real 1.0-line server, checked against pyfluss and against
our own 0.9-era reads: ListKvSnapshots (1064), ListRemoteLogManifests (1063), and
GetTableStats (1059) after upserts and deletes.

The session cluster takes a KV snapshot every 10 minutes and rolls log segments at 1 GB, so
nothing would ever be listed there. This module starts its own small 1.0 cluster (1
coordinator, 1 tablet server) that snapshots every second, rolls 16 KB segments and runs the
remote log tiering task every second (remote.data.dir is the run dir's ``remote/``, a local
directory, so what the coordinator lists can be checked on disk). The 0.9 side (nothing sent,
UnsupportedByServer) runs on the session cluster in test_admin_live.py. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fluss
import pyarrow as pa
import pytest
import pytest_asyncio

from fluss_proto.admin import FlussAdmin
from fluss_proto.client import FlussClient, TablePath
from fluss_proto.error_codes import PartitionNotExistError, TableNotExistError
from fluss_proto.model import EARLIEST
from konsole.localcluster import LocalCluster
from tests._testutil import pyfluss_data as pf
from tests._testutil.waiting import until
from tests.conftest import FlussServer

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(240)]

CONNECT = {"connect_timeout": 5.0, "request_timeout": 15.0, "retry_backoff": 0.2}
#: Snapshot and tier quickly (defaults: 10 min, 1 GB segments, 1 min task interval).
SETTINGS = (
    "kv.snapshot.interval=1s",
    "log.segment.file-size=16kb",
    "remote.log.task-interval-duration=1s",
)


@dataclass
class World:
    conn: fluss.FlussConnection
    client: FlussClient
    admin: FlussAdmin
    db: str
    run_dir: Path


@pytest.fixture(scope="module")
def tiered_cluster(
    fluss_1_0: FlussServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    cluster = LocalCluster(tmp_path_factory.mktemp("fluss-tiered"))
    desc = cluster.start(
        **fluss_1_0.start_kwargs(), tablet_servers=1, settings=SETTINGS, ready_timeout=180
    ).to_dict()
    try:
        yield desc
    finally:
        cluster.stop(graceful=False)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def world(tiered_cluster: dict[str, Any]) -> AsyncIterator[World]:
    bootstrap = str(tiered_cluster["bootstrap_servers"])
    conn = await pf.connect(bootstrap)
    db = pf.unique_name("storage_live")
    client: FlussClient | None = None
    try:
        await pf.create_database(conn.get_admin(), db)
        client = await FlussClient.connect(bootstrap, **CONNECT)
        yield World(conn, client, FlussAdmin(client), db, Path(tiered_cluster["run_dir"]))
    finally:
        if client is not None:
            await client.close()
        await pf.drop_database(conn.get_admin(), db)
        await pf.close_connection(conn)


def ours(path: fluss.TablePath) -> TablePath:
    return TablePath(path.database_name, path.table_name)


async def test_active_kv_snapshots_follow_the_snapshots_the_server_takes(world: World) -> None:
    path = await pf.create_pk_table(world.conn, world.db, "pk", buckets=2)
    p, admin = ours(path), world.admin
    await pf.write_rows(world.conn, path, 20)
    theirs = await pf.latest_offsets(world.conn, path, 2)  # changelog end per bucket

    # a snapshot per bucket, covering every write (its log offset reaches the changelog end)
    async def latest() -> dict[int, tuple[int | None, int | None]]:
        snaps = await admin.latest_kv_snapshots(p)
        return {s.bucket_id: (s.snapshot_id, s.log_offset) for s in snaps.buckets}

    first = await until(
        latest, lambda v: all(v[b][1] == theirs[b] for b in (0, 1)), "snapshots of every write"
    )
    active = await admin.active_kv_snapshots(p)
    table_id = (await world.conn.get_admin().get_table_info(path)).table_id
    assert (active.table_id, active.partition_id) == (table_id, None)
    assert set(active.by_bucket) == {0, 1}
    for bucket, (snapshot_id, _) in first.items():
        assert snapshot_id in active.by_bucket[bucket]  # the latest is among the active ones
    assert await admin.active_kv_snapshots(table_id) == active  # by id: the same answer

    # updates and deletes: a newer snapshot per bucket, at most 2 kept (kv.snapshot.num-retained)
    await pf.write_rows(world.conn, path, 5)  # ids 0..4 updated with the same values
    table = await asyncio.wait_for(world.conn.get_table(path), 30)
    writer = table.new_upsert().create_writer()
    handles = [writer.delete({"id": i}) for i in range(15, 20)]
    async with asyncio.timeout(60):
        await writer.flush()
        await asyncio.gather(*(h.wait() for h in handles))
    theirs = await pf.latest_offsets(world.conn, path, 2)
    second = await until(
        latest, lambda v: all(v[b][1] == theirs[b] for b in (0, 1)), "snapshots after deletes"
    )
    active = await admin.active_kv_snapshots(p)
    for bucket in (0, 1):
        ids = active.by_bucket[bucket]
        assert second[bucket][0] in ids and 1 <= len(ids) <= 2, (bucket, ids)
        assert active.newest[bucket] == second[bucket][0]
        assert second[bucket][0] > first[bucket][0]  # type: ignore[operator]

    # GetTableStats counts live keys after the deletes, as pyfluss lookups find them
    found = await pf.read_pk_rows(world.conn, path, range(20))
    assert [r["id"] for r in found] == list(range(15))
    stats = await admin.table_stats(p)
    assert stats.row_count == len(found) == 15 and not stats.errors


async def test_active_kv_snapshots_of_a_partition(world: World) -> None:
    path = fluss.TablePath(world.db, "pk_part")
    schema = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string(), False)]
    )
    descriptor = fluss.TableDescriptor(
        fluss.Schema(schema, primary_keys=["id", "region"]),
        partition_keys=["region"],
        bucket_count=1,
        bucket_keys=["id"],
    )
    padmin = world.conn.get_admin()
    await pf.create_ready(padmin, path, descriptor, 1, dict.fromkeys(("eu", "us"), "region"))
    table = await asyncio.wait_for(world.conn.get_table(path), 30)
    writer = table.new_upsert().create_writer()
    handles = [writer.upsert({"id": i, "region": "eu"}) for i in range(4)]
    async with asyncio.timeout(60):
        await writer.flush()
        await asyncio.gather(*(h.wait() for h in handles))
    p = ours(path)
    parts = {x.partition_name: x.partition_id for x in await padmin.list_partition_infos(path)}

    eu = await until(
        lambda: world.admin.active_kv_snapshots(p, "eu"),
        lambda v: bool(v.snapshots),
        "a snapshot of partition eu",
    )
    assert eu.partition_id == parts["eu"] and set(eu.by_bucket) == {0}
    latest = await world.admin.latest_kv_snapshots(p, "eu")
    assert latest.buckets[0].snapshot_id in eu.by_bucket[0]
    us = await world.admin.active_kv_snapshots(p, parts["us"])  # nothing written there
    assert (us.partition_id, us.snapshots) == (parts["us"], ())
    with pytest.raises(PartitionNotExistError):  # the partition is not that table's
        await world.admin.active_kv_snapshots(eu.table_id + 1000, parts["eu"])


async def test_remote_log_manifests_list_tiered_buckets(world: World) -> None:
    path = await pf.create_log_table(world.conn, world.db, "tiered", buckets=2)
    for i in range(20):  # 20 acknowledged batches of 50 rows roll many 16 KB segments
        await pf.write_rows(world.conn, path, 50, start=i * 50)
    theirs = await pf.latest_offsets(world.conn, path, 2)
    p = ours(path)
    manifests = await until(
        lambda: world.admin.remote_log_manifests(p),
        lambda v: set(v.end_offsets) == {0, 1},
        "both buckets tiered",
    )
    table_id = (await world.conn.get_admin().get_table_info(path)).table_id
    assert manifests.table_id == table_id
    remote = world.run_dir / "remote"
    for m in manifests.manifests:
        assert (m.table_id, m.partition_id) == (table_id, None)
        # offsets below the end are in remote storage: never past what pyfluss sees
        assert 0 < m.remote_log_end_offset <= theirs[m.bucket_id], m
        manifest = Path(m.manifest_path)
        assert manifest.is_file() and remote in manifest.parents, m.manifest_path
    assert await world.admin.remote_log_manifests(table_id) == manifests
    # the earliest offset still counts what is only remote (the log start did not move)
    earliest = await world.admin.list_offsets(p, EARLIEST)
    assert dict(earliest.by_bucket) == {0: 0, 1: 0}


async def test_remote_log_manifests_of_a_partition(world: World) -> None:
    path = fluss.TablePath(world.db, "tiered_part")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("region", pa.string())])
    descriptor = fluss.TableDescriptor(
        fluss.Schema(schema), partition_keys=["region"], bucket_count=1, bucket_keys=["id"]
    )
    padmin = world.conn.get_admin()
    await pf.create_ready(padmin, path, descriptor, 1, dict.fromkeys(("eu", "us"), "region"))
    table = await asyncio.wait_for(world.conn.get_table(path), 30)
    for i in range(20):  # acknowledged batches into "eu" only: its segments roll and tier
        writer = table.new_append().create_writer()
        handles = [writer.append({"id": i * 100 + j, "region": "eu"}) for j in range(100)]
        async with asyncio.timeout(60):
            await writer.flush()
            await asyncio.gather(*(h.wait() for h in handles))
    parts = {x.partition_name: x.partition_id for x in await padmin.list_partition_infos(path)}
    theirs = await pf.latest_offsets(world.conn, path, 1, partition="eu")
    p = ours(path)
    eu = await until(
        lambda: world.admin.remote_log_manifests(p, "eu"),
        lambda v: bool(v.manifests),
        "partition eu tiered",
    )
    [m] = eu.manifests
    assert (eu.partition_id, m.partition_id, m.bucket_id) == (parts["eu"], parts["eu"], 0)
    assert 0 < m.remote_log_end_offset <= theirs[0]
    assert Path(m.manifest_path).is_file()
    us = await world.admin.remote_log_manifests(p, parts["us"])  # nothing written there
    assert (us.partition_id, us.manifests) == (parts["us"], ())


async def test_listings_of_tables_without_snapshots_or_tiering(world: World) -> None:
    log = await pf.create_log_table(world.conn, world.db, "quiet_log", buckets=1)
    pk = await pf.create_pk_table(world.conn, world.db, "quiet_pk", buckets=1)
    # a log table has no KV: an empty listing, not NON_PRIMARY_KEY_TABLE (20)
    kv = await world.admin.active_kv_snapshots(ours(log))
    assert kv.snapshots == () and kv.partition_id is None
    empty_pk = await world.admin.active_kv_snapshots(ours(pk))  # nothing written yet
    assert empty_pk.snapshots == ()
    assert (await world.admin.remote_log_manifests(ours(log))).manifests == ()
    # an unknown table id: TABLE_NOT_EXIST for KV snapshots, an empty manifest listing
    unknown = 10**9
    with pytest.raises(TableNotExistError):
        await world.admin.active_kv_snapshots(unknown)
    assert (await world.admin.remote_log_manifests(unknown)).manifests == ()
