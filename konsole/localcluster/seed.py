"""Deterministic demo data for a local Fluss cluster, written through pyfluss.

Idempotency policy: *a rerun completes what is missing and duplicates nothing*. A table
this call created gets its rows. A table that existed is measured first (sum of its
latest offsets, i.e. log records or changelog records) against the rows it should hold:
- at least that many: complete, left untouched;
- a primary-key table with fewer: every row is upserted again (upserts are idempotent);
- a log table with none: its rows are appended;
- a log table with some but fewer: it is dropped, created again and written (appending
  would duplicate the rows that did land, and which ones did is not knowable cheaply).
Partitions are created (if absent) every time, so a seed that died between creating a
table and its partitions is completed as well. Two seeders running at the same moment
against one cluster may therefore both write one table; seeding is a set-up step, not a
concurrent one. ``recreate=True`` drops the demo tables first.

Every step is bounded in time. A step that fails (a timeout, a server error) is tried once
more on a fresh pyfluss connection (a stuck pyfluss writer stalls its whole connection);
if that fails too, :class:`SeedError` names the table, the step and the cause. A table
this call created whose buckets get no leader in time is dropped and created again (see
:func:`create_with_leaders`).

Every table's rows come from ``random.Random`` seeded with the table's name, so reruns
(and re-creations) produce byte-identical data. Log tables declare bucket keys so the
rows land in the same buckets every time (pyfluss' default no-key assigner is sticky,
i.e. placement would depend on batching).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal, TypeVar

import fluss
import pyarrow as pa

from konsole.errors import KonsoleError
from konsole.localcluster.settle import SettledConnection

__all__ = [
    "DEMO_TABLES",
    "LEADERS_WITHIN_S",
    "SeedError",
    "SeedReport",
    "SeededTable",
    "create_with_leaders",
    "demo_descriptor",
    "demo_rows",
    "missing_leaders",
    "plan_table",
    "seed_demo",
    "seed_demo_sync",
    "wait_leaders",
    "write_table_rows",
]

_SEED = "konsole-demo-v1"
_CENTS = Decimal("0.01")
# Bounds on every server round trip: a pyfluss write into a partition that does not exist
# never completes (no error), so nothing here may wait unbounded.
_ADMIN_TIMEOUT_S = 30.0
_WRITE_TIMEOUT_S = 60.0
_ATTEMPTS = 2  # per table: the second one on a fresh connection
#: How long the buckets of a new table (or partition) may take to get leaders. A loaded
#: machine (load 15-30 on 2 cores) needs seconds; past this, waiting is no cure. A 0.9.1
#: coordinator learns of a new table from its ZooKeeper watcher, which takes a creation
#: only as a change of the table's node from empty to registered (TableChangeWatcher,
#: NODE_CHANGED); a starved watcher that first reads the node once registered gets
#: NODE_CREATED, which it ignores for tables: the table exists with no bucket assigned and
#: no leader, for good (seen under load: no "New table:" line in the coordinator's log for
#: that id, and a NullPointerException when it was dropped). Likewise a NotifyLeaderAndIsr
#: that fails to send is never sent again (CoordinatorRequestBatch). Creating the table
#: anew (a new id, a new watcher event) is the cure.
LEADERS_WITHIN_S = 20.0
#: One offsets request of that wait, bounded (a starved server may answer late or never).
_LEADER_PROBE_S = 5.0
_CLOSE_TIMEOUT_S = 10.0
_SETTLE_S = 0.3

Row = dict[str, Any]
_T = TypeVar("_T")
#: What a seed did to one table.
Action = Literal["created", "complete", "completed", "recreated"]


@dataclass(frozen=True)
class SeededTable:
    """One demo table as found/left on the server."""

    name: str  # "database.table"
    kind: Literal["pk", "log"]
    buckets: int
    partitioned: bool
    partitions: tuple[str, ...]  # partition values, () for unpartitioned tables
    rows_written: int  # by this call; 0 when the table was complete already
    created: bool  # True: this call created the table (action "created" or "recreated")
    # sum of latest offsets (None: no bucket leader yet); == rows_written after a fresh seed
    log_records: int | None
    # "complete": existed with all its rows, untouched; "completed": existed with fewer
    # rows, they were written; "recreated": a half-written log table, dropped and rewritten
    action: Action = "created"
    # Why the first attempt at this table failed, when it took a second one (None: it did not)
    first_attempt_failed: str | None = None


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
            state = {
                "created": f"created, {t.rows_written} rows",
                "complete": "existed complete, untouched",
                "completed": f"existed incomplete, {t.rows_written} rows written",
                "recreated": f"half-written log table recreated, {t.rows_written} rows",
            }[t.action]
            parts = f", partitions {','.join(t.partitions)}" if t.partitions else ""
            records = "?" if t.log_records is None else t.log_records
            if t.first_attempt_failed:
                state += f"; retried after: {t.first_attempt_failed}"
            lines.append(
                f"  {t.name:<40} {t.kind:<3} buckets={t.buckets}{parts}"
                f"  log records={records}  ({state})"
            )
        return "\n".join(lines)


class SeedError(KonsoleError):
    """A demo table could not be seeded. The message names the table, the step and the
    cause; ``done`` holds the tables seeded before it (their report lines). ``leaderless``:
    the table's buckets got no leader, even when created anew: a coordinator that no client
    request can set right (konsole.localcluster.seed_local restarts it)."""

    def __init__(
        self,
        table: str,
        reason: str,
        done: tuple[SeededTable, ...] = (),
        *,
        leaderless: bool = False,
    ) -> None:
        self.table = table
        self.reason = reason
        self.done = done
        self.leaderless = leaderless
        super().__init__(f"{table}: {reason}")

    def with_done(self, done: tuple[SeededTable, ...]) -> SeedError:
        err = SeedError(self.table, self.reason, done, leaderless=self.leaderless)
        err.__cause__ = self.__cause__
        return err

    def __str__(self) -> str:
        text = f"seeding {self.table} failed: {self.reason}"
        if self.done:
            text += f" ({len(self.done)} of {len(_SPECS)} tables were seeded before it)"
        return text


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


def demo_descriptor(name: str, replication_factor: int = 1) -> fluss.TableDescriptor:
    """The pyfluss descriptor seed_demo creates ``name`` ("db.table") with."""
    spec = next((s for s in _SPECS if s.name == name), None)
    if spec is None:
        raise KeyError(name)
    return _descriptor(spec, replication_factor)


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
        # the table shows up shortly, another seeder won.
        for _ in range(10):
            if await admin.table_exists(spec.path):
                return False
            await asyncio.sleep(0.2)
        raise
    return True


def plan_table(kind: Literal["pk", "log"], created: bool, records: int, expected: int) -> Action:
    """What to do with one demo table, from what the server holds (see the module docs).

    ``records`` is the sum of the table's latest offsets: the log records of a log table,
    the changelog records of a primary-key table (one per upsert, so >= its rows).
    """
    if created:
        return "created"
    if records >= expected:
        return "complete"
    if kind == "pk" or records == 0:
        return "completed"
    return "recreated"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, fluss.FlussError):
        return f"{exc.message or type(exc).__name__} (error code {exc.error_code})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def _step(table: str, what: str, timeout_s: float, aw: Awaitable[_T]) -> _T:
    """``aw`` bounded by ``timeout_s``; a failure becomes a SeedError naming table and step."""
    try:
        return await asyncio.wait_for(aw, timeout_s)
    except TimeoutError as exc:
        raise SeedError(table, f"{what} did not finish within {timeout_s:g} s") from exc
    except fluss.FlussError as exc:
        raise SeedError(table, f"{what} failed: {_describe(exc)}") from exc


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


async def missing_leaders(
    admin: fluss.FlussAdmin,
    path: fluss.TablePath,
    buckets: int,
    partitions: Iterable[str] = (),
    within_s: float | None = None,
) -> str | None:
    """Wait until every bucket of a new table (or of its new ``partitions``) has a leader:
    None then; else, after ``within_s`` seconds in all (None: LEADERS_WITHIN_S), what
    still had none and the last answer (e.g. "partition eu: No leader found (error code ...)").

    create_table / create_partition return before the coordinator has elected the bucket
    leaders; a pyfluss writer that looks the table up in that window may never send its
    records (seen on 0.9.1: the flush hangs for good, and so does every later write on the
    same connection). Offsets answer once leaders exist. Bounded by time, not by a count of
    tries: on a loaded machine one try took seconds.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (LEADERS_WITHIN_S if within_s is None else within_s)
    ids = list(range(buckets))
    latest = fluss.OffsetSpec.latest()
    targets: list[str | None] = list(partitions) or [None]
    for part in targets:
        while True:
            probe = max(0.1, min(_LEADER_PROBE_S, deadline - loop.time()))
            try:
                if part is None:
                    await asyncio.wait_for(admin.list_offsets(path, ids, latest), probe)
                else:
                    await asyncio.wait_for(
                        admin.list_partition_offsets(path, part, ids, latest), probe
                    )
                break
            except (fluss.FlussError, TimeoutError) as exc:
                if loop.time() >= deadline:
                    where = "the table" if part is None else f"partition {part}"
                    return f"{where}: {_describe(exc)}"
                await asyncio.sleep(0.2)
    return None


