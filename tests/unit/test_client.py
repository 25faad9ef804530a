"""FlussClient, SASL/PLAIN and message-table tests against scripted fake Fluss servers.

Every fake is an ``asyncio.start_server`` on 127.0.0.1:0 speaking real Fluss frames with our
protobuf messages. Like a real server, a fake drops (never answers) a request for an API it
does not advertise. Coordinator HA (a standby answering NOT_COORDINATOR_LEADER, 65) exists
only in Fluss 1.0, which is not available as a server, so those paths are tested here only.
"""

from __future__ import annotations

import asyncio
import pickle
import time
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest

from fluss_proto import messages
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey
from fluss_proto.client import (
    CLIENT_SOFTWARE_NAME,
    CLIENT_SOFTWARE_VERSION,
    COORDINATOR,
    CoordinatorRedirect,
    Features,
    FlussClient,
    ServerApiVersions,
    TablePath,
    UnknownNodeError,
    parse_bootstrap,
)
from fluss_proto.client.retry import ELECTION_RETRIES
from fluss_proto.error_codes import (
    NotCoordinatorLeaderError,
    NotLeaderOrFollowerError,
    ServerTimeoutError,
    TableNotExistError,
)
from fluss_proto.errors import (
    AuthenticationError,
    ConnectionClosedError,
    DecodeError,
    ReadOnlyViolation,
    UnreachableError,
    UnsupportedByServer,
)
from fluss_proto.sasl import SaslPlain
from tests._testutil.fakes import (
    CLOSE,
    DROP,
    Err,
    FakeCluster,
    FakeServer,
    Frame,
    all_text,
    connect,
    default_apis,
)
from tests._testutil.unstarved import Stopwatch

pytestmark = pytest.mark.timeout(20)

SECRET = "pw-Zq8-very-secret"


# =========================================================================== messages


def test_message_table_covers_the_proto():
    covered = {
        ApiKey.API_VERSIONS,
        ApiKey.AUTHENTICATE,
        ApiKey.GET_METADATA,
        ApiKey.LIST_DATABASES,
        ApiKey.GET_DATABASE_INFO,
        ApiKey.DATABASE_EXISTS,
        ApiKey.LIST_TABLES,
        ApiKey.GET_TABLE_INFO,
        ApiKey.GET_TABLE_SCHEMA,
        ApiKey.TABLE_EXISTS,
        ApiKey.LIST_PARTITION_INFOS,
        ApiKey.LIST_OFFSETS,
        ApiKey.GET_LATEST_KV_SNAPSHOTS,
        ApiKey.GET_LAKE_SNAPSHOT,
        ApiKey.DESCRIBE_CLUSTER_CONFIGS,
        ApiKey.LIST_ACLS,
        ApiKey.LIST_REBALANCE_PROGRESS,
        ApiKey.LIMIT_SCAN,
        ApiKey.FETCH_LOG,
        ApiKey.GET_TABLE_STATS,
        ApiKey.SCAN_KV,
        ApiKey.GET_CLUSTER_HEALTH,
    }
    assert covered <= set(messages.MESSAGES)
    assert messages.MESSAGES[ApiKey.GET_METADATA] == (pb.MetadataRequest, pb.MetadataResponse)
    # Every request/response message of the .proto is reachable through the table.
    mapped = {cls for pair in messages.MESSAGES.values() for cls in pair}
    for name in dir(pb):
        if name.endswith(("Request", "Response")) and name != "ErrorResponse":
            assert getattr(pb, name) in mapped, name
    for key, (req, resp) in messages.MESSAGES.items():
        assert req.DESCRIPTOR.name.endswith("Request"), key
        assert resp.DESCRIPTOR.name.endswith("Response"), key


def test_messages_encode_and_decode():
    body = messages.encode_request(ApiKey.LIST_TABLES, pb.ListTablesRequest(database_name="db"))
    assert messages.decode_request(ApiKey.LIST_TABLES, body).database_name == "db"
    resp = pb.ListTablesResponse(table_name=["a", "b"])
    out = messages.decode_response(1008, messages.encode_response(ApiKey.LIST_TABLES, resp))
    assert isinstance(out, pb.ListTablesResponse)
    assert list(out.table_name) == ["a", "b"]

    with pytest.raises(TypeError, match="ListTablesRequest"):
        messages.encode_request(ApiKey.LIST_TABLES, pb.ListDatabasesRequest())
    with pytest.raises(ValueError, match="database_name"):
        messages.encode_request(ApiKey.LIST_TABLES, pb.ListTablesRequest())
    with pytest.raises(messages.NoMessagesForApi, match="CREATE_DATABASE"):
        messages.messages_for(ApiKey.CREATE_DATABASE)
    with pytest.raises(messages.NoMessagesForApi):
        messages.messages_for(4242)


