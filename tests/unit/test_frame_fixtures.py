"""Replay frames captured from a real Fluss 0.9.1 cluster (tests/fixtures/frames).

Three layers: the bytes themselves (headers, lengths, our .proto re-encodes the server's
bodies byte for byte), what the decoded replies say (checked against each other and against
pyfluss' own view recorded at capture time), and the same bytes served by a fake server to a
real ``Connection`` and a real ``FlussClient``.
"""

from __future__ import annotations

import asyncio
import random
import struct

import pytest

from fluss_proto import error_codes, frame, messages
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey, api_key_or_none
from fluss_proto.client import SERVER_TYPE_COORDINATOR, SERVER_TYPE_TABLET, FlussClient
from fluss_proto.connection import Connection
from fluss_proto.errors import RequestTimeoutError, UnsupportedByServer
from fluss_proto.types import parse_table_descriptor
from tests._testutil.frames import (
    FRAMES_DIR,
    Received,
    ReplayServer,
    Script,
    by_request,
    fixtures,
    index,
    metadata_pointing_to,
)

pytestmark = pytest.mark.timeout(30)

FIX = fixtures()
IDX = index()
LOG = "events_log"
PK = "orders_pk"
TABLES = IDX["tables"]


def decoded(name: str):
    fx = FIX[name]
    return messages.decode_response(fx.api, fx.response_body)


def test_the_expected_fixtures_are_there() -> None:
    assert {
        "api_versions_coordinator",
        "api_versions_tablet",
        "metadata_servers",
        "metadata_tables",
        "list_databases",
        "list_tables",
        "get_table_info",
        "get_table_info_missing",
        "list_offsets_leader",
        "get_latest_kv_snapshots",
        "describe_cluster_configs",
        "list_acls",
    } <= set(FIX)
    assert "scan_kv_unanswered" in IDX["notes"]
    assert all(f.info["server_version"].startswith("0.9.1") for f in FIX.values())


# =========================================================================== bytes


@pytest.mark.parametrize("name", sorted(FIX))
def test_request_frame_header(name: str) -> None:
    fx = FIX[name]
    length, api_key, version, request_id = struct.unpack_from(">ihhi", fx.request)
    assert length == len(fx.request) - 4
    assert (api_key, version, request_id) == (fx.api, fx.version, fx.request_id)
    request = messages.decode_request(fx.api, fx.request_body)
    # Our encoder produces exactly the bytes that were sent.
    assert frame.encode_request(api_key, version, request_id, request.SerializeToString()) == (
        fx.request
    )


@pytest.mark.parametrize("name", sorted(FIX))
def test_response_frame_header(name: str) -> None:
    fx = FIX[name]
    assert frame.decode_length_prefix(fx.response[:4]) == len(fx.response) - 4
    resp = frame.decode_response(fx.response_payload)
    assert resp.kind.name == fx.info["response_kind"]
    assert resp.request_id == fx.request_id
    assert len(fx.response) == fx.info["response_bytes"]


@pytest.mark.parametrize("name", sorted(f.name for f in FIX.values() if f.ok))
def test_success_bodies_decode_and_reencode_byte_for_byte(name: str) -> None:
    fx = FIX[name]
    message = messages.decode_response(fx.api, fx.response_body)
    # Same field numbers, wire types and order as the server's encoder: the .proto matches.
    assert message.SerializeToString() == fx.response_body
    assert messages.encode_response(fx.api, message) == fx.response_body


def test_frame_reader_splits_a_stream_of_every_response() -> None:
    stream = b"".join(f.response for f in FIX.values())
    expected = [f.response_payload for f in FIX.values()]
    rng = random.Random(1234)
    for _ in range(50):
        reader = frame.FrameReader()
        got: list[bytes] = []
        pos = 0
        while pos < len(stream):
            step = rng.choice([1, 2, 3, 4, 5, 7, 64, 1000])
            got.extend(reader.feed(stream[pos : pos + step]))
            pos += step
        assert got == expected
        assert reader.at_boundary


# =========================================================================== content


