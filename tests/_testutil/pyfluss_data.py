"""pyfluss helpers for live tests: unique names, fixed-schema tables, writes and read-backs.

Not tests. Every server wait is bounded: pyfluss calls can wait for ever (e.g. a write into
a partition that does not exist never completes), so each helper has a deadline.

Value mapping used throughout (pyfluss 1.0 is strict, it does not coerce):
BIGINT -> int, STRING -> str, DECIMAL -> decimal.Decimal (float/int/str are rejected),
TIMESTAMP(3) -> naive datetime.datetime (aware ones are rejected; microseconds are
truncated to milliseconds), DATE -> datetime.date. Reads give the same Python types back.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import fluss
import pyarrow as pa

from konsole.localcluster.seed import LEADERS_WITHIN_S, create_with_leaders, write_table_rows
from konsole.localcluster.settle import SettledConnection

__all__ = [
    "FIXED_SCHEMA",
    "close_connection",
    "connect",
    "create_database",
    "create_log_table",
    "create_pk_table",
    "drop_database",
    "expected_rows",
    "latest_offsets",
    "read_all_log",
    "read_pk_rows",
    "unique_name",
    "write_log_table",
    "write_rows",
]

Row = dict[str, Any]
PkKey = int | Mapping[str, Any] | Sequence[Any]

# id is NOT NULL so the same schema serves as a primary-key table.
FIXED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("ts", pa.timestamp("ms")),  # TIMESTAMP(3)
    ]
)

_ADMIN_TIMEOUT_S = 30.0
_WRITE_TIMEOUT_S = 60.0
#: An upsert's first try: far above a normal write's second, well below _WRITE_TIMEOUT_S.
_FIRST_UPSERT_TIMEOUT_S = 30.0
_POLL_MS = 500
_MIN_EMPTY_POLL_S = 0.05
_SETTLE_S = 0.3
# One pyfluss Lookuper serves its calls one at a time (~100 ms each against 0.9.1),
# so lookups are spread over a small pool of lookupers.
_LOOKUP_LANES = 32
_BASE_TS = datetime(2024, 1, 1)
_CENTS = Decimal("0.01")
_counter = itertools.count()


def unique_name(prefix: str) -> str:
    """A fresh Fluss identifier: lowercase [a-z0-9_], unique per call and per process.

    Fluss accepts [A-Za-z0-9_-]; '-' is avoided so names need no quoting in SQL either.
    pid + counter make names unique inside a run, the random tail across reruns.
    """
    clean = re.sub(r"[^a-z0-9_]+", "_", prefix.lower()).strip("_") or "t"
    if clean[0].isdigit():
        clean = f"t_{clean}"
    return f"{clean[:40]}_{os.getpid()}_{next(_counter)}_{secrets.token_hex(3)}"


async def connect(bootstrap: str) -> SettledConnection:
    """Open a connection (pyfluss' own is ``.conn``; ``get_admin`` and ``get_table`` are
    its); release it with close_connection() (an unclosed one can abort the interpreter at
    exit)."""
    config = fluss.Config({"bootstrap.servers": bootstrap})
    return await SettledConnection.open(config, _ADMIN_TIMEOUT_S)


async def close_connection(conn: SettledConnection) -> None:
    """Flush what write_rows wrote and close, each bounded (a connection whose records were
    not delivered in time is kept open instead: konsole.localcluster.settle says why), then
    let pyfluss' tokio threads finish handing results back.

    Without the pause a process that exits right after close() aborts now and then
    (SIGABRT during interpreter shutdown, about 1 run in 10 in short scripts).
    """
    # Flushed first and closed only when settled: closing (or dropping) a connection with
    # sends in flight leaves pyfluss' sender spinning for the rest of the run.
    await conn.close_settled(_ADMIN_TIMEOUT_S)
    await asyncio.sleep(_SETTLE_S)


async def create_database(admin: fluss.FlussAdmin, name: str) -> str:
    async with asyncio.timeout(_ADMIN_TIMEOUT_S):
        await admin.create_database(name, ignore_if_exists=True)
    return name


async def drop_database(admin: fluss.FlussAdmin, name: str) -> None:
    """Cleanup helper: drops the database and all its tables."""
    async with asyncio.timeout(_ADMIN_TIMEOUT_S):
        await admin.drop_database(name, ignore_if_not_exists=True, cascade=True)


async def _create_table(
    conn: SettledConnection,
    db: str,
    name: str,
    *,
    primary_key: bool,
    buckets: int,
    replication_factor: int,
) -> fluss.TablePath:
    path = fluss.TablePath(db, name)
    schema = fluss.Schema(FIXED_SCHEMA, primary_keys=["id"] if primary_key else None)
    descriptor = fluss.TableDescriptor(
        schema,
        bucket_count=buckets,
        # A PK table buckets by its key anyway; a log table without bucket keys would use
        # the sticky assigner and could put every row of a small write into one bucket.
        bucket_keys=["id"],
        properties={"table.replication.factor": str(replication_factor)},
    )
    await create_ready(conn.get_admin(), path, descriptor, buckets)
    return path


async def create_ready(
    admin: fluss.FlussAdmin,
    path: fluss.TablePath,
    descriptor: fluss.TableDescriptor,
    buckets: int,
    partitions: Mapping[str, str] | None = None,
) -> None:
    """Create a new table (and its ``partitions``: value -> partition key) whose every
    bucket has a leader, or fail the test. Writing before the buckets have leaders can hang
    pyfluss, and a loaded 0.9.1 coordinator can miss a new table for good: one whose
    buckets get no leader in time is created once more (seed.LEADERS_WITHIN_S)."""
    admin_calls = 2 + len(partitions or {})
    async with asyncio.timeout(2 * (LEADERS_WITHIN_S + admin_calls * _ADMIN_TIMEOUT_S)):
        missing = await create_with_leaders(admin, path, descriptor, buckets, partitions=partitions)
    if missing is not None:
        raise AssertionError(f"{path}: some buckets had no leader: {missing}")


async def create_pk_table(
    conn: SettledConnection,
    db: str,
    name: str,
    *,
    buckets: int = 3,
    replication_factor: int = 1,
) -> fluss.TablePath:
    """Primary-key table (PK ``id``) with FIXED_SCHEMA; fails if it exists."""
    return await _create_table(
        conn,
        db,
        name,
        primary_key=True,
        buckets=buckets,
        replication_factor=replication_factor,
    )


async def create_log_table(
    conn: SettledConnection,
    db: str,
    name: str,
    *,
    buckets: int = 3,
    replication_factor: int = 1,
) -> fluss.TablePath:
    """Log table with FIXED_SCHEMA, bucketed by ``id``; fails if it exists."""
    return await _create_table(
        conn,
        db,
        name,
        primary_key=False,
        buckets=buckets,
        replication_factor=replication_factor,
    )


def expected_rows(n: int, *, start: int = 0) -> list[Row]:
    """The rows write_rows writes: a pure function of the id, so tests can rebuild them."""
    return [
        {
            "id": i,
            "name": f"row-{i:06d}",
            "amount": (Decimal((i * 7919) % 10_000_000) / 100).quantize(_CENTS),
            # whole milliseconds: TIMESTAMP(3) would truncate anything finer
            "ts": _BASE_TS + timedelta(milliseconds=i * 1_001),
        }
        for i in range(start, start + n)
    ]


async def write_rows(
    conn: SettledConnection, table_path: fluss.TablePath, n: int, *, start: int = 0
) -> list[Row]:
    """Write ``n`` deterministic rows (ids start..start+n-1) and wait until acknowledged.

    Upserts into PK tables, appends to log tables. Returns the rows written.
    """
    rows = expected_rows(n, start=start)
    table = await conn.table_for_writing(table_path, _ADMIN_TIMEOUT_S)  # flushed at close
    if not table.has_primary_key():  # an append that timed out may have landed in part
        await write_table_rows(table, rows, _WRITE_TIMEOUT_S)
        return rows
    try:
        await write_table_rows(table, rows, _FIRST_UPSERT_TIMEOUT_S)
    except TimeoutError:
        # pyfluss's writer can hang for good on a table created moments ago even after its
        # leaders answer (seen in whole suites on both lines, nothing sent); upserts are
        # idempotent, so they go again through a new connection (SettledConnection.reopen)
        await conn.reopen(_ADMIN_TIMEOUT_S)
        table = await conn.table_for_writing(table_path, _ADMIN_TIMEOUT_S)
        await write_table_rows(table, rows, _WRITE_TIMEOUT_S)
    return rows


async def read_all_log(
    conn: SettledConnection,
    table_path: fluss.TablePath,
    expected: int,
    timeout_s: float = 30,
) -> list[Row]:
    """Read every bucket (every partition, too) from the earliest offset.

    Returns as soon as ``expected`` rows arrived or the deadline passed, so the caller
    asserts on the count. Rows come in arrival order (ordered per bucket only). On a PK
    table this is the changelog: updates show up as -U/+U pairs, not as final rows.
    """
    deadline = time.monotonic() + timeout_s
    table = await asyncio.wait_for(conn.get_table(table_path), _ADMIN_TIMEOUT_S)
    info = table.get_table_info()
    scanner = await asyncio.wait_for(table.new_scan().create_log_scanner(), _ADMIN_TIMEOUT_S)
    buckets = range(info.num_buckets)
    if info.is_partitioned():
        parts = await asyncio.wait_for(
            conn.get_admin().list_partition_infos(table_path), _ADMIN_TIMEOUT_S
        )
        scanner.subscribe_partition_buckets(
            {(p.partition_id, b): fluss.EARLIEST_OFFSET for p in parts for b in buckets}
        )
    else:
        scanner.subscribe_buckets({b: fluss.EARLIEST_OFFSET for b in buckets})
    rows: list[Row] = []
    # Count bound on top of the time bound, loose enough never to cut a read short: a
    # poll with data adds >= 1 row (at most `expected` of those), an empty one takes
    # >= _MIN_EMPTY_POLL_S (poll waits its timeout; the sleep covers early returns).
    for _ in range(expected + int(timeout_s / _MIN_EMPTY_POLL_S) + 2):
        remaining_ms = int((deadline - time.monotonic()) * 1000)
        if len(rows) >= expected or remaining_ms <= 0:
            break
        started = time.monotonic()
        records = await scanner.poll(min(_POLL_MS, remaining_ms))
        if records.is_empty():
            await asyncio.sleep(max(0.0, _MIN_EMPTY_POLL_S - (time.monotonic() - started)))
        rows.extend(record.row for record in records)
    return rows


async def read_pk_rows(
    conn: SettledConnection,
    table_path: fluss.TablePath,
    keys: Iterable[PkKey],
    timeout_s: float = 60,
) -> list[Row]:
    """Point-look up ``keys`` with pyfluss Lookupers; rows found, in key order.

    A key is an int (single-column PK), a {column: value} mapping or a tuple in PK
    column order. Missing keys are left out, so compare lengths to detect them.
    """
    table = await asyncio.wait_for(conn.get_table(table_path), _ADMIN_TIMEOUT_S)
    pk_columns = table.get_table_info().get_primary_keys()
    wanted: list[Mapping[str, Any] | Sequence[Any]] = []
    for key in keys:
        if isinstance(key, int):
            if len(pk_columns) != 1:
                raise ValueError(f"int key needs a one-column primary key, got {pk_columns}")
            wanted.append({pk_columns[0]: key})
        else:
            wanted.append(key)
    found: list[Row | None] = [None] * len(wanted)
    lanes = min(_LOOKUP_LANES, len(wanted))

    async def lane(first: int) -> None:
        lookuper = table.new_lookup().create_lookuper()
        for i in range(first, len(wanted), lanes):
            found[i] = await lookuper.lookup(wanted[i])

    async with asyncio.timeout(timeout_s):
        await asyncio.gather(*(lane(first) for first in range(lanes)))
    return [row for row in found if row is not None]


async def latest_offsets(
    conn_or_admin: SettledConnection | fluss.FlussAdmin,
    table_path: fluss.TablePath,
    buckets: int | Iterable[int],
    *,
    partition: str | None = None,
) -> dict[int, int]:
    """Log end offset per bucket. ``buckets`` is a count or explicit bucket ids.

    Partitioned tables need ``partition`` (the value, e.g. "2024-06-01"): plain
    list_offsets fails on them with "No leader found for table bucket".
    """
    admin = (
        conn_or_admin.get_admin() if isinstance(conn_or_admin, SettledConnection) else conn_or_admin
    )
    ids = list(range(buckets)) if isinstance(buckets, int) else list(buckets)
    latest = fluss.OffsetSpec.latest()
    async with asyncio.timeout(_ADMIN_TIMEOUT_S):
        if partition is None:
            offsets = await admin.list_offsets(table_path, ids, latest)
        else:
            offsets = await admin.list_partition_offsets(table_path, partition, ids, latest)
    return dict(sorted(offsets.items()))


async def write_log_table(bootstrap: str, database: str, table: str, rows: int) -> None:
    """A new one-bucket log table ``database.table`` (the database made too) holding
    ``rows`` rows of :func:`write_rows`, on its own connection."""
    conn = await connect(bootstrap)
    try:
        db = await create_database(conn.get_admin(), database)
        path = await create_log_table(conn, db, table, buckets=1, replication_factor=1)
        await write_rows(conn, path, rows)
    finally:
        await close_connection(conn)