def test_decode_garbage_and_missing_required_fields_raise_decode_error():
    with pytest.raises(DecodeError, match="GET_METADATA response: MetadataResponse"):
        messages.decode_response(ApiKey.GET_METADATA, b"\xff\xff\xff\xff")
    # tablet server node without host/port: the required fields are named
    partial = pb.MetadataResponse()
    partial.tablet_servers.add(node_id=1)
    with pytest.raises(DecodeError, match=r"MetadataResponse lacks required fields: .*host"):
        messages.decode_response(ApiKey.GET_METADATA, partial.SerializePartialToString())
    with pytest.raises(DecodeError, match="DatabaseExistsResponse"):
        messages.decode_response(ApiKey.DATABASE_EXISTS, b"")


# =========================================================================== SaslPlain


def test_sasl_plain_never_shows_the_password():
    creds = SaslPlain("alice", SECRET)
    assert creds.username == "alice"
    for text in (repr(creds), str(creds), f"{creds}", f"{creds!r}", repr([creds])):
        assert SECRET not in text
        assert "alice" in text
    assert not hasattr(creds, "__dict__")
    assert creds.initial_response() == b"\0alice\0" + SECRET.encode()
    assert creds == SaslPlain("alice", SECRET)
    assert creds != SaslPlain("alice", "other")
    with pytest.raises(TypeError):
        pickle.dumps(creds)
    with pytest.raises(ValueError) as info:
        SaslPlain("alice", "bad\0" + SECRET)
    assert SECRET not in all_text(info.value)
    with pytest.raises(ValueError):
        SaslPlain("", SECRET)


# =========================================================================== bootstrap


def test_parse_bootstrap():
    assert parse_bootstrap("h1:1, h2:2,,h1:1") == ["h1:1", "h2:2"]
    assert parse_bootstrap(["a:1", "b:2,c:3"]) == ["a:1", "b:2", "c:3"]
    assert parse_bootstrap("localhost") == ["localhost:9123"]
    assert parse_bootstrap("[::1]:5,[::2]") == ["[::1]:5", "[::2]:9123"]
    for bad in ("", " , ", "h:x", "h:0", ":5", "[::1"):
        with pytest.raises(ValueError):
            parse_bootstrap(bad)


async def test_connect_records_api_versions_and_metadata():
    async with FakeCluster(tablets=2) as fc, await connect(fc.tablets[1].address) as client:
        md = client.metadata
        assert md.coordinator is not None
        assert md.coordinator.address == fc.coordinator.address
        assert md.coordinator.node_id == 0
        assert {i: n.address for i, n in md.tablet_servers.items()} == {
            0: fc.tablets[0].address,
            1: fc.tablets[1].address,
        }
        assert md.tablet_servers[1].rack == "r1"
        assert md.source == fc.tablets[1].address
        # bootstrap + warm-up coordinator: both server types recorded
        infos = client.api_versions
        assert infos[fc.tablets[1].address].server_type == 2
        assert infos[fc.coordinator.address].server_type == 1
        assert infos[fc.coordinator.address].versions[ApiKey.LIST_ACLS] == (0, 0)
        assert client.api_versions_of(coordinator=True) is infos[fc.coordinator.address]
        assert client.api_versions_of(1) is infos[fc.tablets[1].address]
        # each connection starts with ApiVersions v0 carrying our software name
        for server in (fc.tablets[1], fc.coordinator):
            first = server.frames[0]
            assert (first.api_key, first.version) == (ApiKey.API_VERSIONS, 0)
            req = pb.ApiVersionsRequest.FromString(first.body)
            assert req.client_software_name == CLIENT_SOFTWARE_NAME == "fluss_proto"
            assert req.client_software_version == CLIENT_SOFTWARE_VERSION
        assert client.supports(ApiKey.GET_TABLE_STATS)
        assert client.supports(ApiKey.GET_TABLE_STATS, 1)
        assert not client.supports(ApiKey.GET_TABLE_STATS, coordinator=True)
        assert not client.supports(ApiKey.GET_TABLE_STATS, 0)  # not met yet
        assert not client.supports(ApiKey.SCAN_KV)
        features = client.features
        assert features.table_stats and features.rebalance_progress
        assert not features.scan_kv and not features.cluster_health
        assert features.server_generation == "0.9"
        assert not features.put_kv_backpressure


async def test_features_of_a_1_0_cluster():
    async with (
        FakeCluster(tablets=1, fluss_1_0=True) as fc,
        await connect(fc.coordinator.address) as client,
    ):
        features = client.features
        assert features.scan_kv and features.cluster_health and features.put_kv_backpressure
        assert features.server_generation == "1.0"
        assert features.as_dict()["scan_kv"] is True
    assert Features.from_api_versions([]).server_generation is None


async def test_bootstrap_tries_each_address_and_names_all_when_none_answers():
    async with FakeCluster(tablets=1) as fc:
        dead = FakeServer(2)
        await dead.start()
        dead_address = dead.address
        await dead.stop()
        async with await connect([dead_address, fc.tablets[0].address]) as client:
            assert client.metadata.source == fc.tablets[0].address
    watch = Stopwatch()  # less the CPU waits of a run at nice 19 beside the live tests
    with pytest.raises(UnreachableError) as info:
        await connect(f"{dead_address},127.0.0.1:1")
    assert dead_address in str(info.value) and "127.0.0.1:1" in str(info.value)
    assert watch.elapsed() < 5