def advertised(name: str) -> dict[int, tuple[int, int]]:
    reply = decoded(name)
    return {v.api_key: (v.min_version, v.max_version) for v in reply.api_versions}


@pytest.mark.parametrize(
    ("name", "role", "server_type"),
    [
        ("api_versions_coordinator", "coordinator", SERVER_TYPE_COORDINATOR),
        ("api_versions_tablet", "tablet", SERVER_TYPE_TABLET),
    ],
)
def test_api_versions_match_our_api_table(name: str, role: str, server_type: int) -> None:
    reply = decoded(name)
    assert reply.server_type == server_type
    versions = advertised(name)
    assert len(versions) == len(reply.api_versions)  # no key twice
    for raw_key, (low, high) in versions.items():
        key = api_key_or_none(raw_key)
        assert key is not None, f"unknown api key {raw_key}"
        spec = API_INFO[key]
        assert spec.since == "0.9"
        assert spec.served_by in (role, "both"), key.name
        assert low == 0
        # 0.9.1 stops PUT_KV at version 1; everything else matches our table.
        assert high == (1 if key is ApiKey.PUT_KV else spec.max_version), key.name
    # ... and every 0.9 API we say this server type serves is advertised.
    expected = {
        int(k) for k, s in API_INFO.items() if s.since == "0.9" and s.served_by in (role, "both")
    }
    assert set(versions) == expected
    assert int(ApiKey.SCAN_KV) not in versions


def test_metadata_without_tables_lists_the_servers() -> None:
    md = decoded("metadata_servers")
    assert md.coordinator_server.node_id == IDX["cluster"]["coordinator_id"]
    assert sorted(n.node_id for n in md.tablet_servers) == IDX["cluster"]["tablet_server_ids"]
    assert len(md.tablet_servers) == 3
    assert len({(n.host, n.port) for n in [md.coordinator_server, *md.tablet_servers]}) == 4
    assert not md.table_metadata
    assert not md.partition_metadata


def test_metadata_with_tables() -> None:
    md = decoded("metadata_tables")
    servers = decoded("metadata_servers")
    # Same cluster, as seen by a tablet server and by the coordinator.
    assert md.coordinator_server == servers.coordinator_server
    assert sorted(md.tablet_servers, key=lambda n: n.node_id) == sorted(
        servers.tablet_servers, key=lambda n: n.node_id
    )
    alive = {n.node_id for n in md.tablet_servers}
    tables = {t.table_path.table_name: t for t in md.table_metadata}
    assert set(tables) == {LOG, PK}
    for name, table in tables.items():
        want = TABLES[name]
        assert table.table_path.database_name == IDX["database"]
        assert table.table_id == want["table_id"]
        assert sorted(b.bucket_id for b in table.bucket_metadata) == list(range(want["buckets"]))
        for bucket in table.bucket_metadata:
            assert len(bucket.replica_id) == want["replication_factor"]
            assert len(set(bucket.replica_id)) == len(bucket.replica_id)
            assert set(bucket.replica_id) <= alive
            assert bucket.leader_id in bucket.replica_id
        descriptor = parse_table_descriptor(table.table_json)
        assert descriptor.bucket_count == want["buckets"]
        assert descriptor.properties["table.replication.factor"] == str(want["replication_factor"])
    leaders: dict[str, list[int]] = {}
    for bucket in tables[LOG].bucket_metadata:
        leaders.setdefault(str(bucket.leader_id), []).append(bucket.bucket_id)
    assert {k: sorted(v) for k, v in leaders.items()} == TABLES[LOG]["leaders"]
    assert [c.name for c in parse_table_descriptor(tables[PK].table_json).schema.columns] == [
        "id",
        "name",
        "amount",
        "ts",
    ]


def test_catalog_replies() -> None:
    assert IDX["database"] in decoded("list_databases").database_name
    assert "fluss" in decoded("list_databases").database_name  # the default database
    assert sorted(decoded("list_tables").table_name) == [LOG, PK]
    info = decoded("get_table_info")
    assert info.table_id == TABLES[PK]["table_id"]
    assert info.created_time <= info.modified_time
    md_pk = next(
        t for t in decoded("metadata_tables").table_metadata if t.table_id == info.table_id
    )
    assert info.table_json == md_pk.table_json
    assert info.schema_id == md_pk.schema_id
    descriptor = parse_table_descriptor(info.table_json)
    assert descriptor.schema.primary_key is not None


