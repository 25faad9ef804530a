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


def test_table_covers_minus_one_to_73_without_zero() -> None:
    assert [-1, *range(1, 74)] == ALL_CODES


@pytest.mark.parametrize("code", ALL_CODES)
def test_every_code_round_trips(code: int) -> None:
    spec = ERROR_INFO[code]
    err = from_code(code, "boom", api="FETCH_LOG", server="ts-1:9123")
    cls = getattr(error_codes, spec.class_name)
    assert type(err) is cls
    assert class_for_code(code) is cls
    assert isinstance(err, ServerError)
    assert isinstance(err, FlussError)
    assert err.code == code
    assert err.name == spec.name
    assert err.retriable is spec.retriable
    assert cls.__name__ == spec.class_name
    assert cls.__module__ == "fluss_proto.error_codes"
    assert spec.class_name in error_codes.__all__
    text = str(err)
    assert spec.name in text
    assert f"({code})" in text
    assert "boom" in text
    assert "api=FETCH_LOG" in text
    assert "server=ts-1:9123" in text


@pytest.mark.parametrize("code", ALL_CODES)
@pytest.mark.parametrize("message", [None, ""])
def test_missing_message_never_crashes(code: int, message: str | None) -> None:
    err = from_code(code, message)
    assert err.message == ""
    assert str(err) == f"{ERROR_INFO[code].name} ({code})"


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