async def test_bootstrap_server_that_never_answers_is_bounded():
    # Advertises GET_METADATA but drops it: the bootstrap attempt times out, then fails over.
    silent = FakeServer(2, handlers={ApiKey.GET_METADATA: lambda s, f: DROP})
    async with FakeCluster(tablets=1) as fc:
        await silent.start()
        try:
            watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
            client = await connect([silent.address, fc.tablets[0].address], request_timeout=0.3)
            async with client:
                assert client.metadata.source == fc.tablets[0].address
            assert watch.elapsed() < 3
        finally:
            await silent.stop()


# =========================================================================== version checks


def test_version_negotiation():
    info = ServerApiVersions(
        "x:1",
        2,
        MappingProxyType(
            {
                int(ApiKey.LOOKUP): (0, 5),
                int(ApiKey.PUT_KV): (0, 1),
                int(ApiKey.FETCH_LOG): (3, 4),
                int(ApiKey.LIST_OFFSETS): (0, 0),
                7777: (0, 9),
            }
        ),
        0.0,
    )
    assert info.negotiate(ApiKey.LOOKUP) == 1  # our max
    assert info.negotiate(ApiKey.PUT_KV) == 1  # the server's max
    assert info.negotiate(ApiKey.FETCH_LOG) is None  # ranges do not overlap
    assert info.negotiate(ApiKey.LIST_OFFSETS) == 0
    assert info.negotiate(ApiKey.SCAN_KV) is None  # not advertised
    assert info.role == "tablet-server"
    assert not info.fluss_1_0


async def test_unsupported_api_raises_at_once_and_sends_nothing():
    apis = default_apis(2)
    del apis[int(ApiKey.GET_TABLE_STATS)]
    apis[int(ApiKey.LIST_TABLES)] = (2, 3)  # only versions we do not speak
    async with FakeCluster(tablets=1, tablet_apis=apis) as fc:
        ts = fc.tablets[0]
        async with await connect(ts.address) as client:
            before = (len(ts.frames), ts.bytes_received)
            with pytest.raises(UnsupportedByServer) as info:
                await client.call(
                    ApiKey.GET_TABLE_STATS, pb.GetTableStatsRequest(table_id=1), node=0
                )
            assert "GET_TABLE_STATS" in str(info.value) and ts.address in str(info.value)
            with pytest.raises(UnsupportedByServer, match=r"versions 2\.\.3"):
                await client.call(
                    ApiKey.LIST_TABLES, pb.ListTablesRequest(database_name="d"), node=0
                )
            with pytest.raises(UnsupportedByServer):  # 1.0-only API against a 0.9 server
                await client.call(ApiKey.SCAN_KV, pb.ScanKvRequest(), node=0)
            assert (len(ts.frames), ts.bytes_received) == before  # refused before sending
            assert ApiKey.GET_TABLE_STATS not in client.sent_api_keys
            # the connection is still fine
            await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0)


# =========================================================================== read-only gate

MUTATING = [key for key, spec in API_INFO.items() if spec.mutating or spec.private]
PRIVATE = [key for key, spec in API_INFO.items() if spec.private]


def test_mutating_table_is_sane():
    assert ApiKey.CREATE_TABLE in MUTATING and ApiKey.PRODUCE_LOG in MUTATING
    assert ApiKey.LIST_DATABASES not in MUTATING and ApiKey.FETCH_LOG not in MUTATING
    assert len(MUTATING) > 30


@pytest.mark.parametrize("key", MUTATING, ids=lambda k: k.name)
async def test_read_only_gate_refuses_every_mutating_api(key):
    client = FlussClient("127.0.0.1:1")  # never connected: the gate needs no I/O
    with pytest.raises(ReadOnlyViolation, match=key.name):
        await client.call(key, object())
    with pytest.raises(ReadOnlyViolation, match=key.name):
        await client.call_many([(None, key, object())])
    assert not client.sent_api_keys
    assert not client.connected_servers


@pytest.mark.parametrize("key", PRIVATE, ids=lambda k: k.name)
async def test_private_apis_are_refused_even_with_writes_allowed(key):
    client = FlussClient("127.0.0.1:1", allow_writes=True)
    with pytest.raises(ReadOnlyViolation, match="server-to-server"):
        await client.call(key, object())


