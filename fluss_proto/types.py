"""Fluss data types, schemas and table / database descriptors, parsed from the server's JSON.

The coordinator keeps every table as a JSON document and hands it out unchanged:
``GetTableInfoResponse.table_json`` (a table descriptor), ``GetTableSchemaResponse.schema_json``
(a schema), ``PbTableMetadata.table_json`` (a table descriptor) and
``GetDatabaseInfoResponse.database_json`` (a database descriptor). This module turns those
documents into frozen dataclasses and renders types the way Fluss prints them.

The JSON layout (identical at Fluss 0.9.1 and at main)::

    table:    {"version": 1, "schema": {...}, "comment"?: str, "partition_key": [str],
               "bucket_key"?: [str], "bucket_count"?: int,
               "properties": {str: str}, "custom_properties": {str: str}}
    schema:   {"version": 1, "columns": [column], "primary_key"?: [str],
               "auto_increment_column"?: [str], "highest_field_id"?: int}
    column:   {"name": str, "data_type": type, "comment"?: str,
               "agg_function"?: {"type": str, "parameters"?: {str: str}}, "id"?: int}
    type:     {"type": ROOT, "nullable"?: false, ...}   (nullable is written only when false)
              CHAR / BINARY: "length"; DECIMAL: "precision", "scale";
              TIME_WITHOUT_TIME_ZONE / TIMESTAMP_*: "precision";
              ARRAY: "element_type"; MAP: "key_type", "value_type";
              ROW: "fields": [{"name", "field_type", "description"?, "field_id"?}]
    database: {"version": 1, "comment"?: str, "custom_properties": {str: str}}

Column ids, ``highest_field_id`` and nested ``field_id`` appear from Fluss 0.9 on (schema
evolution); ``auto_increment_column`` and ``agg_function`` too. Servers before that omit them,
so they are optional here (``None`` when absent; Fluss's own ``-1`` "unknown id" also reads as
``None``).

Parsing is strict about shapes (a list must be a list, an int an int, a type root one Fluss
knows, precisions and lengths in Fluss's ranges, referenced columns present) and lenient about
what may be missing (absent key lists and property maps read as empty) or unknown (extra keys
are ignored, ``version`` is not checked). Like Fluss's own deserializer it normalises two
things: primary-key columns and map keys are NOT NULL, and a primary-key table without bucket
keys is bucketed by its primary key minus the partition keys.

Every problem raises :class:`TableJsonError` naming where it is, e.g.
``schema.columns[3].data_type: unknown type 'VECTOR' (column 'c_vec')``; nothing else escapes
the ``parse_*`` functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from typing import Any, ClassVar, NoReturn, Protocol, TypeVar

from fluss_proto.errors import TableJsonError

__all__ = [
    "AggFunction",
    "ArrayType",
    "ArrowCompression",
    "ArrowCompressionType",
    "BigIntType",
    "BinaryType",
    "BooleanType",
    "BytesType",
    "CharType",
    "Column",
    "DataField",
    "DataType",
    "DatabaseDescriptor",
    "DatabaseInfo",
    "DateType",
    "DecimalType",
    "DoubleType",
    "FloatType",
    "FrozenDict",
    "IntType",
    "KvFormat",
    "LocalZonedTimestampType",
    "LogFormat",
    "MapType",
    "RowType",
    "Schema",
    "SmallIntType",
    "StringType",
    "TableDescriptor",
    "TableInfo",
    "TableJsonError",
    "TimeType",
    "TimestampType",
    "TinyIntType",
    "TypeRoot",
    "parse_data_type",
    "parse_database_descriptor",
    "parse_schema",
    "parse_table_descriptor",
]

#: Deepest nesting of ARRAY / MAP / ROW accepted; deeper documents are rejected, not recursed.
MAX_TYPE_DEPTH = 64

_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1
_MAX_COMPACT_DECIMAL_PRECISION = 18  # Fluss Decimal.isCompact


# ============================================================================ frozen mapping


class FrozenDict(Mapping[str, str]):
    """An immutable, hashable str -> str mapping that keeps insertion order."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, str] | None = None) -> None:
        self._data: dict[str, str] = dict(data or {})
        self._hash: int | None = None

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

    def to_dict(self) -> dict[str, str]:
        return dict(self._data)


# ============================================================================ data types


