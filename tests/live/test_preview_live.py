"""Table previews against the real cluster, checked value for value against pyfluss.

pyfluss (the official client) writes the tables and reads them back (log scanner, record
batch scanner, lookups); ``preview_table`` must return the same rows. Primary-key tables go
through ScanKv on the 1.0 line and through LimitScan on Fluss 0.9.1 (SCAN_KV is a 1.0 API
the server does not offer); each generation asserts its own method.

Types pyfluss writes from Python rows: every Fluss type (BOOLEAN, TINYINT, SMALLINT, INT,
BIGINT, FLOAT, DOUBLE, DECIMAL compact and p>18, STRING incl. empty, BYTES, BINARY(n), DATE,
TIME(0/3/6/9), TIMESTAMP(3/6/9), TIMESTAMP_LTZ(3/6/9), ARRAY, MAP, ROW), with NULLs and
extremes, within these pyfluss limits (observed with pyfluss 1.0.0):

- TIME values must be whole milliseconds (it refuses finer ones: Fluss keeps TIME as
  milliseconds of the day whatever the precision);
- a pre-1970 TIMESTAMP with a sub-millisecond part fails from a Python ``datetime``
  ("nanoOfMillisecond must be in range [0, 999999]"); it works through ``write_arrow``;
- ``datetime`` cannot carry nanoseconds: TIMESTAMP(9) nanoseconds are written with
  ``write_arrow`` (log tables; the upsert writer takes rows only);
- timestamps after about 9999-12-30T22:00 are refused ("timestamp overflowed");
- CHAR(n) cannot be declared (an Arrow schema has no CHAR), so it is not covered.

pyfluss returns TIMESTAMP_LTZ as UTC-aware values; the preview keeps Fluss's Arrow type (no
time zone, UTC instants). Values are compared as nanoseconds since the epoch.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from decimal import Decimal
from typing import Any

import fluss
import pyarrow as pa
import pytest
import pytest_asyncio

from fluss_proto._gen import fluss_rpc_pb2 as pb
from fluss_proto.admin import FlussAdmin
from fluss_proto.api_keys import ApiKey
from fluss_proto.client import FlussClient
from fluss_proto.records import Magic1Layout, read_log_batches
from fluss_proto.scan import BucketStatus, ScanMethod, preview_table
from konsole.localcluster.seed import wait_leaders
from tests._testutil import pyfluss_data as pf
from tests.conftest import FlussServer

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
    conn: fluss.FlussConnection
    client: FlussClient
    db: str
    bootstrap: str


async def _create(
    conn: fluss.FlussConnection,
    path: fluss.TablePath,
    schema: pa.Schema,
    *,
    pk: list[str] | None = None,
    buckets: int = 3,
    partition_keys: list[str] | None = None,
    bucket_keys: list[str] | None = None,
    stats: bool = False,
) -> None:
    kwargs: dict[str, Any] = {"bucket_count": buckets, "bucket_keys": bucket_keys or ["id"]}
    if partition_keys:
        kwargs["partition_keys"] = partition_keys
    if stats:  # statistics of every column whose type has them (Fluss 1.0)
        kwargs["properties"] = {"table.statistics.columns": "*"}
    descriptor = fluss.TableDescriptor(fluss.Schema(schema, primary_keys=pk), **kwargs)
    admin = conn.get_admin()
    async with asyncio.timeout(30):
        await admin.create_table(path, descriptor, ignore_if_exists=False)
        if not partition_keys:  # a partitioned table's leaders come with its partitions
            await wait_leaders(admin, path, buckets)


async def _write(conn: fluss.FlussConnection, path: fluss.TablePath, rows: list[dict]) -> None:
    table = await asyncio.wait_for(conn.get_table(path), 30)
    if table.has_primary_key():
        writer: Any = table.new_upsert().create_writer()
        handles = [writer.upsert(r) for r in rows]
    else:
        writer = table.new_append().create_writer()
        handles = [writer.append(r) for r in rows]
    async with asyncio.timeout(60):
        await writer.flush()
        await asyncio.gather(*(h.wait() for h in handles))


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def world(bootstrap: str) -> AsyncIterator[World]:
    conn = await pf.connect(bootstrap)
    db = pf.unique_name("preview_live")
    client: FlussClient | None = None
    try:
        await pf.create_database(conn.get_admin(), db)
        client = await FlussClient.connect(bootstrap, **CONNECT)
        yield World(conn, client, db, bootstrap)
    finally:
        if client is not None:
            await client.close()
        await pf.drop_database(conn.get_admin(), db)
        await pf.close_connection(conn)


async def test_every_type_matches_pyfluss_row_for_row(
    world: World, fluss_server: FlussServer
) -> None:
    rows = all_type_rows()
    log, pk = fluss.TablePath(world.db, "types_log"), fluss.TablePath(world.db, "types_pk")
    await _create(world.conn, log, SCHEMA)
    await _create(world.conn, pk, SCHEMA, pk=["id"])
    # one table at a time: pyfluss 1.0 writers on two tables at once have hung for good
    await _write(world.conn, log, rows)
    await _write(world.conn, pk, rows)

    back_log = await pf.read_all_log(world.conn, log, expected=ROWS, timeout_s=30)
    back_pk = await pf.read_pk_rows(world.conn, pk, range(ROWS))
    assert len(back_log) == len(back_pk) == ROWS

    for path, back, method in ((log, back_log, ScanMethod.LIMIT_SCAN), (pk, back_pk, None)):
        result = await preview_table(world.client, f"{world.db}.{path.table_name}", limit=1000)
        report = result.report
        assert report.complete and report.rows_returned == ROWS, report.summary_lines()
        assert len(report.buckets) == 3 and not report.limit_cut
        if method is not None:
            assert {b.method for b in report.buckets} == {method}
        else:  # 0.9.1 offers no SCAN_KV: LimitScan; a 1.0 server takes ScanKv
            methods = {b.method for b in report.buckets}
            expected = ScanMethod.SCAN_KV if fluss_server.is_1_0 else ScanMethod.LIMIT_SCAN
            assert world.client.features.scan_kv is fluss_server.is_1_0
            assert methods == {expected}
        for name, arrow_type in FLUSS_ARROW.items():
            assert result.table.schema.field(name).type == arrow_type, name
        assert result.table.schema.field("c_dec38").type == pa.decimal128(38, 10)
        assert norm_rows(result.table.to_pylist()) == norm_rows(back), path
        assert set(result.table.column("_bucket").to_pylist()) == {0, 1, 2}


def updated_row(row: dict[str, Any]) -> dict[str, Any]:
    """A whole new row for the same key: values changed, some set, some cleared."""
    i = row["id"]
    new = dict(row)
    new.update(
        {
            "c_bool": not row.get("c_bool", False),
            "c_i32": -i,
            "c_str": f"updated {i} ✓",
            "c_bytes": None,
            "c_dec38": Decimal("-1.0000000001") * i,
            "c_ts9": datetime(2030, 1, 1) + timedelta(microseconds=i),
            "c_ltz3": None,
            "c_arr": [i, None, i],
            "c_map": {"u": i},
            "c_row": {"x": -i, "y": None},
        }
    )
    return new


UPDATED = range(2, 10)  # includes the row of maximum values
DELETED = [0, 1, *range(10, 15)]  # the all-NULL row, the minimum row and 5 plain ones


async def test_pk_preview_after_upserts_and_deletes_matches_pyfluss_lookups(
    world: World, fluss_server: FlussServer
) -> None:
    rows = all_type_rows()
    path = fluss.TablePath(world.db, "types_pk_upd")
    await _create(world.conn, path, SCHEMA, pk=["id"])
    await _write(world.conn, path, rows)
    await _write(world.conn, path, [updated_row(rows[i]) for i in UPDATED])
    table = await asyncio.wait_for(world.conn.get_table(path), 30)
    writer = table.new_upsert().create_writer()
    handles = [writer.delete({"id": i}) for i in DELETED]
    async with asyncio.timeout(60):
        await writer.flush()
        await asyncio.gather(*(h.wait() for h in handles))

    back = await pf.read_pk_rows(world.conn, path, range(ROWS))
    live = sorted(set(range(ROWS)) - set(DELETED))
    assert [r["id"] for r in back] == live
    assert all(r["c_str"] == f"updated {r['id']} ✓" for r in back if r["id"] in UPDATED)

    result = await preview_table(world.client, f"{world.db}.types_pk_upd", limit=1000)
    report = result.report
    assert report.complete and report.rows_returned == len(live), report.summary_lines()
    # ScanKv when the leaders advertise it (1.0), LimitScan on 0.9.1 (no SCAN_KV there)
    assert world.client.features.scan_kv is fluss_server.is_1_0
    expected = ScanMethod.SCAN_KV if fluss_server.is_1_0 else ScanMethod.LIMIT_SCAN
    assert {b.method for b in report.buckets} == {expected}
    for name, arrow_type in FLUSS_ARROW.items():
        assert result.table.schema.field(name).type == arrow_type, name
    assert norm_rows(result.table.to_pylist()) == norm_rows(back)
    # a preview with a small limit stops early with what it has (and says so)
    small = await preview_table(world.client, f"{world.db}.types_pk_upd", limit=5)
    assert small.table.num_rows == 5 and small.report.limit_cut
    assert set(small.table.column("id").to_pylist()) <= set(live)


async def test_log_batches_with_statistics_per_generation(
    world: World, fluss_server: FlussServer
) -> None:
    """``table.statistics.columns``: 1.0 takes it and pyfluss then writes magic-1 batches
    with a statistics block (1.0 layout), which LimitScan and the tail must read; 0.9.1
    refuses the property (INVALID_CONFIG_EXCEPTION, 39)."""
    path = fluss.TablePath(world.db, "with_stats")
    if not fluss_server.is_1_0:
        with pytest.raises(fluss.FlussError) as info:
            await _create(world.conn, path, SCHEMA, stats=True)
        assert "table.statistics.columns" in str(info.value) and "39" in str(info.value)
        return
    await _create(world.conn, path, SCHEMA, stats=True)
    rows = all_type_rows()
    await _write(world.conn, path, rows)
    back = await pf.read_all_log(world.conn, path, expected=ROWS, timeout_s=30)
    assert len(back) == ROWS
    # what the leaders hold: magic 1 with a statistics block
    buckets = await FlussAdmin(world.client).bucket_metadata((world.db, "with_stats"))
    fetch = pb.FetchLogRequest(follower_server_id=-1, max_bytes=16 << 20)
    table = fetch.tables_req.add(table_id=buckets[0].table_id, projection_pushdown_enabled=False)
    table.buckets_req.add(bucket_id=buckets[0].bucket_id, fetch_offset=0, max_fetch_bytes=1 << 20)
    reply = await world.client.call(ApiKey.FETCH_LOG, fetch, node=buckets[0].leader_id)
    records = reply.tables_resp[0].buckets_resp[0].records
    batches = read_log_batches(records, magic1_layout=Magic1Layout.STATISTICS).batches
    assert batches and all(b.magic == 1 and len(b.statistics) > 0 for b in batches)
    for tail in (False, True):
        result = await preview_table(world.client, f"{world.db}.with_stats", limit=1000, tail=tail)
        assert result.report.complete and result.report.rows_returned == ROWS
        assert norm_rows(result.table.to_pylist()) == norm_rows(back), tail


async def test_nanoseconds_written_as_arrow_match_pyfluss_arrow(world: World) -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            ("ts9", pa.timestamp("ns")),
            ("ltz9", pa.timestamp("ns", tz="UTC")),
            ("ts0", pa.timestamp("s")),
            ("bin4", pa.binary(4)),
        ]
    )
    data = pa.table(
        {
            "id": pa.array([1, 2, 3, 4], pa.int64()),
            "ts9": pa.array([1, -1, 1_700_000_000_123_456_789, None], pa.timestamp("ns")),
            "ltz9": pa.array(
                [999_999_999, -1_000_000_001, 1_700_000_000_123_456_789, None],
                pa.timestamp("ns", tz="UTC"),
            ),
            "ts0": pa.array([1, -1, 2, None], pa.timestamp("s")),
            "bin4": pa.array([b"abcd", b"\0\0\0\0", None, b"wxyz"], pa.binary(4)),
        },
        schema=schema,
    )
    path = fluss.TablePath(world.db, "nanos")
    await _create(world.conn, path, schema, buckets=2)
    table = await asyncio.wait_for(world.conn.get_table(path), 30)
    writer = table.new_append().create_writer()
    writer.write_arrow(data)
    await asyncio.wait_for(writer.flush(), 30)
    scanner = await table.new_scan().create_record_batch_log_scanner()
    scanner.subscribe_buckets({0: fluss.EARLIEST_OFFSET, 1: fluss.EARLIEST_OFFSET})
    theirs = (await asyncio.wait_for(scanner.to_arrow(), 30)).sort_by("id")

    result = await preview_table(world.client, f"{world.db}.nanos")
    ours = result.table.sort_by("id")
    for name in ("ts9", "ltz9", "ts0"):
        assert ours.schema.field(name).type == pa.timestamp(schema.field(name).type.unit)
        assert ours.column(name).cast(pa.int64()).to_pylist() == (
            theirs.column(name).cast(pa.int64()).to_pylist()
        )
    assert ours.column("bin4").to_pylist() == theirs.column("bin4").to_pylist()
    assert ours.column("ts9").cast(pa.int64()).to_pylist()[:3] == [1, -1, 1_700_000_000_123_456_789]


async def test_tail_returns_the_last_rows(world: World) -> None:
    path = await pf.create_log_table(world.conn, world.db, "tail1", buckets=1)
    for start in (0, 20, 40):  # three acknowledged writes: three batches at 0, 20, 40
        await pf.write_rows(world.conn, path, 20, start=start)
    name = f"{world.db}.tail1"
    tail = await preview_table(world.client, name, limit=25, tail=True)
    # offset 35 sits inside the batch that starts at 20: rows before it are dropped
    assert tail.table.column("id").to_pylist() == list(range(35, 60))
    assert tail.table.column("_offset").to_pylist() == list(range(35, 60))
    b = tail.report.buckets[0]
    assert (b.method, b.status, b.start_offset, b.end_offset) == (
        ScanMethod.FETCH_LOG_TAIL,
        BucketStatus.SCANNED,
        35,
        60,
    )
    assert tail.report.limit_cut
    assert tail.table.to_pylist()[0]["amount"] == pf.expected_rows(1, start=35)[0]["amount"]
    limited = await preview_table(world.client, name, limit=25)
    assert limited.table.column("id").to_pylist() == list(range(35, 60))
    assert limited.report.buckets[0].method is ScanMethod.LIMIT_SCAN
    full = await preview_table(world.client, name, limit=1000, tail=True)
    assert full.table.num_rows == 60 and not full.report.limit_cut


async def test_pk_changelog_tail_and_limit_scan_after_updates(world: World) -> None:
    path = await pf.create_pk_table(world.conn, world.db, "pk_upd", buckets=2)
    await pf.write_rows(world.conn, path, 10)
    await pf.write_rows(world.conn, path, 5)  # updates of ids 0..4 with the same values
    scan = await preview_table(world.client, f"{world.db}.pk_upd")
    assert sorted(scan.table.column("id").to_pylist()) == list(range(10))
    tail = await preview_table(world.client, f"{world.db}.pk_upd", tail=True, limit=1000)
    kinds = tail.table.column("_change_type").to_pylist()
    assert kinds.count("+I") == 10 and kinds.count("-U") == kinds.count("+U") == 5


async def test_partitioned_table_per_partition_and_all(world: World) -> None:
    schema = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), ("region", pa.string()), ("v", pa.float64())]
    )
    path = fluss.TablePath(world.db, "parted")
    await _create(world.conn, path, schema, buckets=2, partition_keys=["region"])
    admin = world.conn.get_admin()
    regions = {"eu": 7, "us": 5}
    async with asyncio.timeout(30):
        for region in regions:
            await admin.create_partition(path, {"region": region})
        await wait_leaders(admin, path, 2, regions)
    rows, n = [], 0
    for region, count in regions.items():
        for _ in range(count):
            rows.append({"id": n, "region": region, "v": n / 2})
            n += 1
    await _write(world.conn, path, rows)
    back = await pf.read_all_log(world.conn, path, expected=n, timeout_s=30)

    every = await preview_table(world.client, f"{world.db}.parted", partition="all")
    assert every.report.complete and len(every.report.buckets) == 4
    assert set(every.report.partitions) == {"eu", "us"}
    assert norm_rows(every.table.to_pylist()) == norm_rows(back)
    assert {p: every.table.column("_partition").to_pylist().count(p) for p in regions} == regions
    one = await preview_table(world.client, f"{world.db}.parted", partition="region=us")
    assert sorted(one.table.column("id").to_pylist()) == list(range(7, 12))
    assert set(one.table.column("_partition").to_pylist()) == {"us"}


async def test_cli_json_output_parses_and_matches(world: World) -> None:
    path = await pf.create_pk_table(world.conn, world.db, "cli_pk", buckets=3)
    written = await pf.write_rows(world.conn, path, 12)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "konsole.cli",
        "preview",
        f"{world.db}.cli_pk",
        "--bootstrap",
        world.bootstrap,
        "--format",
        "json",
        "--timeout",
        "20",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    doc = json.loads(out)
    got = sorted(doc["rows"], key=lambda r: r["id"])
    expected = [
        {
            "id": r["id"],
            "name": r["name"],
            "amount": str(r["amount"]),
            "ts": r["ts"].isoformat(timespec="milliseconds"),
        }
        for r in written
    ]
    assert [{k: v for k, v in r.items() if not k.startswith("_")} for r in got] == expected
    assert doc["report"]["complete"] and doc["report"]["counts"]["scanned"] == 3
    assert b"row(s) shown" in err

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "konsole.cli",
        "preview",
        f"{world.db}.missing",
        "--bootstrap",
        world.bootstrap,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2 and b"TABLE_NOT_EXIST" in err