async def test_read_only_gate_on_a_connected_client_sends_nothing():
    async with FakeCluster(tablets=1) as fc, await connect(fc.tablets[0].address) as client:
        before = [(len(s.frames), s.bytes_received) for s in fc.servers]
        for key in MUTATING:
            with pytest.raises(ReadOnlyViolation):
                await client.call(key, object(), coordinator=True)
            with pytest.raises(ReadOnlyViolation):
                await client.call(key, object(), node=0)
        # LOOKUP is a read unless it asks the server to insert missing keys
        with pytest.raises(ReadOnlyViolation, match="insert_if_not_exists"):
            await client.call(ApiKey.LOOKUP, SimpleNamespace(insert_if_not_exists=True), node=0)
        # a batch with one write in it is refused as a whole, before anything is sent
        with pytest.raises(ReadOnlyViolation):
            await client.call_many(
                [
                    (0, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                    (COORDINATOR, ApiKey.DROP_TABLE, object()),
                ]
            )
        assert [(len(s.frames), s.bytes_received) for s in fc.servers] == before
        assert all(not API_INFO[k].mutating for k in client.sent_api_keys)


async def test_allow_writes_lets_a_write_through(monkeypatch):
    # No write API has messages in the .proto yet: borrow a pair for CREATE_DATABASE.
    table = dict(messages.MESSAGES)
    table[ApiKey.CREATE_DATABASE] = messages.ApiMessages(
        pb.ListDatabasesRequest, pb.ListDatabasesResponse
    )
    monkeypatch.setattr(messages, "MESSAGES", MappingProxyType(table))

    def create(_s: FakeServer, _f: Frame) -> Any:
        return pb.ListDatabasesResponse(database_name=["created"])

    async with FakeCluster(tablets=1) as fc:
        fc.coordinator.handlers[ApiKey.CREATE_DATABASE] = create
        async with await connect(fc.tablets[0].address) as reader:
            with pytest.raises(ReadOnlyViolation):
                await reader.call(ApiKey.CREATE_DATABASE, pb.ListDatabasesRequest())
        async with await connect(fc.tablets[0].address, allow_writes=True) as writer:
            # coordinator-only API with no routing given: goes to the coordinator
            resp = await writer.call(ApiKey.CREATE_DATABASE, pb.ListDatabasesRequest())
            assert list(resp.database_name) == ["created"]
            assert fc.coordinator.count(ApiKey.CREATE_DATABASE) == 1

            # a write is never retried
            fc.coordinator.handlers[ApiKey.CREATE_DATABASE] = lambda s, f: Err(25, "slow")
            with pytest.raises(ServerTimeoutError):
                await writer.call(ApiKey.CREATE_DATABASE, pb.ListDatabasesRequest())
            assert fc.coordinator.count(ApiKey.CREATE_DATABASE) == 2


async def test_request_checks():
    async with FakeCluster(tablets=1) as fc, await connect(fc.tablets[0].address) as client:
        with pytest.raises(TypeError, match="ListTablesRequest"):
            await client.call(ApiKey.LIST_TABLES, pb.ListDatabasesRequest())
        with pytest.raises(ValueError, match="database_name"):
            await client.call(ApiKey.LIST_TABLES, pb.ListTablesRequest())
        with pytest.raises(ValueError, match="handshake"):
            await client.call(ApiKey.AUTHENTICATE, pb.AuthenticateRequest())
        with pytest.raises(ValueError, match="either"):
            await client.call(
                ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0, coordinator=True
            )
        with pytest.raises(ValueError, match="unknown API key"):
            await client.call(4242, pb.ListDatabasesRequest())


# =========================================================================== routing


async def test_any_server_prefers_tablet_servers_and_coordinator_only_goes_to_coordinator():
    def progress(_s: FakeServer, _f: Frame) -> Any:
        return pb.ListRebalanceProgressResponse(rebalance_id="r1")

    async with FakeCluster(tablets=2) as fc:
        fc.coordinator.handlers[ApiKey.LIST_REBALANCE_PROGRESS] = progress
        async with await connect(fc.coordinator.address) as client:
            for _ in range(5):
                await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest())
            assert fc.coordinator.count(ApiKey.LIST_DATABASES) == 0
            assert sum(ts.count(ApiKey.LIST_DATABASES) for ts in fc.tablets) == 5
            resp = await client.call(
                ApiKey.LIST_REBALANCE_PROGRESS, pb.ListRebalanceProgressRequest()
            )
            assert resp.rebalance_id == "r1"
            assert fc.coordinator.count(ApiKey.LIST_REBALANCE_PROGRESS) == 1