def test_missing_table_is_an_error_frame_mapping_to_table_not_exist() -> None:
    fx = FIX["get_table_info_missing"]
    resp = frame.decode_response(fx.response_payload)
    assert resp.kind is frame.ResponseKind.ERROR
    code, message = frame.parse_error_response(resp.body)
    assert code == 7 == fx.info["error_code"]
    assert message is not None and "no_such_table" in message
    error = error_codes.from_code(code, message, api=fx.api.name)
    assert isinstance(error, error_codes.TableNotExistError)
    assert not error.retriable
    # protobuf agrees with the hand-written ErrorResponse decoder
    assert pb.ErrorResponse.FromString(resp.body).error_code == code


def test_list_acls_without_authorizer_is_security_disabled() -> None:
    fx = FIX["list_acls"]
    code, message = frame.parse_error_response(fx.response_body)
    assert code == 47
    assert isinstance(error_codes.from_code(code, message), error_codes.SecurityDisabledError)


def _offsets(name: str) -> dict[int, int]:
    reply = decoded(name)
    assert not [b for b in reply.buckets_resp if b.HasField("error_code") and b.error_code]
    return {b.bucket_id: b.offset for b in reply.buckets_resp}


def test_list_offsets_agree_with_pyfluss() -> None:
    pyfluss = {int(k): v for k, v in TABLES[LOG]["pyfluss_latest_offsets"].items()}
    led = _offsets("list_offsets_leader")
    request = messages.decode_request(ApiKey.LIST_OFFSETS, FIX["list_offsets_leader"].request_body)
    assert sorted(led) == sorted(request.bucket_id)
    assert request.bucket_id[:] in TABLES[LOG]["leaders"].values()
    assert led == {b: pyfluss[b] for b in led}
    seen = dict(led)
    followed = _offsets("list_offsets_follower")  # captured: the buckets the other server led
    assert followed == {b: pyfluss[b] for b in followed}
    seen.update(followed)
    assert sorted(seen) == list(range(TABLES[LOG]["buckets"]))
    # every row written to the log table is accounted for, once
    assert sum(seen.values()) == TABLES[LOG]["rows_written"]


def test_kv_snapshots_and_configs() -> None:
    snaps = decoded("get_latest_kv_snapshots")
    assert snaps.table_id == TABLES[PK]["table_id"]
    assert sorted(s.bucket_id for s in snaps.latest_snapshots) == list(range(TABLES[PK]["buckets"]))
    for s in snaps.latest_snapshots:  # no snapshot yet, or a complete one
        assert s.HasField("snapshot_id") == s.HasField("log_offset")

    configs = decoded("describe_cluster_configs").configs
    keys = [c.config_key for c in configs]
    assert len(keys) == len(set(keys)) > 0
    assert {c.config_source for c in configs} <= {"INITIAL_SERVER_CONFIG", "DYNAMIC_SERVER_CONFIG"}
    listeners = {c.config_key: c.config_value for c in configs}["bind.listeners"]
    coordinator = decoded("metadata_servers").coordinator_server
    assert listeners.endswith(f":{coordinator.port}")


def test_scan_kv_note() -> None:
    note = IDX["notes"]["scan_kv_unanswered"]
    req = bytes.fromhex(note["request_frame_hex"])
    _, api_key, version, request_id = struct.unpack_from(">ihhi", req)
    assert (api_key, version, request_id) == (ApiKey.SCAN_KV, 0, note["request_id"])
    messages.decode_request(ApiKey.SCAN_KV, req[12:])
    assert note["result"].startswith("no answer")
    assert "answered" in note["after"]


# =========================================================================== replay: Connection


def replay_all() -> Script:
    return Script([(fx, fx.response) for fx in FIX.values()])


