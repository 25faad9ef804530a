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

from fluss_proto.errors import TableJsonError
from fluss_proto.types.datatypes import (
    MAX_TYPE_DEPTH,
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    BytesType,
    CharType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    FrozenDict,
    IntType,
    LocalZonedTimestampType,
    MapType,
    RowType,
    SmallIntType,
    StringType,
    TimestampType,
    TimeType,
    TinyIntType,
    TypeRoot,
)
from fluss_proto.types.info import (
    ARROW_COMPRESSION_TYPE,
    ARROW_COMPRESSION_ZSTD_LEVEL,
    AUTO_PARTITION_ENABLED,
    DATALAKE_ENABLED,
    DATALAKE_FORMAT,
    KV_FORMAT,
    KV_FORMAT_VERSION,
    LOG_FORMAT,
    MERGE_ENGINE,
    REPLICATION_FACTOR,
    ArrowCompression,
    ArrowCompressionType,
    DatabaseInfo,
    KvFormat,
    LogFormat,
    TableInfo,
)
from fluss_proto.types.parsing import (
    parse_data_type,
    parse_database_descriptor,
    parse_schema,
    parse_table_descriptor,
)
from fluss_proto.types.schema import (
    AggFunction,
    Column,
    DatabaseDescriptor,
    Schema,
    TableDescriptor,
)

__all__ = [
    "ARROW_COMPRESSION_TYPE",
    "ARROW_COMPRESSION_ZSTD_LEVEL",
    "AUTO_PARTITION_ENABLED",
    "DATALAKE_ENABLED",
    "DATALAKE_FORMAT",
    "KV_FORMAT",
    "KV_FORMAT_VERSION",
    "LOG_FORMAT",
    "MAX_TYPE_DEPTH",
    "MERGE_ENGINE",
    "REPLICATION_FACTOR",
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