class TypeRoot(StrEnum):
    """Fluss ``DataTypeRoot``: the ``type`` value in the JSON (same set at 0.9.1 and main)."""

    CHAR = "CHAR"
    STRING = "STRING"
    BOOLEAN = "BOOLEAN"
    BINARY = "BINARY"
    BYTES = "BYTES"
    DECIMAL = "DECIMAL"
    TINYINT = "TINYINT"
    SMALLINT = "SMALLINT"
    INTEGER = "INTEGER"
    BIGINT = "BIGINT"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    DATE = "DATE"
    TIME_WITHOUT_TIME_ZONE = "TIME_WITHOUT_TIME_ZONE"
    TIMESTAMP_WITHOUT_TIME_ZONE = "TIMESTAMP_WITHOUT_TIME_ZONE"
    TIMESTAMP_WITH_LOCAL_TIME_ZONE = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
    ARRAY = "ARRAY"
    MAP = "MAP"
    ROW = "ROW"


def _escape_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _escape_quotes(text: str) -> str:
    return text.replace("'", "''")


@dataclass(frozen=True)
class DataType:
    """Base of all Fluss data types. ``nullable`` defaults to True, as in Fluss.

    ``sql()`` is Fluss's ``asSerializableString`` (full detail), ``summary()`` its
    ``asSummaryString`` (what ``toString`` prints; also ``str(type)``).
    """

    root: ClassVar[TypeRoot]
    nullable: bool = field(default=True, kw_only=True)

    # -- rendering
    def _body(self, summary: bool) -> str:
        raise NotImplementedError

    def sql(self) -> str:
        """The type as Fluss writes it in full, e.g. ``DECIMAL(15, 2) NOT NULL``."""
        return self._with_nullability(self._body(False))

    def summary(self) -> str:
        """Fluss's short form: TIMESTAMP_LTZ(p), and ROW field descriptions shown as '...'."""
        return self._with_nullability(self._body(True))

    def _with_nullability(self, text: str) -> str:
        return text if self.nullable else f"{text} NOT NULL"

    def __str__(self) -> str:
        return self.summary()

    # -- structure
    def children(self) -> tuple[DataType, ...]:
        return ()

    def with_nullable(self, nullable: bool) -> DataType:
        """A copy with the given nullability (Fluss ``copy(boolean)``)."""
        return replace(self, nullable=nullable)

    def is_variable_length(self) -> bool:
        """Whether a value's encoded size depends on the value (Fluss IndexedRow's rule).

        STRING, BYTES, ARRAY, MAP, ROW and DECIMALs wider than 18 digits are variable;
        CHAR(n) and BINARY(n) count as fixed, as in Fluss.
        """
        return False

    # -- JSON
    def to_json(self) -> dict[str, Any]:
        """The type as Fluss serialises it (same keys, same order)."""
        out: dict[str, Any] = {"type": self.root.value}
        if not self.nullable:
            out["nullable"] = False
        out.update(self._params_json())
        return out

    def _params_json(self) -> dict[str, Any]:
        return {}


