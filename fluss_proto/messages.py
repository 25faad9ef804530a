"""Which protobuf message travels with which API key, and typed encode / decode helpers.

:data:`MESSAGES` maps an :class:`~fluss_proto.api_keys.ApiKey` to its
``(request class, response class)`` pair, for every API that ``proto/fluss_rpc.proto``
describes. The pairs are looked up by the message names Fluss itself uses
(``<Api>Request`` / ``<Api>Response``; GET_METADATA is ``MetadataRequest``), so an API
becomes available here as soon as its messages are added to the .proto and regenerated.

Encoding refuses a message of the wrong class or one lacking a ``required`` field (the
server would drop such a request without answering). Decoding turns every parser failure,
and a reply lacking a ``required`` field, into :class:`~fluss_proto.errors.DecodeError`
naming the API and the message; error texts name fields, never their values.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple, TypeVar

from google.protobuf.message import Message

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.api_keys import ApiKey
from fluss_proto.errors import DecodeError, NoMessagesForApi, NoMessagesForApiError

__all__ = [
    "MESSAGES",
    "ApiMessages",
    "NoMessagesForApi",
    "NoMessagesForApiError",
    "decode_message",
    "decode_request",
    "decode_response",
    "encode_message",
    "encode_request",
    "encode_response",
    "messages_for",
    "request_class",
    "response_class",
]

M = TypeVar("M", bound=Message)


class ApiMessages(NamedTuple):
    """The request and response message classes of one API."""

    request: type[Message]
    response: type[Message]


# Message base names as Fluss spells them in FlussApi.proto (without Request/Response).
_BASE_NAMES: dict[ApiKey, str] = {
    ApiKey.API_VERSIONS: "ApiVersions",
    ApiKey.CREATE_DATABASE: "CreateDatabase",
    ApiKey.DROP_DATABASE: "DropDatabase",
    ApiKey.LIST_DATABASES: "ListDatabases",
    ApiKey.DATABASE_EXISTS: "DatabaseExists",
    ApiKey.CREATE_TABLE: "CreateTable",
    ApiKey.DROP_TABLE: "DropTable",
    ApiKey.GET_TABLE_INFO: "GetTableInfo",
    ApiKey.LIST_TABLES: "ListTables",
    ApiKey.LIST_PARTITION_INFOS: "ListPartitionInfos",
    ApiKey.TABLE_EXISTS: "TableExists",
    ApiKey.GET_TABLE_SCHEMA: "GetTableSchema",
    ApiKey.GET_METADATA: "Metadata",
    ApiKey.UPDATE_METADATA: "UpdateMetadata",
    ApiKey.PRODUCE_LOG: "ProduceLog",
    ApiKey.FETCH_LOG: "FetchLog",
    ApiKey.PUT_KV: "PutKv",
    ApiKey.LOOKUP: "Lookup",
    ApiKey.NOTIFY_LEADER_AND_ISR: "NotifyLeaderAndIsr",
    ApiKey.STOP_REPLICA: "StopReplica",
    ApiKey.ADJUST_ISR: "AdjustIsr",
    ApiKey.LIST_OFFSETS: "ListOffsets",
    ApiKey.COMMIT_KV_SNAPSHOT: "CommitKvSnapshot",
    ApiKey.GET_LATEST_KV_SNAPSHOTS: "GetLatestKvSnapshots",
    ApiKey.GET_KV_SNAPSHOT_METADATA: "GetKvSnapshotMetadata",
    ApiKey.GET_FILESYSTEM_SECURITY_TOKEN: "GetFileSystemSecurityToken",
    ApiKey.INIT_WRITER: "InitWriter",
    ApiKey.COMMIT_REMOTE_LOG_MANIFEST: "CommitRemoteLogManifest",
    ApiKey.NOTIFY_REMOTE_LOG_OFFSETS: "NotifyRemoteLogOffsets",
    ApiKey.NOTIFY_KV_SNAPSHOT_OFFSET: "NotifyKvSnapshotOffset",
    ApiKey.COMMIT_LAKE_TABLE_SNAPSHOT: "CommitLakeTableSnapshot",
    ApiKey.NOTIFY_LAKE_TABLE_OFFSET: "NotifyLakeTableOffset",
    ApiKey.GET_LAKE_SNAPSHOT: "GetLakeSnapshot",
    ApiKey.LIMIT_SCAN: "LimitScan",
    ApiKey.PREFIX_LOOKUP: "PrefixLookup",
    ApiKey.GET_DATABASE_INFO: "GetDatabaseInfo",
    ApiKey.CREATE_PARTITION: "CreatePartition",
    ApiKey.DROP_PARTITION: "DropPartition",
    ApiKey.AUTHENTICATE: "Authenticate",
    ApiKey.CREATE_ACLS: "CreateAcls",
    ApiKey.LIST_ACLS: "ListAcls",
    ApiKey.DROP_ACLS: "DropAcls",
    ApiKey.LAKE_TIERING_HEARTBEAT: "LakeTieringHeartbeat",
    ApiKey.CONTROLLED_SHUTDOWN: "ControlledShutdown",
    ApiKey.ALTER_TABLE: "AlterTable",
    ApiKey.DESCRIBE_CLUSTER_CONFIGS: "DescribeClusterConfigs",
    ApiKey.ALTER_CLUSTER_CONFIGS: "AlterClusterConfigs",
    ApiKey.ADD_SERVER_TAG: "AddServerTag",
    ApiKey.REMOVE_SERVER_TAG: "RemoveServerTag",
    ApiKey.REBALANCE: "Rebalance",
    ApiKey.LIST_REBALANCE_PROGRESS: "ListRebalanceProgress",
    ApiKey.CANCEL_REBALANCE: "CancelRebalance",
    ApiKey.PREPARE_LAKE_TABLE_SNAPSHOT: "PrepareLakeTableSnapshot",
    ApiKey.REGISTER_PRODUCER_OFFSETS: "RegisterProducerOffsets",
    ApiKey.GET_PRODUCER_OFFSETS: "GetProducerOffsets",
    ApiKey.DELETE_PRODUCER_OFFSETS: "DeleteProducerOffsets",
    ApiKey.ACQUIRE_KV_SNAPSHOT_LEASE: "AcquireKvSnapshotLease",
    ApiKey.RELEASE_KV_SNAPSHOT_LEASE: "ReleaseKvSnapshotLease",
    ApiKey.DROP_KV_SNAPSHOT_LEASE: "DropKvSnapshotLease",
    ApiKey.GET_TABLE_STATS: "GetTableStats",
    ApiKey.ALTER_DATABASE: "AlterDatabase",
    ApiKey.SCAN_KV: "ScanKv",
    ApiKey.GET_CLUSTER_HEALTH: "GetClusterHealth",
    ApiKey.LIST_REMOTE_LOG_MANIFESTS: "ListRemoteLogManifests",
    ApiKey.LIST_KV_SNAPSHOTS: "ListKvSnapshots",
}


def _build() -> Mapping[ApiKey, ApiMessages]:
    table: dict[ApiKey, ApiMessages] = {}
    for key, base in _BASE_NAMES.items():
        req = getattr(pb, f"{base}Request", None)
        resp = getattr(pb, f"{base}Response", None)
        if req is None and resp is None:
            continue
        if req is None or resp is None:  # pragma: no cover - a half-described API
            raise RuntimeError(f"fluss_rpc.proto describes only half of {key.name}")
        table[key] = ApiMessages(req, resp)
    return MappingProxyType(table)


#: ApiKey -> (request class, response class), for every API the .proto describes.
MESSAGES: Mapping[ApiKey, ApiMessages] = _build()


def messages_for(api: ApiKey | int) -> ApiMessages:
    """The message pair of ``api``; :class:`NoMessagesForApiError` when the .proto lacks it."""
    key = _as_key(api)
    try:
        return MESSAGES[key]
    except KeyError:
        raise NoMessagesForApiError(
            f"{key.name} has no message definitions in fluss_proto (not in fluss_rpc.proto)"
        ) from None


def request_class(api: ApiKey | int) -> type[Message]:
    return messages_for(api).request


def response_class(api: ApiKey | int) -> type[Message]:
    return messages_for(api).response


# --------------------------------------------------------------------------- encoding


def encode_message(message: Message, *, what: str | None = None) -> bytes:
    """Serialise ``message``; ``ValueError`` naming the missing fields if incomplete."""
    if not message.IsInitialized():
        missing = ", ".join(message.FindInitializationErrors())
        name = what or type(message).DESCRIPTOR.name
        raise ValueError(f"{name} lacks required fields: {missing}")
    return message.SerializeToString()


def _check_class(api: ApiKey, message: object, expected: type[Message], role: str) -> None:
    if not isinstance(message, expected):
        raise TypeError(
            f"{api.name} takes a {expected.DESCRIPTOR.name} as its {role}, "
            f"got {type(message).__name__}"
        )


def encode_request(api: ApiKey | int, request: Message) -> bytes:
    """Body bytes of a request for ``api`` (the frame header is added by the connection).

    ``TypeError`` when ``request`` is not the API's request class; ``ValueError`` when a
    required field is unset.
    """
    key = _as_key(api)
    cls = messages_for(key).request
    _check_class(key, request, cls, "request")
    return encode_message(request, what=f"{key.name} request ({cls.DESCRIPTOR.name})")


def encode_response(api: ApiKey | int, response: Message) -> bytes:
    """Body bytes of a response for ``api`` (used by fake servers in tests)."""
    key = _as_key(api)
    cls = messages_for(key).response
    _check_class(key, response, cls, "response")
    return encode_message(response, what=f"{key.name} response ({cls.DESCRIPTOR.name})")


# --------------------------------------------------------------------------- decoding


def decode_message(cls: type[M], body: bytes | bytearray | memoryview, *, what: str = "") -> M:
    """Parse ``body`` as ``cls``; :class:`DecodeError` on garbage, on a string field that
    is not valid UTF-8 (the .proto asks the parser to verify strings) or on missing
    required fields."""
    message = cls()
    try:
        message.ParseFromString(body if isinstance(body, bytes) else bytes(body))
    except Exception as exc:  # protobuf raises its own DecodeError, sometimes others
        raise DecodeError(
            f"{_label(cls, what)} could not be decoded ({len(body)} bytes): malformed "
            f"protobuf or a string field that is not valid UTF-8 ({type(exc).__name__})"
        ) from None
    if not message.IsInitialized():
        missing = ", ".join(message.FindInitializationErrors())
        raise DecodeError(f"{_label(cls, what)} lacks required fields: {missing}")
    return message


def _label(cls: type[Message], what: str) -> str:
    name = cls.DESCRIPTOR.name
    return f"{what}: {name}" if what else name


def decode_response(api: ApiKey | int, body: bytes | bytearray | memoryview) -> Message:
    """Parse the body of a SUCCESS response to ``api``."""
    key = _as_key(api)
    return decode_message(messages_for(key).response, body, what=_WHAT_RESPONSE[key])


def decode_request(api: ApiKey | int, body: bytes | bytearray | memoryview) -> Message:
    """Parse a request body for ``api`` (used by fake servers in tests)."""
    key = _as_key(api)
    return decode_message(messages_for(key).request, body, what=f"{key.name} request")


def _as_key(api: ApiKey | int) -> ApiKey:
    key = _KEYS.get(api)  # an IntEnum member hashes and compares like its int
    if key is not None:
        return key
    try:
        return ApiKey(api)
    except ValueError:
        raise NoMessagesForApiError(f"unknown API key {api!r}") from None


_KEYS: dict[int, ApiKey] = {int(k): k for k in ApiKey}
_WHAT_RESPONSE: dict[ApiKey, str] = {k: f"{k.name} response" for k in ApiKey}
