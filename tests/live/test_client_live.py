"""FlussClient against real Fluss servers: the session cluster and a SASL cluster of its own.

Every wait is bounded in time and in count. The tablet-server restart test restarts the
server in a ``finally`` so the session cluster is whole again for later tests.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client import SERVER_TYPE_COORDINATOR, SERVER_TYPE_TABLET, FlussClient
from fluss_proto.connection import Connection
from fluss_proto.errors import (
    AuthenticationError,
    ConnectionFailure,
    FlussError,
    RequestTimeoutError,
    UnsupportedByServer,
)
from fluss_proto.sasl import SaslPlain
from konsole.localcluster import LocalCluster
from tests._testutil import pyfluss_data as pf
from tests.conftest import FlussServer

pytestmark = pytest.mark.timeout(300)

CONNECT = {"connect_timeout": 5.0, "request_timeout": 15.0, "retry_backoff": 0.2}
ADMIN_PASSWORD = "admin-secret"
WRONG_PASSWORD = "wrong-Pa55-for-admin-7731"


def endpoint(desc: dict[str, Any], role: str, sid: int = 0) -> str:
    for proc in desc["processes"]:
        if proc["role"] == role and proc["id"] == sid:
            return str(proc["endpoint"])
    raise AssertionError(f"no {role} {sid} in the cluster description")


def all_text(exc: BaseException) -> str:
    return str(exc) + repr(exc) + "".join(traceback.format_exception(exc))


# =========================================================================== session cluster


async def test_connect_records_api_versions_and_metadata(
    bootstrap: str, fluss_cluster: dict[str, Any], fluss_server: FlussServer
) -> None:
    async with await FlussClient.connect(bootstrap, **CONNECT) as client:
        coordinator = endpoint(fluss_cluster, "coordinator")
        md = client.metadata
        assert md.coordinator is not None
        assert md.coordinator.node_id == 0
        assert md.coordinator.address == coordinator
        assert sorted(md.tablet_servers) == [0, 1, 2]
        for sid in range(3):
            assert md.tablet_servers[sid].address == endpoint(fluss_cluster, "tablet-server", sid)

        types = {info.server_type for info in client.api_versions.values()}
        assert types == {SERVER_TYPE_COORDINATOR, SERVER_TYPE_TABLET}
        coord = client.api_versions_of(coordinator=True)
        assert coord is not None and coord.server_type == SERVER_TYPE_COORDINATOR
        # the coordinator does not serve tablet-only APIs and the other way round
        assert coord.advertises(ApiKey.LIST_REBALANCE_PROGRESS)
        assert not coord.advertises(ApiKey.FETCH_LOG)
        tablets = [i for i in client.api_versions.values() if i.server_type == SERVER_TYPE_TABLET]
        assert tablets and all(i.advertises(ApiKey.FETCH_LOG) for i in tablets)
        assert all(not i.advertises(ApiKey.LIST_REBALANCE_PROGRESS) for i in tablets)

        features = client.features
        assert features.table_stats and features.list_offsets and features.fetch_log
        if fluss_server.is_1_0:
            assert features.server_generation == "1.0"
            assert features.scan_kv and features.cluster_health
            assert features.list_kv_snapshots and features.list_remote_log_manifests
            assert features.put_kv_backpressure
        else:
            assert features.server_generation == "0.9"
            assert not features.scan_kv and not features.cluster_health
            assert not features.list_kv_snapshots and not features.list_remote_log_manifests
            assert not features.put_kv_backpressure
        assert set(client.sent_api_keys) <= {
            ApiKey.API_VERSIONS,
            ApiKey.GET_METADATA,
        }


async def test_read_paths_send_only_read_apis(bootstrap: str) -> None:
    conn = await pf.connect(bootstrap)
    admin = conn.get_admin()
    db = pf.unique_name("client_live")
    try:
        await pf.create_database(admin, db)
        path = await pf.create_log_table(conn, db, "events", buckets=3, replication_factor=3)
        await pf.write_rows(conn, path, 30)
        async with await FlussClient.connect(bootstrap, **CONNECT) as client:
            md = await client.refresh_metadata([(db, "events")])
            table = md.tables[(db, "events")]
            assert [b.bucket_id for b in table.buckets] == [0, 1, 2]
            for bucket in table.buckets:
                assert bucket.leader_id in (0, 1, 2)
                assert sorted(bucket.replica_ids) == [0, 1, 2]
                assert bucket.leader_epoch is not None

            dbs = await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest())
            assert db in dbs.database_name
            tables = await client.call(ApiKey.LIST_TABLES, pb.ListTablesRequest(database_name=db))
            assert list(tables.table_name) == ["events"]
            table_path = pb.PbTablePath(database_name=db, table_name="events")
            info = await client.call(
                ApiKey.GET_TABLE_INFO, pb.GetTableInfoRequest(table_path=table_path)
            )
            assert info.table_id == table.table_id
            exists = await client.call(
                ApiKey.TABLE_EXISTS, pb.TableExistsRequest(table_path=table_path)
            )
            assert exists.exists
            configs = await client.call(
                ApiKey.DESCRIBE_CLUSTER_CONFIGS,
                pb.DescribeClusterConfigsRequest(),
                coordinator=True,
            )
            assert configs.configs

            # one ListOffsets and one GetTableStats per leader, all at once
            by_leader: dict[int, list[int]] = {}
            for bucket in table.buckets:
                assert bucket.leader_id is not None
                by_leader.setdefault(bucket.leader_id, []).append(bucket.bucket_id)
            items: list[tuple[int | str | None, ApiKey, Any]] = []
            for leader, buckets in sorted(by_leader.items()):
                items.append(
                    (
                        leader,
                        ApiKey.LIST_OFFSETS,
                        pb.ListOffsetsRequest(
                            follower_server_id=-1,
                            offset_type=1,
                            table_id=table.table_id,
                            bucket_id=buckets,
                        ),
                    )
                )
                stats = pb.GetTableStatsRequest(table_id=table.table_id)
                for b in buckets:
                    stats.buckets_req.add(bucket_id=b)
                items.append((leader, ApiKey.GET_TABLE_STATS, stats))
            results = await client.call_many(items)
            errors = [r for r in results if isinstance(r, BaseException)]
            assert not errors, errors
            offsets = {
                b.bucket_id: b.offset
                for r in results
                if isinstance(r, pb.ListOffsetsResponse)
                for b in r.buckets_resp
            }
            assert sorted(offsets) == [0, 1, 2]
            assert sum(offsets.values()) == 30

            sent = set(client.sent_api_keys)
            assert {
                ApiKey.API_VERSIONS,
                ApiKey.GET_METADATA,
                ApiKey.LIST_DATABASES,
                ApiKey.LIST_OFFSETS,
                ApiKey.GET_TABLE_STATS,
            } <= sent
            assert all(not API_INFO[key].mutating for key in sent), sent
            assert not client.events  # one coordinator in this cluster: never redirected
    finally:
        await pf.drop_database(admin, db)
        await pf.close_connection(conn)


async def test_scan_kv_is_sent_only_where_advertised(
    bootstrap: str, fluss_server: FlussServer
) -> None:
    """0.9.1: refused at once by the client, never sent. 1.0: sent and answered."""
    async with await FlussClient.connect(bootstrap, **CONNECT) as client:
        assert client.features.scan_kv is fluss_server.is_1_0
        for node in (None, 0, 1):
            t0 = time.monotonic()
            if fluss_server.is_1_0:
                # an empty request names no scanner and no bucket: answered, nothing read
                resp = await client.call(ApiKey.SCAN_KV, pb.ScanKvRequest(), node=node)
                assert isinstance(resp, pb.ScanKvResponse) and not resp.records
            else:
                with pytest.raises(UnsupportedByServer, match="SCAN_KV"):
                    await client.call(ApiKey.SCAN_KV, pb.ScanKvRequest(), node=node)
            assert time.monotonic() - t0 < 1.0
        assert (ApiKey.SCAN_KV in client.sent_api_keys) is fluss_server.is_1_0


async def test_server_drops_an_api_it_does_not_serve(
    fluss_cluster: dict[str, Any], fluss_server: FlussServer
) -> None:
    """Why the client must never send an unadvertised API: the server just drops it."""
    # 0.9.1 has no SCAN_KV; no server of either generation has API key 1099.
    unknown = 1099 if fluss_server.is_1_0 else int(ApiKey.SCAN_KV)
    host, port = endpoint(fluss_cluster, "tablet-server", 0).rsplit(":", 1)
    async with await Connection.open(host, int(port), request_timeout=1.0) as conn:
        with pytest.raises(RequestTimeoutError):
            await conn.request(unknown, 0, b"", timeout=0.8)
        # the connection stays open and usable
        body = await conn.request(int(ApiKey.LIST_DATABASES), 0, b"")
        assert "fluss" in pb.ListDatabasesResponse.FromString(body).database_name


@pytest.mark.slow
async def test_same_client_survives_a_tablet_server_restart(
    bootstrap: str, fluss_cluster: dict[str, Any]
) -> None:
    cluster: LocalCluster = fluss_cluster["cluster"]

    def ts2_alive() -> bool:
        return any(
            p["role"] == "tablet-server" and p["id"] == 2 and p["alive"]
            for p in cluster.describe().to_dict()["processes"]
        )

    request = pb.ListDatabasesRequest()
    async with await FlussClient.connect(bootstrap, **CONNECT) as client:
        await client.call(ApiKey.LIST_DATABASES, request, node=2)
        assert endpoint(fluss_cluster, "tablet-server", 2) in client.connected_servers
        try:
            await asyncio.to_thread(cluster.stop_server, "ts", 2)

            t0 = time.monotonic()
            with pytest.raises(ConnectionFailure):
                await client.call(ApiKey.LIST_DATABASES, request, node=2)
            assert time.monotonic() - t0 < 10

            # calls that may go anywhere keep working
            for _ in range(6):
                await client.call(ApiKey.LIST_DATABASES, request)

            deadline = time.monotonic() + 60
            while 2 in (await client.refresh_metadata()).tablet_servers:
                assert time.monotonic() < deadline, "server 2 still in metadata after 60s"
                await asyncio.sleep(0.5)
        finally:
            if not ts2_alive():
                await asyncio.to_thread(cluster.start_server, "ts", 2)

        # the same client object talks to the restarted server again
        deadline = time.monotonic() + 60
        while True:
            try:
                resp = await client.call(ApiKey.LIST_DATABASES, request, node=2)
                break
            except FlussError:
                assert time.monotonic() < deadline, "server 2 not reachable again after 60s"
                await asyncio.sleep(0.5)
        assert "fluss" in resp.database_name
        assert sorted((await client.refresh_metadata()).tablet_servers) == [0, 1, 2]
        assert all(not API_INFO[key].mutating for key in client.sent_api_keys)


# =========================================================================== SASL cluster


@pytest.fixture(scope="module")
def sasl_cluster(
    fluss_server: FlussServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """1 coordinator + 1 tablet server whose client listener requires SASL/PLAIN."""
    cluster = LocalCluster(tmp_path_factory.mktemp("fluss-sasl"))
    desc = cluster.start(
        **fluss_server.start_kwargs(),
        tablet_servers=1,
        sasl=[f"admin:{ADMIN_PASSWORD}"],
        ready_timeout=180,
    ).to_dict()
    try:
        yield desc
    finally:
        cluster.stop(graceful=False)


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


def assert_no_secret(caplog: pytest.LogCaptureFixture, *secrets: str) -> None:
    for record in caplog.records:
        text = record.getMessage() + (record.exc_text or "")
        for secret in secrets:
            assert secret not in text, record.name
    for secret in secrets:
        assert secret not in caplog.text


async def test_sasl_right_password(
    sasl_cluster: dict[str, Any], debug_logs: pytest.LogCaptureFixture
) -> None:
    creds = SaslPlain("admin", ADMIN_PASSWORD)
    async with await FlussClient.connect(
        sasl_cluster["bootstrap_servers"], sasl=creds, **CONNECT
    ) as client:
        assert client.metadata.coordinator is not None
        # addresses in metadata are those of the listener we came in on (the SASL one)
        assert client.metadata.coordinator.address == endpoint(sasl_cluster, "coordinator")
        assert sorted(client.metadata.tablet_servers) == [0]
        resp = await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest())
        assert "fluss" in resp.database_name
        await client.call(
            ApiKey.DESCRIBE_CLUSTER_CONFIGS, pb.DescribeClusterConfigsRequest(), coordinator=True
        )
        assert client.sent_api_keys[ApiKey.AUTHENTICATE] == len(client.connected_servers) == 2
        assert ADMIN_PASSWORD not in repr(client)
    assert_no_secret(debug_logs, ADMIN_PASSWORD)


async def test_sasl_wrong_password_fails_fast_and_cleanly(
    sasl_cluster: dict[str, Any], debug_logs: pytest.LogCaptureFixture
) -> None:
    t0 = time.monotonic()
    with pytest.raises(AuthenticationError) as info:
        await FlussClient.connect(
            sasl_cluster["bootstrap_servers"], sasl=SaslPlain("admin", WRONG_PASSWORD), **CONNECT
        )
    assert time.monotonic() - t0 < 2
    assert "Invalid username or password" in str(info.value)
    assert "admin" in str(info.value)
    text = all_text(info.value)
    assert WRONG_PASSWORD not in text and ADMIN_PASSWORD not in text
    assert_no_secret(debug_logs, WRONG_PASSWORD, ADMIN_PASSWORD)


async def test_plaintext_client_on_the_sasl_port_fails_cleanly(
    sasl_cluster: dict[str, Any],
) -> None:
    t0 = time.monotonic()
    with pytest.raises(AuthenticationError, match="requires SASL authentication"):
        await FlussClient.connect(sasl_cluster["bootstrap_servers"], **CONNECT)
    assert time.monotonic() - t0 < 5


async def test_sasl_client_on_the_plaintext_port_fails_cleanly(
    sasl_cluster: dict[str, Any], debug_logs: pytest.LogCaptureFixture
) -> None:
    t0 = time.monotonic()
    with pytest.raises(AuthenticationError, match="protocol not match") as info:
        await FlussClient.connect(
            sasl_cluster["internal_bootstrap_servers"],
            sasl=SaslPlain("admin", ADMIN_PASSWORD),
            **CONNECT,
        )
    assert time.monotonic() - t0 < 5
    assert ADMIN_PASSWORD not in all_text(info.value)
    assert_no_secret(debug_logs, ADMIN_PASSWORD)
