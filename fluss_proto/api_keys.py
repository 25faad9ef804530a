"""Fluss RPC API keys and what konsole knows about each of them.

The numbers are the 16-bit ``api_key`` sent in every request header. Keys 0..999 are kept free
by Fluss for Kafka compatibility; Fluss's own APIs start at 1000.

For every key, :data:`API_INFO` records:

- ``mutating``: the call changes cluster state (catalog, data, ACLs, configs, tags,
  rebalances, snapshot leases, writer ids, replica state...). konsole's read-only mode refuses
  these. ``LOOKUP`` counts as a read even though a request may ask the server to insert a
  missing key (``insert_if_not_exists``); callers that set that flag must check it themselves.
- ``private``: reserved for server-to-server traffic; a console never sends these.
- ``served_by``: which server type registers a handler for the key. ``"both"`` means any
  tablet server answers as well as the coordinator. A server drops requests for keys it does
  not serve *without replying*, so route before sending.
- ``since``: ``"0.9"`` if Fluss 0.9.1 already has the key, ``"1.0"`` if only Fluss main does.
- ``max_version``: highest request version defined at Fluss main (all lowest versions are 0).
  At 0.9.1 PUT_KV stops at 1; every other key has the same range at both releases.

Facts checked against Fluss ``ApiKeys.java`` and the gateway interfaces at v0.9.1-incubating
and at main (1.0-SNAPSHOT).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Final, Literal

ServedBy = Literal["coordinator", "tablet", "both"]
Since = Literal["0.9", "1.0"]


class ApiKey(IntEnum):
    """Every API key defined at Fluss main."""

    API_VERSIONS = 1000
    CREATE_DATABASE = 1001
    DROP_DATABASE = 1002
    LIST_DATABASES = 1003
    DATABASE_EXISTS = 1004
    CREATE_TABLE = 1005
    DROP_TABLE = 1006
    GET_TABLE_INFO = 1007
    LIST_TABLES = 1008
    LIST_PARTITION_INFOS = 1009
    TABLE_EXISTS = 1010
    GET_TABLE_SCHEMA = 1011
    GET_METADATA = 1012
    UPDATE_METADATA = 1013
    PRODUCE_LOG = 1014
    FETCH_LOG = 1015
    PUT_KV = 1016
    LOOKUP = 1017
    NOTIFY_LEADER_AND_ISR = 1018
    STOP_REPLICA = 1019
    ADJUST_ISR = 1020
    LIST_OFFSETS = 1021
    COMMIT_KV_SNAPSHOT = 1022
    GET_LATEST_KV_SNAPSHOTS = 1023
    GET_KV_SNAPSHOT_METADATA = 1024
    GET_FILESYSTEM_SECURITY_TOKEN = 1025
    INIT_WRITER = 1026
    COMMIT_REMOTE_LOG_MANIFEST = 1027
    NOTIFY_REMOTE_LOG_OFFSETS = 1028
    NOTIFY_KV_SNAPSHOT_OFFSET = 1029
    COMMIT_LAKE_TABLE_SNAPSHOT = 1030
    NOTIFY_LAKE_TABLE_OFFSET = 1031
    GET_LAKE_SNAPSHOT = 1032
    LIMIT_SCAN = 1033
    PREFIX_LOOKUP = 1034
    GET_DATABASE_INFO = 1035
    CREATE_PARTITION = 1036
    DROP_PARTITION = 1037
    AUTHENTICATE = 1038
    CREATE_ACLS = 1039
    LIST_ACLS = 1040
    DROP_ACLS = 1041
    LAKE_TIERING_HEARTBEAT = 1042
    CONTROLLED_SHUTDOWN = 1043
    ALTER_TABLE = 1044
    DESCRIBE_CLUSTER_CONFIGS = 1045
    ALTER_CLUSTER_CONFIGS = 1046
    ADD_SERVER_TAG = 1047
    REMOVE_SERVER_TAG = 1048
    REBALANCE = 1049
    LIST_REBALANCE_PROGRESS = 1050
    CANCEL_REBALANCE = 1051
    PREPARE_LAKE_TABLE_SNAPSHOT = 1052
    REGISTER_PRODUCER_OFFSETS = 1053
    GET_PRODUCER_OFFSETS = 1054
    DELETE_PRODUCER_OFFSETS = 1055
    ACQUIRE_KV_SNAPSHOT_LEASE = 1056
    RELEASE_KV_SNAPSHOT_LEASE = 1057
    DROP_KV_SNAPSHOT_LEASE = 1058
    GET_TABLE_STATS = 1059
    # Only at Fluss main (1.0):
    ALTER_DATABASE = 1060
    SCAN_KV = 1061
    GET_CLUSTER_HEALTH = 1062
    LIST_REMOTE_LOG_MANIFESTS = 1063
    LIST_KV_SNAPSHOTS = 1064


@dataclass(frozen=True, slots=True)
class ApiSpec:
    """Static facts about one API key."""

    name: str
    mutating: bool
    private: bool
    served_by: ServedBy
    since: Since
    max_version: int = 0


# (key, mutating, private, served_by, since, max_version)
_TABLE: list[tuple[ApiKey, bool, bool, ServedBy, Since, int]] = [
    (ApiKey.API_VERSIONS, False, False, "both", "0.9", 0),
    (ApiKey.CREATE_DATABASE, True, False, "coordinator", "0.9", 0),
    (ApiKey.DROP_DATABASE, True, False, "coordinator", "0.9", 0),
    (ApiKey.LIST_DATABASES, False, False, "both", "0.9", 0),
    (ApiKey.DATABASE_EXISTS, False, False, "both", "0.9", 0),
    (ApiKey.CREATE_TABLE, True, False, "coordinator", "0.9", 0),
    (ApiKey.DROP_TABLE, True, False, "coordinator", "0.9", 0),
    (ApiKey.GET_TABLE_INFO, False, False, "both", "0.9", 0),
    (ApiKey.LIST_TABLES, False, False, "both", "0.9", 0),
    (ApiKey.LIST_PARTITION_INFOS, False, False, "both", "0.9", 0),
    (ApiKey.TABLE_EXISTS, False, False, "both", "0.9", 0),
    (ApiKey.GET_TABLE_SCHEMA, False, False, "both", "0.9", 0),
    (ApiKey.GET_METADATA, False, False, "both", "0.9", 0),
    (ApiKey.UPDATE_METADATA, True, True, "tablet", "0.9", 0),
    (ApiKey.PRODUCE_LOG, True, False, "tablet", "0.9", 0),
    (ApiKey.FETCH_LOG, False, False, "tablet", "0.9", 0),
    # Version 2 (main only) = the client understands error 72 (storage backpressure).
    (ApiKey.PUT_KV, True, False, "tablet", "0.9", 2),
    (ApiKey.LOOKUP, False, False, "tablet", "0.9", 1),
    (ApiKey.NOTIFY_LEADER_AND_ISR, True, True, "tablet", "0.9", 0),
    (ApiKey.STOP_REPLICA, True, True, "tablet", "0.9", 0),
    (ApiKey.ADJUST_ISR, True, True, "coordinator", "0.9", 0),
    (ApiKey.LIST_OFFSETS, False, False, "tablet", "0.9", 0),
    (ApiKey.COMMIT_KV_SNAPSHOT, True, True, "coordinator", "0.9", 0),
    (ApiKey.GET_LATEST_KV_SNAPSHOTS, False, False, "both", "0.9", 0),
    (ApiKey.GET_KV_SNAPSHOT_METADATA, False, False, "both", "0.9", 0),
    (ApiKey.GET_FILESYSTEM_SECURITY_TOKEN, False, False, "both", "0.9", 0),
    (ApiKey.INIT_WRITER, True, False, "tablet", "0.9", 0),
    (ApiKey.COMMIT_REMOTE_LOG_MANIFEST, True, True, "coordinator", "0.9", 0),
    (ApiKey.NOTIFY_REMOTE_LOG_OFFSETS, True, True, "tablet", "0.9", 0),
    (ApiKey.NOTIFY_KV_SNAPSHOT_OFFSET, True, True, "tablet", "0.9", 0),
    (ApiKey.COMMIT_LAKE_TABLE_SNAPSHOT, True, True, "coordinator", "0.9", 0),
    (ApiKey.NOTIFY_LAKE_TABLE_OFFSET, True, True, "tablet", "0.9", 0),
    (ApiKey.GET_LAKE_SNAPSHOT, False, False, "both", "0.9", 0),
    (ApiKey.LIMIT_SCAN, False, False, "tablet", "0.9", 0),
    (ApiKey.PREFIX_LOOKUP, False, False, "tablet", "0.9", 1),
    (ApiKey.GET_DATABASE_INFO, False, False, "both", "0.9", 0),
    (ApiKey.CREATE_PARTITION, True, False, "coordinator", "0.9", 0),
    (ApiKey.DROP_PARTITION, True, False, "coordinator", "0.9", 0),
    (ApiKey.AUTHENTICATE, False, False, "both", "0.9", 0),
    (ApiKey.CREATE_ACLS, True, False, "coordinator", "0.9", 0),
    (ApiKey.LIST_ACLS, False, False, "both", "0.9", 0),
    (ApiKey.DROP_ACLS, True, False, "coordinator", "0.9", 0),
    (ApiKey.LAKE_TIERING_HEARTBEAT, True, True, "coordinator", "0.9", 0),
    (ApiKey.CONTROLLED_SHUTDOWN, True, True, "coordinator", "0.9", 0),
    (ApiKey.ALTER_TABLE, True, False, "coordinator", "0.9", 0),
    (ApiKey.DESCRIBE_CLUSTER_CONFIGS, False, False, "both", "0.9", 0),
    (ApiKey.ALTER_CLUSTER_CONFIGS, True, False, "coordinator", "0.9", 0),
    (ApiKey.ADD_SERVER_TAG, True, False, "coordinator", "0.9", 0),
    (ApiKey.REMOVE_SERVER_TAG, True, False, "coordinator", "0.9", 0),
    (ApiKey.REBALANCE, True, False, "coordinator", "0.9", 0),
    (ApiKey.LIST_REBALANCE_PROGRESS, False, False, "coordinator", "0.9", 0),
    (ApiKey.CANCEL_REBALANCE, True, False, "coordinator", "0.9", 0),
    (ApiKey.PREPARE_LAKE_TABLE_SNAPSHOT, True, True, "coordinator", "0.9", 0),
    (ApiKey.REGISTER_PRODUCER_OFFSETS, True, False, "coordinator", "0.9", 0),
    (ApiKey.GET_PRODUCER_OFFSETS, False, False, "coordinator", "0.9", 0),
    (ApiKey.DELETE_PRODUCER_OFFSETS, True, False, "coordinator", "0.9", 0),
    (ApiKey.ACQUIRE_KV_SNAPSHOT_LEASE, True, False, "coordinator", "0.9", 0),
    (ApiKey.RELEASE_KV_SNAPSHOT_LEASE, True, False, "coordinator", "0.9", 0),
    (ApiKey.DROP_KV_SNAPSHOT_LEASE, True, False, "coordinator", "0.9", 0),
    (ApiKey.GET_TABLE_STATS, False, False, "tablet", "0.9", 0),
    (ApiKey.ALTER_DATABASE, True, False, "coordinator", "1.0", 0),
    (ApiKey.SCAN_KV, False, False, "tablet", "1.0", 0),
    # A tablet server forwards this one to the coordinator leader.
    (ApiKey.GET_CLUSTER_HEALTH, False, False, "both", "1.0", 0),
    (ApiKey.LIST_REMOTE_LOG_MANIFESTS, False, False, "coordinator", "1.0", 0),
    (ApiKey.LIST_KV_SNAPSHOTS, False, False, "coordinator", "1.0", 0),
]

API_INFO: dict[ApiKey, ApiSpec] = {
    key: ApiSpec(
        name=key.name,
        mutating=mutating,
        private=private,
        served_by=served_by,
        since=since,
        max_version=max_version,
    )
    for key, mutating, private, served_by, since, max_version in _TABLE
}

if set(API_INFO) != set(ApiKey) or len(_TABLE) != len(ApiKey):  # pragma: no cover
    raise RuntimeError("api_keys: _TABLE must list every ApiKey exactly once")


#: The keys only the 1.0 line serves: a server advertising any of them speaks 1.0.
KEYS_SINCE_1_0: Final = frozenset(int(k) for k, spec in API_INFO.items() if spec.since == "1.0")


def line_of_keys(keys: Iterable[int]) -> Since | None:
    """The Fluss line a server speaks, told by the API keys it advertises (Fluss sends no
    version string): ``"1.0"`` with any key of :data:`KEYS_SINCE_1_0`, else ``"0.9"``;
    None when it advertised none (it could not be asked). The one definition: the
    client, the model and every face read it."""
    advertised = set(keys)
    if not advertised:
        return None
    return "1.0" if advertised & KEYS_SINCE_1_0 else "0.9"


def api_key_or_none(value: int) -> ApiKey | None:
    """The :class:`ApiKey` for a raw number, or None when konsole does not know it."""
    try:
        return ApiKey(value)
    except ValueError:
        return None


def served_by_coordinator(key: ApiKey) -> bool:
    """True if a coordinator registers a handler for ``key``."""
    return API_INFO[key].served_by in ("coordinator", "both")


def served_by_tablet(key: ApiKey) -> bool:
    """True if a tablet server registers a handler for ``key``."""
    return API_INFO[key].served_by in ("tablet", "both")


#: The keys an operator's actions send (``konsole admin``): the whole of what a profile
#: with ``writes = true`` lifts; every other mutating key stays refused.
OPERATOR_ACTIONS: frozenset[ApiKey] = frozenset(
    {
        ApiKey.ADD_SERVER_TAG,
        ApiKey.REMOVE_SERVER_TAG,
        ApiKey.REBALANCE,
        ApiKey.CANCEL_REBALANCE,
        ApiKey.ALTER_CLUSTER_CONFIGS,
        ApiKey.CREATE_ACLS,
        ApiKey.DROP_ACLS,
        ApiKey.CREATE_PARTITION,
        ApiKey.DROP_PARTITION,
        ApiKey.ALTER_TABLE,
    }
)

#: Every key a client may be allowed to send that changes the cluster (``allow_writes=True``):
#: the public mutating keys and LOOKUP (for ``insert_if_not_exists``).
ALL_WRITES: frozenset[ApiKey] = frozenset(
    {k for k, spec in API_INFO.items() if spec.mutating and not spec.private} | {ApiKey.LOOKUP}
)


def write_grant(allow: bool | Iterable[ApiKey | int]) -> frozenset[ApiKey]:
    """The set of write keys ``allow`` lifts: ``False`` none, ``True`` :data:`ALL_WRITES`,
    else exactly the keys given (``ValueError`` for a private or read-only key)."""
    if allow is True or allow is False:
        return ALL_WRITES if allow else frozenset()
    keys = frozenset(ApiKey(k) for k in allow)
    wrong = sorted(k.name for k in keys - ALL_WRITES)
    if wrong:
        raise ValueError(f"not a write a client may be allowed: {', '.join(wrong)}")
    return keys
