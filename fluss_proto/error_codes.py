"""Fluss server error codes, one :class:`~fluss_proto.errors.ServerError` subclass per code.

Use :func:`from_code` to turn an ``error_code`` (from an ERROR_RESPONSE frame or from a
per-bucket / top-level error field inside a successful reply) into an exception instance.

Per class:

- ``code``: the number on the wire.
- ``name``: the constant's name in Fluss's ``Errors`` enum, spelled exactly as Fluss does
  (including its typos, e.g. ``SEVER_TAG_ALREADY_EXIST_EXCEPTION``).
- ``retriable``: True when the server-side exception type is one of Fluss's retriable
  exceptions; the same request may succeed later.
- ``refresh_metadata``: True for the retriable "your view of the cluster is stale" family
  (Fluss's invalid-metadata exceptions). Refresh metadata (leaders, servers) before retrying.
- ``since``: ``"0.9"`` if Fluss 0.9.1 already defines the code, ``"1.0"`` if only Fluss main
  (1.0-SNAPSHOT) does. Codes -1..63 are identical in both releases.

Notes on individual codes:

- 51 (RETRIABLE_AUTHENTICATE_EXCEPTION) is *not* retriable in the generic sense; only the
  SASL handshake restarts on it.
- 46 and 51 also derive from :class:`~fluss_proto.errors.AuthenticationError`.
- 69 (TOO_MANY_SCANNERS) is not flagged retriable by Fluss, although backing off and opening
  the scanner again later is the expected reaction.
- 72 (STORAGE_BACKPRESSURE_EXCEPTION) is only sent for PUT_KV version 2 and higher; older
  request versions get 11 instead.

The classes are built from one table (:data:`_ERROR_TABLE`) and exposed as module
attributes, e.g. ``error_codes.NotCoordinatorLeaderError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fluss_proto.errors import AuthenticationError, ServerError

Since = Literal["0.9", "1.0"]

# Fluss's code for "no error". It never becomes an exception.
NONE_CODE = 0

# (code, Fluss enum name, our class name, retriable, refresh_metadata, since)
_ERROR_TABLE: list[tuple[int, str, str, bool, bool, Since]] = [
    (-1, "UNKNOWN_SERVER_ERROR", "UnknownServerError", False, False, "0.9"),
    (1, "NETWORK_EXCEPTION", "NetworkError", True, True, "0.9"),
    (2, "UNSUPPORTED_VERSION", "UnsupportedVersionError", False, False, "0.9"),
    (3, "CORRUPT_MESSAGE", "CorruptMessageError", True, False, "0.9"),
    (4, "DATABASE_NOT_EXIST", "DatabaseNotExistError", False, False, "0.9"),
    (5, "DATABASE_NOT_EMPTY", "DatabaseNotEmptyError", False, False, "0.9"),
    (6, "DATABASE_ALREADY_EXIST", "DatabaseAlreadyExistError", False, False, "0.9"),
    (7, "TABLE_NOT_EXIST", "TableNotExistError", False, False, "0.9"),
    (8, "TABLE_ALREADY_EXIST", "TableAlreadyExistError", False, False, "0.9"),
    (9, "SCHEMA_NOT_EXIST", "SchemaNotExistError", True, False, "0.9"),
    (10, "LOG_STORAGE_EXCEPTION", "LogStorageError", True, False, "0.9"),
    (11, "KV_STORAGE_EXCEPTION", "KvStorageError", True, False, "0.9"),
    (12, "NOT_LEADER_OR_FOLLOWER", "NotLeaderOrFollowerError", True, True, "0.9"),
    (13, "RECORD_TOO_LARGE_EXCEPTION", "RecordTooLargeError", False, False, "0.9"),
    (14, "CORRUPT_RECORD_EXCEPTION", "CorruptRecordError", True, False, "0.9"),
    (15, "INVALID_TABLE_EXCEPTION", "InvalidTableError", False, False, "0.9"),
    (16, "INVALID_DATABASE_EXCEPTION", "InvalidDatabaseError", False, False, "0.9"),
    (17, "INVALID_REPLICATION_FACTOR", "InvalidReplicationFactorError", False, False, "0.9"),
    (18, "INVALID_REQUIRED_ACKS", "InvalidRequiredAcksError", False, False, "0.9"),
    (19, "LOG_OFFSET_OUT_OF_RANGE_EXCEPTION", "LogOffsetOutOfRangeError", False, False, "0.9"),
    (20, "NON_PRIMARY_KEY_TABLE_EXCEPTION", "NonPrimaryKeyTableError", False, False, "0.9"),
    (21, "UNKNOWN_TABLE_OR_BUCKET_EXCEPTION", "UnknownTableOrBucketError", True, True, "0.9"),
    (22, "INVALID_UPDATE_VERSION_EXCEPTION", "InvalidUpdateVersionError", False, False, "0.9"),
    (23, "INVALID_COORDINATOR_EXCEPTION", "InvalidCoordinatorError", False, False, "0.9"),
    (24, "FENCED_LEADER_EPOCH_EXCEPTION", "FencedLeaderEpochError", False, False, "0.9"),
    # Server-side timeout; distinct from the client-side errors.RequestTimeoutError.
    (25, "REQUEST_TIME_OUT", "ServerTimeoutError", True, False, "0.9"),
    (26, "STORAGE_EXCEPTION", "StorageError", True, False, "0.9"),
    (27, "OPERATION_NOT_ATTEMPTED_EXCEPTION", "OperationNotAttemptedError", False, False, "0.9"),
    (
        28,
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION",
        "NotEnoughReplicasAfterAppendError",
        True,
        False,
        "0.9",
    ),
    (29, "NOT_ENOUGH_REPLICAS_EXCEPTION", "NotEnoughReplicasError", True, False, "0.9"),
    (30, "SECURITY_TOKEN_EXCEPTION", "SecurityTokenError", False, False, "0.9"),
    (31, "OUT_OF_ORDER_SEQUENCE_EXCEPTION", "OutOfOrderSequenceError", False, False, "0.9"),
    (32, "DUPLICATE_SEQUENCE_EXCEPTION", "DuplicateSequenceError", False, False, "0.9"),
    (33, "UNKNOWN_WRITER_ID_EXCEPTION", "UnknownWriterIdError", False, False, "0.9"),
    (34, "INVALID_COLUMN_PROJECTION", "InvalidColumnProjectionError", False, False, "0.9"),
    (35, "INVALID_TARGET_COLUMN", "InvalidTargetColumnError", False, False, "0.9"),
    (36, "PARTITION_NOT_EXISTS", "PartitionNotExistError", False, False, "0.9"),
    (37, "TABLE_NOT_PARTITIONED_EXCEPTION", "TableNotPartitionedError", False, False, "0.9"),
    (38, "INVALID_TIMESTAMP_EXCEPTION", "InvalidTimestampError", False, False, "0.9"),
    (39, "INVALID_CONFIG_EXCEPTION", "InvalidConfigError", False, False, "0.9"),
    (
        40,
        "LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION",
        "LakeStorageNotConfiguredError",
        False,
        False,
        "0.9",
    ),
    (41, "KV_SNAPSHOT_NOT_EXIST", "KvSnapshotNotExistError", False, False, "0.9"),
    (42, "PARTITION_ALREADY_EXISTS", "PartitionAlreadyExistsError", False, False, "0.9"),
    (43, "PARTITION_SPEC_INVALID_EXCEPTION", "PartitionSpecInvalidError", False, False, "0.9"),
    (44, "LEADER_NOT_AVAILABLE_EXCEPTION", "LeaderNotAvailableError", True, True, "0.9"),
    (45, "PARTITION_MAX_NUM_EXCEPTION", "TooManyPartitionsError", False, False, "0.9"),
    (46, "AUTHENTICATE_EXCEPTION", "AuthenticateFailedError", False, False, "0.9"),
    (47, "SECURITY_DISABLED_EXCEPTION", "SecurityDisabledError", False, False, "0.9"),
    (48, "AUTHORIZATION_EXCEPTION", "AuthorizationError", False, False, "0.9"),
    (49, "BUCKET_MAX_NUM_EXCEPTION", "TooManyBucketsError", False, False, "0.9"),
    (50, "FENCED_TIERING_EPOCH_EXCEPTION", "FencedTieringEpochError", False, False, "0.9"),
    (51, "RETRIABLE_AUTHENTICATE_EXCEPTION", "RetriableAuthenticateError", False, False, "0.9"),
    (52, "INVALID_SERVER_RACK_INFO_EXCEPTION", "InvalidServerRackInfoError", False, False, "0.9"),
    (53, "LAKE_SNAPSHOT_NOT_EXIST", "LakeSnapshotNotExistError", False, False, "0.9"),
    (54, "LAKE_TABLE_ALREADY_EXIST", "LakeTableAlreadyExistError", False, False, "0.9"),
    (55, "INELIGIBLE_REPLICA_EXCEPTION", "IneligibleReplicaError", False, False, "0.9"),
    (56, "INVALID_ALTER_TABLE_EXCEPTION", "InvalidAlterTableError", False, False, "0.9"),
    (57, "DELETION_DISABLED_EXCEPTION", "DeletionDisabledError", False, False, "0.9"),
    (58, "SERVER_NOT_EXIST_EXCEPTION", "ServerNotExistError", False, False, "0.9"),
    (59, "SEVER_TAG_ALREADY_EXIST_EXCEPTION", "ServerTagAlreadyExistError", False, False, "0.9"),
    (60, "SEVER_TAG_NOT_EXIST_EXCEPTION", "ServerTagNotExistError", False, False, "0.9"),
    (61, "REBALANCE_FAILURE_EXCEPTION", "RebalanceFailureError", False, False, "0.9"),
    (62, "NO_REBALANCE_IN_PROGRESS_EXCEPTION", "NoRebalanceInProgressError", False, False, "0.9"),
    (63, "INVALID_PRODUCER_ID_EXCEPTION", "InvalidProducerIdError", False, False, "0.9"),
    # Codes below exist only at Fluss main (1.0).
    (64, "CONFIG_EXCEPTION", "ConfigError", False, False, "1.0"),
    (65, "NOT_COORDINATOR_LEADER_EXCEPTION", "NotCoordinatorLeaderError", False, False, "1.0"),
    (66, "SCANNER_EXPIRED", "ScannerExpiredError", False, False, "1.0"),
    (67, "UNKNOWN_SCANNER_ID", "UnknownScannerIdError", False, False, "1.0"),
    (68, "INVALID_SCAN_REQUEST", "InvalidScanRequestError", False, False, "1.0"),
    (69, "TOO_MANY_SCANNERS", "TooManyScannersError", False, False, "1.0"),
    (70, "DISK_WRITE_LOCKED", "DiskWriteLockedError", True, False, "1.0"),
    (
        71,
        "INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY",
        "InsufficientKvLeaderReplicaCapacityError",
        False,
        False,
        "1.0",
    ),
    (72, "STORAGE_BACKPRESSURE_EXCEPTION", "StorageBackpressureError", True, False, "1.0"),
    (
        73,
        "HISTORICAL_PARTITION_THROTTLED",
        "HistoricalPartitionThrottledError",
        True,
        False,
        "1.0",
    ),
]

# Codes whose classes also derive from errors.AuthenticationError.
_AUTH_CODES = frozenset({46, 51})


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """Static facts about one Fluss error code."""

    code: int
    name: str
    class_name: str
    retriable: bool
    refresh_metadata: bool
    since: Since


class UnknownServerCodeError(ServerError):
    """The server sent an error code konsole does not know (e.g. from a newer Fluss).

    The numeric code is kept on the instance (``err.code``).
    """

    name = "UNRECOGNISED_ERROR_CODE"
    retriable = False
    refresh_metadata = False
    since: Since | None = None


ERROR_INFO: dict[int, ErrorSpec] = {}
_CLASS_BY_CODE: dict[int, type[ServerError]] = {}
_CLASS_BY_NAME: dict[str, type[ServerError]] = {}


def _build() -> None:
    for code, name, class_name, retriable, refresh_metadata, since in _ERROR_TABLE:
        if code in ERROR_INFO or class_name in _CLASS_BY_NAME or code == NONE_CODE:
            raise RuntimeError(f"error_codes: bad or duplicate table row for {code}/{class_name}")
        spec = ErrorSpec(code, name, class_name, retriable, refresh_metadata, since)
        bases: tuple[type, ...] = (ServerError,)
        if code in _AUTH_CODES:
            bases = (ServerError, AuthenticationError)
        cls = type(
            class_name,
            bases,
            {
                "__module__": __name__,
                "__qualname__": class_name,
                "__doc__": f"Fluss error {code} ({name}).",
                "code": code,
                "name": name,
                "retriable": retriable,
                "refresh_metadata": refresh_metadata,
                "since": since,
            },
        )
        ERROR_INFO[code] = spec
        _CLASS_BY_CODE[code] = cls
        _CLASS_BY_NAME[class_name] = cls
    globals().update(_CLASS_BY_NAME)


_build()

#: Error codes that only Fluss main (1.0) defines.
CODES_SINCE_1_0: frozenset[int] = frozenset(c for c, s in ERROR_INFO.items() if s.since == "1.0")

__all__ = [
    "CODES_SINCE_1_0",
    "ERROR_INFO",
    "NONE_CODE",
    "ErrorSpec",
    "UnknownServerCodeError",
    "class_for_code",
    "from_code",
    *_CLASS_BY_NAME,
]


def class_for_code(code: int) -> type[ServerError] | None:
    """The exception class for ``code``, or None when the code is not in the table."""
    return _CLASS_BY_CODE.get(code)


def from_code(
    code: int,
    message: str | None,
    *,
    api: str | None = None,
    server: str | None = None,
) -> ServerError:
    """Build the exception for a server error code.

    ``message`` may be None or empty (the server leaves it out when it has nothing beyond
    the standard text). Unknown codes give :class:`UnknownServerCodeError` carrying the
    number. Code 0 means success and raises :class:`ValueError`.
    """
    code = int(code)
    if code == NONE_CODE:
        raise ValueError("error code 0 (NONE) means success, not an error")
    cls = _CLASS_BY_CODE.get(code)
    if cls is None:
        return UnknownServerCodeError(message, api=api, server=server, code=code)
    return cls(message, api=api, server=server)


def __getattr__(name: str) -> type[ServerError]:
    # Only reached for names that are not real module attributes: every generated class is
    # already in globals(). Declared so type checkers accept `error_codes.SomeError`.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_CLASS_BY_NAME))
