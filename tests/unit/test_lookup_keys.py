"""Key bytes, buckets and the typing of lookup keys (fluss_proto.lookup.keys / plan), pure."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fluss_proto.errors import LiteralError, LookupKeyError, UnsupportedTableError
from fluss_proto.literals import column_value, internal_value
from fluss_proto.lookup import bucket_of, encode_key, lookup_spec, partition_text, plan_keys
from fluss_proto.lookup.keys import bucket_candidates
from fluss_proto.records import CompactedRowDecoder
from fluss_proto.records.rowtype import DataType, row_type
from fluss_proto.types import (
    BigIntType,
    Column,
    DateType,
    FrozenDict,
    IntType,
    Schema,
    StringType,
    TableInfo,
)

#: The hypothesis profile's examples over the CI profile's (200): `make fuzz` runs 100x more.
SCALE = max(settings.default.max_examples / 200, 1.0)
pytestmark = pytest.mark.timeout(int(30 * SCALE))

D = DataType


# Fluss's own BucketingFunctionTest (Java, v0.9.1 and the 1.0 line) expects these buckets.
@pytest.mark.parametrize(
    ("key", "buckets", "bucket"),
    [
        (bytes([0, 10]), 7, 1),
        (bytes([0, 10, 10, 10]), 12, 0),
        (b"2bb87d68-baf9-4e64-90f9-f80910419fa6", 16, 6),
        (b"The quick brown fox jumps over the lazy dog", 8, 6),
    ],
)
def test_buckets_are_fluss_java_buckets(key: bytes, buckets: int, bucket: int) -> None:
    assert bucket_of(key, buckets) == bucket


def test_the_rust_clients_hash_differs_only_for_high_tail_bytes() -> None:
    # the tail byte 0xff is -1 to Java, 255 to the Rust client
    assert bucket_candidates(bytes([1, 0xFF, 0x82]), 3) == (2, 0)
    assert len(bucket_candidates(bytes([1, 0x7F, 0x02]), 3)) == 1  # no high tail byte
    assert len(bucket_candidates(bytes([0xFF] * 8), 3)) == 1  # no tail at all


@pytest.mark.parametrize(
    ("root", "extra", "value", "expected"),
    [
        ("BOOLEAN", {}, True, "01"),
        ("TINYINT", {}, -1, "ff"),
        ("SMALLINT", {}, -2, "feff"),
        ("INTEGER", {}, 300, "ac02"),
        ("INTEGER", {}, -1, "ffffffff0f"),
        ("BIGINT", {}, -1, "ffffffffffffffffff01"),
        ("DATE", {}, 19_000, "b894 01".replace(" ", "")),
        ("STRING", {}, "é", "02c3a9"),
        ("BYTES", {}, b"\x00\x01", "020001"),
        ("DECIMAL", {"precision": 10, "scale": 2}, 12345, "b960"),
        # p > 18: varint length, then Java BigInteger.toByteArray (big-endian, minimal)
        ("DECIMAL", {"precision": 20, "scale": 0}, -128, "0180"),
        ("DECIMAL", {"precision": 20, "scale": 0}, 128, "020080"),
        ("TIMESTAMP_WITHOUT_TIME_ZONE", {"precision": 3}, (1, 0), "01"),
        ("TIMESTAMP_WITHOUT_TIME_ZONE", {"precision": 6}, (1, 999_000), "01d8fc3c"),
        ("FLOAT", {}, 1.5, "0000c03f"),
        ("DOUBLE", {}, -2.0, "00000000000000c0"),
    ],
)
def test_key_encoding_per_type(root: str, extra: dict[str, Any], value: Any, expected: str) -> None:
    assert encode_key([value], [D(root, **extra)]).hex() == expected


def test_a_null_key_column_is_refused() -> None:
    with pytest.raises(ValueError, match="NULL"):
        encode_key([None], [D("INTEGER")])


KEY_TYPES = [
    D("BOOLEAN"),
    D("TINYINT"),
    D("SMALLINT"),
    D("INTEGER"),
    D("BIGINT"),
    D("STRING"),
    D("BYTES"),
    D("DECIMAL", precision=10, scale=2),
    D("DECIMAL", precision=25, scale=3),
    D("DATE"),
    D("TIME_WITHOUT_TIME_ZONE", precision=3),
    D("TIMESTAMP_WITHOUT_TIME_ZONE", precision=3),
    D("TIMESTAMP_WITHOUT_TIME_ZONE", precision=9),
    D("TIMESTAMP_WITH_LOCAL_TIME_ZONE", precision=6),
]


def _strategy(dt: DataType) -> st.SearchStrategy[Any]:
    root = dt.root
    if root == "BOOLEAN":
        return st.booleans()
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        bits = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}[root]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if root == "STRING":
        return st.text(max_size=20)
    if root == "BYTES":
        return st.binary(max_size=20)
    if root == "DECIMAL":
        assert dt.precision is not None and dt.scale is not None
        limit = 10**dt.precision - 1
        return st.integers(-limit, limit).map(lambda u: Decimal(u).scaleb(-(dt.scale or 0)))
    if root == "DATE":
        return st.dates(date(1, 1, 1), date(9999, 12, 31))
    if root == "TIME_WITHOUT_TIME_ZONE":
        return st.integers(0, 86_399_999).map(_clock)
    return st.datetimes().map(lambda t: t.isoformat(sep=" "))


def _clock(ms: int) -> str:
    h, m, sec = ms // 3_600_000, ms // 60_000 % 60, ms // 1000 % 60
    return f"{h:02d}:{m:02d}:{sec:02d}.{ms % 1000:03d}"


def _column_values(raw: list[Any], types: list[Any]) -> list[Any] | None:
    try:
        return [
            column_value(v, t, f"c{i}") for i, (v, t) in enumerate(zip(raw, types, strict=True))
        ]
    except LiteralError:
        return None


@given(st.data())
def test_key_bytes_decode_back_as_a_compacted_row(data: st.DataObject) -> None:
    """A key is a CompactedRow's fields without the null bitmap: our row decoder (checked
    against real servers elsewhere) reads every key back, value for value."""
    types = data.draw(st.lists(st.sampled_from(KEY_TYPES), min_size=1, max_size=5))
    raw = [data.draw(_strategy(t)) for t in types]
    values = _column_values(raw, types)
    assume(values is not None)  # a timestamp finer than its column: not a key to try
    assert values is not None
    key = encode_key([internal_value(v, t) for v, t in zip(values, types, strict=True)], types)
    row = row_type([(f"c{i}", t) for i, t in enumerate(types)])
    bitmap = bytes((len(types) + 7) // 8)
    [decoded] = zip(*CompactedRowDecoder(row).decode_columns([bitmap + key]), strict=True)
    assert list(decoded) == values


# ---------------------------------------------------------------------------- planning


def _info(
    columns: list[tuple[str, Any]],
    pk: tuple[str, ...],
    *,
    partition_keys: tuple[str, ...] = (),
    bucket_keys: tuple[str, ...] | None = None,
    properties: dict[str, str] | None = None,
) -> TableInfo:
    schema = Schema(
        columns=tuple(Column(n, t, column_id=i) for i, (n, t) in enumerate(columns)),
        primary_key=pk,
    )
    physical = tuple(k for k in pk if k not in partition_keys)
    return TableInfo(
        database="db",
        table="t",
        table_id=7,
        schema_id=1,
        schema=schema,
        primary_key=pk,
        physical_primary_key=physical,
        bucket_keys=bucket_keys if bucket_keys is not None else physical,
        partition_keys=partition_keys,
        bucket_count=4,
        properties=FrozenDict(properties or {}),
        custom_properties=FrozenDict(),
        comment=None,
        created_ms=0,
        modified_ms=0,
    )


ORDERS = _info(
    [
        ("region", StringType(nullable=False)),
        ("cid", BigIntType(nullable=False)),
        ("day", DateType(nullable=False)),
        ("n", IntType()),
    ],
    ("region", "cid", "day"),
    partition_keys=("day",),
    bucket_keys=("region",),
)


def test_a_key_names_every_primary_key_column_partition_keys_included() -> None:
    spec = lookup_spec(ORDERS)
    assert spec.columns == ("region", "cid", "day")
    assert spec.encoded == ("region", "cid") and spec.bucket_columns == ("region",)
    [plan] = plan_keys(spec, [{"region": "eu", "cid": "42", "day": "2024-06-01"}])
    assert plan.partition == "2024-06-01"
    assert plan.key == encode_key(["eu", 42], [D("STRING"), D("BIGINT")])
    assert plan.buckets[0] == bucket_of(encode_key(["eu"], [D("STRING")]), 4)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ({"region": "eu", "cid": "1"}, "missing lookup column"),
        ({"region": "eu", "cid": "1", "day": "2024-06-01", "n": "3"}, "not a lookup column"),
        ({"region": "eu", "cid": "x", "day": "2024-06-01"}, "not an integer"),
        ({"region": "eu", "cid": "1", "day": "2024-13-01"}, "month"),
        ({"region": None, "cid": "1", "day": "2024-06-01"}, "cannot be NULL"),
    ],
)
def test_a_key_that_does_not_fit_is_one_typed_line(key: dict[str, Any], message: str) -> None:
    with pytest.raises((LookupKeyError, LiteralError), match=message) as info:
        plan_keys(lookup_spec(ORDERS), [key])
    assert "\n" not in str(info.value)


def test_several_keys_name_the_bad_one_by_position() -> None:
    good = {"region": "eu", "cid": "1", "day": "2024-06-01"}
    with pytest.raises(LiteralError, match="key 2: "):
        plan_keys(lookup_spec(ORDERS), [good, {**good, "cid": "1.5"}])


def test_prefix_lookups_follow_flusss_rule() -> None:
    spec = lookup_spec(ORDERS, prefix=True)
    assert spec.columns == ("region", "day") and spec.encoded == ("region",)
    [plan] = plan_keys(spec, [{"region": "eu", "day": "2024-06-01"}])
    assert plan.key == encode_key(["eu"], [D("STRING")])
    whole = _info([("a", StringType(nullable=False)), ("b", IntType())], ("a",))
    with pytest.raises(LookupKeyError, match="whole primary key"):
        lookup_spec(whole, prefix=True)
    not_prefix = _info(
        [("a", StringType(nullable=False)), ("b", IntType(nullable=False))],
        ("a", "b"),
        bucket_keys=("b",),
    )
    with pytest.raises(LookupKeyError, match="not a prefix"):
        lookup_spec(not_prefix, prefix=True)


def test_tables_konsole_does_not_look_up_say_why() -> None:
    log = _info([("a", StringType())], ())
    with pytest.raises(LookupKeyError, match="log table"):
        lookup_spec(log)
    pk = [("a", StringType(nullable=False))]
    lake = _info(pk, ("a",), properties={"table.datalake.format": "paimon"})
    with pytest.raises(UnsupportedTableError, match="paimon"):
        lookup_spec(lake)
    ttl = _info(pk, ("a",), properties={"table.kv.format-version": "3"})
    with pytest.raises(UnsupportedTableError, match="row TTL"):
        lookup_spec(ttl)


@pytest.mark.parametrize(
    ("root", "text", "name"),
    [
        ("STRING", "eu", "eu"),
        ("BOOLEAN", "TRUE", "true"),
        ("INTEGER", "-7", "-7"),
        ("DATE", "2024-06-01", "2024-06-01"),
        ("TIME_WITHOUT_TIME_ZONE", "10:05:03.004", "10-05-03_004"),
        ("BYTES", "0x0aff", "0aff"),
    ],
)
def test_partition_names_are_flusss(root: str, text: str, name: str) -> None:
    dt = D(root, precision=3) if root.startswith("TIME") else D(root)
    assert partition_text(column_value(text, dt, "p"), dt, "p") == name


def test_a_timestamp_partition_key_is_refused_with_a_reason() -> None:
    dt = D("TIMESTAMP_WITHOUT_TIME_ZONE", precision=3)
    with pytest.raises(UnsupportedTableError, match="partition key"):
        partition_text(0, dt, "p")
