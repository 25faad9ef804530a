"""Checks of the generated protobuf module, its generator, and the API key table."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import descriptor as _descriptor
from google.protobuf.message import EncodeError

from fluss_proto import gen_proto
from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import API_INFO, ApiKey, api_key_or_none

REQUIRED, OPTIONAL, REPEATED = "required", "optional", "repeated"

# API -> (request, response) message names in fluss_rpc.proto.
API_MESSAGES: dict[ApiKey, tuple[str, str]] = {
    ApiKey.API_VERSIONS: ("ApiVersionsRequest", "ApiVersionsResponse"),
    ApiKey.AUTHENTICATE: ("AuthenticateRequest", "AuthenticateResponse"),
    ApiKey.GET_METADATA: ("MetadataRequest", "MetadataResponse"),
    ApiKey.LIST_DATABASES: ("ListDatabasesRequest", "ListDatabasesResponse"),
    ApiKey.GET_DATABASE_INFO: ("GetDatabaseInfoRequest", "GetDatabaseInfoResponse"),
    ApiKey.DATABASE_EXISTS: ("DatabaseExistsRequest", "DatabaseExistsResponse"),
    ApiKey.LIST_TABLES: ("ListTablesRequest", "ListTablesResponse"),
    ApiKey.GET_TABLE_INFO: ("GetTableInfoRequest", "GetTableInfoResponse"),
    ApiKey.GET_TABLE_SCHEMA: ("GetTableSchemaRequest", "GetTableSchemaResponse"),
    ApiKey.TABLE_EXISTS: ("TableExistsRequest", "TableExistsResponse"),
    ApiKey.LIST_PARTITION_INFOS: ("ListPartitionInfosRequest", "ListPartitionInfosResponse"),
    ApiKey.LIST_OFFSETS: ("ListOffsetsRequest", "ListOffsetsResponse"),
    ApiKey.GET_LATEST_KV_SNAPSHOTS: (
        "GetLatestKvSnapshotsRequest",
        "GetLatestKvSnapshotsResponse",
    ),
    ApiKey.GET_LAKE_SNAPSHOT: ("GetLakeSnapshotRequest", "GetLakeSnapshotResponse"),
    ApiKey.DESCRIBE_CLUSTER_CONFIGS: (
        "DescribeClusterConfigsRequest",
        "DescribeClusterConfigsResponse",
    ),
    ApiKey.LIST_ACLS: ("ListAclsRequest", "ListAclsResponse"),
    ApiKey.LIST_REBALANCE_PROGRESS: (
        "ListRebalanceProgressRequest",
        "ListRebalanceProgressResponse",
    ),
    ApiKey.LIMIT_SCAN: ("LimitScanRequest", "LimitScanResponse"),
    ApiKey.FETCH_LOG: ("FetchLogRequest", "FetchLogResponse"),
    ApiKey.GET_TABLE_STATS: ("GetTableStatsRequest", "GetTableStatsResponse"),
    ApiKey.SCAN_KV: ("ScanKvRequest", "ScanKvResponse"),
    ApiKey.GET_CLUSTER_HEALTH: ("GetClusterHealthRequest", "GetClusterHealthResponse"),
}

# (message, field, number, label): spot checks of wire facts taken from the Fluss schema.
WIRE_FACTS: list[tuple[str, str, int, str]] = [
    ("ErrorResponse", "error_code", 1, REQUIRED),
    ("ErrorResponse", "error_message", 2, OPTIONAL),
    ("ApiVersionsRequest", "client_software_name", 1, REQUIRED),
    ("ApiVersionsRequest", "client_software_version", 2, REQUIRED),
    ("ApiVersionsResponse", "server_type", 2, OPTIONAL),
    ("AuthenticateRequest", "token", 2, REQUIRED),
    ("GetDatabaseInfoResponse", "database_json", 3, REQUIRED),
    ("LimitScanRequest", "table_id", 2, REQUIRED),
    ("LimitScanRequest", "limit", 5, REQUIRED),
    ("FetchLogRequest", "follower_server_id", 1, REQUIRED),
    ("FetchLogRequest", "max_bytes", 2, REQUIRED),
    ("PbFetchLogReqForTable", "projection_pushdown_enabled", 2, REQUIRED),
    ("PbFetchLogReqForBucket", "max_fetch_bytes", 4, REQUIRED),
    ("PbFetchLogRespForBucket", "records", 8, OPTIONAL),
    ("PbFetchLogRespForBucket", "remote_log_fetch_info", 7, OPTIONAL),
    ("ListOffsetsRequest", "startTimestamp", 6, OPTIONAL),
    ("PbListOffsetsRespForBucket", "error_code", 2, OPTIONAL),
    ("GetLakeSnapshotResponse", "snapshotId", 2, REQUIRED),
    ("PbAclFilter", "resource_type", 2, REQUIRED),
    ("PbRebalancePlanForBucket", "new_replicas", 6, REPEATED),
    ("GetClusterHealthResponse", "status", 5, REQUIRED),
    ("ScanKvResponse", "log_offset", 6, OPTIONAL),
]

# Fields only Fluss main (1.0) has, inside messages 0.9.1 also has: must never be required.
FIELDS_ONLY_AT_MAIN: list[tuple[str, str]] = [
    ("PbTableMetadata", "remote_data_dir"),
    ("GetTableInfoResponse", "remote_data_dir"),
    ("PbPartitionInfo", "remote_data_dir"),
    ("FetchLogRequest", "read_preference"),
    ("PbFetchLogReqForTable", "filter_predicate"),
    ("PbFetchLogReqForTable", "filter_schema_id"),
    ("PbFetchLogRespForBucket", "filtered_end_offset"),
]


def _message(name: str) -> _descriptor.Descriptor:
    return pb.DESCRIPTOR.message_types_by_name[name]


def _label(fd: _descriptor.FieldDescriptor) -> str:
    if fd.is_repeated:
        return REPEATED
    return REQUIRED if fd.is_required else OPTIONAL


# ---------------------------------------------------------------------------------------
# Generated module
# ---------------------------------------------------------------------------------------


def test_package_name() -> None:
    assert pb.DESCRIPTOR.package == "konsole.fluss"
    assert pb.DESCRIPTOR.name == "fluss_rpc.proto"


@pytest.mark.parametrize("key", list(API_MESSAGES), ids=lambda k: k.name)
def test_request_and_response_exist(key: ApiKey) -> None:
    req, resp = API_MESSAGES[key]
    assert req in pb.DESCRIPTOR.message_types_by_name
    assert resp in pb.DESCRIPTOR.message_types_by_name
    assert hasattr(pb, req)
    assert hasattr(pb, resp)


@pytest.mark.parametrize(("message", "field", "number", "label"), WIRE_FACTS)
def test_wire_facts(message: str, field: str, number: int, label: str) -> None:
    fd = _message(message).fields_by_name[field]
    assert fd.number == number
    assert _label(fd) == label


@pytest.mark.parametrize(("message", "field"), FIELDS_ONLY_AT_MAIN)
def test_main_only_fields_are_not_required(message: str, field: str) -> None:
    assert _label(_message(message).fields_by_name[field]) != REQUIRED


def test_every_sub_message_is_defined() -> None:
    for desc in pb.DESCRIPTOR.message_types_by_name.values():
        for fd in desc.fields:
            if fd.message_type is not None:
                assert fd.message_type.file is pb.DESCRIPTOR


def test_api_versions_request_round_trip() -> None:
    req = pb.ApiVersionsRequest(client_software_name="konsole", client_software_version="0.1.0")
    data = req.SerializeToString()
    assert data == b"\x0a\x07konsole\x12\x050.1.0"
    assert pb.ApiVersionsRequest.FromString(data) == req


def test_required_fields_are_enforced() -> None:
    with pytest.raises(EncodeError):
        pb.ApiVersionsRequest(client_software_name="konsole").SerializeToString()
    # The Python parser accepts a message with a required field missing; the caller has to
    # check IsInitialized() on decoded replies if it cares.
    partial = pb.ApiVersionsRequest.FromString(b"\x0a\x07konsole")
    assert not partial.IsInitialized()
    assert partial.FindInitializationErrors() == ["client_software_version"]


def test_api_versions_response_decode() -> None:
    resp = pb.ApiVersionsResponse(
        api_versions=[pb.PbApiVersion(api_key=1016, min_version=0, max_version=2)],
        server_type=2,
    )
    back = pb.ApiVersionsResponse.FromString(resp.SerializeToString())
    assert back.server_type == 2
    assert [(v.api_key, v.min_version, v.max_version) for v in back.api_versions] == [(1016, 0, 2)]


@pytest.mark.parametrize(
    ("code", "message", "wire"),
    [
        (12, "x", b"\x08\x0c\x12\x01x"),
        (65, None, b"\x08\x41"),
        # Negative int32 travels as a 10-byte sign-extended varint.
        (-1, None, b"\x08" + b"\xff" * 9 + b"\x01"),
    ],
)
def test_error_response_round_trip(code: int, message: str | None, wire: bytes) -> None:
    msg = pb.ErrorResponse(error_code=code)
    if message is not None:
        msg.error_message = message
    assert msg.SerializeToString() == wire
    back = pb.ErrorResponse.FromString(wire)
    assert back.error_code == code
    assert back.HasField("error_message") is (message is not None)


def test_packed_repeated_fields() -> None:
    bucket = pb.PbBucketMetadata(bucket_id=0, leader_id=1, replica_id=[1, 2, 3])
    # field 3, wire type 2 (length-delimited), 3 bytes of varints.
    assert b"\x1a\x03\x01\x02\x03" in bucket.SerializeToString()
    # Unpacked input is accepted as well.
    unpacked = b"\x08\x00\x18\x01\x18\x02"
    assert list(pb.PbBucketMetadata.FromString(unpacked).replica_id) == [1, 2]


def test_fetch_log_round_trip() -> None:
    req = pb.FetchLogRequest(
        follower_server_id=-1,
        max_bytes=16 * 1024 * 1024,
        max_wait_ms=500,
        tables_req=[
            pb.PbFetchLogReqForTable(
                table_id=7,
                projection_pushdown_enabled=False,
                buckets_req=[
                    pb.PbFetchLogReqForBucket(bucket_id=0, fetch_offset=-2, max_fetch_bytes=1 << 20)
                ],
            )
        ],
    )
    assert pb.FetchLogRequest.FromString(req.SerializeToString()) == req
    resp = pb.FetchLogResponse(
        tables_resp=[
            pb.PbFetchLogRespForTable(
                table_id=7,
                buckets_resp=[
                    pb.PbFetchLogRespForBucket(bucket_id=0, error_code=12, error_message="moved"),
                    pb.PbFetchLogRespForBucket(bucket_id=1, high_watermark=10, records=b"\x00"),
                ],
            )
        ]
    )
    back = pb.FetchLogResponse.FromString(resp.SerializeToString())
    b0, b1 = back.tables_resp[0].buckets_resp
    assert b0.error_code == 12 and not b0.HasField("records")
    assert not b1.HasField("error_code") and b1.records == b"\x00"


def test_unknown_fields_from_newer_server_are_skipped() -> None:
    # A GetTableInfoResponse carrying an extra field 99 (varint) must still parse.
    resp = pb.GetTableInfoResponse(
        table_id=1, schema_id=1, table_json=b"{}", created_time=0, modified_time=0
    )
    data = resp.SerializeToString() + b"\x98\x06\x01"
    assert pb.GetTableInfoResponse.FromString(data).table_id == 1


# ---------------------------------------------------------------------------------------
# Generator: the committed output is exactly what gen_proto.py produces
# ---------------------------------------------------------------------------------------


def test_committed_gen_matches_generator(tmp_path: Path) -> None:
    written = gen_proto.generate(tmp_path)
    assert written, "generator produced nothing"
    for path in written:
        committed = gen_proto.GEN_DIR / path.name
        assert committed.exists(), f"{committed} is missing; run python fluss_proto/gen_proto.py"
        assert path.read_bytes() == committed.read_bytes(), (
            f"{committed} is stale; run python fluss_proto/gen_proto.py"
        )
    expected = {f"{p.stem}{s}" for p in gen_proto.proto_files() for s in ("_pb2.py", "_pb2.pyi")}
    assert {p.name for p in written} == expected


# ---------------------------------------------------------------------------------------
# API key table
# ---------------------------------------------------------------------------------------


def test_api_keys_are_contiguous() -> None:
    assert sorted(int(k) for k in ApiKey) == list(range(1000, 1065))
    assert set(API_INFO) == set(ApiKey)


def test_api_keys_only_at_main() -> None:
    main_only = {k for k, s in API_INFO.items() if s.since == "1.0"}
    assert main_only == {
        ApiKey.ALTER_DATABASE,
        ApiKey.SCAN_KV,
        ApiKey.GET_CLUSTER_HEALTH,
        ApiKey.LIST_REMOTE_LOG_MANIFESTS,
        ApiKey.LIST_KV_SNAPSHOTS,
    }
    assert ApiKey.GET_TABLE_STATS not in main_only


def test_api_key_facts() -> None:
    for key, spec in API_INFO.items():
        assert spec.name == key.name
        if spec.private:
            assert spec.mutating, key
            assert spec.served_by != "both", key
    assert API_INFO[ApiKey.PUT_KV].max_version == 2
    assert API_INFO[ApiKey.FETCH_LOG].served_by == "tablet"
    assert API_INFO[ApiKey.GET_METADATA].served_by == "both"
    assert API_INFO[ApiKey.LIST_REBALANCE_PROGRESS].served_by == "coordinator"
    assert not API_INFO[ApiKey.LIST_REBALANCE_PROGRESS].mutating
    assert API_INFO[ApiKey.CANCEL_REBALANCE].mutating
    assert API_INFO[ApiKey.INIT_WRITER].mutating
    private = {k for k, s in API_INFO.items() if s.private}
    assert private == {
        ApiKey.UPDATE_METADATA,
        ApiKey.NOTIFY_LEADER_AND_ISR,
        ApiKey.STOP_REPLICA,
        ApiKey.ADJUST_ISR,
        ApiKey.COMMIT_KV_SNAPSHOT,
        ApiKey.COMMIT_REMOTE_LOG_MANIFEST,
        ApiKey.NOTIFY_REMOTE_LOG_OFFSETS,
        ApiKey.NOTIFY_KV_SNAPSHOT_OFFSET,
        ApiKey.COMMIT_LAKE_TABLE_SNAPSHOT,
        ApiKey.NOTIFY_LAKE_TABLE_OFFSET,
        ApiKey.LAKE_TIERING_HEARTBEAT,
        ApiKey.CONTROLLED_SHUTDOWN,
        ApiKey.PREPARE_LAKE_TABLE_SNAPSHOT,
    }


@pytest.mark.parametrize("key", list(API_MESSAGES), ids=lambda k: k.name)
def test_console_apis_are_public(key: ApiKey) -> None:
    assert not API_INFO[key].private


def test_api_key_or_none() -> None:
    assert api_key_or_none(1015) is ApiKey.FETCH_LOG
    assert api_key_or_none(1065) is None
    assert api_key_or_none(0) is None
