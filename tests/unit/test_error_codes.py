"""Table-driven checks of fluss_proto.error_codes."""

from __future__ import annotations

import pickle

import pytest

from fluss_proto import error_codes
from fluss_proto.error_codes import (
    CODES_SINCE_1_0,
    ERROR_INFO,
    UnknownServerCodeError,
    class_for_code,
    from_code,
)
from fluss_proto.errors import AuthenticationError, FlussError, ServerError

ALL_CODES = sorted(ERROR_INFO)

# What Fluss itself says, read once from its sources (not from our table): the Errors enum
# (fluss-rpc/src/main/java/org/apache/fluss/rpc/protocol/Errors.java) gives code and name;
# the exception class it builds says retriable (a RetriableException subclass) and
# "refresh metadata" (an InvalidMetadataException subclass).
# code -> (enum name, retriable, invalid metadata); v0.9.1-incubating (commit 6bf969f7).
FLUSS_0_9_1: dict[int, tuple[str, bool, bool]] = {
    -1: ("UNKNOWN_SERVER_ERROR", False, False),
    1: ("NETWORK_EXCEPTION", True, True),
    2: ("UNSUPPORTED_VERSION", False, False),
    3: ("CORRUPT_MESSAGE", True, False),
    4: ("DATABASE_NOT_EXIST", False, False),
    5: ("DATABASE_NOT_EMPTY", False, False),
    6: ("DATABASE_ALREADY_EXIST", False, False),
    7: ("TABLE_NOT_EXIST", False, False),
    8: ("TABLE_ALREADY_EXIST", False, False),
    9: ("SCHEMA_NOT_EXIST", True, False),
    10: ("LOG_STORAGE_EXCEPTION", True, False),
    11: ("KV_STORAGE_EXCEPTION", True, False),
    12: ("NOT_LEADER_OR_FOLLOWER", True, True),
    13: ("RECORD_TOO_LARGE_EXCEPTION", False, False),
    14: ("CORRUPT_RECORD_EXCEPTION", True, False),
    15: ("INVALID_TABLE_EXCEPTION", False, False),
    16: ("INVALID_DATABASE_EXCEPTION", False, False),
    17: ("INVALID_REPLICATION_FACTOR", False, False),
    18: ("INVALID_REQUIRED_ACKS", False, False),
    19: ("LOG_OFFSET_OUT_OF_RANGE_EXCEPTION", False, False),
    20: ("NON_PRIMARY_KEY_TABLE_EXCEPTION", False, False),
    21: ("UNKNOWN_TABLE_OR_BUCKET_EXCEPTION", True, True),
    22: ("INVALID_UPDATE_VERSION_EXCEPTION", False, False),
    23: ("INVALID_COORDINATOR_EXCEPTION", False, False),
    24: ("FENCED_LEADER_EPOCH_EXCEPTION", False, False),
    25: ("REQUEST_TIME_OUT", True, False),
    26: ("STORAGE_EXCEPTION", True, False),
    27: ("OPERATION_NOT_ATTEMPTED_EXCEPTION", False, False),
    28: ("NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION", True, False),
    29: ("NOT_ENOUGH_REPLICAS_EXCEPTION", True, False),
    30: ("SECURITY_TOKEN_EXCEPTION", False, False),
    31: ("OUT_OF_ORDER_SEQUENCE_EXCEPTION", False, False),
    32: ("DUPLICATE_SEQUENCE_EXCEPTION", False, False),
    33: ("UNKNOWN_WRITER_ID_EXCEPTION", False, False),
    34: ("INVALID_COLUMN_PROJECTION", False, False),
    35: ("INVALID_TARGET_COLUMN", False, False),
    36: ("PARTITION_NOT_EXISTS", False, False),
    37: ("TABLE_NOT_PARTITIONED_EXCEPTION", False, False),
    38: ("INVALID_TIMESTAMP_EXCEPTION", False, False),
    39: ("INVALID_CONFIG_EXCEPTION", False, False),
    40: ("LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION", False, False),
    41: ("KV_SNAPSHOT_NOT_EXIST", False, False),
    42: ("PARTITION_ALREADY_EXISTS", False, False),
    43: ("PARTITION_SPEC_INVALID_EXCEPTION", False, False),
    44: ("LEADER_NOT_AVAILABLE_EXCEPTION", True, True),
    45: ("PARTITION_MAX_NUM_EXCEPTION", False, False),
    46: ("AUTHENTICATE_EXCEPTION", False, False),
    47: ("SECURITY_DISABLED_EXCEPTION", False, False),
    48: ("AUTHORIZATION_EXCEPTION", False, False),
    49: ("BUCKET_MAX_NUM_EXCEPTION", False, False),
    50: ("FENCED_TIERING_EPOCH_EXCEPTION", False, False),
    # RetriableAuthenticationException extends AuthenticationException, not Retriable...
    51: ("RETRIABLE_AUTHENTICATE_EXCEPTION", False, False),
    52: ("INVALID_SERVER_RACK_INFO_EXCEPTION", False, False),
    53: ("LAKE_SNAPSHOT_NOT_EXIST", False, False),
    54: ("LAKE_TABLE_ALREADY_EXIST", False, False),
    55: ("INELIGIBLE_REPLICA_EXCEPTION", False, False),
    56: ("INVALID_ALTER_TABLE_EXCEPTION", False, False),
    57: ("DELETION_DISABLED_EXCEPTION", False, False),
    58: ("SERVER_NOT_EXIST_EXCEPTION", False, False),
    59: ("SEVER_TAG_ALREADY_EXIST_EXCEPTION", False, False),
    60: ("SEVER_TAG_NOT_EXIST_EXCEPTION", False, False),
    61: ("REBALANCE_FAILURE_EXCEPTION", False, False),
    62: ("NO_REBALANCE_IN_PROGRESS_EXCEPTION", False, False),
    63: ("INVALID_PRODUCER_ID_EXCEPTION", False, False),
}
# Added after 0.9.1 (Fluss main, commit 545c5539, the 1.0 line); 0.9.1 has none of them.
FLUSS_1_0_ONLY: dict[int, tuple[str, bool, bool]] = {
    64: ("CONFIG_EXCEPTION", False, False),
    65: ("NOT_COORDINATOR_LEADER_EXCEPTION", False, False),
    66: ("SCANNER_EXPIRED", False, False),
    67: ("UNKNOWN_SCANNER_ID", False, False),
    68: ("INVALID_SCAN_REQUEST", False, False),
    69: ("TOO_MANY_SCANNERS", False, False),
    70: ("DISK_WRITE_LOCKED", True, False),
    71: ("INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY", False, False),
    72: ("STORAGE_BACKPRESSURE_EXCEPTION", True, False),
    73: ("HISTORICAL_PARTITION_THROTTLED", True, False),
}
FLUSS = {**FLUSS_0_9_1, **FLUSS_1_0_ONLY}