async def wait_leaders(
    admin: fluss.FlussAdmin,
    path: fluss.TablePath,
    buckets: int,
    partitions: Iterable[str] = (),
    within_s: float | None = None,
) -> bool:
    """:func:`missing_leaders` as a yes or no: True when every bucket has a leader."""
    return await missing_leaders(admin, path, buckets, partitions, within_s) is None


async def create_with_leaders(
    admin: fluss.FlussAdmin,
    path: fluss.TablePath,
    descriptor: fluss.TableDescriptor,
    buckets: int,
    *,
    partitions: Mapping[str, str] | None = None,
    replace: bool = False,
    within_s: float | None = None,
) -> str | None:
    """Create a new table of ``buckets`` buckets (an existing one is an error, as pyfluss
    says; ``replace``: dropped first), its ``partitions`` (value -> partition key; none:
    unpartitioned) and wait for its bucket leaders; None when they are there.

    A table whose buckets still have no leader after ``within_s`` (None:
    LEADERS_WITHIN_S) is dropped and created
    once more (it holds nothing yet): a new table id the coordinator may see this time (a
    loaded 0.9.1 coordinator can miss a creation for good, see LEADERS_WITHIN_S). Else what
    was still missing after both.
    """
    missing: str | None = None
    for attempt in range(2):
        if attempt or replace:
            await admin.drop_table(path, ignore_if_not_exists=True)
        await admin.create_table(path, descriptor, ignore_if_exists=False)
        for value, key in (partitions or {}).items():
            await admin.create_partition(path, {key: value}, ignore_if_exists=True)
        missing = await missing_leaders(admin, path, buckets, list(partitions or {}), within_s)
        if missing is None:
            return None
    return f"{missing} (twice: the table was created anew)"


