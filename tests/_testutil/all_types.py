"""Rows of every Fluss type written with pyfluss, and the tables that hold them (live tests)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from decimal import Decimal
from typing import Any

import fluss
import pyarrow as pa
import pytest

from fluss_proto.client import FlussClient
from konsole.localcluster.settle import SettledConnection
from tests._testutil import pyfluss_data as pf

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(120)]

CONNECT = {"connect_timeout": 5.0, "request_timeout": 15.0, "retry_backoff": 0.2}
ROWS = 30
EPOCH = datetime(1970, 1, 1)

FIELDS: list[tuple[str, pa.DataType]] = [
    ("c_bool", pa.bool_()),
    ("c_i8", pa.int8()),
    ("c_i16", pa.int16()),
    ("c_i32", pa.int32()),
    ("c_i64", pa.int64()),
    ("c_f32", pa.float32()),
    ("c_f64", pa.float64()),
    ("c_dec", pa.decimal128(10, 2)),
    ("c_dec18", pa.decimal128(18, 4)),
    ("c_dec38", pa.decimal128(38, 10)),
    ("c_str", pa.string()),
    ("c_bytes", pa.binary()),
    ("c_bin4", pa.binary(4)),
    ("c_date", pa.date32()),
    ("c_t0", pa.time32("s")),
    ("c_t3", pa.time32("ms")),
    ("c_t6", pa.time64("us")),
    ("c_t9", pa.time64("ns")),
    ("c_ts3", pa.timestamp("ms")),
    ("c_ts6", pa.timestamp("us")),
    ("c_ts9", pa.timestamp("ns")),
    ("c_ltz3", pa.timestamp("ms", tz="UTC")),
    ("c_ltz6", pa.timestamp("us", tz="UTC")),
    ("c_ltz9", pa.timestamp("ns", tz="UTC")),
    ("c_arr", pa.list_(pa.int32())),
    ("c_arr_s", pa.list_(pa.string())),
    ("c_map", pa.map_(pa.string(), pa.int64())),
    ("c_row", pa.struct([("x", pa.int32()), ("y", pa.string())])),
]
SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False)] + [pa.field(n, t) for n, t in FIELDS]
)
#: The Arrow types Fluss itself uses (ArrowUtils): LTZ without a time zone.
FLUSS_ARROW = {n: (pa.timestamp(t.unit) if pa.types.is_timestamp(t) else t) for n, t in FIELDS}


def all_type_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [{"id": 0}]  # every other column NULL
    rows.append(
        {
            "id": 1,
            "c_bool": False,
            "c_i8": -128,
            "c_i16": -32768,
            "c_i32": -(2**31),
            "c_i64": -(2**63),
            "c_f32": -3.4028234663852886e38,
            "c_f64": -1.7976931348623157e308,
            "c_dec": Decimal("-99999999.99"),
            "c_dec18": Decimal("-99999999999999.9999"),
            "c_dec38": Decimal("-9999999999999999999999999999.9999999999"),
            "c_str": "",
            "c_bytes": b"",
            "c_bin4": b"\x00\x00\x00\x00",
            "c_date": date(1, 1, 1),
            "c_t0": dtime(0, 0, 0),
            "c_t3": dtime(0, 0, 0),
            "c_t6": dtime(0, 0, 0),
            "c_t9": dtime(0, 0, 0),
            "c_ts3": datetime(1900, 1, 1, 0, 0, 0, 123000),
            "c_ts6": datetime(1900, 1, 1, 0, 0, 0, 123000),
            "c_ts9": datetime(1969, 12, 31, 23, 59, 59, 999000),
            "c_ltz3": datetime(1900, 1, 1, tzinfo=UTC),
            "c_ltz6": datetime(1969, 12, 31, 23, 59, 59, 1000, tzinfo=UTC),
            "c_ltz9": datetime(1970, 1, 1, tzinfo=UTC),
            "c_arr": [],
            "c_arr_s": [],
            "c_map": {},
            "c_row": {"x": None, "y": None},
        }
    )
    rows.append(
        {
            "id": 2,
            "c_bool": True,
            "c_i8": 127,
            "c_i16": 32767,
            "c_i32": 2**31 - 1,
            "c_i64": 2**63 - 1,
            "c_f32": 3.4028234663852886e38,
            "c_f64": 1.7976931348623157e308,
            "c_dec": Decimal("99999999.99"),
            "c_dec18": Decimal("99999999999999.9999"),
            "c_dec38": Decimal("9999999999999999999999999999.9999999999"),
            "c_str": "héllo ✓ 𝄞 " + "x" * 300,
            "c_bytes": bytes(range(256)),
            "c_bin4": b"\xff\xfe\xfd\xfc",
            "c_date": date(9999, 12, 31),
            "c_t0": dtime(23, 59, 59),
            "c_t3": dtime(23, 59, 59, 999000),
            "c_t6": dtime(23, 59, 59, 999000),
            "c_t9": dtime(23, 59, 59, 999000),
            "c_ts3": datetime(9999, 12, 1, 23, 59, 59, 999000),
            "c_ts6": datetime(2262, 4, 11, 23, 47, 16, 854775),
            "c_ts9": datetime(2262, 4, 11, 23, 47, 16, 854775),
            "c_ltz3": datetime(2999, 12, 31, tzinfo=UTC),
            "c_ltz6": datetime(2100, 1, 1, 0, 0, 0, 999999, tzinfo=UTC),
            "c_ltz9": datetime(2200, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
            "c_arr": [1, None, -3],
            "c_arr_s": ["a", None, ""],
            "c_map": {"k": 1, "": None},
            "c_row": {"x": 7, "y": "z"},
        }
    )
    for i in range(3, ROWS):
        rows.append(
            {
                "id": i,
                "c_bool": i % 2 == 0,
                "c_i8": i,
                "c_i16": i * 100,
                "c_i32": i * 100_000,
                "c_i64": i * 10**12,
                "c_f32": i + 0.5,
                "c_f64": i / 3,
                "c_dec": Decimal(i) / Decimal(4),
                "c_dec18": Decimal(i) / Decimal(8),
                "c_dec38": Decimal(i) * Decimal("1e20") + Decimal("0.0000000001"),
                "c_str": f"s{i}",
                "c_bytes": bytes([i] * i),
                "c_bin4": bytes([i, i, i, i]),
                "c_date": date(2024, 1, 1) + timedelta(days=i),
                "c_t0": dtime(i % 24, i, i),
                "c_t3": dtime(i % 24, i, i, i * 1000),
                "c_t6": dtime(i % 24, i, i, i * 1000),
                "c_t9": dtime(i % 24, i, i, i * 2000),
                "c_ts3": datetime(2024, 1, 1) + timedelta(milliseconds=i * 1001),
                "c_ts6": datetime(2024, 1, 1) + timedelta(microseconds=i * 100_001),
                "c_ts9": datetime(2024, 1, 1) + timedelta(microseconds=i * 100_001),
                "c_ltz3": datetime(2024, 1, 1, tzinfo=UTC) + timedelta(milliseconds=i),
                "c_ltz6": datetime(2024, 1, 1, tzinfo=UTC) + timedelta(microseconds=i),
                "c_ltz9": datetime(2024, 1, 1, tzinfo=UTC) + timedelta(microseconds=i * 7),
                "c_arr": list(range(i % 5)),
                "c_arr_s": [str(j) for j in range(i % 3)],
                "c_map": {f"k{j}": j for j in range(i % 4)},
                "c_row": {"x": i, "y": str(i)},
            }
        )
    return rows


def norm(v: Any) -> Any:
    """Comparable Python values: timestamps -> ns since the epoch (UTC), tuples -> lists."""
    if hasattr(v, "tz_localize") and hasattr(v, "value"):  # pandas.Timestamp
        return ("ts", int(v.value))
    if isinstance(v, datetime):
        if v.tzinfo is not None:
            v = v.astimezone(UTC).replace(tzinfo=None)
        return ("ts", (v - EPOCH) // timedelta(microseconds=1) * 1000)
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v


def norm_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({k: norm(v) for k, v in r.items() if not k.startswith("_")} for r in rows),
        key=lambda r: r["id"],
    )


@dataclass
class World:
    conn: SettledConnection
    client: FlussClient
    db: str
    bootstrap: str


@contextlib.asynccontextmanager
async def world_of(bootstrap: str, prefix: str) -> AsyncIterator[World]:
    """A pyfluss connection, a fresh database (dropped at the end) and our client."""
    conn = await pf.connect(bootstrap)
    db = pf.unique_name(prefix)
    client: FlussClient | None = None
    try:
        await pf.create_database(conn.get_admin(), db)
        client = await FlussClient.connect(bootstrap, **CONNECT)  # type: ignore[arg-type]
        yield World(conn, client, db, bootstrap)
    finally:
        if client is not None:
            await client.close()
        await pf.drop_database(conn.get_admin(), db)
        await pf.close_connection(conn)


async def create_table(
    conn: SettledConnection,
    path: fluss.TablePath,
    schema: pa.Schema,
    *,
    pk: list[str] | None = None,
    buckets: int = 3,
    partition_keys: list[str] | None = None,
    partitions: tuple[str, ...] = (),
    bucket_keys: list[str] | None = None,
    stats: bool = False,
) -> None:
    """A new table whose every bucket has a leader (:func:`pyfluss_data.create_ready`);
    ``partitions``: values of its one partition key, created with it. A partitioned table
    without them is only created: its leaders come with the partitions the caller makes."""
    kwargs: dict[str, Any] = {"bucket_count": buckets, "bucket_keys": bucket_keys or ["id"]}
    if partition_keys:
        kwargs["partition_keys"] = partition_keys
    if stats:  # statistics of every column whose type has them (Fluss 1.0)
        kwargs["properties"] = {"table.statistics.columns": "*"}
    descriptor = fluss.TableDescriptor(fluss.Schema(schema, primary_keys=pk), **kwargs)
    admin = conn.get_admin()
    if partition_keys and not partitions:  # its leaders come with the caller's partitions
        async with asyncio.timeout(30):
            await admin.create_table(path, descriptor, ignore_if_exists=False)
        return
    assert not partitions or (partition_keys and len(partition_keys) == 1), partition_keys
    parts = dict.fromkeys(partitions, partition_keys[0]) if partition_keys else None
    await pf.create_ready(admin, path, descriptor, buckets, parts)


async def write_rows(conn: SettledConnection, path: fluss.TablePath, rows: list[dict]) -> None:
    table = await conn.table_for_writing(path, 30)
    if table.has_primary_key():
        writer: Any = table.new_upsert().create_writer()
        handles = [writer.upsert(r) for r in rows]
    else:
        writer = table.new_append().create_writer()
        handles = [writer.append(r) for r in rows]
    async with asyncio.timeout(60):
        await writer.flush()
        await asyncio.gather(*(h.wait() for h in handles))