def _check_range(what: str, value: int, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{what} must be between {lo} and {hi} (both inclusive), got {value}")


@dataclass(frozen=True)
class _SimpleType(DataType):
    name: ClassVar[str]

    def _body(self, summary: bool) -> str:
        return self.name


@dataclass(frozen=True)
class BooleanType(_SimpleType):
    root = TypeRoot.BOOLEAN
    name = "BOOLEAN"


@dataclass(frozen=True)
class TinyIntType(_SimpleType):
    root = TypeRoot.TINYINT
    name = "TINYINT"


@dataclass(frozen=True)
class SmallIntType(_SimpleType):
    root = TypeRoot.SMALLINT
    name = "SMALLINT"


@dataclass(frozen=True)
class IntType(_SimpleType):
    root = TypeRoot.INTEGER
    name = "INT"


@dataclass(frozen=True)
class BigIntType(_SimpleType):
    root = TypeRoot.BIGINT
    name = "BIGINT"


@dataclass(frozen=True)
class FloatType(_SimpleType):
    root = TypeRoot.FLOAT
    name = "FLOAT"


@dataclass(frozen=True)
class DoubleType(_SimpleType):
    root = TypeRoot.DOUBLE
    name = "DOUBLE"


@dataclass(frozen=True)
class StringType(_SimpleType):
    root = TypeRoot.STRING
    name = "STRING"

    def is_variable_length(self) -> bool:
        return True


@dataclass(frozen=True)
class BytesType(_SimpleType):
    root = TypeRoot.BYTES
    name = "BYTES"

    def is_variable_length(self) -> bool:
        return True


@dataclass(frozen=True)
class DateType(_SimpleType):
    root = TypeRoot.DATE
    name = "DATE"


@dataclass(frozen=True)
class DecimalType(DataType):
    """DECIMAL(p, s): 1 <= p <= 38, 0 <= s <= p."""

    root = TypeRoot.DECIMAL
    MIN_PRECISION: ClassVar[int] = 1
    MAX_PRECISION: ClassVar[int] = 38

    precision: int = 10
    scale: int = 0

    def __post_init__(self) -> None:
        _check_range("DECIMAL precision", self.precision, self.MIN_PRECISION, self.MAX_PRECISION)
        _check_range("DECIMAL scale", self.scale, 0, self.precision)

    def _body(self, summary: bool) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"

    def is_variable_length(self) -> bool:
        return self.precision > _MAX_COMPACT_DECIMAL_PRECISION

    def _params_json(self) -> dict[str, Any]:
        return {"precision": self.precision, "scale": self.scale}


@dataclass(frozen=True)
class _LengthType(DataType):
    name: ClassVar[str]
    length: int = 1

    def __post_init__(self) -> None:
        _check_range(f"{self.name} length", self.length, 1, _INT32_MAX)

    def _body(self, summary: bool) -> str:
        return f"{self.name}({self.length})"

    def _params_json(self) -> dict[str, Any]:
        return {"length": self.length}


@dataclass(frozen=True)
class CharType(_LengthType):
    """CHAR(n), n >= 1."""

    root = TypeRoot.CHAR
    name = "CHAR"


@dataclass(frozen=True)
class BinaryType(_LengthType):
    """BINARY(n), n >= 1."""

    root = TypeRoot.BINARY
    name = "BINARY"


@dataclass(frozen=True)
class _PrecisionType(DataType):
    name: ClassVar[str]
    precision: int = 0

    def __post_init__(self) -> None:
        _check_range(f"{self.name} precision", self.precision, 0, 9)

    def _params_json(self) -> dict[str, Any]:
        return {"precision": self.precision}


@dataclass(frozen=True)
class TimeType(_PrecisionType):
    """TIME(p), 0 <= p <= 9 (JSON root TIME_WITHOUT_TIME_ZONE)."""

    root = TypeRoot.TIME_WITHOUT_TIME_ZONE
    name = "TIME"
    precision: int = 0

    def _body(self, summary: bool) -> str:
        return f"TIME({self.precision})"


@dataclass(frozen=True)
class TimestampType(_PrecisionType):
    """TIMESTAMP(p), 0 <= p <= 9 (JSON root TIMESTAMP_WITHOUT_TIME_ZONE)."""

    root = TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE
    name = "TIMESTAMP"
    precision: int = 6

    def _body(self, summary: bool) -> str:
        return f"TIMESTAMP({self.precision})"


@dataclass(frozen=True)
class LocalZonedTimestampType(_PrecisionType):
    """TIMESTAMP(p) WITH LOCAL TIME ZONE, summary TIMESTAMP_LTZ(p); 0 <= p <= 9."""

    root = TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE
    name = "TIMESTAMP_LTZ"
    precision: int = 6

    def _body(self, summary: bool) -> str:
        if summary:
            return f"TIMESTAMP_LTZ({self.precision})"
        return f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"


@dataclass(frozen=True)
class ArrayType(DataType):
    root = TypeRoot.ARRAY
    element_type: DataType

    def _body(self, summary: bool) -> str:
        inner = self.element_type.summary() if summary else self.element_type.sql()
        return f"ARRAY<{inner}>"

    def children(self) -> tuple[DataType, ...]:
        return (self.element_type,)

    def is_variable_length(self) -> bool:
        return True

    def _params_json(self) -> dict[str, Any]:
        return {"element_type": self.element_type.to_json()}


@dataclass(frozen=True)
class MapType(DataType):
    """MAP<K, V>. Map keys are always NOT NULL; a nullable key type is made NOT NULL."""

    root = TypeRoot.MAP
    key_type: DataType
    value_type: DataType

    def __post_init__(self) -> None:
        if self.key_type.nullable:
            object.__setattr__(self, "key_type", self.key_type.with_nullable(False))

    def _body(self, summary: bool) -> str:
        if summary:
            return f"MAP<{self.key_type.summary()}, {self.value_type.summary()}>"
        return f"MAP<{self.key_type.sql()}, {self.value_type.sql()}>"

    def children(self) -> tuple[DataType, ...]:
        return (self.key_type, self.value_type)

    def is_variable_length(self) -> bool:
        return True

    def _params_json(self) -> dict[str, Any]:
        return {"key_type": self.key_type.to_json(), "value_type": self.value_type.to_json()}


@dataclass(frozen=True)
class DataField:
    """One field of a ROW: name, type, optional description and field id."""

    name: str
    type: DataType
    description: str | None = None
    field_id: int | None = None

    def sql(self) -> str:
        return self._render(self.type.sql(), summary=False)

    def summary(self) -> str:
        return self._render(self.type.summary(), summary=True)

    def _render(self, type_text: str, *, summary: bool) -> str:
        head = f"{_escape_identifier(self.name)} {type_text}"
        if self.description is None:
            return head
        return f"{head} '{'...' if summary else _escape_quotes(self.description)}'"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "field_type": self.type.to_json()}
        if self.description is not None:
            out["description"] = self.description
        if self.field_id is not None:
            out["field_id"] = self.field_id
        return out