async def _prepare(admin: fluss.FlussAdmin, spec: _TableSpec, rf: int, ours: set[str]) -> bool:
    """Create the table (if absent) and its partitions (always: an earlier seed may have
    died in between), then wait for bucket leaders. True if this call created the table.

    ``ours``: the tables this seed created (this call adds to it). One of them whose
    buckets get no leader is created again (it holds nothing worth keeping: this seed
    writes all of its rows into a table it created); any other table is left alone.
    """
    name = spec.name
    created = await _step(
        name, "creating the table", _ADMIN_TIMEOUT_S, _create_table(admin, spec, rf)
    )
    if created:
        ours.add(name)
    # pyfluss never creates partitions on write: a record for a missing partition hangs
    # for ever and stalls the connection's writer, so create them up front.
    for part in spec.partitions:
        await _step(
            name,
            f"creating partition {part}",
            _ADMIN_TIMEOUT_S,
            admin.create_partition(
                spec.path, {str(spec.partition_key): part}, ignore_if_exists=True
            ),
        )
    missing = await _step(
        name,
        "waiting for bucket leaders",
        LEADERS_WITHIN_S + _ADMIN_TIMEOUT_S,
        missing_leaders(admin, spec.path, spec.buckets, spec.partitions),
    )
    if missing is not None and name in ours:
        missing = await _step(
            name,
            f"creating the table again (its buckets had no leader: {missing})",
            2 * (LEADERS_WITHIN_S + 3 * _ADMIN_TIMEOUT_S),
            create_with_leaders(
                admin,
                spec.path,
                _descriptor(spec, rf),
                spec.buckets,
                partitions=dict.fromkeys(spec.partitions, str(spec.partition_key)),
                replace=True,
            ),
        )
        created = True
    if missing is not None:
        raise SeedError(name, f"some buckets had no leader: {missing}", leaderless=True)
    return created


async def _seed_table(
    conn: SettledConnection,
    spec: _TableSpec,
    rf: int,
    scale: int,
    recreate: bool,
    ours: set[str],
) -> SeededTable:
    admin = conn.get_admin()
    name = spec.name
    if recreate:
        await _step(
            name,
            "dropping the table",
            _ADMIN_TIMEOUT_S,
            admin.drop_table(spec.path, ignore_if_not_exists=True),
        )
    created = await _prepare(admin, spec, rf, ours)
    expected = demo_rows(name, scale)
    kind: Literal["pk", "log"] = "pk" if spec.primary_keys else "log"
    action: Action = "created"
    if not created:
        held = await _step(
            name,
            "counting its records",
            _ADMIN_TIMEOUT_S,
            _log_records(admin, spec.path, spec.buckets, spec.partitions),
        )
        if held is None:
            raise SeedError(name, "its latest offsets could not be read (no bucket leader?)")
        action = plan_table(kind, created, held, len(expected))
        if action == "recreated":
            await _step(
                name,
                f"dropping the half-written table ({held} of {len(expected)} records)",
                _ADMIN_TIMEOUT_S,
                admin.drop_table(spec.path, ignore_if_not_exists=True),
            )
            await _prepare(admin, spec, rf, ours)
    rows = [] if action == "complete" else expected
    if rows:
        table = await _step(name, "opening the table", _ADMIN_TIMEOUT_S, conn.get_table(spec.path))
        conn.note_written(table)  # flushed before the connection is closed
        await _step(
            name,
            f"writing {len(rows)} rows",
            _WRITE_TIMEOUT_S,
            write_table_rows(table, rows, _WRITE_TIMEOUT_S + 1),
        )

    async def describe() -> SeededTable:
        # Report what the server holds, not the spec: an old seed may differ.
        info = await admin.get_table_info(spec.path)
        partitions: tuple[str, ...] = ()
        if info.is_partitioned():
            infos = await admin.list_partition_infos(spec.path)
            partitions = tuple(sorted(p.partition_name for p in infos))
        log_records = await _log_records(admin, spec.path, info.num_buckets, partitions)
        return SeededTable(
            name=name,
            kind="pk" if info.has_primary_key() else "log",
            buckets=info.num_buckets,
            partitioned=info.is_partitioned(),
            partitions=partitions,
            rows_written=len(rows),
            created=action in ("created", "recreated"),
            log_records=log_records,
            action=action,
        )

    return await _step(name, "reading its description back", _ADMIN_TIMEOUT_S, describe())