async def test_call_many_pipelines_and_isolates_failures():
    arrived: list[Frame] = []
    both = asyncio.Event()

    async def slow(_s: FakeServer, f: Frame) -> Any:
        # pipelined: node 0's second request arrives while its first is still unanswered
        arrived.append(f)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 10)
        return pb.ListDatabasesResponse(database_name=["slow"])

    async with FakeCluster(tablets=3) as fc:
        fc.tablets[0].handlers[ApiKey.LIST_DATABASES] = slow
        fc.tablets[2].handlers[ApiKey.LIST_DATABASES] = lambda s, f: Err(7, "no such table")
        async with await connect(fc.tablets[1].address) as client:
            results = await client.call_many(
                [
                    (0, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                    (1, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                    (2, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                    (9, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                    (
                        COORDINATOR,
                        ApiKey.DESCRIBE_CLUSTER_CONFIGS,
                        pb.DescribeClusterConfigsRequest(),
                    ),
                    (0, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                ]
            )
        assert [type(r).__name__ for r in results] == [
            "ListDatabasesResponse",
            "ListDatabasesResponse",
            "TableNotExistError",
            "UnknownNodeError",
            "UnknownServerError",  # the fake coordinator has no handler for it
            "ListDatabasesResponse",
        ]
        assert list(results[0].database_name) == ["slow"]
        assert list(results[1].database_name) == ["fluss"]
        assert len(arrived) == 2 and fc.tablets[0].connections == 1  # one connection, both


async def test_unknown_node():
    async with (
        FakeCluster(tablets=1) as fc,
        await connect(fc.tablets[0].address, retries=0) as client,
    ):
        with pytest.raises(UnknownNodeError, match="tablet server 5"):
            await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=5)


async def test_refresh_metadata_with_tables():
    async with FakeCluster(tablets=2) as fc, await connect(fc.tablets[0].address) as client:
        md = await client.refresh_metadata(["db.t1", ("db", "t2")])
        t1 = md.tables[TablePath("db", "t1")]
        assert t1.table_id == 100 and md.tables[TablePath("db", "t2")].table_id == 101
        assert md.table_by_id(101) is md.tables[TablePath("db", "t2")]
        b0, b1 = t1.buckets
        assert (b0.bucket_id, b0.leader_id, b0.replica_ids, b0.leader_epoch) == (0, 1, (1, 0), 3)
        assert (b1.leader_id, b1.leader_epoch) == (None, None)
        # a servers-only refresh keeps the cached tables
        md = await client.refresh_metadata()
        assert TablePath("db", "t1") in md.tables
        fc.tablets[0].handlers[ApiKey.GET_METADATA] = lambda s, f: Err(
            7, "Table db.x does not exist"
        )
        fc.tablets[1].handlers[ApiKey.GET_METADATA] = lambda s, f: Err(
            7, "Table db.x does not exist"
        )
        fc.coordinator.handlers[ApiKey.GET_METADATA] = lambda s, f: Err(
            7, "Table db.x does not exist"
        )
        with pytest.raises(TableNotExistError):
            await client.refresh_metadata(["db.x"])
        with pytest.raises(ValueError):
            await client.refresh_metadata(["nodot"])


# =========================================================================== coordinator HA


async def test_standby_coordinator_redirect_is_followed_and_recorded():
    def configs(_s: FakeServer, _f: Frame) -> Any:
        resp = pb.DescribeClusterConfigsResponse()
        resp.configs.add(config_key="k", config_value="v", config_source="INITIAL_SERVER_CONFIG")
        return resp

    async with FakeCluster(tablets=2) as fc:
        standby = fc.coordinator
        standby.standby = True  # answers 65 to everything but ApiVersions
        active = fc.add(FakeServer(1, handlers={ApiKey.DESCRIBE_CLUSTER_CONFIGS: configs}))
        await active.start()
        async with await connect(fc.tablets[0].address) as client:
            assert client.coordinator is not None
            assert client.coordinator.address == standby.address
            # the tablet servers learn about the new leader; the client cache is stale
            fc.active = active
            resp = await client.call(
                ApiKey.DESCRIBE_CLUSTER_CONFIGS,
                pb.DescribeClusterConfigsRequest(),
                coordinator=True,
            )
            assert resp.configs[0].config_key == "k"
            assert client.coordinator.address == active.address
            assert standby.count(ApiKey.DESCRIBE_CLUSTER_CONFIGS) == 1
            assert active.count(ApiKey.DESCRIBE_CLUSTER_CONFIGS) == 1
            assert standby.count(ApiKey.GET_METADATA) == 0  # asked a tablet server instead
            [event] = client.events
            assert isinstance(event, CoordinatorRedirect)
            assert (event.old_address, event.new_address) == (standby.address, active.address)
            assert event.api == "DESCRIBE_CLUSTER_CONFIGS"
            assert event.reason == "NOT_COORDINATOR_LEADER_EXCEPTION"
            assert abs(event.at - time.time()) < 5
            # later calls go straight to the active coordinator
            await client.call(
                ApiKey.DESCRIBE_CLUSTER_CONFIGS,
                pb.DescribeClusterConfigsRequest(),
                coordinator=True,
            )
            assert standby.count(ApiKey.DESCRIBE_CLUSTER_CONFIGS) == 1
            assert len(client.events) == 1


async def test_coordinator_gone_then_metadata_names_another_is_recorded():
    def configs(_s: FakeServer, _f: Frame) -> Any:
        return pb.DescribeClusterConfigsResponse()

    async with FakeCluster(tablets=1) as fc:
        old = fc.coordinator
        old.handlers[ApiKey.DESCRIBE_CLUSTER_CONFIGS] = configs
        new = fc.add(FakeServer(1, handlers={ApiKey.DESCRIBE_CLUSTER_CONFIGS: configs}))
        await new.start()
        async with await connect(fc.tablets[0].address) as client:
            await client.call(
                ApiKey.DESCRIBE_CLUSTER_CONFIGS,
                pb.DescribeClusterConfigsRequest(),
                coordinator=True,
            )
            await old.stop()  # the old leader dies; the tablet servers learn the new one
            fc.active = new
            await client.call(
                ApiKey.DESCRIBE_CLUSTER_CONFIGS,
                pb.DescribeClusterConfigsRequest(),
                coordinator=True,
            )
            assert new.count(ApiKey.DESCRIBE_CLUSTER_CONFIGS) == 1
            [event] = client.events
            assert (event.old_address, event.new_address) == (old.address, new.address)
            assert event.reason in ("ConnectionClosedError", "UnreachableError")


async def test_server_type_mismatch_is_treated_as_stale_metadata():
    async with FakeCluster(tablets=2) as fc:
        fc.tablets[1].server_type = 1  # metadata calls it a tablet server; it says otherwise
        async with await connect(fc.tablets[0].address, retries=1) as client:
            with pytest.raises(ConnectionClosedError, match="stale metadata"):
                await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=1)
            assert fc.tablets[1].count(ApiKey.LIST_DATABASES) == 0


async def test_standby_coordinator_without_a_known_leader_raises_65_after_bounded_retries():
    async with FakeCluster(tablets=1) as fc:
        fc.coordinator.standby = True
        async with await connect(fc.tablets[0].address) as client:
            with pytest.raises(NotCoordinatorLeaderError):
                await client.call(
                    ApiKey.DESCRIBE_CLUSTER_CONFIGS,
                    pb.DescribeClusterConfigsRequest(),
                    coordinator=True,
                )
            # 65 is not retriable; metadata names no other coordinator, so the one that
            # said 65 is asked again a bounded number of times (an election may be ending)
            assert fc.coordinator.count(ApiKey.DESCRIBE_CLUSTER_CONFIGS) == 1 + ELECTION_RETRIES
            assert not client.events


async def test_bootstrap_through_a_standby_coordinator_moves_on():
    async with FakeCluster(tablets=1) as fc:
        fc.coordinator.standby = True
        async with await connect([fc.coordinator.address, fc.tablets[0].address]) as client:
            assert client.metadata.source == fc.tablets[0].address
        with pytest.raises(UnreachableError, match="NOT_COORDINATOR_LEADER"):
            await connect(fc.coordinator.address)


# =========================================================================== retries


async def test_retries_are_bounded_and_only_for_retriable_errors():
    async with FakeCluster(tablets=1) as fc:
        ts = fc.tablets[0]
        ts.handlers[ApiKey.LIST_DATABASES] = lambda s, f: Err(25, "server busy")
        async with await connect(ts.address, retries=3) as client:
            with pytest.raises(ServerTimeoutError):
                await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0)
            assert ts.count(ApiKey.LIST_DATABASES) == 4
        async with await connect(ts.address, retries=0) as client:
            with pytest.raises(ServerTimeoutError):
                await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0)
            assert ts.count(ApiKey.LIST_DATABASES) == 5
        ts.handlers[ApiKey.LIST_DATABASES] = lambda s, f: Err(7, "nope")
        async with await connect(ts.address, retries=3) as client:
            with pytest.raises(TableNotExistError):
                await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0)
            assert ts.count(ApiKey.LIST_DATABASES) == 6