@dataclass(frozen=True)
class RowType(DataType):
    """ROW<fields>; field names are unique and not blank."""

    root = TypeRoot.ROW
    fields: tuple[DataField, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        seen: set[str] = set()
        for f in self.fields:
            if not f.name.strip():
                raise ValueError("ROW field names must contain a non-whitespace character")
            if f.name in seen:
                raise ValueError(f"duplicate ROW field name {f.name!r}")
            seen.add(f.name)

    def _body(self, summary: bool) -> str:
        parts = (f.summary() if summary else f.sql() for f in self.fields)
        return f"ROW<{', '.join(parts)}>"

    def children(self) -> tuple[DataType, ...]:
        return tuple(f.type for f in self.fields)

    def is_variable_length(self) -> bool:
        return True

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def _params_json(self) -> dict[str, Any]:
        return {"fields": [f.to_json() for f in self.fields]}


# ============================================================================ schema & tables


@dataclass(frozen=True)
class AggFunction:
    """A column's aggregate function (aggregation merge engine), kept as written.

    ``type`` is Fluss's lower-case name (``sum``, ``listagg``, ``last_value_ignore_nulls``...);
    names this module does not know are kept too (Fluss itself silently drops them).
    """

    type: str
    parameters: FrozenDict | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.parameters is not None:
            out["parameters"] = self.parameters.to_dict()
        return out


@dataclass(frozen=True)
class Column:
    name: str
    type: DataType
    comment: str | None = None
    column_id: int | None = None
    agg_function: AggFunction | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "data_type": self.type.to_json()}
        if self.comment is not None:
            out["comment"] = self.comment
        if self.agg_function is not None:
            out["agg_function"] = self.agg_function.to_json()
        if self.column_id is not None:
            out["id"] = self.column_id
        return out