def test_table_covers_minus_one_to_73_without_zero() -> None:
    assert [-1, *range(1, 74)] == ALL_CODES
    assert sorted(FLUSS) == ALL_CODES  # every code Fluss defines, and no other


@pytest.mark.parametrize("code", sorted(FLUSS))
def test_each_code_is_what_fluss_says(code: int) -> None:
    name, retriable, invalid_metadata = FLUSS[code]
    spec = ERROR_INFO[code]
    assert (spec.name, spec.retriable, spec.refresh_metadata) == (
        name,
        retriable,
        invalid_metadata,
    )
    assert spec.since == ("0.9" if code in FLUSS_0_9_1 else "1.0")
    # The typed exception carries the same facts, its context, and never needs a message.
    err = from_code(code, "boom", api="FETCH_LOG", server="ts-1:9123")
    cls = getattr(error_codes, spec.class_name)
    assert type(err) is cls and class_for_code(code) is cls
    assert isinstance(err, ServerError) and isinstance(err, FlussError)
    assert (err.code, err.name, err.retriable) == (code, name, retriable)
    assert getattr(err, "refresh_metadata", False) is invalid_metadata
    assert cls.__name__ == spec.class_name and cls.__module__ == "fluss_proto.error_codes"
    assert spec.class_name in error_codes.__all__
    text = str(err)
    for part in (name, f"({code})", "boom", "api=FETCH_LOG", "server=ts-1:9123"):
        assert part in text
    for message in (None, ""):
        bare = from_code(code, message)
        assert bare.message == ""
        assert str(bare) == f"{name} ({code})"


def test_class_names_are_unique_and_readable() -> None:
    names = [s.class_name for s in ERROR_INFO.values()]
    assert len(names) == len(set(names))
    for name in names:
        assert name.endswith("Error")
        assert name.isidentifier()
        # Must not shadow the client-side classes in fluss_proto.errors.
        assert name not in {"RequestTimeoutError", "AuthenticationError", "ProtocolError"}