async def _connect(config: fluss.Config) -> fluss.FlussConnection:
    return await asyncio.wait_for(fluss.FlussConnection.create(config), _ADMIN_TIMEOUT_S)


async def _close(conn: SettledConnection) -> None:
    # Flushed first, closed only when settled: closing with sends in flight would leave
    # pyfluss' sender spinning (see konsole.localcluster.settle).
    await conn.close_settled(_CLOSE_TIMEOUT_S)
    # pyfluss' tokio threads may still be handing results back to Python just after
    # close(); if the interpreter exits right then it aborts (SIGABRT, ~1 run in 10
    # for short CLI processes). A short pause with the loop alive avoids it.
    await asyncio.sleep(_SETTLE_S)


async def seed_demo(
    bootstrap: str,
    *,
    replication_factor: int = 1,
    scale: int = 1,
    recreate: bool = False,
    client_properties: Mapping[str, str] | None = None,
) -> SeedReport:
    """Create the demo databases/tables and fill whatever is missing (see the module docs).

    ``scale`` multiplies the row counts (about 3,500 rows at 1). ``recreate`` drops the
    demo tables first. ``client_properties`` go into the pyfluss Config as is (e.g.
    "security.protocol": "sasl", "security.sasl.mechanism"/"username"/"password" for a
    SASL listener); pyfluss rejects unknown keys.

    Raises :class:`SeedError` (table, step, cause, and the tables done before it) when a
    table cannot be seeded in two attempts.
    """
    if replication_factor < 1 or scale < 1:
        raise ValueError("replication_factor and scale must be >= 1")
    config = fluss.Config({**(client_properties or {}), "bootstrap.servers": bootstrap})
    try:
        conn = SettledConnection(await _connect(config))
    except (TimeoutError, fluss.FlussError) as exc:
        raise SeedError(bootstrap, f"connecting failed: {_describe(exc)}") from exc
    tables: list[SeededTable] = []
    ours: set[str] = set()  # the tables this call created
    try:
        for db in dict.fromkeys(s.database for s in _SPECS):
            await _step(
                db,
                "creating the database",
                _ADMIN_TIMEOUT_S,
                conn.get_admin().create_database(
                    db, fluss.DatabaseDescriptor(comment="konsole demo data"), ignore_if_exists=True
                ),
            )
        # Sequential on purpose: a few thousand rows take well under a second each.
        for spec in _SPECS:
            first_failure: str | None = None
            for attempt in range(1, _ATTEMPTS + 1):
                try:
                    table = await _seed_table(conn, spec, replication_factor, scale, recreate, ours)
                    tables.append(dataclasses.replace(table, first_attempt_failed=first_failure))
                    break
                except SeedError as exc:
                    if attempt == _ATTEMPTS:
                        raise SeedError(
                            spec.name,
                            f"{exc.reason} (the first attempt failed too: {first_failure})",
                            leaderless=exc.leaderless,
                        ) from exc.__cause__
                    first_failure = exc.reason
                    # Start over on a fresh connection: the table is measured again, so a
                    # write that half landed is completed, not duplicated.
                    await _close(conn)
                    try:
                        conn = SettledConnection(await _connect(config))
                    except (TimeoutError, fluss.FlussError) as conn_exc:
                        raise SeedError(
                            spec.name,
                            f"{exc.reason}; reconnecting failed: {_describe(conn_exc)}",
                        ) from conn_exc
    except SeedError as exc:
        raise exc.with_done(tuple(tables)) from exc.__cause__
    finally:
        await _close(conn)
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
