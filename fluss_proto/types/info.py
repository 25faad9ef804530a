"""``TableInfo`` / ``DatabaseInfo`` (a descriptor plus server facts) and the table
properties konsole reads (log and kv format, Arrow compression, ...)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Protocol, TypeVar

from fluss_proto.errors import TableJsonError
from fluss_proto.types.datatypes import _INT32_MAX, _INT32_MIN, FrozenDict, RowType
from fluss_proto.types.parsing import parse_database_descriptor, parse_table_descriptor
from fluss_proto.types.schema import DatabaseDescriptor, Schema, TableDescriptor

# ============================================================================ table properties


class LogFormat(StrEnum):
    ARROW = "ARROW"
    INDEXED = "INDEXED"
    COMPACTED = "COMPACTED"


class KvFormat(StrEnum):
    COMPACTED = "COMPACTED"
    INDEXED = "INDEXED"


class ArrowCompressionType(StrEnum):
    NONE = "NONE"
    LZ4_FRAME = "LZ4_FRAME"
    ZSTD = "ZSTD"


@dataclass(frozen=True)
class ArrowCompression:
    """Arrow log compression; ``level`` is set for ZSTD only (1..22, default 3)."""

    type: ArrowCompressionType
    level: int | None = None


# Table option keys (Fluss ConfigOptions) used by the helpers below.
LOG_FORMAT = "table.log.format"
KV_FORMAT = "table.kv.format"
KV_FORMAT_VERSION = "table.kv.format-version"
ARROW_COMPRESSION_TYPE = "table.log.arrow.compression.type"
ARROW_COMPRESSION_ZSTD_LEVEL = "table.log.arrow.compression.zstd.level"
REPLICATION_FACTOR = "table.replication.factor"
AUTO_PARTITION_ENABLED = "table.auto-partition.enabled"
DATALAKE_ENABLED = "table.datalake.enabled"
DATALAKE_FORMAT = "table.datalake.format"
MERGE_ENGINE = "table.merge-engine"

_DEFAULT_ZSTD_LEVEL = 3


class _GetTableInfoResponse(Protocol):
    table_id: int
    schema_id: int
    table_json: bytes
    created_time: int
    modified_time: int

    def HasField(self, name: str, /) -> bool: ...


class _GetDatabaseInfoResponse(Protocol):
    database_json: bytes
    created_time: int
    modified_time: int


@dataclass(frozen=True)
class TableInfo:
    """What ``GetTableInfo`` says about one table (Fluss ``TableInfo``).

    ``physical_primary_key`` is the primary key without the partition keys. The helpers that
    read table options raise :class:`TableJsonError` when an option has a value Fluss would
    not accept.
    """

    database: str
    table: str
    table_id: int
    schema_id: int
    schema: Schema
    primary_key: tuple[str, ...]
    physical_primary_key: tuple[str, ...]
    bucket_keys: tuple[str, ...]
    partition_keys: tuple[str, ...]
    bucket_count: int
    properties: FrozenDict
    custom_properties: FrozenDict
    comment: str | None
    created_ms: int
    modified_ms: int
    remote_data_dir: str | None = None

    # -- construction
    @classmethod
    def from_descriptor(
        cls,
        database: str,
        table: str,
        *,
        table_id: int,
        schema_id: int,
        descriptor: TableDescriptor,
        created_ms: int,
        modified_ms: int,
        remote_data_dir: str | None = None,
    ) -> TableInfo:
        if descriptor.bucket_count is None:
            raise TableJsonError("bucket_count", "missing; a table's info needs its bucket count")
        pk = descriptor.schema.primary_key
        return cls(
            database=database,
            table=table,
            table_id=table_id,
            schema_id=schema_id,
            schema=descriptor.schema,
            primary_key=pk,
            physical_primary_key=tuple(k for k in pk if k not in descriptor.partition_keys),
            bucket_keys=descriptor.bucket_keys,
            partition_keys=descriptor.partition_keys,
            bucket_count=descriptor.bucket_count,
            properties=descriptor.properties,
            custom_properties=descriptor.custom_properties,
            comment=descriptor.comment,
            created_ms=created_ms,
            modified_ms=modified_ms,
            remote_data_dir=remote_data_dir,
        )

    @classmethod
    def from_response(cls, database: str, table: str, resp: _GetTableInfoResponse) -> TableInfo:
        """From a ``GetTableInfoResponse`` (``remote_data_dir`` is only sent by Fluss 1.0)."""
        remote: str | None = None
        try:
            if resp.HasField("remote_data_dir"):
                remote = resp.remote_data_dir  # type: ignore[attr-defined]
        except ValueError:  # a message class without the field
            remote = None
        return cls.from_descriptor(
            database,
            table,
            table_id=resp.table_id,
            schema_id=resp.schema_id,
            descriptor=parse_table_descriptor(resp.table_json),
            created_ms=resp.created_time,
            modified_ms=resp.modified_time,
            remote_data_dir=remote,
        )

    # -- derived
    @property
    def table_path(self) -> str:
        return f"{self.database}.{self.table}"

    @property
    def is_pk_table(self) -> bool:
        return bool(self.primary_key)

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_keys)

    @property
    def has_bucket_key(self) -> bool:
        return bool(self.bucket_keys)

    @property
    def is_default_bucket_key(self) -> bool:
        """PK tables: bucket keys == physical primary key; log tables: no bucket keys."""
        if self.is_pk_table:
            return self.bucket_keys == self.physical_primary_key
        return not self.bucket_keys

    @property
    def row_type(self) -> RowType:
        return self.schema.row_type

    @property
    def log_format(self) -> LogFormat:
        return _enum_option(self.properties, LOG_FORMAT, LogFormat, LogFormat.ARROW)

    @property
    def kv_format(self) -> KvFormat:
        return _enum_option(self.properties, KV_FORMAT, KvFormat, KvFormat.COMPACTED)

    @property
    def kv_format_version(self) -> int | None:
        """Set by the coordinator on PK tables created by Fluss 0.9+ (``2`` at 0.9.1)."""
        return _int_option(self.properties, KV_FORMAT_VERSION)

    @property
    def arrow_compression(self) -> ArrowCompression:
        ctype = _enum_option(
            self.properties,
            ARROW_COMPRESSION_TYPE,
            ArrowCompressionType,
            ArrowCompressionType.ZSTD,
        )
        if ctype is not ArrowCompressionType.ZSTD:
            return ArrowCompression(ctype)
        level = _int_option(self.properties, ARROW_COMPRESSION_ZSTD_LEVEL)
        if level is None:
            level = _DEFAULT_ZSTD_LEVEL
        elif not 1 <= level <= 22:
            raise TableJsonError(
                _prop_path(ARROW_COMPRESSION_ZSTD_LEVEL),
                f"ZSTD level must be between 1 and 22, got {level}",
            )
        return ArrowCompression(ctype, level)

    @property
    def replication_factor(self) -> int | None:
        return _int_option(self.properties, REPLICATION_FACTOR)

    @property
    def is_auto_partitioned(self) -> bool:
        return self.is_partitioned and _bool_option(self.properties, AUTO_PARTITION_ENABLED)

    @property
    def datalake_enabled(self) -> bool:
        return _bool_option(self.properties, DATALAKE_ENABLED)

    @property
    def datalake_format(self) -> str | None:
        value = self.properties.get(DATALAKE_FORMAT)
        return value.lower() if value is not None else None

    @property
    def merge_engine(self) -> str | None:
        value = self.properties.get(MERGE_ENGINE)
        return value.lower() if value is not None else None


@dataclass(frozen=True)
class DatabaseInfo:
    name: str
    descriptor: DatabaseDescriptor
    created_ms: int
    modified_ms: int

    @classmethod
    def from_response(cls, name: str, resp: _GetDatabaseInfoResponse) -> DatabaseInfo:
        return cls(
            name=name,
            descriptor=parse_database_descriptor(resp.database_json),
            created_ms=resp.created_time,
            modified_ms=resp.modified_time,
        )

    @property
    def comment(self) -> str | None:
        return self.descriptor.comment

    @property
    def custom_properties(self) -> FrozenDict:
        return self.descriptor.custom_properties


def _prop_path(key: str) -> str:
    return f"properties[{key!r}]"


_E = TypeVar("_E", bound=Enum)


def _enum_option(props: Mapping[str, str], key: str, enum: type[_E], default: _E) -> _E:
    raw = props.get(key)
    if raw is None:
        return default
    wanted = raw.strip().upper()
    for member in enum:
        if member.name == wanted:
            return member
    choices = ", ".join(m.name for m in enum)
    raise TableJsonError(_prop_path(key), f"unknown value {raw!r}; expected one of {choices}")


def _int_option(props: Mapping[str, str], key: str) -> int | None:
    raw = props.get(key)
    if raw is None:
        return None
    text = raw.strip()
    if not re.fullmatch(r"[+-]?[0-9]{1,10}", text) or not _INT32_MIN <= int(text) <= _INT32_MAX:
        raise TableJsonError(_prop_path(key), f"not an integer: {raw!r}")
    return int(text)


def _bool_option(props: Mapping[str, str], key: str) -> bool:
    raw = props.get(key)
    if raw is None:
        return False
    text = raw.strip().lower()
    if text not in ("true", "false"):
        raise TableJsonError(_prop_path(key), f"not a boolean: {raw!r}")
    return text == "true"
