"""fluss_proto.types: parsing Fluss table / schema / type / database JSON.

Fixtures under tests/fixtures/table_json were captured from a real Fluss 0.9.1 cluster by
tests/fixtures/capture_table_json.py (see the README there).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.errors import DecodeError
from fluss_proto.types import (
    MAX_TYPE_DEPTH,
    AggFunction,
    ArrayType,
    ArrowCompression,
    ArrowCompressionType,
    BigIntType,
    BinaryType,
    BooleanType,
    BytesType,
    CharType,
    Column,
    DatabaseDescriptor,
    DatabaseInfo,
    DataField,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    FrozenDict,
    IntType,
    KvFormat,
    LocalZonedTimestampType,
    LogFormat,
    MapType,
    RowType,
    Schema,
    SmallIntType,
    StringType,
    TableDescriptor,
    TableInfo,
    TableJsonError,
    TimestampType,
    TimeType,
    TinyIntType,
    TypeRoot,
    parse_data_type,
    parse_database_descriptor,
    parse_schema,
    parse_table_descriptor,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "table_json"
INDEX = json.loads((FIXTURES / "index.json").read_text())
TABLES = sorted(INDEX["tables"])

FUZZ = settings(
    max_examples=max(1000, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def raw_table(name: str) -> bytes:
    return (FIXTURES / f"{name}.table.json").read_bytes()


def raw_schema(name: str) -> bytes:
    return (FIXTURES / f"{name}.schema.json").read_bytes()


def table(name: str) -> TableDescriptor:
    return parse_table_descriptor(raw_table(name))


def info(name: str, **overrides: Any) -> TableInfo:
    meta = INDEX["tables"][name]
    resp = pb.GetTableInfoResponse(
        table_id=meta["table_id"],
        schema_id=meta["schema_id"],
        table_json=raw_table(name),
        created_time=meta["created_time"],
        modified_time=meta["modified_time"],
        **overrides,
    )
    return TableInfo.from_response(INDEX["database"], name, resp)


def columns(desc: TableDescriptor) -> list[tuple[str, str, int | None, str | None]]:
    return [(c.name, c.type.sql(), c.column_id, c.comment) for c in desc.schema.columns]


# ============================================================================ fixtures


def test_fixture_set_is_complete() -> None:
    assert INDEX["server_version"] == "0.9.1-incubating"
    assert TABLES == [
        "aggregated",
        "all_types",
        "auto_inc_users",
        "char_and_comments",
        "partitioned_events",
        "partitioned_log",
        "pk_orders",
    ]
    for name in TABLES:
        assert (FIXTURES / f"{name}.table.json").is_file()
        assert (FIXTURES / f"{name}.schema.json").is_file()
        meta = INDEX["tables"][name]
        assert meta["schema_id"] == meta["schema_response_schema_id"] == 1
        assert meta["remote_data_dir"] is None  # 0.9.1 does not send field 6
    assert (FIXTURES / "database.json").is_file()


ALL_TYPES_COLUMNS = [
    ("c_boolean", "BOOLEAN", 0, None),
    ("c_tinyint", "TINYINT", 1, None),
    ("c_smallint", "SMALLINT", 2, None),
    ("c_int", "INT", 3, None),
    ("c_bigint", "BIGINT NOT NULL", 4, None),
    ("c_float", "FLOAT", 5, None),
    ("c_double", "DOUBLE", 6, None),
    ("c_decimal", "DECIMAL(15, 2) NOT NULL", 7, None),
    ("c_decimal_wide", "DECIMAL(38, 10)", 8, None),
    ("c_string", "STRING", 9, None),
    ("c_bytes", "BYTES", 10, None),
    ("c_binary", "BINARY(16)", 11, None),
    ("c_date", "DATE", 12, None),
    ("c_time", "TIME(0)", 13, None),
    ("c_time3", "TIME(3)", 14, None),
    ("c_time9", "TIME(9)", 15, None),
    ("c_ts0", "TIMESTAMP(0)", 16, None),
    ("c_ts3", "TIMESTAMP(3)", 17, None),
    ("c_ts6", "TIMESTAMP(6)", 18, None),
    ("c_ts9", "TIMESTAMP(9)", 19, None),
    ("c_ltz3", "TIMESTAMP(3) WITH LOCAL TIME ZONE", 20, None),
    ("c_ltz6", "TIMESTAMP(6) WITH LOCAL TIME ZONE", 21, None),
    ("c_array", "ARRAY<INT>", 22, None),
    ("c_array_nn", "ARRAY<STRING NOT NULL>", 23, None),
    ("c_array_row", "ARRAY<ROW<`a` INT, `b` STRING>>", 24, None),
    ("c_map", "MAP<STRING NOT NULL, ARRAY<INT>>", 27, None),
    (
        "c_row",
        "ROW<`x` BIGINT NOT NULL, `y` ARRAY<STRING>, `z` ROW<`a` INT, `b` STRING>> NOT NULL",
        28,
        None,
    ),
]


def test_all_types_table() -> None:
    desc = table("all_types")
    assert columns(desc) == ALL_TYPES_COLUMNS
    assert desc.comment == "every Fluss type; captured by konsole"
    assert desc.schema.primary_key == ()
    assert desc.schema.auto_increment_columns == ()
    assert desc.schema.highest_field_id == 33
    assert desc.partition_keys == ()
    assert desc.bucket_keys == ("c_bigint",)
    assert desc.bucket_count == 3
    assert desc.properties == {"table.replication.factor": "1"}
    assert desc.custom_properties == {"owner": "konsole", "purpose": "fixture"}

    # every type root but CHAR (pyfluss cannot make one; char_and_comments has it)
    roots = set()
    stack: list[DataType] = [c.type for c in desc.schema.columns]
    while stack:
        t = stack.pop()
        roots.add(t.root)
        stack.extend(t.children())
    assert roots == set(TypeRoot) - {TypeRoot.CHAR}

    ab = RowType(
        (DataField("a", IntType(), None, 25), DataField("b", StringType(), None, 26)),
    )
    assert desc.schema.column("c_array_row").type == ArrayType(ab)
    assert desc.schema.column("c_map").type == MapType(
        StringType(nullable=False), ArrayType(IntType())
    )
    assert desc.schema.column("c_row").type == RowType(
        (
            DataField("x", BigIntType(nullable=False), None, 29),
            DataField("y", ArrayType(StringType()), None, 30),
            DataField(
                "z",
                RowType(
                    (DataField("a", IntType(), None, 32), DataField("b", StringType(), None, 33))
                ),
                None,
                31,
            ),
        ),
        nullable=False,
    )
    assert desc.schema.column("c_decimal").type == DecimalType(15, 2, nullable=False)
    assert desc.schema.column("c_ltz3").type == LocalZonedTimestampType(3)
    assert desc.schema.column("c_ltz3").type.summary() == "TIMESTAMP_LTZ(3)"

    ti = info("all_types")
    assert not ti.is_pk_table and not ti.is_partitioned
    assert ti.log_format is LogFormat.ARROW
    assert ti.kv_format is KvFormat.COMPACTED
    assert ti.arrow_compression == ArrowCompression(ArrowCompressionType.ZSTD, 3)
    assert ti.kv_format_version is None
    assert ti.replication_factor == 1
    assert not ti.is_default_bucket_key  # a log table bucketed by a key


def test_pk_orders_table() -> None:
    desc = table("pk_orders")
    assert columns(desc) == [
        ("shop_id", "INT NOT NULL", 0, None),
        ("order_id", "BIGINT NOT NULL", 1, None),
        ("amount", "DECIMAL(10, 2)", 2, None),
        ("note", "STRING", 3, None),
        ("updated", "TIMESTAMP(3)", 4, None),
    ]
    assert desc.comment is None
    assert desc.schema.primary_key == ("shop_id", "order_id")
    assert desc.schema.highest_field_id == 4
    assert desc.bucket_keys == ("shop_id",)
    assert desc.bucket_count == 4
    assert desc.partition_keys == ()
    assert desc.properties == {
        "table.replication.factor": "1",
        "table.kv.format": "INDEXED",
        "table.log.arrow.compression.type": "LZ4_FRAME",
        "table.kv.format-version": "2",
    }
    assert desc.custom_properties == {}

    ti = info("pk_orders")
    assert ti.table_id == INDEX["tables"]["pk_orders"]["table_id"]
    assert ti.schema_id == 1
    assert ti.is_pk_table and not ti.is_partitioned
    assert ti.primary_key == ti.physical_primary_key == ("shop_id", "order_id")
    assert not ti.is_default_bucket_key
    assert ti.kv_format is KvFormat.INDEXED
    assert ti.kv_format_version == 2
    assert ti.log_format is LogFormat.ARROW
    assert ti.arrow_compression == ArrowCompression(ArrowCompressionType.LZ4_FRAME, None)


def test_partitioned_events_table() -> None:
    desc = table("partitioned_events")
    assert columns(desc) == [
        ("dt", "STRING NOT NULL", 0, None),
        ("id", "BIGINT NOT NULL", 1, None),
        ("payload", "BYTES", 2, None),
        ("tags", "MAP<STRING NOT NULL, STRING>", 3, None),
    ]
    assert desc.schema.primary_key == ("dt", "id")
    assert desc.partition_keys == ("dt",)
    assert desc.bucket_keys == ("id",)  # the server filled in the default
    assert desc.bucket_count == 2
    assert desc.custom_properties == {"k": "v"}
    assert desc.properties == {
        "table.replication.factor": "1",
        "table.auto-partition.time-unit": "DAY",
        "table.kv.format-version": "2",
        "table.auto-partition.enabled": "true",
    }
    ti = info("partitioned_events")
    assert ti.is_pk_table and ti.is_partitioned and ti.is_auto_partitioned
    assert ti.primary_key == ("dt", "id")
    assert ti.physical_primary_key == ("id",)
    assert ti.is_default_bucket_key


def test_partitioned_log_table() -> None:
    desc = table("partitioned_log")
    assert columns(desc) == [("region", "STRING NOT NULL", 0, None), ("v", "BIGINT", 1, None)]
    assert desc.schema.primary_key == ()
    assert desc.partition_keys == ("region",)
    assert desc.bucket_keys == ()
    assert desc.bucket_count == 1  # the cluster default
    assert desc.properties == {"table.replication.factor": "1", "table.log.format": "INDEXED"}
    ti = info("partitioned_log")
    assert ti.is_partitioned and not ti.is_auto_partitioned and not ti.is_pk_table
    assert ti.log_format is LogFormat.INDEXED
    assert ti.is_default_bucket_key


def test_auto_increment_table() -> None:
    desc = table("auto_inc_users")
    assert columns(desc) == [
        ("name", "STRING NOT NULL", 0, None),
        ("uid", "BIGINT NOT NULL", 1, None),
        ("age", "INT", 2, None),
    ]
    assert desc.schema.primary_key == ("name",)
    assert desc.schema.auto_increment_columns == ("uid",)
    assert desc.bucket_keys == ("name",)
    assert desc.bucket_count == 1


def test_char_and_comments_table() -> None:
    desc = table("char_and_comments")
    assert columns(desc) == [
        ("code", "CHAR(8) NOT NULL", 0, None),
        ("label", "CHAR(1)", 1, "one char"),
        (
            "geo",
            "ROW<`lat` DOUBLE 'latitude, degrees', `lon` DOUBLE, "
            "`it's` BINARY(4) NOT NULL 'quote '' and `tick`'>",
            2,
            "a point",
        ),
        ("matrix", "ARRAY<ARRAY<DECIMAL(5, 0)>>", 6, None),
        ("ltz0", "TIMESTAMP(0) WITH LOCAL TIME ZONE NOT NULL", 7, None),
    ]
    geo = desc.schema.column("geo").type
    assert isinstance(geo, RowType)
    assert geo.summary() == "ROW<`lat` DOUBLE '...', `lon` DOUBLE, `it's` BINARY(4) NOT NULL '...'>"
    assert [(f.name, f.description, f.field_id) for f in geo.fields] == [
        ("lat", "latitude, degrees", 3),
        ("lon", None, 4),
        ("it's", "quote ' and `tick`", 5),
    ]
    assert desc.comment == "CHAR, comments and descriptions; it's quoted"
    assert desc.schema.primary_key == ("code",)
    assert desc.schema.highest_field_id == 7
    assert desc.bucket_keys == ("code",)
    assert desc.bucket_count == 2
    assert desc.custom_properties == {"created.by": "capture_table_json.py"}
    assert info("char_and_comments").comment == desc.comment


def test_aggregated_table() -> None:
    desc = table("aggregated")
    assert columns(desc) == [
        ("k", "STRING NOT NULL", 0, None),
        ("total", "BIGINT", 1, None),
        ("names", "STRING", 2, None),
    ]
    assert [c.agg_function for c in desc.schema.columns] == [
        None,
        AggFunction("sum"),
        AggFunction("listagg", FrozenDict({"delimiter": ";"})),
    ]
    assert desc.properties == {
        "table.replication.factor": "1",
        "table.merge-engine": "aggregation",
        "table.delete.behavior": "IGNORE",  # added by the server
        "table.kv.format-version": "2",
    }
    assert info("aggregated").merge_engine == "aggregation"


def test_database_fixture() -> None:
    raw = (FIXTURES / "database.json").read_bytes()
    db = parse_database_descriptor(raw)
    assert db == DatabaseDescriptor(
        "konsole fixture database", FrozenDict({"team": "ops", "tier": "2"})
    )
    assert db.to_json_bytes() == raw
    resp = pb.GetDatabaseInfoResponse(database_json=raw, created_time=5, modified_time=6)
    dbi = DatabaseInfo.from_response("d", resp)
    assert (dbi.name, dbi.comment, dbi.created_ms, dbi.modified_ms) == ("d", db.comment, 5, 6)
    assert dbi.custom_properties == {"team": "ops", "tier": "2"}


@pytest.mark.parametrize("name", TABLES)
def test_fixture_round_trips_byte_for_byte(name: str) -> None:
    raw = raw_table(name)
    desc = parse_table_descriptor(raw)
    assert desc.to_json_bytes() == raw
    assert parse_table_descriptor(desc.to_json()) == desc
    assert parse_table_descriptor(raw.decode()) == desc
    schema = parse_schema(raw_schema(name))
    assert schema == desc.schema
    assert schema.to_json_bytes() == raw_schema(name)


@pytest.mark.parametrize("name", TABLES)
def test_table_info_from_fixture(name: str) -> None:
    meta = INDEX["tables"][name]
    ti = info(name)
    desc = table(name)
    assert (ti.database, ti.table, ti.table_path) == (
        INDEX["database"],
        name,
        f"{INDEX['database']}.{name}",
    )
    assert (ti.table_id, ti.schema_id) == (meta["table_id"], meta["schema_id"])
    assert (ti.created_ms, ti.modified_ms) == (meta["created_time"], meta["modified_time"])
    assert ti.remote_data_dir is None
    assert ti.schema == desc.schema
    assert ti.primary_key == desc.schema.primary_key
    assert ti.bucket_keys == desc.bucket_keys
    assert ti.partition_keys == desc.partition_keys
    assert ti.bucket_count == desc.bucket_count
    assert ti.properties == desc.properties
    assert ti.custom_properties == desc.custom_properties
    assert ti.comment == desc.comment
    assert ti.row_type.field_names == desc.schema.column_names
    assert [f.field_id for f in ti.row_type.fields] == [c.column_id for c in desc.schema.columns]
    hash(ti)  # frozen all the way down
    # Fluss 1.0 adds remote_data_dir (field 6)
    assert info(name, remote_data_dir="hdfs://x/y").remote_data_dir == "hdfs://x/y"


# ============================================================================ rendering

RENDER_CASES: list[tuple[DataType, str, str]] = [
    (BooleanType(), "BOOLEAN", "BOOLEAN"),
    (TinyIntType(), "TINYINT", "TINYINT"),
    (SmallIntType(nullable=False), "SMALLINT NOT NULL", "SMALLINT NOT NULL"),
    (IntType(), "INT", "INT"),
    (BigIntType(), "BIGINT", "BIGINT"),
    (FloatType(), "FLOAT", "FLOAT"),
    (DoubleType(), "DOUBLE", "DOUBLE"),
    (DecimalType(15, 2, nullable=False), "DECIMAL(15, 2) NOT NULL", "DECIMAL(15, 2) NOT NULL"),
    (DecimalType(), "DECIMAL(10, 0)", "DECIMAL(10, 0)"),
    (CharType(3), "CHAR(3)", "CHAR(3)"),
    (StringType(), "STRING", "STRING"),
    (BinaryType(7), "BINARY(7)", "BINARY(7)"),
    (BytesType(), "BYTES", "BYTES"),
    (DateType(), "DATE", "DATE"),
    (TimeType(), "TIME(0)", "TIME(0)"),
    (TimeType(9), "TIME(9)", "TIME(9)"),
    (TimestampType(), "TIMESTAMP(6)", "TIMESTAMP(6)"),
    (TimestampType(3, nullable=False), "TIMESTAMP(3) NOT NULL", "TIMESTAMP(3) NOT NULL"),
    (
        LocalZonedTimestampType(),
        "TIMESTAMP(6) WITH LOCAL TIME ZONE",
        "TIMESTAMP_LTZ(6)",
    ),
    (
        LocalZonedTimestampType(3, nullable=False),
        "TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL",
        "TIMESTAMP_LTZ(3) NOT NULL",
    ),
    (ArrayType(StringType()), "ARRAY<STRING>", "ARRAY<STRING>"),
    (
        ArrayType(IntType(nullable=False), nullable=False),
        "ARRAY<INT NOT NULL> NOT NULL",
        "ARRAY<INT NOT NULL> NOT NULL",
    ),
    (
        MapType(StringType(), ArrayType(IntType())),
        "MAP<STRING NOT NULL, ARRAY<INT>>",
        "MAP<STRING NOT NULL, ARRAY<INT>>",
    ),
    (
        RowType((DataField("a", IntType()), DataField("b", StringType()))),
        "ROW<`a` INT, `b` STRING>",
        "ROW<`a` INT, `b` STRING>",
    ),
    (
        RowType((DataField("we`ird", IntType(), "it's"),), nullable=False),
        "ROW<`we``ird` INT 'it''s'> NOT NULL",
        "ROW<`we``ird` INT '...'> NOT NULL",
    ),
    (
        ArrayType(RowType((DataField("t", LocalZonedTimestampType(3)),))),
        "ARRAY<ROW<`t` TIMESTAMP(3) WITH LOCAL TIME ZONE>>",
        "ARRAY<ROW<`t` TIMESTAMP_LTZ(3)>>",
    ),
    (RowType(()), "ROW<>", "ROW<>"),
]


@pytest.mark.parametrize(("dtype", "sql", "summary"), RENDER_CASES)
def test_rendering(dtype: DataType, sql: str, summary: str) -> None:
    assert dtype.sql() == sql
    assert dtype.summary() == summary
    assert str(dtype) == summary
    assert parse_data_type(dtype.to_json()) == dtype
    assert parse_data_type(json.dumps(dtype.to_json())) == dtype


@pytest.mark.parametrize(
    ("dtype", "variable"),
    [
        (IntType(), False),
        (CharType(4), False),
        (BinaryType(4), False),
        (TimestampType(9), False),
        (DecimalType(18, 2), False),
        (DecimalType(19, 2), True),
        (StringType(), True),
        (BytesType(), True),
        (ArrayType(IntType()), True),
        (MapType(IntType(), IntType()), True),
        (RowType(()), True),
    ],
)
def test_is_variable_length(dtype: DataType, variable: bool) -> None:
    assert dtype.is_variable_length() is variable


def test_json_form_matches_fluss() -> None:
    assert DecimalType(5, 1, nullable=False).to_json() == {
        "type": "DECIMAL",
        "nullable": False,
        "precision": 5,
        "scale": 1,
    }
    assert TimeType(3).to_json() == {"type": "TIME_WITHOUT_TIME_ZONE", "precision": 3}
    assert RowType((DataField("a", CharType(2), "d", 7),)).to_json() == {
        "type": "ROW",
        "fields": [
            {
                "name": "a",
                "field_type": {"type": "CHAR", "length": 2},
                "description": "d",
                "field_id": 7,
            }
        ],
    }


def test_constructors_validate_ranges() -> None:
    for bad in (
        lambda: DecimalType(0, 0),
        lambda: DecimalType(39, 0),
        lambda: DecimalType(5, 6),
        lambda: DecimalType(5, -1),
        lambda: CharType(0),
        lambda: BinaryType(0),
        lambda: TimeType(10),
        lambda: TimestampType(-1),
        lambda: LocalZonedTimestampType(10),
        lambda: RowType((DataField("a", IntType()), DataField("a", IntType()))),
        lambda: RowType((DataField(" ", IntType()),)),
    ):
        with pytest.raises(ValueError):
            bad()


def test_map_keys_are_not_null() -> None:
    m = MapType(StringType(), IntType())
    assert m.key_type == StringType(nullable=False)
    parsed = parse_data_type(
        {"type": "MAP", "key_type": {"type": "INTEGER"}, "value_type": {"type": "INTEGER"}}
    )
    assert parsed == MapType(IntType(nullable=False), IntType())


def test_with_nullable_and_hash() -> None:
    t = ArrayType(IntType())
    assert t.with_nullable(False) == ArrayType(IntType(), nullable=False)
    assert t.with_nullable(False).sql() == "ARRAY<INT> NOT NULL"
    assert len({IntType(), IntType(), IntType(nullable=False)}) == 2
    assert IntType() != BigIntType()


# ============================================================================ older / unusual JSON


def test_old_json_without_ids() -> None:
    """Servers before schema evolution write no column ids, field ids or highest_field_id."""
    doc = {
        "version": 1,
        "schema": {
            "version": 1,
            "columns": [
                {"name": "id", "data_type": {"type": "BIGINT"}},
                {
                    "name": "r",
                    "data_type": {
                        "type": "ROW",
                        "fields": [{"name": "f", "field_type": {"type": "INTEGER"}}],
                    },
                },
            ],
            "primary_key": ["id"],
        },
        "partition_key": [],
        "bucket_count": 3,
        "properties": {},
        "custom_properties": {},
    }
    desc = parse_table_descriptor(json.dumps(doc).encode())
    assert [c.column_id for c in desc.schema.columns] == [None, None]
    assert desc.schema.highest_field_id is None
    r = desc.schema.column("r").type
    assert isinstance(r, RowType) and r.fields[0].field_id is None
    # Like Fluss: PK columns are NOT NULL, bucket keys default to the physical primary key.
    assert desc.schema.column("id").type == BigIntType(nullable=False)
    assert desc.bucket_keys == ("id",)
    # -1 is Fluss's "unknown id"
    doc["schema"]["columns"][0]["id"] = -1
    assert parse_table_descriptor(doc).schema.columns[0].column_id is None


def test_minimal_and_lenient_documents() -> None:
    desc = parse_table_descriptor({"schema": {"columns": []}})
    assert desc == TableDescriptor(Schema(()), has_distribution=False)
    assert desc.to_json() == {
        "version": 1,
        "schema": {"version": 1, "columns": []},
        "partition_key": [],
        "properties": {},
        "custom_properties": {},
    }
    with pytest.raises(TableJsonError, match="bucket_count: missing"):
        TableInfo.from_descriptor(
            "d", "t", table_id=1, schema_id=1, descriptor=desc, created_ms=0, modified_ms=0
        )
    assert parse_database_descriptor(b"{}") == DatabaseDescriptor()
    # unknown keys are ignored (forward compatibility)
    assert parse_data_type({"type": "INTEGER", "future": [1, 2]}) == IntType()
    assert parse_schema('{"columns": [], "extra": {}}') == Schema(())
    col = parse_schema({"columns": [{"name": "c", "data_type": {"type": "DATE"}, "comment": None}]})
    assert col.columns == (Column("c", DateType()),)


def test_property_helpers() -> None:
    base = json.loads(raw_table("pk_orders"))

    def with_props(**props: str) -> TableInfo:
        doc = copy.deepcopy(base)
        doc["properties"] = dict(props)
        return TableInfo.from_descriptor(
            "d",
            "t",
            table_id=1,
            schema_id=1,
            descriptor=parse_table_descriptor(doc),
            created_ms=0,
            modified_ms=0,
        )

    ti = with_props()
    assert ti.log_format is LogFormat.ARROW
    assert ti.kv_format is KvFormat.COMPACTED
    assert ti.kv_format_version is None
    assert ti.replication_factor is None
    assert ti.arrow_compression == ArrowCompression(ArrowCompressionType.ZSTD, 3)
    assert not ti.datalake_enabled and ti.datalake_format is None and ti.merge_engine is None

    opts = {
        "table.log.format": "compacted",
        "table.kv.format": " Indexed ",
        "table.log.arrow.compression.zstd.level": "9",
        "table.datalake.enabled": "TRUE",
        "table.datalake.format": "PAIMON",
        "table.merge-engine": "first_row",
    }
    ti = with_props(**opts)
    assert ti.log_format is LogFormat.COMPACTED
    assert ti.kv_format is KvFormat.INDEXED
    assert ti.arrow_compression == ArrowCompression(ArrowCompressionType.ZSTD, 9)
    assert ti.datalake_enabled and ti.datalake_format == "paimon"
    assert ti.merge_engine == "first_row"
    assert with_props(**{"table.log.arrow.compression.type": "none"}).arrow_compression == (
        ArrowCompression(ArrowCompressionType.NONE)
    )

    bad = [
        ("table.log.format", "parquet", "log_format"),
        ("table.kv.format", "rows", "kv_format"),
        ("table.kv.format-version", "two", "kv_format_version"),
        ("table.kv.format-version", "99999999999", "kv_format_version"),
        ("table.log.arrow.compression.type", "gzip", "arrow_compression"),
        ("table.log.arrow.compression.zstd.level", "23", "arrow_compression"),
        ("table.replication.factor", "3.0", "replication_factor"),
        ("table.datalake.enabled", "yes", "datalake_enabled"),
    ]
    for key, value, attr in bad:
        with pytest.raises(TableJsonError) as exc:
            getattr(with_props(**{key: value}), attr)
        assert exc.value.path == f"properties[{key!r}]"


# ============================================================================ errors


def _all_types_doc() -> dict[str, Any]:
    return json.loads(raw_table("all_types"))


def test_unknown_type_names_the_column() -> None:
    doc = _all_types_doc()
    doc["schema"]["columns"][3]["data_type"] = {"type": "VECTOR", "dimension": 3}
    with pytest.raises(TableJsonError) as exc:
        parse_table_descriptor(json.dumps(doc).encode())
    err = exc.value
    assert isinstance(err, DecodeError)
    assert err.path == "schema.columns[3].data_type"
    assert err.column == "c_int"
    assert str(err) == "schema.columns[3].data_type: unknown type 'VECTOR' (column 'c_int')"

    # the same column through parse_schema
    with pytest.raises(TableJsonError) as exc:
        parse_schema(doc["schema"])
    assert str(exc.value) == "columns[3].data_type: unknown type 'VECTOR' (column 'c_int')"

    # deep inside a nested type
    doc = _all_types_doc()
    row = doc["schema"]["columns"][26]["data_type"]
    row["fields"][2]["field_type"]["fields"][0]["field_type"] = {"type": "VARIANT"}
    with pytest.raises(TableJsonError) as exc:
        parse_table_descriptor(doc)
    assert exc.value.path == (
        "schema.columns[26].data_type.fields[2].field_type.fields[0].field_type"
    )
    assert exc.value.column == "c_row"


def _mutate(path: list[Any], value: Any) -> dict[str, Any]:
    doc = _all_types_doc()
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


_DELETE = object()
COL = ["schema", "columns"]

ERROR_CASES: list[tuple[list[Any], Any, str]] = [
    (["schema"], _DELETE, "schema: missing"),
    (["schema"], [], "schema: expected an object, got a list"),
    ([*COL], {}, "schema.columns: expected a list of columns, got an object"),
    ([*COL, 0], "c", "schema.columns[0]: expected an object, got a string"),
    ([*COL, 0, "name"], _DELETE, "schema.columns[0].name: missing"),
    ([*COL, 0, "name"], 5, "schema.columns[0].name: expected a string, got an integer"),
    ([*COL, 1, "name"], "c_boolean", "schema.columns[1].name: duplicate column name"),
    ([*COL, 0, "data_type"], _DELETE, "schema.columns[0].data_type: missing"),
    ([*COL, 0, "data_type", "type"], None, "schema.columns[0].data_type.type: expected a str"),
    ([*COL, 0, "data_type", "type"], "boolean", "unknown type 'boolean'"),
    ([*COL, 0, "data_type", "nullable"], "false", "data_type.nullable: expected true or false"),
    ([*COL, 0, "id"], "0", "schema.columns[0].id: expected an integer, got a string"),
    ([*COL, 0, "id"], True, "schema.columns[0].id: expected an integer, got a boolean"),
    ([*COL, 0, "id"], -2, "schema.columns[0].id: -2 is out of range"),
    ([*COL, 0, "id"], 2**40, "is out of range"),
    ([*COL, 0, "comment"], 1, "schema.columns[0].comment: expected a string"),
    ([*COL, 7, "data_type", "precision"], 39, "schema.columns[7].data_type: DECIMAL precision"),
    ([*COL, 7, "data_type", "scale"], 16, "schema.columns[7].data_type: DECIMAL scale"),
    ([*COL, 7, "data_type", "scale"], 1.5, "data_type.scale: expected an integer, got a number"),
    ([*COL, 7, "data_type", "scale"], _DELETE, "schema.columns[7].data_type.scale: missing"),
    ([*COL, 11, "data_type", "length"], 0, "schema.columns[11].data_type: BINARY length"),
    ([*COL, 13, "data_type", "precision"], 10, "TIME precision must be between 0 and 9"),
    ([*COL, 20, "data_type", "precision"], _DELETE, "columns[20].data_type.precision: missing"),
    ([*COL, 22, "data_type", "element_type"], _DELETE, "data_type.element_type: missing"),
    ([*COL, 25, "data_type", "key_type"], 3, "data_type.key_type: expected an object"),
    ([*COL, 26, "data_type", "fields"], {}, "data_type.fields: expected a list of fields"),
    ([*COL, 26, "data_type", "fields", 0, "name"], "y", "duplicate field name 'y'"),
    ([*COL, 26, "data_type", "fields", 0, "name"], "  ", "field name is blank"),
    ([*COL, 26, "data_type", "fields", 0, "field_type"], _DELETE, "fields[0].field_type: missing"),
    ([*COL, 26, "data_type", "fields", 0, "description"], [], "fields[0].description: expected"),
    ([*COL, 26, "data_type", "fields", 0, "field_id"], "29", "fields[0].field_id: expected an"),
    ([*COL, 0, "agg_function"], "sum", "schema.columns[0].agg_function: expected an object"),
    ([*COL, 0, "agg_function"], {"parameters": {}}, "agg_function.type: missing"),
    ([*COL, 0, "agg_function"], {"type": "x", "parameters": {"a": 1}}, "parameters['a']"),
    (["schema", "primary_key"], "c_int", "schema.primary_key: expected a list of names"),
    (["schema", "primary_key"], ["nope"], "schema.primary_key[0]: unknown column 'nope'"),
    (["schema", "primary_key"], ["c_int", "c_int"], "'c_int' is listed twice"),
    (["schema", "auto_increment_column"], ["x"], "auto_increment_column[0]: unknown column"),
    (["schema", "highest_field_id"], "33", "schema.highest_field_id: expected an integer"),
    (["partition_key"], ["zz"], "partition_key[0]: unknown column 'zz'"),
    (["partition_key"], [1], "partition_key[0]: expected a string"),
    (["bucket_key"], ["c_bigint", None], "bucket_key[1]: expected a string, got null"),
    (["bucket_count"], 0, "bucket_count: 0 is out of range"),
    (["bucket_count"], "3", "bucket_count: expected an integer"),
    (["comment"], {"a": 1}, "comment: expected a string, got an object"),
    (["properties"], [], "properties: expected an object, got a list"),
    (["properties", "table.replication.factor"], 1, "properties['table.replication.factor']"),
    (["custom_properties", "owner"], None, "custom_properties['owner']: expected a string"),
]


@pytest.mark.parametrize(("path", "value", "message"), ERROR_CASES)
def test_malformed_table_json(path: list[Any], value: Any, message: str) -> None:
    doc = _mutate(path, value)
    with pytest.raises(TableJsonError, match=_escape(message)):
        parse_table_descriptor(doc)
    with pytest.raises(TableJsonError, match=_escape(message)):
        parse_table_descriptor(json.dumps(doc).encode())


def _escape(text: str) -> str:
    import re

    return re.escape(text)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (b"", "<root>: table JSON is not valid JSON"),
        (b"{", "<root>: table JSON is not valid JSON"),
        (b"\xff\xfe{}", "<root>: table JSON is not valid UTF-8"),
        (b"[]", "<root>: expected an object, got a list"),
        (b"null", "<root>: expected an object, got null"),
        ("[" * 100_000 + "]" * 100_000, "<root>: "),
        (42, "<root>: expected an object, got an integer"),
    ],
)
def test_unparsable_documents(doc: Any, message: str) -> None:
    with pytest.raises(TableJsonError, match=_escape(message)):
        parse_table_descriptor(doc)


def test_deep_type_nesting_is_rejected() -> None:
    node: dict[str, Any] = {"type": "INTEGER"}
    for _ in range(MAX_TYPE_DEPTH + 5):
        node = {"type": "ARRAY", "element_type": node}
    with pytest.raises(TableJsonError, match="nested deeper than"):
        parse_data_type(node)
    text = '{"type":"ARRAY","element_type":' * 5000 + '{"type":"INTEGER"}' + "}" * 5000
    with pytest.raises(TableJsonError):
        parse_data_type(text)
    ok: dict[str, Any] = {"type": "INTEGER"}
    for _ in range(MAX_TYPE_DEPTH - 1):
        ok = {"type": "ARRAY", "element_type": ok}
    assert isinstance(parse_data_type(ok), ArrayType)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"type": "VECTOR"}, "<root>: unknown type 'VECTOR'"),
        ({}, "type: missing"),
        ({"type": "CHAR"}, "length: missing"),
        ({"type": "CHAR", "length": 2**31}, "length: 2147483648 is out of range"),
        ({"type": "ROW"}, "fields: missing"),
        ({"type": "ROW", "fields": [{"name": "a"}]}, "fields[0].field_type: missing"),
        ({"type": "ARRAY", "element_type": {"type": "X"}}, "element_type: unknown type 'X'"),
        ({"type": "MAP", "key_type": {"type": "INTEGER"}}, "value_type: missing"),
        ([], "<root>: expected an object, got a list"),
    ],
)
def test_malformed_type_json(node: Any, message: str) -> None:
    with pytest.raises(TableJsonError, match=_escape(message)) as exc:
        parse_data_type(node)
    assert exc.value.column is None


def test_malformed_database_json() -> None:
    with pytest.raises(TableJsonError, match=_escape("custom_properties: expected an object")):
        parse_database_descriptor(b'{"custom_properties": 3}')
    with pytest.raises(TableJsonError, match=_escape("comment: expected a string")):
        parse_database_descriptor(b'{"comment": 3, "custom_properties": {}}')


# ============================================================================ property tests

KNOWN_KEYS = [
    "version", "schema", "columns", "name", "data_type", "type", "nullable", "comment", "id",
    "primary_key", "auto_increment_column", "highest_field_id", "agg_function", "parameters",
    "partition_key", "bucket_key", "bucket_count", "properties", "custom_properties", "length",
    "precision", "scale", "element_type", "key_type", "value_type", "fields", "field_type",
    "field_id", "description",
]  # fmt: skip

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**40), max_value=2**40)
    | st.floats(allow_nan=True)
    | st.text(max_size=12)
    | st.sampled_from([r.value for r in TypeRoot] + ["VECTOR", "c_int", "c_bigint"])
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.sampled_from(KNOWN_KEYS) | st.text(max_size=6), children, max_size=6)
    ),
    max_leaves=40,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_paths(v, (*prefix, i)))
    return out


FIXTURE_DOCS = {name: json.loads(raw_table(name)) for name in TABLES}
FIXTURE_PATHS = {name: _paths(doc)[1:] for name, doc in FIXTURE_DOCS.items()}


@st.composite
def mutated_fixtures(draw: st.DrawFn) -> Any:
    """A real table document with one node replaced by an arbitrary value, or removed."""
    name = draw(st.sampled_from(TABLES))
    doc = copy.deepcopy(FIXTURE_DOCS[name])
    path = draw(st.sampled_from(FIXTURE_PATHS[name]))
    parent: Any = doc
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and draw(st.booleans()) and draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(json_values)
    return doc


def _only_table_json_error(fn: Any, value: Any, expected: type) -> None:
    try:
        result = fn(value)
    except TableJsonError as exc:
        assert exc.path and str(exc)
        return
    assert isinstance(result, expected)


@FUZZ
@given(json_values)
def test_fuzz_parse_table_descriptor_arbitrary(value: Any) -> None:
    _only_table_json_error(parse_table_descriptor, value, TableDescriptor)
    _only_table_json_error(parse_table_descriptor, json.dumps(value).encode(), TableDescriptor)


@FUZZ
@given(json_values)
def test_fuzz_parse_data_type_arbitrary(value: Any) -> None:
    _only_table_json_error(parse_data_type, value, DataType)
    _only_table_json_error(parse_schema, value, Schema)
    _only_table_json_error(parse_database_descriptor, value, DatabaseDescriptor)


@FUZZ
@given(mutated_fixtures())
def test_fuzz_mutated_fixtures(doc: Any) -> None:
    try:
        desc = parse_table_descriptor(json.dumps(doc).encode())
    except TableJsonError as exc:
        assert exc.path and str(exc)
        return
    # whatever parses renders, re-serialises and re-parses to the same thing
    for c in desc.schema.columns:
        c.type.sql()
        c.type.summary()
    assert parse_table_descriptor(desc.to_json_bytes()) == desc


@FUZZ
@given(st.binary(max_size=200))
def test_fuzz_raw_bytes(data: bytes) -> None:
    _only_table_json_error(parse_table_descriptor, data, TableDescriptor)
    _only_table_json_error(parse_data_type, data, DataType)


def _leaf_types() -> st.SearchStrategy[DataType]:
    nb = st.booleans()
    simple = st.sampled_from(
        [BooleanType, TinyIntType, SmallIntType, IntType, BigIntType, FloatType, DoubleType,
         StringType, BytesType, DateType]
    )  # fmt: skip
    return st.one_of(
        st.builds(lambda cls, n: cls(nullable=n), simple, nb),
        st.builds(
            lambda p, s, n: DecimalType(p, min(s, p), nullable=n),
            st.integers(1, 38),
            st.integers(0, 38),
            nb,
        ),
        st.builds(lambda n, x: CharType(x, nullable=n), nb, st.integers(1, 2**31 - 1)),
        st.builds(lambda n, x: BinaryType(x, nullable=n), nb, st.integers(1, 2**31 - 1)),
        st.builds(lambda n, p: TimeType(p, nullable=n), nb, st.integers(0, 9)),
        st.builds(lambda n, p: TimestampType(p, nullable=n), nb, st.integers(0, 9)),
        st.builds(lambda n, p: LocalZonedTimestampType(p, nullable=n), nb, st.integers(0, 9)),
    )


def _rows(children: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
    field_lists = st.lists(
        st.tuples(
            st.text(min_size=1, max_size=6).filter(lambda s: s.strip() != ""),
            children,
            st.none() | st.text(max_size=8),
            st.none() | st.integers(0, 2**31 - 1),
        ),
        max_size=4,
        unique_by=lambda t: t[0],
    )
    return st.builds(
        lambda fs, n: RowType(tuple(DataField(*f) for f in fs), nullable=n),
        field_lists,
        st.booleans(),
    )


data_types = st.recursive(
    _leaf_types(),
    lambda children: st.one_of(
        st.builds(lambda e, n: ArrayType(e, nullable=n), children, st.booleans()),
        st.builds(lambda k, v, n: MapType(k, v, nullable=n), children, children, st.booleans()),
        _rows(children),
    ),
    max_leaves=12,
)


@settings(max_examples=max(300, settings.default.max_examples), deadline=None)
@given(data_types)
def test_generated_types_round_trip(dtype: DataType) -> None:
    as_json = dtype.to_json()
    assert parse_data_type(as_json) == dtype
    assert parse_data_type(json.dumps(as_json).encode()) == dtype
    sql = dtype.sql()
    summary = dtype.summary()
    assert sql.endswith(" NOT NULL") == (not dtype.nullable)
    assert summary.endswith(" NOT NULL") == (not dtype.nullable)
    hash(dtype)