async def test_retry_refreshes_metadata_when_the_error_says_so():
    answers = iter([Err(12, "not the leader"), pb.ListDatabasesResponse(database_name=["ok"])])
    async with FakeCluster(tablets=1) as fc:
        ts = fc.tablets[0]
        ts.handlers[ApiKey.LIST_DATABASES] = lambda s, f: next(answers)
        async with await connect(ts.address) as client:
            ts.frames.clear()
            resp = await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0)
            assert list(resp.database_name) == ["ok"]
            seen = [k for k in ts.apis_seen() + fc.coordinator.apis_seen()]
            assert seen.count(ApiKey.LIST_DATABASES) == 2
            assert seen.count(ApiKey.GET_METADATA) == 1
            # the error class is what decides
            assert NotLeaderOrFollowerError.refresh_metadata


async def test_request_timeout_is_retried_then_raised():
    async with FakeCluster(tablets=1) as fc:
        ts = fc.tablets[0]
        ts.handlers[ApiKey.LIST_DATABASES] = lambda s, f: DROP
        async with await connect(ts.address, retries=1) as client:
            watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
            with pytest.raises(Exception) as info:
                await client.call(
                    ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0, timeout=0.2
                )
            assert type(info.value).__name__ == "RequestTimeoutError"
            assert ts.count(ApiKey.LIST_DATABASES) == 2
            assert watch.elapsed() < 2


# =========================================================================== reconnect


async def test_server_closing_the_connection_then_next_call_reconnects():
    calls = 0

    def answer_then_close(_s: FakeServer, _f: Frame) -> Any:
        nonlocal calls
        calls += 1
        return [pb.ListDatabasesResponse(database_name=[f"n{calls}"]), CLOSE]

    async with FakeCluster(tablets=1) as fc:
        ts = fc.tablets[0]
        ts.handlers[ApiKey.LIST_DATABASES] = answer_then_close
        async with await connect(ts.address, retries=0) as client:
            assert ts.connections == 1
            first = await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0)
            assert list(first.database_name) == ["n1"]
            for _ in range(100):  # let the client notice the EOF
                if ts.address not in client.connected_servers:
                    break
                await asyncio.sleep(0.01)
            second = await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0)
            assert list(second.database_name) == ["n2"]
            assert ts.connections == 2
            # every new connection starts with its own ApiVersions
            assert ts.count(ApiKey.API_VERSIONS) == 2