async def test_connection_replays_every_fixture() -> None:
    script = replay_all()
    async with ReplayServer(script) as server:
        conn = await Connection.open("127.0.0.1", server.port)
        try:
            for fx in FIX.values():
                call = conn.request(int(fx.api), fx.version, fx.request_body, api_name=fx.api.name)
                if fx.ok:
                    assert await call == fx.response_body
                else:
                    with pytest.raises(error_codes.ServerError) as info:
                        await call
                    assert info.value.code == fx.info["error_code"]
                    assert info.value.api == fx.api.name
            assert not conn.closed
        finally:
            await conn.close()
        assert len(server.received) == len(FIX)
    assert not script.mismatches


async def test_connection_pipelines_recorded_frames_answered_in_reverse() -> None:
    """Every request in flight at once; the fake answers them last-first."""
    pending: list[Received] = []
    writers: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        for _ in range(len(FIX)):
            (length,) = struct.unpack(">i", await reader.readexactly(4))
            payload = await reader.readexactly(length)
            api_key, version, request_id = struct.unpack_from(">hhi", payload)
            pending.append(Received(api_key, version, request_id, payload[8:]))
        for request, fx in reversed(list(zip(pending, FIX.values(), strict=True))):
            assert (request.api_key, request.body) == (fx.api, fx.request_body)
            writer.write(fx.response[:5] + struct.pack(">i", request.request_id) + fx.response[9:])
        await writer.drain()
        await reader.read()  # until the client closes

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    conn = await Connection.open("127.0.0.1", port)
    try:
        results = await asyncio.gather(
            *(conn.request(int(f.api), f.version, f.request_body) for f in FIX.values()),
            return_exceptions=True,
        )
    finally:
        await conn.close()
        for w in writers:
            w.close()
        server.close()
        await server.wait_closed()
    for fx, result in zip(FIX.values(), results, strict=True):
        if fx.ok:
            assert result == fx.response_body, fx.name
        else:
            assert isinstance(result, error_codes.ServerError), fx.name
            assert result.code == fx.info["error_code"]


async def test_unanswered_request_times_out_and_the_connection_keeps_working() -> None:
    """What capture saw for SCAN_KV on 0.9.1: no reply, connection still usable."""
    note = IDX["notes"]["scan_kv_unanswered"]
    scan_body = bytes.fromhex(note["request_frame_hex"])[12:]
    hello = FIX["api_versions_tablet"]
    scan = Received(int(ApiKey.SCAN_KV), 0, 0, scan_body)
    script = Script([(scan, None), (hello, hello.response)])
    async with ReplayServer(script) as server:
        conn = await Connection.open("127.0.0.1", server.port)
        try:
            with pytest.raises(RequestTimeoutError):
                await conn.request(int(ApiKey.SCAN_KV), 0, scan_body, timeout=0.2)
            assert await conn.request(1000, 0, hello.request_body) == hello.response_body
            assert not conn.closed
        finally:
            await conn.close()
    assert not script.mismatches


# =========================================================================== replay: FlussClient


class FakeCluster:
    """A coordinator and three tablet servers answering with the recorded frames.

    Answers go by API key (and by exact request for GetTableInfo and ListOffsets); the two
    metadata replies get the fake servers' ports (see ``metadata_pointing_to``)."""

    def __init__(self) -> None:
        self.coordinator = ReplayServer(lambda r: self.answer(r, "coordinator"))
        ids = IDX["cluster"]["tablet_server_ids"]
        self.tablets = {i: ReplayServer(lambda r: self.answer(r, "tablet")) for i in ids}
        self.metadata: dict[str, bytes] = {}

    async def __aenter__(self) -> FakeCluster:
        await self.coordinator.start()
        for server in self.tablets.values():
            await server.start()
        ports = {i: s.port for i, s in self.tablets.items()}
        for name in ("metadata_servers", "metadata_tables"):
            body = metadata_pointing_to(FIX[name], self.coordinator.port, ports)
            self.metadata[name] = struct.pack(">ibi", 5 + len(body), 0, 0) + body
        return self

    async def __aexit__(self, *exc: object) -> None:
        for server in [self.coordinator, *self.tablets.values()]:
            await server.stop()

    def servers(self) -> list[ReplayServer]:
        return [self.coordinator, *self.tablets.values()]

    def answer(self, request: Received, role: str) -> bytes | None:
        key = request.api_key
        if key == ApiKey.API_VERSIONS:
            return FIX[f"api_versions_{role}"].response
        if key == ApiKey.GET_METADATA:
            asked = messages.decode_request(ApiKey.GET_METADATA, request.body)
            return self.metadata["metadata_tables" if asked.table_path else "metadata_servers"]
        exact = by_request().get((key, request.body))
        if exact is not None:
            return exact.response
        same_api = [f for f in FIX.values() if f.api == key]
        return same_api[0].response if len(same_api) == 1 else None


