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
from datetime import datetime, timedelta
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
from tests._testutil import pyfluss_data as pf
from tests._testutil.all_types import (
    CONNECT,
    FLUSS_ARROW,
    ROWS,
    SCHEMA,
    World,
    all_type_rows,
    create_table,
    norm_rows,
    write_rows,
)
from tests.conftest import FlussServer

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(120)]


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
    await create_table(world.conn, log, SCHEMA)
    await create_table(world.conn, pk, SCHEMA, pk=["id"])
    # one table at a time: pyfluss 1.0 writers on two tables at once have hung for good
    await write_rows(world.conn, log, rows)
    await write_rows(world.conn, pk, rows)

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
    await create_table(world.conn, path, SCHEMA, pk=["id"])
    await write_rows(world.conn, path, rows)
    await write_rows(world.conn, path, [updated_row(rows[i]) for i in UPDATED])
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
            await create_table(world.conn, path, SCHEMA, stats=True)
        assert "table.statistics.columns" in str(info.value) and "39" in str(info.value)
        return
    await create_table(world.conn, path, SCHEMA, stats=True)
    rows = all_type_rows()
    await write_rows(world.conn, path, rows)
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
    await create_table(world.conn, path, schema, buckets=2)
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
    regions = {"eu": 7, "us": 5}
    await create_table(
        world.conn, path, schema, buckets=2, partition_keys=["region"], partitions=tuple(regions)
    )
    rows, n = [], 0
    for region, count in regions.items():
        for _ in range(count):
            rows.append({"id": n, "region": region, "v": n / 2})
            n += 1
    await write_rows(world.conn, path, rows)
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