async def test_connection_lost_mid_request_is_retried_on_a_new_connection():
    replies = iter([CLOSE, pb.ListDatabasesResponse(database_name=["again"])])
    async with FakeCluster(tablets=1) as fc:
        ts = fc.tablets[0]
        ts.handlers[ApiKey.LIST_DATABASES] = lambda s, f: next(replies)
        async with await connect(ts.address, retries=1) as client:
            resp = await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=0)
            assert list(resp.database_name) == ["again"]
            assert ts.connections == 2


async def test_server_restart_is_survived_by_the_same_client():
    async with FakeCluster(tablets=2) as fc:
        ts1 = fc.tablets[1]
        async with await connect(fc.tablets[0].address, retries=1) as client:
            await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=1)
            await ts1.stop()
            fc.alive.discard(1)
            with pytest.raises((UnreachableError, ConnectionClosedError)):
                await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=1)
            # "any server" calls keep working
            await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest())
            await ts1.start()  # same port
            fc.alive.add(1)
            await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=1)
            assert ts1.connections == 2


async def test_close_and_context_manager():
    async with FakeCluster(tablets=1) as fc:
        client = await connect(fc.tablets[0].address)
        async with client:
            assert client.connected_servers
        assert client.closed and not client.connected_servers
        with pytest.raises(ConnectionClosedError):
            await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest())
        await client.close()  # idempotent


# =========================================================================== SASL


def auth_frames(server: FakeServer) -> list[pb.AuthenticateRequest]:
    return [
        pb.AuthenticateRequest.FromString(f.body)
        for f in server.frames
        if f.api_key == ApiKey.AUTHENTICATE
    ]


async def test_sasl_plain_success(caplog):
    users = {"alice": SECRET}
    async with FakeCluster(tablets=1, sasl=users) as fc:
        creds = SaslPlain("alice", SECRET)
        async with await connect(fc.tablets[0].address, sasl=creds) as client:
            resp = await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest())
            assert list(resp.database_name) == ["fluss"]
            assert SECRET not in repr(client)
        for server in (fc.tablets[0], fc.coordinator):
            keys = server.apis_seen()
            assert keys[:2] == [ApiKey.API_VERSIONS, ApiKey.AUTHENTICATE]
            [auth] = auth_frames(server)
            assert auth.protocol == "PLAIN"
            assert auth.token == b"\0alice\0" + SECRET.encode()
    assert SECRET not in caplog.text
    assert all(SECRET not in r.getMessage() for r in caplog.records)


async def test_sasl_plain_wrong_password_fails_fast_without_leaking(caplog):
    wrong = "wrong-" + SECRET
    async with FakeCluster(tablets=1, sasl={"alice": SECRET}) as fc:
        with pytest.raises(AuthenticationError) as info:
            await connect(
                [fc.tablets[0].address, fc.coordinator.address], sasl=SaslPlain("alice", wrong)
            )
        assert fc.tablets[0].connections == 1  # refused once, not retried
        text = all_text(info.value)
        assert "Invalid username or password" in str(info.value)
        assert "alice" in str(info.value)
        assert wrong not in text and SECRET not in text
        # the first refusal stops the bootstrap: the coordinator was never tried
        assert fc.coordinator.connections == 0
        assert fc.tablets[0].count(ApiKey.GET_METADATA) == 0
    assert wrong not in caplog.text and SECRET not in caplog.text


async def test_plaintext_client_against_a_sasl_server_gets_a_typed_error():
    async with FakeCluster(tablets=1, sasl={"alice": SECRET}) as fc:
        with pytest.raises(AuthenticationError, match="requires SASL authentication"):
            await connect(fc.tablets[0].address)
        assert fc.tablets[0].connections == 1  # refused once, not retried


async def test_sasl_client_against_a_plaintext_server_gets_a_typed_error():
    async with FakeCluster(tablets=1) as fc:
        with pytest.raises(AuthenticationError, match="protocol not match") as info:
            await connect(fc.tablets[0].address, sasl=SaslPlain("alice", SECRET))
        assert SECRET not in all_text(info.value)


async def test_sasl_retriable_authentication_error_restarts_the_handshake():
    answers = iter([Err(51, "try again"), pb.AuthenticateResponse(challenge=b"")])

    def auth(server: FakeServer, _f: Frame) -> Any:
        return next(answers)

    async with FakeCluster(tablets=1) as fc:
        fc.tablets[0].handlers[ApiKey.AUTHENTICATE] = auth
        fc.coordinator.handlers[ApiKey.AUTHENTICATE] = lambda s, f: pb.AuthenticateResponse()
        async with await connect(fc.tablets[0].address, sasl=SaslPlain("a", SECRET)) as client:
            assert fc.tablets[0].count(ApiKey.AUTHENTICATE) == 2
            # an absent challenge is accepted as "done" too
            assert fc.coordinator.address in client.connected_servers


