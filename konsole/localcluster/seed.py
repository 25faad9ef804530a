"""Deterministic demo data for a local Fluss cluster, written through pyfluss.

Idempotency policy: *create-if-absent, write only into tables this call created*.
Each table is created with ``ignore_if_exists=False`` and a TABLE_ALREADY_EXIST answer
means "someone seeded it before": we report it and write nothing, so a rerun never
duplicates log rows. Creation is the server-side arbiter, so two concurrent seeders
cannot both write the same table. A seed that died half way (table created, rows not
flushed) is not repaired by a rerun; ``recreate=True`` drops the demo tables first.

Every table's rows come from ``random.Random`` seeded with the table's name, so reruns
(and re-creations) produce byte-identical data. Log tables declare bucket keys so the
rows land in the same buckets every time (pyfluss' default no-key assigner is sticky,
i.e. placement would depend on batching).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

import fluss
import pyarrow as pa

__all__ = ["DEMO_TABLES", "SeedReport", "SeededTable", "demo_rows", "seed_demo", "seed_demo_sync"]

_SEED = "konsole-demo-v1"
_CENTS = Decimal("0.01")
# Bounds on every server round trip: a pyfluss write into a partition that does not exist
# never completes (no error), so nothing here may wait unbounded.
_ADMIN_TIMEOUT_S = 30.0
_WRITE_TIMEOUT_S = 120.0
_CLOSE_TIMEOUT_S = 10.0
_SETTLE_S = 0.3

Row = dict[str, Any]


@dataclass(frozen=True)
class SeededTable:
    """One demo table as found/left on the server."""

    name: str  # "database.table"
    kind: Literal["pk", "log"]
    buckets: int
    partitioned: bool
    partitions: tuple[str, ...]  # partition values, () for unpartitioned tables
    rows_written: int  # by this call; 0 when the table existed already
    created: bool  # False: the table existed, so it was left untouched
    # sum of latest offsets (None: no bucket leader yet); == rows_written after a fresh seed
    log_records: int | None


@dataclass(frozen=True)
class SeedReport:
    bootstrap: str
    tables: tuple[SeededTable, ...]

    @property
    def rows_written(self) -> int:
        return sum(t.rows_written for t in self.tables)

    @property
    def created(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tables if t.created)

    @property
    def existing(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tables if not t.created)

    def __str__(self) -> str:
        # Human-readable for the CLI, which prints str(report); repr stays the dataclass one.
        lines = [f"seeded {self.bootstrap}: {self.rows_written} rows written"]
        for t in self.tables:
            state = f"created, {t.rows_written} rows" if t.created else "existed, untouched"
            parts = f", partitions {','.join(t.partitions)}" if t.partitions else ""
            records = "?" if t.log_records is None else t.log_records
            lines.append(
                f"  {t.name:<40} {t.kind:<3} buckets={t.buckets}{parts}"
                f"  log records={records}  ({state})"
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class _TableSpec:
    database: str
    table: str
    schema: pa.Schema
    buckets: int
    rows: Callable[[random.Random, int], list[Row]]
    primary_keys: tuple[str, ...] = ()
    bucket_keys: tuple[str, ...] = ()
    partition_key: str | None = None
    partitions: tuple[str, ...] = ()
    comment: str = ""

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"

    @property
    def path(self) -> fluss.TablePath:
        return fluss.TablePath(self.database, self.table)


# --- row generators -----------------------------------------------------------------------
# Money is Decimal quantized to cents (pyfluss rejects float/int/str for DECIMAL), dates are
# datetime.date, TIMESTAMP(3) values are naive datetimes with whole milliseconds (pyfluss
# would silently truncate microseconds, breaking read-back equality).

_FIRST = ("Ada", "Bram", "Chen", "Dara", "Emil", "Fatma", "Goran", "Hana", "Ines", "Joon")
_LAST = ("Novak", "Okafor", "Silva", "Tanaka", "Muller", "Haddad", "Kowal", "Larsen")
_TIERS = ("BASIC", "SILVER", "GOLD", "PLATINUM")
_PRIORITIES = ("1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW")
_SITES = ("hall-a", "hall-b", "roof", "cellar", "dock", "lab")
_STORES = ("berlin", "lisbon", "osaka", "quito", "tallinn")
_PRODUCTS = ("espresso", "bagel", "matcha", "croissant", "juice", "muffin")
_PAGES = ("/", "/search", "/product", "/cart", "/checkout", "/account", "/help")


def _money(rng: random.Random, low: int, high: int) -> Decimal:
    return (Decimal(rng.randint(low * 100, high * 100)) / 100).quantize(_CENTS)


def _customers(rng: random.Random, scale: int) -> list[Row]:
    return [
        {
            "customer_id": cid,
            "name": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
            "membership": rng.choices(_TIERS, weights=(50, 30, 15, 5))[0],
            "account_balance": _money(rng, -999, 9_999),
        }
        for cid in range(1, 200 * scale + 1)
    ]


def _orders(rng: random.Random, scale: int) -> list[Row]:
    first_day = date(2024, 1, 1)
    return [
        {
            "order_id": 1_000_000 + i,
            "customer_id": rng.randint(1, 200 * scale),
            "total_price": _money(rng, 10, 50_000),
            "ordered_on": first_day + timedelta(days=rng.randrange(182)),
            "order_priority": rng.choice(_PRIORITIES),
            "clerk": f"Clerk#{rng.randint(1, 50):09d}",
        }
        for i in range(1, 1000 * scale + 1)
    ]


def _sensors(rng: random.Random, scale: int) -> list[Row]:
    first_day = date(2022, 3, 1)
    return [
        {
            "sensor_id": sid,
            "name": f"sensor-{sid:04d}",
            "location": rng.choice(_SITES),
            "installed_on": first_day + timedelta(days=rng.randrange(700)),
        }
        for sid in range(1, 40 * scale + 1)
    ]


def _readings(rng: random.Random, scale: int) -> list[Row]:
    start = datetime(2024, 6, 1)
    rows: list[Row] = []
    for minute in range(30):
        for sid in range(1, 40 * scale + 1):
            jitter_ms = rng.randrange(60_000)
            rows.append(
                {
                    "sensor_id": sid,
                    "reading_time": start + timedelta(minutes=minute, milliseconds=jitter_ms),
                    "temperature": round(rng.gauss(21.0, 3.5), 2),
                    "humidity": round(rng.uniform(25.0, 70.0), 1),
                }
            )
    return rows


_SALES_DAYS = ("2024-06-01", "2024-06-02", "2024-06-03")


def _sales(rng: random.Random, scale: int) -> list[Row]:
    rows: list[Row] = []
    sale_id = 0
    for day in _SALES_DAYS:
        for _ in range(100 * scale):
            sale_id += 1
            qty = rng.randint(1, 6)
            rows.append(
                {
                    "sale_id": sale_id,
                    "store": rng.choice(_STORES),
                    "product": rng.choice(_PRODUCTS),
                    "quantity": qty,
                    "amount": (_money(rng, 2, 9) * qty).quantize(_CENTS),
                    "dt": day,
                }
            )
    return rows


def _clicks(rng: random.Random, scale: int) -> list[Row]:
    start = datetime(2024, 6, 1, 8)
    return [
        {
            "event_id": i,
            "user_id": rng.randint(1, 300 * scale),
            "page": rng.choice(_PAGES),
            "event_time": start + timedelta(milliseconds=i * 750 + rng.randrange(500)),
            "duration_ms": rng.randint(50, 30_000),
        }
        for i in range(1, 800 * scale + 1)
    ]


def _field(name: str, type_: pa.DataType, *, key: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable=not key)


# pyarrow types map 1:1 onto Fluss types: int32=INT, int64=BIGINT, string=STRING,
# decimal128(p,s)=DECIMAL(p,s), date32=DATE, timestamp("ms")=TIMESTAMP(3), float64=DOUBLE.
_SPECS: tuple[_TableSpec, ...] = (
    _TableSpec(
        "demo",
        "customer_profile",
        pa.schema(
            [
                _field("customer_id", pa.int32(), key=True),
                _field("name", pa.string()),
                _field("membership", pa.string()),
                _field("account_balance", pa.decimal128(15, 2)),
            ]
        ),
        buckets=3,
        rows=_customers,
        primary_keys=("customer_id",),
        comment="customers, upserted by customer_id",
    ),
    _TableSpec(
        "demo",
        "order_events",
        pa.schema(
            [
                _field("order_id", pa.int64()),
                _field("customer_id", pa.int32()),
                _field("total_price", pa.decimal128(15, 2)),
                _field("ordered_on", pa.date32()),
                _field("order_priority", pa.string()),
                _field("clerk", pa.string()),
            ]
        ),
        buckets=3,
        rows=_orders,
        bucket_keys=("order_id",),
        comment="append-only order stream",
    ),
    _TableSpec(
        "demo",
        "daily_sales",
        pa.schema(
            [
                _field("sale_id", pa.int64()),
                _field("store", pa.string()),
                _field("product", pa.string()),
                _field("quantity", pa.int32()),
                _field("amount", pa.decimal128(12, 2)),
                _field("dt", pa.string()),
            ]
        ),
        buckets=2,
        rows=_sales,
        bucket_keys=("sale_id",),
        partition_key="dt",
        partitions=_SALES_DAYS,
        comment="sales, one partition per day",
    ),
    _TableSpec(
        "demo",
        "clickstream",
        pa.schema(
            [
                _field("event_id", pa.int64()),
                _field("user_id", pa.int32()),
                _field("page", pa.string()),
                _field("event_time", pa.timestamp("ms")),
                _field("duration_ms", pa.int32()),
            ]
        ),
        buckets=8,
        rows=_clicks,
        bucket_keys=("user_id",),
        comment="page views spread over 8 buckets",
    ),
    _TableSpec(
        "go_sensor_demo",
        "sensor_info",
        pa.schema(
            [
                _field("sensor_id", pa.int32(), key=True),
                _field("name", pa.string()),
                _field("location", pa.string()),
                _field("installed_on", pa.date32()),
            ]
        ),
        buckets=3,
        rows=_sensors,
        primary_keys=("sensor_id",),
        comment="sensor registry",
    ),
    _TableSpec(
        "go_sensor_demo",
        "sensor_readings",
        pa.schema(
            [
                _field("sensor_id", pa.int32()),
                _field("reading_time", pa.timestamp("ms")),
                _field("temperature", pa.float64()),
                _field("humidity", pa.float64()),
            ]
        ),
        buckets=3,
        rows=_readings,
        bucket_keys=("sensor_id",),
        comment="one reading per sensor per minute",
    ),
)

DEMO_TABLES: tuple[str, ...] = tuple(s.name for s in _SPECS)


def demo_rows(name: str, scale: int = 1) -> list[Row]:
    """The exact rows seed_demo writes into ``name`` ("db.table"); handy for checks."""
    spec = next((s for s in _SPECS if s.name == name), None)
    if spec is None:
        raise KeyError(name)
    return spec.rows(random.Random(f"{_SEED}:{spec.name}"), scale)


# --- server side ----------------------------------------------------------------------------


def _descriptor(spec: _TableSpec, replication_factor: int) -> fluss.TableDescriptor:
    kwargs: dict[str, Any] = {
        "bucket_count": spec.buckets,
        "properties": {"table.replication.factor": str(replication_factor)},
        "comment": spec.comment,
    }
    if spec.bucket_keys:
        kwargs["bucket_keys"] = list(spec.bucket_keys)
    if spec.partition_key:
        # Auto-partitioning is left off on purpose: it names partitions after *today*
        # (yyyyMMdd), which would make the data depend on the day of the seed.
        kwargs["partition_keys"] = [spec.partition_key]
    schema = fluss.Schema(spec.schema, primary_keys=list(spec.primary_keys) or None)
    return fluss.TableDescriptor(schema, **kwargs)


async def _create_table(admin: fluss.FlussAdmin, spec: _TableSpec, rf: int) -> bool:
    """True if this call created the table, False if it existed already."""
    try:
        await admin.create_table(spec.path, _descriptor(spec, rf), ignore_if_exists=False)
    except fluss.FlussError as exc:
        if exc.error_code == fluss.ErrorCode.TABLE_ALREADY_EXIST:
            return False
        # A 0.9.1 coordinator racing two creates of one table answers the loser with a
        # generic error (-1, "Fail to register schema ... NodeExists"), not code 8; if
        # the table shows up shortly, another seeder won and will write it.
        for _ in range(10):
            if await admin.table_exists(spec.path):
                return False
            await asyncio.sleep(0.2)
        raise
    return True


async def _write(conn: fluss.FlussConnection, spec: _TableSpec, rows: list[Row]) -> None:
    await write_table_rows(await conn.get_table(spec.path), rows)


async def write_table_rows(
    table: fluss.FlussTable, rows: list[Row], timeout_s: float = _WRITE_TIMEOUT_S
) -> None:
    """Append (log table) or upsert (PK table) ``rows`` and wait until the server has them."""
    writer: fluss.AppendWriter | fluss.UpsertWriter
    if table.has_primary_key():
        writer = table.new_upsert().create_writer()
        handles = [writer.upsert(row) for row in rows]
    else:
        writer = table.new_append().create_writer()
        handles = [writer.append(row) for row in rows]
    async with asyncio.timeout(timeout_s):
        await writer.flush()
        # flush() only drains the queue; awaiting every handle surfaces a per-record error.
        await asyncio.gather(*(h.wait() for h in handles))


async def _log_records(
    admin: fluss.FlussAdmin, path: fluss.TablePath, buckets: int, partitions: tuple[str, ...]
) -> int | None:
    """Sum of latest offsets, or None if the buckets have no leader yet.

    A table another seeder created a moment ago answers "No leader found" for a while,
    so a few bounded retries; the count is informative only, never worth failing for.
    """
    ids = list(range(buckets))
    latest = fluss.OffsetSpec.latest()
    for attempt in range(10):
        try:
            if not partitions:
                return sum((await admin.list_offsets(path, ids, latest)).values())
            # list_offsets on a partitioned table always fails ("No leader found"):
            # offsets are per partition.
            total = 0
            for part in partitions:
                offsets = await admin.list_partition_offsets(path, part, ids, latest)
                total += sum(offsets.values())
            return total
        except fluss.FlussError:
            if attempt < 9:
                await asyncio.sleep(0.3)
    return None


async def wait_leaders(
    admin: fluss.FlussAdmin,
    path: fluss.TablePath,
    buckets: int,
    partitions: Iterable[str] = (),
) -> None:
    """Wait (bounded: ~10 s per table or partition) until every bucket of a new table (or
    of its new ``partitions``) has a leader.

    create_table / create_partition return before the coordinator has elected the bucket
    leaders; a pyfluss writer that looks the table up in that window may never send its
    records (seen on 0.9.1: the flush hangs for good, and so does every later write on the
    same connection). Offsets answer once leaders exist.
    """
    ids = list(range(buckets))
    latest = fluss.OffsetSpec.latest()
    targets: list[str | None] = list(partitions) or [None]
    for part in targets:
        for _ in range(100):
            try:
                if part is None:
                    await admin.list_offsets(path, ids, latest)
                else:
                    await admin.list_partition_offsets(path, part, ids, latest)
                break
            except fluss.FlussError:
                await asyncio.sleep(0.1)


async def _seed_table(
    conn: fluss.FlussConnection, spec: _TableSpec, rf: int, scale: int, recreate: bool
) -> SeededTable:
    admin = conn.get_admin()
    async with asyncio.timeout(_ADMIN_TIMEOUT_S):
        if recreate:
            await admin.drop_table(spec.path, ignore_if_not_exists=True)
        created = await _create_table(admin, spec, rf)
        if created:
            # pyfluss never creates partitions on write: a record for a missing partition
            # hangs for ever and stalls the connection's writer, so create them up front.
            for part in spec.partitions:
                await admin.create_partition(
                    spec.path, {str(spec.partition_key): part}, ignore_if_exists=True
                )
            await wait_leaders(admin, spec.path, spec.buckets, spec.partitions)
    rows = demo_rows(spec.name, scale) if created else []
    if rows:
        await _write(conn, spec, rows)
    async with asyncio.timeout(_ADMIN_TIMEOUT_S):
        # Report what the server holds, not the spec: an old seed may differ.
        info = await admin.get_table_info(spec.path)
        partitions: tuple[str, ...] = ()
        if info.is_partitioned():
            infos = await admin.list_partition_infos(spec.path)
            partitions = tuple(sorted(p.partition_name for p in infos))
        log_records = await _log_records(admin, spec.path, info.num_buckets, partitions)
    return SeededTable(
        name=spec.name,
        kind="pk" if info.has_primary_key() else "log",
        buckets=info.num_buckets,
        partitioned=info.is_partitioned(),
        partitions=partitions,
        rows_written=len(rows),
        created=created,
        log_records=log_records,
    )


async def seed_demo(
    bootstrap: str,
    *,
    replication_factor: int = 1,
    scale: int = 1,
    recreate: bool = False,
    client_properties: Mapping[str, str] | None = None,
) -> SeedReport:
    """Create the demo databases/tables and fill the ones this call created.

    ``scale`` multiplies the row counts (about 3,500 rows at 1). ``recreate`` drops the
    demo tables first, e.g. to repair a seed that was interrupted. ``client_properties``
    go into the pyfluss Config as is (e.g. "security.protocol": "sasl",
    "security.sasl.mechanism"/"username"/"password" for a SASL listener); pyfluss
    rejects unknown keys.
    """
    if replication_factor < 1 or scale < 1:
        raise ValueError("replication_factor and scale must be >= 1")
    config = fluss.Config({**(client_properties or {}), "bootstrap.servers": bootstrap})
    conn = await asyncio.wait_for(fluss.FlussConnection.create(config), _ADMIN_TIMEOUT_S)
    try:
        admin = conn.get_admin()
        async with asyncio.timeout(_ADMIN_TIMEOUT_S):
            for db in dict.fromkeys(s.database for s in _SPECS):
                await admin.create_database(
                    db, fluss.DatabaseDescriptor(comment="konsole demo data"), ignore_if_exists=True
                )
        # Sequential on purpose: a few thousand rows take well under a second each.
        tables = [
            await _seed_table(conn, spec, replication_factor, scale, recreate) for spec in _SPECS
        ]
    finally:
        # close() waits for undelivered records; bound it so a stuck write cannot hang us.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(conn.close(), _CLOSE_TIMEOUT_S)
        # pyfluss' tokio threads may still be handing results back to Python just after
        # close(); if the interpreter exits right then it aborts (SIGABRT, ~1 run in 10
        # for short CLI processes). A short pause with the loop alive avoids it.
        await asyncio.sleep(_SETTLE_S)
    return SeedReport(bootstrap=bootstrap, tables=tuple(tables))


def seed_demo_sync(
    bootstrap: str,
    *,
    replication_factor: int = 1,
    scale: int = 1,
    recreate: bool = False,
    client_properties: Mapping[str, str] | None = None,
) -> SeedReport:
    """Blocking wrapper for CLI code; must not be called from inside a running event loop."""
    return asyncio.run(
        seed_demo(
            bootstrap,
            replication_factor=replication_factor,
            scale=scale,
            recreate=recreate,
            client_properties=client_properties,
        )
    )