@pytest.mark.parametrize(
    ("code", "name", "class_name", "retriable"),
    [
        (-1, "UNKNOWN_SERVER_ERROR", "UnknownServerError", False),
        (1, "NETWORK_EXCEPTION", "NetworkError", True),
        (7, "TABLE_NOT_EXIST", "TableNotExistError", False),
        (11, "KV_STORAGE_EXCEPTION", "KvStorageError", True),
        (12, "NOT_LEADER_OR_FOLLOWER", "NotLeaderOrFollowerError", True),
        (21, "UNKNOWN_TABLE_OR_BUCKET_EXCEPTION", "UnknownTableOrBucketError", True),
        (25, "REQUEST_TIME_OUT", "ServerTimeoutError", True),
        (36, "PARTITION_NOT_EXISTS", "PartitionNotExistError", False),
        (44, "LEADER_NOT_AVAILABLE_EXCEPTION", "LeaderNotAvailableError", True),
        (46, "AUTHENTICATE_EXCEPTION", "AuthenticateFailedError", False),
        (47, "SECURITY_DISABLED_EXCEPTION", "SecurityDisabledError", False),
        (51, "RETRIABLE_AUTHENTICATE_EXCEPTION", "RetriableAuthenticateError", False),
        (59, "SEVER_TAG_ALREADY_EXIST_EXCEPTION", "ServerTagAlreadyExistError", False),
        (63, "INVALID_PRODUCER_ID_EXCEPTION", "InvalidProducerIdError", False),
        (64, "CONFIG_EXCEPTION", "ConfigError", False),
        (65, "NOT_COORDINATOR_LEADER_EXCEPTION", "NotCoordinatorLeaderError", False),
        (66, "SCANNER_EXPIRED", "ScannerExpiredError", False),
        (67, "UNKNOWN_SCANNER_ID", "UnknownScannerIdError", False),
        (68, "INVALID_SCAN_REQUEST", "InvalidScanRequestError", False),
        (69, "TOO_MANY_SCANNERS", "TooManyScannersError", False),
        (70, "DISK_WRITE_LOCKED", "DiskWriteLockedError", True),
        (
            71,
            "INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY",
            "InsufficientKvLeaderReplicaCapacityError",
            False,
        ),
        (72, "STORAGE_BACKPRESSURE_EXCEPTION", "StorageBackpressureError", True),
        (73, "HISTORICAL_PARTITION_THROTTLED", "HistoricalPartitionThrottledError", True),
    ],
)
def test_known_codes(code: int, name: str, class_name: str, retriable: bool) -> None:
    spec = ERROR_INFO[code]
    assert (spec.name, spec.class_name, spec.retriable) == (name, class_name, retriable)
    cls = getattr(error_codes, class_name)
    assert cls.code == code
    assert cls.retriable is retriable


def test_retriable_set_matches_fluss() -> None:
    retriable = {c for c, s in ERROR_INFO.items() if s.retriable}
    assert retriable == {1, 3, 9, 10, 11, 12, 14, 21, 25, 26, 28, 29, 44, 70, 72, 73}
    refresh = {c for c, s in ERROR_INFO.items() if s.refresh_metadata}
    assert refresh == {1, 12, 21, 44}
    assert refresh <= retriable


def test_codes_only_at_main() -> None:
    assert frozenset(range(64, 74)) == CODES_SINCE_1_0
    for code in range(-1, 64):
        if code:
            assert ERROR_INFO[code].since == "0.9"


def test_module_attributes() -> None:
    assert error_codes.NotCoordinatorLeaderError.code == 65
    assert error_codes.ScannerExpiredError.name == "SCANNER_EXPIRED"
    assert error_codes.DiskWriteLockedError.retriable is True
    assert error_codes.StorageBackpressureError.code == 72
    assert "NotLeaderOrFollowerError" in dir(error_codes)
    with pytest.raises(AttributeError):
        error_codes.NoSuchError  # noqa: B018


def test_authentication_codes_are_also_authentication_errors() -> None:
    assert isinstance(from_code(46, "bad password"), AuthenticationError)
    assert isinstance(from_code(51, None), AuthenticationError)
    assert not isinstance(from_code(48, None), AuthenticationError)


def test_catch_by_class() -> None:
    with pytest.raises(error_codes.NotLeaderOrFollowerError) as info:
        raise from_code(12, "moved")
    assert info.value.retriable


@pytest.mark.parametrize("code", [74, 999, -2, 32767, -32768])
@pytest.mark.parametrize("message", [None, "", "from a newer server"])
def test_unknown_code_keeps_number(code: int, message: str | None) -> None:
    err = from_code(code, message, api="GET_METADATA", server="coord:9123")
    assert type(err) is UnknownServerCodeError
    assert isinstance(err, ServerError)
    assert err.code == code
    assert err.retriable is False
    assert f"({code})" in str(err)
    assert class_for_code(code) is None
    # The class default must not be touched by an instance.
    assert UnknownServerCodeError.code == ServerError.code


def test_zero_is_not_an_error() -> None:
    with pytest.raises(ValueError):
        from_code(0, None)
    assert class_for_code(0) is None


def test_classes_pickle_by_reference() -> None:
    cls = error_codes.NotCoordinatorLeaderError
    assert pickle.loads(pickle.dumps(cls)) is cls