async def test_sasl_failure_on_a_later_connection_is_typed():
    async with (
        FakeCluster(tablets=2, sasl={"alice": SECRET}) as fc,
        await connect(fc.tablets[0].address, sasl=SaslPlain("alice", SECRET)) as client,
    ):
        fc.tablets[1].sasl = {"alice": "rotated"}
        with pytest.raises(AuthenticationError) as info:
            await client.call(ApiKey.LIST_DATABASES, pb.ListDatabasesRequest(), node=1)
        assert SECRET not in all_text(info.value)
        assert fc.tablets[1].count(ApiKey.AUTHENTICATE) == 1  # not retried


def test_sent_api_keys_are_recorded_for_unit_visibility():
    client = FlussClient("h:1")
    assert client.sent_api_keys == {}
    assert client.events.maxlen is not None


# =========================================================================== call_many retries


async def test_call_many_retries_like_call_bounded_and_only_when_retriable():
    """call_many makes one batched attempt, then each failure worth it goes through the
    same retries as call: the total number of attempts is the same."""
    async with FakeCluster(tablets=1) as fc:
        ts = fc.tablets[0]
        ts.handlers[ApiKey.LIST_DATABASES] = lambda s, f: Err(25, "server busy")
        ts.handlers[ApiKey.LIST_TABLES] = lambda s, f: Err(7, "nope")
        async with await connect(ts.address, retries=3) as client:
            busy, missing = await client.call_many(
                [
                    (0, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                    (0, ApiKey.LIST_TABLES, pb.ListTablesRequest(database_name="x")),
                ]
            )
            assert isinstance(busy, ServerTimeoutError)
            assert isinstance(missing, TableNotExistError)
            assert ts.count(ApiKey.LIST_DATABASES) == 4
            assert ts.count(ApiKey.LIST_TABLES) == 1


async def test_call_many_survives_a_connection_lost_mid_batch():
    replies = iter([CLOSE, pb.ListDatabasesResponse(database_name=["again"])])
    async with FakeCluster(tablets=1) as fc:
        ts = fc.tablets[0]
        ts.handlers[ApiKey.LIST_DATABASES] = lambda s, f: next(replies)
        async with await connect(ts.address, retries=1) as client:
            [resp] = await client.call_many([(0, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest())])
            assert list(resp.database_name) == ["again"]
            assert ts.connections == 2


async def test_call_many_follows_a_standby_coordinator():
    def configs(_s: FakeServer, _f: Frame) -> Any:
        resp = pb.DescribeClusterConfigsResponse()
        resp.configs.add(config_key="k", config_value="v", config_source="INITIAL_SERVER_CONFIG")
        return resp

    async with FakeCluster(tablets=2) as fc:
        standby = fc.coordinator
        standby.standby = True
        active = fc.add(FakeServer(1, handlers={ApiKey.DESCRIBE_CLUSTER_CONFIGS: configs}))
        await active.start()
        async with await connect(fc.tablets[0].address, retries=0) as client:
            fc.active = active
            [resp, dbs] = await client.call_many(
                [
                    (
                        COORDINATOR,
                        ApiKey.DESCRIBE_CLUSTER_CONFIGS,
                        pb.DescribeClusterConfigsRequest(),
                    ),
                    (0, ApiKey.LIST_DATABASES, pb.ListDatabasesRequest()),
                ]
            )
            assert resp.configs[0].config_key == "k"
            assert list(dbs.database_name) == ["fluss"]
            assert [e.new_address for e in client.events] == [active.address]
            assert client.coordinator is not None
            assert client.coordinator.address == active.address


def test_no_leader_minus_one_in_metadata_is_no_leader() -> None:
    """Fluss writes LeaderAndIsr.NO_LEADER (-1) as the leader of a bucket whose leader is
    gone (seen live: an RF-1 bucket while its tablet server was down); it is not a server."""
    from fluss_proto.client import parse_metadata

    resp = pb.MetadataResponse()
    table = resp.table_metadata.add(
        table_id=7, schema_id=1, table_json=b"{}", created_time=1, modified_time=2
    )
    table.table_path.CopyFrom(pb.PbTablePath(database_name="db", table_name="t"))
    table.bucket_metadata.add(bucket_id=0, leader_id=-1, replica_id=[2], leader_epoch=4)
    table.bucket_metadata.add(bucket_id=1, leader_id=0, replica_id=[0])
    table.bucket_metadata.add(bucket_id=2, replica_id=[1])
    part = resp.partition_metadata.add(table_id=7, partition_id=3, partition_name="p")
    part.bucket_metadata.add(bucket_id=0, leader_id=-1, replica_id=[2])
    reply = parse_metadata(resp)
    leaders = [b.leader_id for b in reply.tables[TablePath("db", "t")].buckets]
    assert leaders == [None, 0, None]
    assert [b.leader_id for b in reply.partitions[3].buckets] == [None]
