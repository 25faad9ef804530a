"""Replay frames captured from a real Fluss 1.0-line server (tests/fixtures/frames/fluss-1.0).

Captured by ``tests/fixtures/capture_frames.py --fluss-home DIR`` (1.0-SNAPSHOT, 1 coordinator
and 3 tablet servers snapshotting KV every second and tiering 16 KB log segments). Besides the
exchanges the 0.9.1 capture has, these hold what only 1.0 answers: GetClusterHealth (on the
coordinator and forwarded by a tablet server), ScanKv, ListKvSnapshots, ListRemoteLogManifests,
and GetTableStats. Checked here: our .proto re-encodes every reply byte for byte, the replies
agree with each other and with pyfluss' view recorded at capture time, and FlussAdmin turns
them into the expected typed values.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from google.protobuf.message import Message
from hypothesis import given
from hypothesis import strategies as st

from fluss_proto import error_codes, frame, messages
from fluss_proto.admin import FlussAdmin
from fluss_proto.api_keys import API_INFO, ApiKey, api_key_or_none
from fluss_proto.client import SERVER_TYPE_COORDINATOR, SERVER_TYPE_TABLET
from fluss_proto.connection import Connection
from fluss_proto.model import HealthStatus
from fluss_proto.records import CompactedRowDecoder, read_value_batch
from fluss_proto.types import parse_table_descriptor
from tests._testutil import pyfluss_data as pfd
from tests._testutil.admin import standard
from tests._testutil.frames import FRAMES_DIR_1_0, ReplayServer, Script, fixtures, index
from tests._testutil.fuzz import decode_or_typed_error, mutated

pytestmark = pytest.mark.timeout(30)

FIX = fixtures(FRAMES_DIR_1_0)
IDX = index(FRAMES_DIR_1_0)
TABLES = IDX["tables"]
LOG, PK, TIERED = "events_log", "orders_pk", "tiered_log"


def decoded(name: str) -> Any:
    fx = FIX[name]
    return messages.decode_response(fx.api, fx.response_body)


def test_the_1_0_frames_are_there() -> None:
    assert IDX["generation"] == "1.0" and IDX["server_version"] == "1.0-SNAPSHOT"
    assert {
        "api_versions_coordinator",
        "api_versions_tablet",
        "get_cluster_health",
        "get_cluster_health_tablet",
        "scan_kv",
        "list_kv_snapshots",
        "list_kv_snapshots_missing",
        "list_remote_log_manifests",
        "list_remote_log_manifests_none",
        "get_table_stats_log",
        "get_table_stats_pk",
        "get_latest_kv_snapshots_taken",
    } <= set(FIX)
    assert all(f.info["server_version"] == "1.0-SNAPSHOT" for f in FIX.values())
    files = [*FRAMES_DIR_1_0.glob("*.req.bin"), *FRAMES_DIR_1_0.glob("*.resp.bin")]
    assert len(files) == 2 * len(FIX)


@pytest.mark.parametrize("name", sorted(FIX))
def test_1_0_request_frames_are_what_we_encode(name: str) -> None:
    fx = FIX[name]
    length, api_key, version, request_id = struct.unpack_from(">ihhi", fx.request)
    assert length == len(fx.request) - 4
    assert (api_key, version, request_id) == (fx.api, fx.version, fx.request_id)
    request = messages.decode_request(fx.api, fx.request_body)
    assert frame.encode_request(api_key, version, request_id, request.SerializeToString()) == (
        fx.request
    )
    resp = frame.decode_response(fx.response_payload)
    assert resp.kind.name == fx.info["response_kind"] and resp.request_id == fx.request_id


@pytest.mark.parametrize("name", sorted(f.name for f in FIX.values() if f.ok))
def test_1_0_replies_reencode_byte_for_byte(name: str) -> None:
    """Same field numbers, types and order as the 1.0 server: our .proto matches it, the
    messages written from the 1.0 sources (ListKvSnapshots, ListRemoteLogManifests) too."""
    fx = FIX[name]
    message = messages.decode_response(fx.api, fx.response_body)
    assert message.SerializeToString() == fx.response_body


@pytest.mark.parametrize(
    ("name", "role", "server_type"),
    [
        ("api_versions_coordinator", "coordinator", SERVER_TYPE_COORDINATOR),
        ("api_versions_tablet", "tablet", SERVER_TYPE_TABLET),
    ],
)
def test_1_0_api_versions_match_our_api_table(name: str, role: str, server_type: int) -> None:
    reply = decoded(name)
    assert reply.server_type == server_type
    versions = {v.api_key: (v.min_version, v.max_version) for v in reply.api_versions}
    assert len(versions) == len(reply.api_versions)
    for raw_key, (low, high) in versions.items():
        key = api_key_or_none(raw_key)
        assert key is not None, f"unknown api key {raw_key}"
        assert API_INFO[key].served_by in (role, "both"), key.name
        assert (low, high) == (0, API_INFO[key].max_version), key.name
    expected = {int(k) for k, s in API_INFO.items() if s.served_by in (role, "both")}
    assert set(versions) == expected  # every key of both generations this role serves
    if role == "tablet":
        assert versions[ApiKey.PUT_KV] == (0, 2) and ApiKey.SCAN_KV in versions
        assert ApiKey.LIST_KV_SNAPSHOTS not in versions
    else:
        assert {ApiKey.LIST_KV_SNAPSHOTS, ApiKey.LIST_REMOTE_LOG_MANIFESTS} <= set(versions)
    assert ApiKey.GET_CLUSTER_HEALTH in versions


# =========================================================================== through FlussAdmin


def replaying(**answers: str) -> FlussAdmin:
    """FlussAdmin over the fake client of test_admin.py answering with recorded replies."""
    client = standard()
    client.fluss_1_0 = True

    def answer(name: str) -> Any:
        fx = FIX[name]

        def reply(_target: Any, request: Message) -> Message:
            assert request.SerializeToString() == fx.request_body  # the recorded request
            if fx.ok:
                return messages.decode_response(fx.api, fx.response_body)
            code, message = frame.parse_error_response(fx.response_body)
            raise error_codes.from_code(code, message, api=fx.api.name)

        return reply

    for api, name in answers.items():
        client.overrides[ApiKey[api]] = answer(name)
    return FlussAdmin(client)


async def test_cluster_health_of_the_recorded_cluster() -> None:
    health = await replaying(GET_CLUSTER_HEALTH="get_cluster_health").cluster_health()
    assert health.status is HealthStatus.GREEN
    buckets = sum(t["buckets"] for t in TABLES.values())
    replicas = sum(t["buckets"] * t["replication_factor"] for t in TABLES.values())
    assert (health.num_leader_replicas, health.active_leader_replicas) == (buckets, buckets)
    assert (health.num_replicas, health.in_sync_replicas) == (replicas, replicas)
    assert decoded("get_cluster_health_tablet") == decoded("get_cluster_health")  # forwarded


async def test_active_kv_snapshots_of_the_recorded_table() -> None:
    pk_id = TABLES[PK]["table_id"]
    admin = replaying(LIST_KV_SNAPSHOTS="list_kv_snapshots")
    active = await admin.active_kv_snapshots(pk_id)
    latest = decoded("get_latest_kv_snapshots_taken")
    assert active.table_id == pk_id == latest.table_id and active.partition_id is None
    assert dict(active.newest) == {s.bucket_id: s.snapshot_id for s in latest.latest_snapshots}
    assert set(active.by_bucket) == set(range(TABLES[PK]["buckets"]))
    missing = replaying(LIST_KV_SNAPSHOTS="list_kv_snapshots_missing")
    with pytest.raises(error_codes.TableNotExistError):
        await missing.active_kv_snapshots(10**9)


async def test_remote_log_manifests_of_the_recorded_tables() -> None:
    tiered = TABLES[TIERED]
    admin = replaying(LIST_REMOTE_LOG_MANIFESTS="list_remote_log_manifests")
    listing = await admin.remote_log_manifests(tiered["table_id"])
    [m] = listing.manifests
    assert (m.table_id, m.partition_id, m.bucket_id) == (tiered["table_id"], None, 0)
    assert 0 < m.remote_log_end_offset <= tiered["pyfluss_latest_offsets"]["0"]
    assert m.manifest_path.endswith(".manifest") and f"/{TIERED}-" in m.manifest_path
    none = replaying(LIST_REMOTE_LOG_MANIFESTS="list_remote_log_manifests_none")
    assert (await none.remote_log_manifests(TABLES[LOG]["table_id"])).manifests == ()


def test_table_stats_agree_with_offsets_and_with_scan_kv() -> None:
    stats = {b.bucket_id: b.row_count for b in decoded("get_table_stats_log").buckets_resp}
    offsets = {b.bucket_id: b.offset for b in decoded("list_offsets_leader").buckets_resp}
    assert stats == offsets
    assert stats == {
        int(k): v for k, v in TABLES[LOG]["pyfluss_latest_offsets"].items() if int(k) in stats
    }
    [pk_stats] = decoded("get_table_stats_pk").buckets_resp
    scan = decoded("scan_kv")
    assert not scan.has_more_results and not scan.HasField("error_code")
    assert len(read_value_batch(scan.records)) == pk_stats.row_count > 0


def test_scan_kv_rows_are_what_pyfluss_wrote() -> None:
    scan = decoded("scan_kv")
    md = decoded("metadata_tables")
    [pk] = [t for t in md.table_metadata if t.table_path.table_name == PK]
    decoder = CompactedRowDecoder(parse_table_descriptor(pk.table_json).schema)
    batch = read_value_batch(scan.records)
    rows = [decoder.decode(v.buffer, v.start, v.end) for v in batch]
    written = {r["id"]: r for r in pfd.expected_rows(TABLES[PK]["rows_written"])}
    assert rows and all(r == written[r["id"]] for r in rows)
    # the snapshot the scan read is the one the KV snapshot also covers (no writes since)
    taken = {
        s.bucket_id: s.log_offset for s in decoded("get_latest_kv_snapshots_taken").latest_snapshots
    }
    assert scan.log_offset == taken[0]
    # one reply held everything, yet it names its (already closed) session: 32 hex chars
    assert not scan.has_more_results
    assert len(scan.scanner_id) == 32 and bytes.fromhex(scan.scanner_id.decode())


async def test_connection_replays_every_1_0_frame() -> None:
    script = Script([(fx, fx.response) for fx in FIX.values()])
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
        finally:
            await conn.close()
    assert not script.mismatches


_NAMES = sorted(n for n, f in FIX.items() if f.ok)
_POOL = tuple(FIX[n].response_body for n in _NAMES)


@given(st.data())
def test_mutated_1_0_bodies_decode_or_fail_typed(data: st.DataObject) -> None:
    """The 1.0 replies (ListKvSnapshots, ListRemoteLogManifests, ScanKv, ...) mutated: only
    a typed DecodeError may escape, as for the 0.9.1 frames in test_fuzz_protocol.py."""
    name = data.draw(st.sampled_from(_NAMES))
    body = data.draw(mutated(FIX[name].response_body, _POOL))
    decode_or_typed_error(FIX[name].api, body)