def recorded_request(name: str):
    fx = FIX[name]
    return messages.decode_request(fx.api, fx.request_body)


async def test_flussclient_against_recorded_frames() -> None:
    async with FakeCluster() as cluster:
        client = await FlussClient.connect(
            cluster.coordinator.address, request_timeout=5, connect_timeout=5
        )
        try:
            assert sorted(client.tablet_servers) == IDX["cluster"]["tablet_server_ids"]
            assert client.coordinator is not None
            assert client.coordinator.address == cluster.coordinator.address
            features = client.features
            assert features.server_generation == "0.9"
            assert features.list_offsets and features.describe_cluster_configs
            assert not features.scan_kv and not features.cluster_health
            assert not features.put_kv_backpressure

            md = await client.refresh_metadata([(IDX["database"], LOG), (IDX["database"], PK)])
            log_meta = md.tables[(IDX["database"], LOG)]
            assert len(log_meta.buckets) == TABLES[LOG]["buckets"]
            assert all(
                len(b.replica_ids) == TABLES[LOG]["replication_factor"] for b in log_meta.buckets
            )

            for name in (
                "list_databases",
                "list_tables",
                "get_table_info",
                "get_latest_kv_snapshots",
            ):
                assert await client.call(FIX[name].api, recorded_request(name)) == decoded(name)
            configs = await client.call(
                ApiKey.DESCRIBE_CLUSTER_CONFIGS,
                recorded_request("describe_cluster_configs"),
                coordinator=True,
            )
            assert configs == decoded("describe_cluster_configs")

            with pytest.raises(error_codes.TableNotExistError):
                await client.call(ApiKey.GET_TABLE_INFO, recorded_request("get_table_info_missing"))
            with pytest.raises(error_codes.SecurityDisabledError):
                await client.call(ApiKey.LIST_ACLS, recorded_request("list_acls"), coordinator=True)

            leader = int(FIX["list_offsets_leader"].info["server_id"])
            offsets = await client.call(
                ApiKey.LIST_OFFSETS, recorded_request("list_offsets_leader"), node=leader
            )
            assert offsets == decoded("list_offsets_leader")
            assert cluster.tablets[leader].count(ApiKey.LIST_OFFSETS) == 1

            # SCAN_KV: the recorded 0.9.1 tablet ApiVersions lacks it, so nothing is sent.
            scan = messages.decode_request(
                ApiKey.SCAN_KV,
                bytes.fromhex(IDX["notes"]["scan_kv_unanswered"]["request_frame_hex"])[12:],
            )
            with pytest.raises(UnsupportedByServer):
                await client.call(ApiKey.SCAN_KV, scan, node=leader)
            assert all(s.count(ApiKey.SCAN_KV) == 0 for s in cluster.servers())
        finally:
            await client.close()
        # what went over the wire: only recorded request kinds
        sent = {r.api_key for s in cluster.servers() for r in s.received}
        assert sent <= {int(f.api) for f in FIX.values()}


def test_every_frame_file_is_indexed() -> None:
    files = [*FRAMES_DIR.glob("*.req.bin"), *FRAMES_DIR.glob("*.resp.bin")]
    assert len(files) == 2 * len(FIX)
    assert {p.name.split(".", 1)[0] for p in files} == set(FIX)