@dataclass(frozen=True)
class Schema:
    """Columns in order; ``primary_key`` is empty for log tables."""

    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    auto_increment_columns: tuple[str, ...] = ()
    highest_field_id: int | None = None

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def row_type(self) -> RowType:
        """The columns as a ROW (names, types, column ids; no comments), like Fluss."""
        return RowType(
            fields=tuple(DataField(c.name, c.type, None, c.column_id) for c in self.columns),
            nullable=True,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": 1, "columns": [c.to_json() for c in self.columns]}
        if self.primary_key:
            out["primary_key"] = list(self.primary_key)
        if self.auto_increment_columns:
            out["auto_increment_column"] = list(self.auto_increment_columns)
        if self.highest_field_id is not None:
            out["highest_field_id"] = self.highest_field_id
        return out

    def to_json_bytes(self) -> bytes:
        """Compact UTF-8 JSON, the way the Fluss server writes it."""
        return _dump(self.to_json())


@dataclass(frozen=True)
class TableDescriptor:
    schema: Schema
    comment: str | None = None
    partition_keys: tuple[str, ...] = ()
    bucket_keys: tuple[str, ...] = ()
    bucket_count: int | None = None
    properties: FrozenDict = field(default_factory=FrozenDict)
    custom_properties: FrozenDict = field(default_factory=FrozenDict)
    #: Whether the JSON carried a distribution (``bucket_key`` or ``bucket_count``).
    has_distribution: bool = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": 1, "schema": self.schema.to_json()}
        if self.comment is not None:
            out["comment"] = self.comment
        out["partition_key"] = list(self.partition_keys)
        if self.has_distribution:
            out["bucket_key"] = list(self.bucket_keys)
            if self.bucket_count is not None:
                out["bucket_count"] = self.bucket_count
        out["properties"] = self.properties.to_dict()
        out["custom_properties"] = self.custom_properties.to_dict()
        return out

    def to_json_bytes(self) -> bytes:
        """Compact UTF-8 JSON, the way the Fluss server writes it."""
        return _dump(self.to_json())


@dataclass(frozen=True)
class DatabaseDescriptor:
    comment: str | None = None
    custom_properties: FrozenDict = field(default_factory=FrozenDict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": 1}
        if self.comment is not None:
            out["comment"] = self.comment
        out["custom_properties"] = self.custom_properties.to_dict()
        return out

    def to_json_bytes(self) -> bytes:
        return _dump(self.to_json())


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


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


# ============================================================================ parsing


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


class _Ctx:
    """Where we are in the document, for error messages."""

    __slots__ = ("column",)

    def __init__(self) -> None:
        self.column: str | None = None

    def fail(self, path: str, reason: str) -> NoReturn:
        raise TableJsonError(path, reason, column=self.column)

    def obj(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {_describe(value)}")
        return value

    def required(self, obj: Mapping[str, Any], key: str, path: str) -> Any:
        if key not in obj:
            self.fail(_join(path, key), "missing")
        return obj[key]

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {_describe(value)}")
        return value

    def opt_string(self, obj: Mapping[str, Any], key: str, path: str) -> str | None:
        value = obj.get(key)
        return None if value is None else self.string(value, _join(path, key))

    def integer(self, value: Any, path: str, lo: int = _INT32_MIN, hi: int = _INT32_MAX) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, f"expected an integer, got {_describe(value)}")
        if not lo <= value <= hi:
            self.fail(path, f"{value} is out of range [{lo}, {hi}]")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {_describe(value)}")
        return value

    def names(self, value: Any, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            self.fail(path, f"expected a list of names, got {_describe(value)}")
        out = tuple(self.string(v, f"{path}[{i}]") for i, v in enumerate(value))
        if len(set(out)) != len(out):
            dup = next(n for n in out if out.count(n) > 1)
            self.fail(path, f"{dup!r} is listed twice")
        return out

    def str_map(self, value: Any, path: str) -> FrozenDict:
        if value is None:
            return FrozenDict()
        obj = self.obj(value, path)
        out: dict[str, str] = {}
        for k, v in obj.items():
            key = self.string(k, path)
            out[key] = self.string(v, f"{path}[{key!r}]")
        return FrozenDict(out)


def _load(doc: Any, what: str) -> Any:
    """JSON text (bytes / str) -> Python value; already-parsed values pass through."""
    if isinstance(doc, bytes | bytearray | memoryview):
        try:
            doc = bytes(doc).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TableJsonError("", f"{what} is not valid UTF-8: {exc.reason}") from None
    if isinstance(doc, str):
        try:
            return json.loads(doc)
        except RecursionError:
            raise TableJsonError("", f"{what} is nested too deeply") from None
        except ValueError as exc:
            raise TableJsonError("", f"{what} is not valid JSON: {exc}") from None
    return doc


def _guard(fn: Callable[[], Any]) -> Any:
    """Run a parse; a bug-class exception is still reported as TableJsonError."""
    try:
        return fn()
    except TableJsonError:
        raise
    except RecursionError:
        raise TableJsonError("", "nested too deeply") from None


_LENGTH_TYPES: dict[TypeRoot, type[_LengthType]] = {
    TypeRoot.CHAR: CharType,
    TypeRoot.BINARY: BinaryType,
}
_PRECISION_TYPES: dict[TypeRoot, type[_PrecisionType]] = {
    TypeRoot.TIME_WITHOUT_TIME_ZONE: TimeType,
    TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE: TimestampType,
    TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE: LocalZonedTimestampType,
}
_SIMPLE_TYPES: dict[TypeRoot, type[_SimpleType]] = {
    t.root: t
    for t in (
        BooleanType,
        TinyIntType,
        SmallIntType,
        IntType,
        BigIntType,
        FloatType,
        DoubleType,
        StringType,
        BytesType,
        DateType,
    )
}
_ROOTS = {r.value: r for r in TypeRoot}


def _parse_type(ctx: _Ctx, value: Any, path: str, depth: int) -> DataType:
    if depth > MAX_TYPE_DEPTH:
        ctx.fail(path, f"types nested deeper than {MAX_TYPE_DEPTH} levels")
    obj = ctx.obj(value, path)
    name = ctx.string(ctx.required(obj, "type", path), _join(path, "type"))
    root = _ROOTS.get(name)
    if root is None:
        ctx.fail(path, f"unknown type {name!r}")
    nullable = True
    if "nullable" in obj:
        nullable = ctx.boolean(obj["nullable"], _join(path, "nullable"))

    def num(key: str) -> int:
        return ctx.integer(ctx.required(obj, key, path), _join(path, key))

    try:
        if root in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[root](nullable=nullable)
        if root in _LENGTH_TYPES:
            return _LENGTH_TYPES[root](num("length"), nullable=nullable)
        if root in _PRECISION_TYPES:
            return _PRECISION_TYPES[root](num("precision"), nullable=nullable)
        if root is TypeRoot.DECIMAL:
            return DecimalType(num("precision"), num("scale"), nullable=nullable)
        if root is TypeRoot.ARRAY:
            element = _parse_type(
                ctx, ctx.required(obj, "element_type", path), _join(path, "element_type"), depth + 1
            )
            return ArrayType(element, nullable=nullable)
        if root is TypeRoot.MAP:
            key = _parse_type(
                ctx, ctx.required(obj, "key_type", path), _join(path, "key_type"), depth + 1
            )
            val = _parse_type(
                ctx, ctx.required(obj, "value_type", path), _join(path, "value_type"), depth + 1
            )
            return MapType(key, val, nullable=nullable)
        # ROW
        return RowType(_parse_fields(ctx, obj, path, depth), nullable=nullable)
    except ValueError as exc:  # a range check in a type's constructor
        ctx.fail(path, str(exc))


def _parse_fields(
    ctx: _Ctx, obj: Mapping[str, Any], path: str, depth: int
) -> tuple[DataField, ...]:
    fpath = _join(path, "fields")
    raw = ctx.required(obj, "fields", path)
    if not isinstance(raw, list | tuple):
        ctx.fail(fpath, f"expected a list of fields, got {_describe(raw)}")
    fields: list[DataField] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        ipath = f"{fpath}[{i}]"
        fobj = ctx.obj(item, ipath)
        name = ctx.string(ctx.required(fobj, "name", ipath), _join(ipath, "name"))
        if not name.strip():
            ctx.fail(_join(ipath, "name"), "field name is blank")
        if name in seen:
            ctx.fail(_join(ipath, "name"), f"duplicate field name {name!r}")
        seen.add(name)
        ftype = _parse_type(
            ctx, ctx.required(fobj, "field_type", ipath), _join(ipath, "field_type"), depth + 1
        )
        description = ctx.opt_string(fobj, "description", ipath)
        field_id = _opt_id(ctx, fobj, "field_id", ipath)
        fields.append(DataField(name, ftype, description, field_id))
    return tuple(fields)


def _opt_id(ctx: _Ctx, obj: Mapping[str, Any], key: str, path: str) -> int | None:
    """An optional non-negative id; absent, null or Fluss's -1 ("unknown") read as None."""
    value = obj.get(key)
    if value is None:
        return None
    n = ctx.integer(value, _join(path, key), -1)
    return None if n == -1 else n


def _parse_column(ctx: _Ctx, value: Any, path: str) -> Column:
    obj = ctx.obj(value, path)
    name = ctx.string(ctx.required(obj, "name", path), _join(path, "name"))
    ctx.column = name
    dtype = _parse_type(ctx, ctx.required(obj, "data_type", path), _join(path, "data_type"), 1)
    comment = ctx.opt_string(obj, "comment", path)
    column_id = _opt_id(ctx, obj, "id", path)
    agg: AggFunction | None = None
    if obj.get("agg_function") is not None:
        apath = _join(path, "agg_function")
        aobj = ctx.obj(obj["agg_function"], apath)
        atype = ctx.string(ctx.required(aobj, "type", apath), _join(apath, "type"))
        params = None
        if aobj.get("parameters") is not None:
            params = ctx.str_map(aobj["parameters"], _join(apath, "parameters"))
        agg = AggFunction(atype, params)
    ctx.column = None
    return Column(name, dtype, comment, column_id, agg)


def _parse_schema(ctx: _Ctx, value: Any, path: str) -> Schema:
    obj = ctx.obj(value, path)
    cpath = _join(path, "columns")
    raw = ctx.required(obj, "columns", path)
    if not isinstance(raw, list | tuple):
        ctx.fail(cpath, f"expected a list of columns, got {_describe(raw)}")
    columns = [_parse_column(ctx, c, f"{cpath}[{i}]") for i, c in enumerate(raw)]
    names = [c.name for c in columns]
    for i, n in enumerate(names):
        if n in names[:i]:
            ctx.fail(f"{cpath}[{i}].name", f"duplicate column name {n!r}")
    known = set(names)

    def keys(key: str) -> tuple[str, ...]:
        kpath = _join(path, key)
        out = ctx.names(obj.get(key), kpath)
        for i, n in enumerate(out):
            if n not in known:
                ctx.fail(f"{kpath}[{i}]", f"unknown column {n!r}")
        return out

    primary_key = keys("primary_key")
    auto_inc = keys("auto_increment_column")
    highest = None
    if obj.get("highest_field_id") is not None:
        highest = ctx.integer(obj["highest_field_id"], _join(path, "highest_field_id"), -1)
    # Like Fluss: primary-key columns are NOT NULL whatever the JSON says.
    pk = set(primary_key)
    columns = [
        replace(c, type=c.type.with_nullable(False)) if c.name in pk and c.type.nullable else c
        for c in columns
    ]
    return Schema(tuple(columns), primary_key, auto_inc, highest)


def _parse_table(ctx: _Ctx, value: Any) -> TableDescriptor:
    obj = ctx.obj(value, "")
    schema = _parse_schema(ctx, ctx.required(obj, "schema", ""), "schema")
    comment = ctx.opt_string(obj, "comment", "")
    known = set(schema.column_names)

    def keys(key: str) -> tuple[str, ...]:
        out = ctx.names(obj.get(key), key)
        for i, n in enumerate(out):
            if n not in known:
                ctx.fail(f"{key}[{i}]", f"unknown column {n!r}")
        return out

    partition_keys = keys("partition_key")
    bucket_keys = keys("bucket_key")
    has_distribution = "bucket_key" in obj or "bucket_count" in obj
    bucket_count = None
    if obj.get("bucket_count") is not None:
        bucket_count = ctx.integer(obj["bucket_count"], "bucket_count", 1)
    if schema.primary_key and not bucket_keys:
        # Like Fluss: a PK table is bucketed by its primary key minus the partition keys.
        bucket_keys = tuple(k for k in schema.primary_key if k not in partition_keys)
        has_distribution = True
    return TableDescriptor(
        schema=schema,
        comment=comment,
        partition_keys=partition_keys,
        bucket_keys=bucket_keys,
        bucket_count=bucket_count,
        properties=ctx.str_map(obj.get("properties"), "properties"),
        custom_properties=ctx.str_map(obj.get("custom_properties"), "custom_properties"),
        has_distribution=has_distribution,
    )


def _parse_database(ctx: _Ctx, value: Any) -> DatabaseDescriptor:
    obj = ctx.obj(value, "")
    return DatabaseDescriptor(
        comment=ctx.opt_string(obj, "comment", ""),
        custom_properties=ctx.str_map(obj.get("custom_properties"), "custom_properties"),
    )


def parse_data_type(obj: Any) -> DataType:
    """One type node (already-parsed JSON, or JSON text), e.g. ``{"type": "INTEGER"}``."""
    return _guard(lambda: _parse_type(_Ctx(), _load(obj, "type JSON"), "", 1))


def parse_schema(doc: Any) -> Schema:
    """A schema document (``GetTableSchemaResponse.schema_json``): bytes, str or parsed."""
    return _guard(lambda: _parse_schema(_Ctx(), _load(doc, "schema JSON"), ""))


def parse_table_descriptor(doc: Any) -> TableDescriptor:
    """A table document (``GetTableInfoResponse.table_json``): bytes, str or parsed."""
    return _guard(lambda: _parse_table(_Ctx(), _load(doc, "table JSON")))


def parse_database_descriptor(doc: Any) -> DatabaseDescriptor:
    """A database document (``GetDatabaseInfoResponse.database_json``): bytes, str or parsed."""
    return _guard(lambda: _parse_database(_Ctx(), _load(doc, "database JSON")))
