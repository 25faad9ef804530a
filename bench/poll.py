"""Benchmark one cluster poll: fluss_proto's gather_cluster vs pyfluss vs a raw-RPC floor.

Usage::

    .venv/bin/python bench/poll.py                       # own 3-tablet-server cluster
    .venv/bin/python bench/poll.py --bootstrap 127.0.0.1:9123 [--reps 15] [--json]
    .venv/bin/python bench/poll.py --quick [--bootstrap B --drop]   # smoke run, seconds

What one "poll" reads: the servers, the table info of every table and the latest offset of
every bucket (gather_cluster also reads each server's ApiVersions and every bucket's
leader, replicas and epoch).

- (a) ``gather_cluster(client, previous=<its last view>)`` on an already-connected
  FlussClient: a poll as konsole's poller makes it, guided by the view before;
- (a0) ``gather_cluster(client)`` without a guide: the first poll;
- (b) pyfluss doing its best on one FlussConnection: every call of a stage issued at once
  with ``asyncio.gather`` (servers + databases, then tables, then per table its info
  followed by its latest offsets, tables concurrently);
- (c), (c0) the floors: the exact requests (a) and (a0) send, recorded once and
  pre-encoded, written on already-open asyncio connections, all of one server's frames in
  one write, every server at once, awaiting every response frame without decoding it;
- (s) what konsole's poller does with (a)'s view on top of the gather, no I/O:
  ``ClusterSnapshot.assemble`` and ``events.advance`` (which runs ``health.evaluate``)
  on the latest guided view, with server metrics parsed from real scrapes of the
  cluster's servers, the event state carried from rep to rep as ``konsole watch`` does;
- (m) parsing those scrapes (``konsole.collect.cluster.metrics.parse_metrics`` over the
  texts, no I/O),
  reported beside (s): a poll pays it too, but it is the scrape's cost, not the events'.
- (k) what the capacity part adds to a poll (konsole.collect.cluster.capacity): the collector's
  per-poll work (each tablet server's data dirs seen from here, its samples kept, a forecast
  fitted for the server and each visible dir) and the capacity rules and events over it, in
  the steady state: each series holds an hour of 5 s samples, and every scraped tablet
  server is given a rising disk usage so that every poll fits full forecasts (a 0.9.1
  server exports none: this is the 1.0 line's cost, the worst case). The servers' configs
  are read once before the reps; that read (one DescribeClusterConfigs per tablet server,
  one round trip, every 60 s) is reported beside it as (kc), and per poll at a 5 s interval.

The CPU that (s) adds to a guided poll is reported as (s) / (a), client CPU against
client CPU (goal: at most 25%); the capacity part's as (k) / (a) (goal: under 10%).

Set-up (bounded in time): without ``--bootstrap`` a LocalCluster with 1 coordinator and 3
tablet servers is started in a temporary run dir and stopped at the end; its servers'
metrics endpoints are scraped once for (s) and (m) (with ``--bootstrap``, give them with
``--metrics URL``; without any, (s) runs without metrics and says so). Tables
``konsole_bench.bench_000`` .. are log tables created with pyfluss (``--tables`` x
``--buckets``, replication factor ``--rf``, default 1), reused when they exist; a few rows
go to the first ``--written-tables`` tables when they are new, so offsets are non-trivial.

Measurement: ``--warmup`` polls per method are discarded, then ``--reps`` polls per method
run interleaved (a, a0, b, c, c0, a, ...), stopping early when ``--budget`` seconds are
spent. Median and p90 per method, and the median CPU time of this process per poll (all its
threads, so pyfluss's too); ratios of (a) and (a0) against (b) and their floors.

``--quick`` (bench/_quick.py): 3 tables x 2 buckets, 1 warm-up + 2 reps, the same code
paths; ``--drop`` drops the bench database at the end (a shared cluster stays as it was).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import signal
import statistics
import struct
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO, REPO / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import fluss  # noqa: E402
import pyarrow as pa  # noqa: E402
from _quick import add_quick, parse_args  # noqa: E402

from fluss_proto import frame  # noqa: E402
from fluss_proto.client import FlussClient  # noqa: E402
from fluss_proto.connection import Connection  # noqa: E402

DATABASE = "konsole_bench"
TABLE_PREFIX = "bench_"
ADMIN_TIMEOUT_S = 60.0
SETUP_BUDGET_S = 150.0  # creating the bench tables
RUN_LIMIT_S = 300.0  # everything after the cluster is up
LEADER_WAIT_S = 5.0  # per table, before it is dropped and created again
LEADER_POLL_S = 0.02
CREATE_ATTEMPTS = 3
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# =========================================================================== set-up


def table_name(i: int) -> str:
    return f"{TABLE_PREFIX}{i:03d}"


async def leaderless(client: FlussClient, names: list[str]) -> list[str]:
    """Bench tables (of ``names``) with a bucket that has no leader (or no metadata)."""
    out = []
    for i in range(0, len(names), 100):
        chunk = names[i : i + 100]
        md = await client.refresh_metadata([(DATABASE, n) for n in chunk])
        for n in chunk:
            table = md.tables.get((DATABASE, n))
            if table is None or any(b.leader_id is None for b in table.buckets):
                out.append(n)
    return out


async def wait_for_leaders(client: FlussClient, name: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / LEADER_POLL_S) + 1):
        if not await leaderless(client, [name]):
            return True
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(LEADER_POLL_S)
    return False


async def ensure_tables(
    conn: fluss.FlussConnection, client: FlussClient, count: int, buckets: int, rf: int
) -> tuple[list[str], list[str]]:
    """Create the missing bench tables; (all bench table names, the ones created now).

    One at a time, each waited for until all its buckets have a leader: on Fluss 0.9.1 the
    coordinator misses some table creations when tables are created back to back (even
    sequentially): they exist in ZooKeeper, but their buckets never get a leader. Such a
    table (new, or found that way when reusing) is dropped and created again.
    """
    admin = conn.get_admin()
    async with asyncio.timeout(ADMIN_TIMEOUT_S):
        await admin.create_database(DATABASE, ignore_if_exists=True)
        existing = set(await admin.list_tables(DATABASE))
    wanted = [table_name(i) for i in range(count)]
    broken = await leaderless(client, [t for t in wanted if t in existing])
    todo = [t for t in wanted if t not in existing or t in broken]
    if todo:
        log(
            f"creating {len(todo)} tables x {buckets} buckets (RF {rf}) one at a time"
            + (f" ({len(broken)} existing ones had leaderless buckets)" if broken else "")
        )
    descriptor = fluss.TableDescriptor(
        fluss.Schema(SCHEMA),
        bucket_count=buckets,
        bucket_keys=["id"],
        properties={"table.replication.factor": str(rf)},
    )
    started = time.monotonic()
    recreated = 0
    async with asyncio.timeout(SETUP_BUDGET_S):
        for name in todo:
            path = fluss.TablePath(DATABASE, name)
            for attempt in range(CREATE_ATTEMPTS):
                if attempt or name in broken:
                    await admin.drop_table(path, ignore_if_not_exists=True)
                    recreated += 1
                await admin.create_table(path, descriptor, ignore_if_exists=True)
                if await wait_for_leaders(client, name, LEADER_WAIT_S):
                    break
            else:
                raise SystemExit(f"{DATABASE}.{name} has buckets without a leader; giving up")
    if todo:
        log(
            f"created {len(todo)} tables in {time.monotonic() - started:.1f}s "
            f"({recreated} dropped and created again for want of leaders)"
        )
    return wanted, todo


async def drop_bench_database(bootstrap: str) -> None:
    """Drop the bench database and its tables (``--drop``: a shared cluster stays as it was)."""
    conn = await pyfluss_connect(bootstrap)
    try:
        async with asyncio.timeout(ADMIN_TIMEOUT_S):
            await conn.get_admin().drop_database(DATABASE, ignore_if_not_exists=True, cascade=True)
        log(f"dropped database {DATABASE}")
    finally:
        await pyfluss_close(conn)


def cluster_options(parser: argparse.ArgumentParser) -> None:
    """``--bootstrap`` / ``--version`` / ``--fluss-home`` and ``--drop``: the cluster a bench
    runs on (its own temporary one unless ``--bootstrap``)."""
    parser.add_argument("--bootstrap", help="use this cluster instead of starting one")
    parser.add_argument("--version", default=None, help="Fluss version of the own cluster")
    parser.add_argument("--fluss-home", default=None, help="own cluster from a distribution")
    parser.add_argument("--drop", action="store_true", help=f"drop database {DATABASE} at the end")


@contextlib.contextmanager
def bench_cluster(args: argparse.Namespace) -> Iterator[tuple[str, Any]]:
    """(bootstrap, the own cluster's description or None): ``--bootstrap``'s cluster, else
    a 1 coordinator + 3 tablet-server one in a temporary run dir, stopped on exit. With
    ``--drop`` the bench database is dropped on the way out."""
    from konsole.localcluster.cluster import temporary_cluster

    start: dict[str, Any] = {"fluss_home": args.fluss_home} if args.fluss_home else {}
    own = (
        contextlib.nullcontext(None)
        if args.bootstrap
        else temporary_cluster(
            args.version, tablet_servers=3, prefix="konsole-bench-", ready_timeout=180, **start
        )
    )
    with own as desc:
        bootstrap = args.bootstrap or desc.bootstrap_servers
        if desc is not None:
            log(f"started a {desc.version} cluster: {bootstrap}")
        try:
            yield bootstrap, desc
        finally:
            if getattr(args, "drop", False):
                asyncio.run(drop_bench_database(bootstrap))


async def write_rows(conn: fluss.FlussConnection, names: list[str], rows: int) -> None:
    """A few rows per table, one table at a time: pyfluss 1.0 writers on several tables
    at once (asyncio.gather) hung with the event loop blocked, so no timeout could fire."""
    if names:
        log(f"writing rows to {len(names)} tables ...")
    for index, name in enumerate(names):
        async with asyncio.timeout(ADMIN_TIMEOUT_S):
            table = await conn.get_table(fluss.TablePath(DATABASE, name))
            writer = table.new_append().create_writer()
            n = rows + 7 * index  # different offsets per table
            handles = [writer.append({"id": i, "v": f"row-{i}"}) for i in range(n)]
            await writer.flush()
            await asyncio.gather(*(h.wait() for h in handles))


# =========================================================================== (a) ours


def load_gather() -> Callable[[Any], Awaitable[Any]]:
    """fluss_proto.gather.gather_cluster, imported lazily."""
    try:
        module = importlib.import_module("fluss_proto.gather")
    except ModuleNotFoundError as exc:
        if exc.name != "fluss_proto.gather":
            raise
        raise SystemExit(
            "fluss_proto/gather/ (gather_cluster) is not there yet: nothing to measure"
        ) from None
    return module.gather_cluster


@dataclass
class Recorded:
    """Requests (a) sent during one poll, per server address, in order."""

    frames: dict[str, list[tuple[int, int, bytes]]] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.frames.values())


@contextlib.contextmanager
def tap_requests(recorded: Recorded):
    """Record every request a Connection sends (address, api key, version, body) while
    active: single ones (``request``) and batches (``request_many``)."""
    single, many = Connection.request, Connection.request_many

    async def tapped(self: Connection, api_key: int, api_version: int, body: bytes, **kw: Any):
        recorded.frames.setdefault(self.address, []).append((api_key, api_version, bytes(body)))
        return await single(self, api_key, api_version, body, **kw)

    async def tapped_many(self: Connection, items: Any, **kw: Any):
        frames = recorded.frames.setdefault(self.address, [])
        frames.extend((key, version, bytes(body)) for key, version, body, _ in items)
        return await many(self, items, **kw)

    Connection.request = tapped  # type: ignore[method-assign]
    Connection.request_many = tapped_many  # type: ignore[method-assign]
    try:
        yield recorded
    finally:
        Connection.request = single  # type: ignore[method-assign]
        Connection.request_many = many  # type: ignore[method-assign]


# =========================================================================== (b) pyfluss


@dataclass
class PyflussPoll:
    servers: int
    tables: int
    buckets: int
    latest_sum: int
    calls: int
    stages: int
    retries: int = 0


PYFLUSS_ATTEMPTS = 3


async def pyfluss_poll(admin: fluss.FlussAdmin) -> PyflussPoll:
    latest_spec = fluss.OffsetSpec.latest()
    calls = 0
    retries = 0

    async def call(fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        # pyfluss 1.0 now and then fails a call made concurrently with others on the same
        # table ("Table info not found", code 15): retry, and count it.
        nonlocal calls, retries
        for attempt in range(PYFLUSS_ATTEMPTS):
            calls += 1
            try:
                return await fn(*args)
            except fluss.FlussError:
                if attempt + 1 == PYFLUSS_ATTEMPTS:
                    raise
                retries += 1
        raise AssertionError("unreachable")

    # stage 1: servers and databases
    nodes, databases = await asyncio.gather(
        call(admin.get_server_nodes), call(admin.list_databases)
    )
    # stage 2: tables of every database
    listed = await asyncio.gather(*(call(admin.list_tables, db) for db in databases))
    paths = [
        fluss.TablePath(db, t) for db, names in zip(databases, listed, strict=True) for t in names
    ]

    # stages 3-4 (5 for partitioned tables), pipelined per table: info, then offsets
    partitioned = False
    specs = [latest_spec]

    async def table(path: fluss.TablePath) -> tuple[int, int]:
        nonlocal partitioned
        info = await call(admin.get_table_info, path)
        ids = list(range(info.num_buckets))
        if info.is_partitioned():
            partitioned = True
            parts = await call(admin.list_partition_infos, path)
            results = await asyncio.gather(
                *(
                    call(admin.list_partition_offsets, path, p.partition_name, ids, spec)
                    for p in parts
                    for spec in specs
                )
            )
            latest = results[:: len(specs)]
        else:
            results = await asyncio.gather(*(call(admin.list_offsets, path, ids, s) for s in specs))
            latest = results[:1]
        return sum(len(r) for r in latest), sum(sum(r.values()) for r in latest)

    per_table = await asyncio.gather(*(table(p) for p in paths))
    return PyflussPoll(
        servers=len(nodes),
        tables=len(paths),
        buckets=sum(b for b, _ in per_table),
        latest_sum=sum(s for _, s in per_table),
        calls=calls - retries,
        stages=5 if partitioned else 4,
        retries=retries,
    )


# =========================================================================== (c) floor


class Floor:
    """The recorded requests, pre-encoded, on one open asyncio connection per server."""

    def __init__(self, recorded: Recorded) -> None:
        self.recorded = recorded
        self.streams: dict[str, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}
        self.payloads: dict[str, bytes] = {}
        self.counts: dict[str, int] = {}

    async def open(self) -> Floor:
        for address, requests in self.recorded.frames.items():
            host, _, port = address.rpartition(":")
            self.streams[address] = await asyncio.wait_for(
                asyncio.open_connection(host.strip("[]"), int(port), limit=1 << 22), 10
            )
            self.payloads[address] = b"".join(
                frame.encode_request(key, version, request_id, body)
                for request_id, (key, version, body) in enumerate(requests)
            )
            self.counts[address] = len(requests)
        return self

    async def _one(self, address: str, check: bool) -> None:
        reader, writer = self.streams[address]
        writer.write(self.payloads[address])
        seen = set()
        for _ in range(self.counts[address]):
            (length,) = struct.unpack(">i", await reader.readexactly(4))
            payload = await reader.readexactly(length)
            if check:
                resp = frame.decode_response(payload)
                if resp.kind is not frame.ResponseKind.SUCCESS:
                    raise SystemExit(f"floor: {address} answered {resp!r}")
                seen.add(resp.request_id)
        if check and seen != set(range(self.counts[address])):
            raise SystemExit(f"floor: {address} answered ids {sorted(seen)[:10]}...")

    async def poll(self, check: bool = False) -> None:
        await asyncio.gather(*(self._one(a, check) for a in self.streams))

    async def close(self) -> None:
        for _, writer in self.streams.values():
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 2)


# =========================================================================== measurement


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


async def pyfluss_connect(bootstrap: str) -> fluss.FlussConnection:
    return await asyncio.wait_for(
        fluss.FlussConnection.create(fluss.Config({"bootstrap.servers": bootstrap})),
        ADMIN_TIMEOUT_S,
    )


async def pyfluss_close(conn: fluss.FlussConnection) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(conn.close(), ADMIN_TIMEOUT_S)
    await asyncio.sleep(0.3)  # let pyfluss' threads settle


# =========================================================================== (s) konsole


async def scrape_texts(urls: list[str]) -> list[tuple[str, str]]:
    """(url, Prometheus text) of each endpoint that answers (loopback, no proxy)."""
    import httpx

    async with httpx.AsyncClient(timeout=10.0, trust_env=False) as http:
        answers = await asyncio.gather(*(http.get(u) for u in urls), return_exceptions=True)
    return [
        (url, answer.text)
        for url, answer in zip(urls, answers, strict=True)
        if isinstance(answer, httpx.Response) and answer.status_code == 200
    ]


def parse_all(texts: list[tuple[str, str]]) -> tuple[Any, ...]:
    from konsole.collect.cluster.metrics import parse_metrics

    now = time.time()
    return tuple(parse_metrics(text, url=url, scraped_at=now) for url, text in texts)


class KonsoleStep:
    """(s): one poll's snapshot judged (events, health, placement) over a given view, the
    judge carried (konsole.model.poll.Judge: the session's one judgement of a poll)."""

    def __init__(self, coordinator: str, metrics: tuple[Any, ...]) -> None:
        from konsole.model.poll import Judge
        from konsole.model.snapshot import CoordinatorRole, CoordinatorStatus

        self.metrics = metrics
        self.coordinators = (CoordinatorStatus(coordinator, CoordinatorRole.ACTIVE),)
        self.judge = Judge()
        self.seq = 0
        self.events = 0

    def step(self, view: Any) -> Any:
        from konsole.model.snapshot import ClusterSnapshot

        self.seq += 1
        snapshot = ClusterSnapshot.assemble(
            seq=self.seq,
            taken_at=time.time(),
            latency_s=0.0,
            view=view,
            coordinators=self.coordinators,
            metrics=self.metrics,
        )
        judged = self.judge.judge(snapshot)
        self.events += len(judged.events)
        return judged.health


class CapacityStep:
    """(k): the capacity part of a poll over a given view, in the steady state (module docs)."""

    #: An hour of samples at a 5 s interval in each series, as a long-running poller keeps.
    SEEDED = 720

    def __init__(self, client: Any, metrics: tuple[Any, ...]) -> None:
        from dataclasses import replace

        from konsole.collect.cluster.capacity import CapacityCollector
        from konsole.model.events.capacity import CapacityState
        from konsole.model.thresholds import HealthThresholds

        self.client = client
        self.rules = HealthThresholds()
        self.collector = CapacityCollector(self.rules)
        self.state = CapacityState()
        self.seq = 0
        tablets = [m for m in metrics if m.role == "tablet"]
        self.metrics = tuple(
            replace(m, disk_usage_ratio=0.3, disk_write_locked=False) for m in tablets
        )
        now = time.time()
        self.collector.seed(
            {
                (m.server_id, None): [
                    (now - 5 * (self.SEEDED - i), 0.3 - 1e-5 * (self.SEEDED - i))
                    for i in range(self.SEEDED)
                ]
                for m in self.metrics
            }
        )

    def _snapshot(self, view: Any) -> Any:
        from dataclasses import replace

        from konsole.model.snapshot import ClusterSnapshot

        self.seq += 1
        rising = tuple(replace(m, disk_usage_ratio=0.3 + 1e-5 * self.seq) for m in self.metrics)
        return ClusterSnapshot.assemble(
            seq=self.seq, taken_at=time.time(), latency_s=0.0, view=view, metrics=rising
        )

    async def configs(self, view: Any) -> None:
        """(kc): the configs read (forced due), one round trip to every tablet server."""
        self.collector._due = 0.0
        await self.collector.collect(self.client, self._snapshot(view))

    async def step(self, view: Any) -> Any:
        from dataclasses import replace

        from konsole.model.events import EventConfig
        from konsole.model.events.capacity import detect_capacity
        from konsole.model.headroom import capacity_view
        from konsole.model.health import capacity_findings

        snapshot = self._snapshot(view)
        part = await self.collector.collect(self.client, snapshot)
        snapshot = replace(snapshot, capacity=part)
        # The headroom is one of the poll's facts, derived once as the judge takes it.
        servers = capacity_view(snapshot)
        config = EventConfig(self.rules)
        _, self.state = detect_capacity(self.state, snapshot, snapshot, config, servers)
        return capacity_findings(snapshot, servers, self.rules)


async def run(args: argparse.Namespace, bootstrap: str, metrics_urls: list[str]) -> dict[str, Any]:
    gather_cluster = load_gather()
    client = await FlussClient.connect(bootstrap)
    pconn: fluss.FlussConnection | None = None
    floor: Floor | None = None
    floor_cold: Floor | None = None
    try:
        # Set-up on its own pyfluss connection: a table dropped and created again would
        # leave a stale table id in that connection's metadata cache.
        setup = await pyfluss_connect(bootstrap)
        try:
            names, created = await ensure_tables(setup, client, args.tables, args.buckets, args.rf)
        finally:
            await pyfluss_close(setup)
        missing_leaders = await leaderless(client, names)
        if missing_leaders:
            raise SystemExit(f"bench tables without bucket leaders: {missing_leaders[:5]}...")
        pconn = await pyfluss_connect(bootstrap)
        to_write = [n for n in names[: args.written_tables] if n in created]
        await write_rows(pconn, to_write, args.rows)
        await asyncio.sleep(0.5)  # let offsets settle (high watermarks of RF>1)
        admin = pconn.get_admin()

        # (a0) once to open every connection, then (a0) and (a) once each under the tap:
        # what they send on warm connections (no handshakes) is what (c0) and (c) replay
        last = await gather_cluster(client)
        recorded_cold, recorded = Recorded(), Recorded()
        with tap_requests(recorded_cold):
            view = await gather_cluster(client)
        with tap_requests(recorded):
            last = await gather_cluster(client, previous=view)
        floor = await Floor(recorded).open()
        floor_cold = await Floor(recorded_cold).open()
        await floor.poll(check=True)
        await floor_cold.poll(check=True)

        ours_buckets = [b for t in view.tables for b in t.buckets]
        ours_latest = sum(b.latest_offset or 0 for b in ours_buckets)
        check = await pyfluss_poll(admin)
        log(
            f"check: ours {len(view.tables)} tables / {len(ours_buckets)} buckets / latest sum "
            f"{ours_latest} / {len(view.errors)} errors; pyfluss {check.tables} tables / "
            f"{check.buckets} buckets / latest sum {check.latest_sum}"
        )
        if (check.tables, check.buckets, check.latest_sum) != (
            len(view.tables),
            len(ours_buckets),
            ours_latest,
        ):
            log("warning: ours and pyfluss disagree (cluster changing underneath?)")

        async def guided() -> Any:
            nonlocal last
            last = await gather_cluster(client, previous=last)
            return last

        texts = await scrape_texts(metrics_urls) if metrics_urls else []
        scraped = parse_all(texts)
        if not scraped:
            log("note: no metrics scraped; (s) runs without server metrics")
        coordinator = view.coordinator.address if view.coordinator else bootstrap
        konsole_step = KonsoleStep(coordinator, scraped)
        konsole_step.step(last)  # the baseline: the first snapshot of a stream gives no event

        async def konsole_s() -> Any:
            return konsole_step.step(last)

        async def metrics_m() -> Any:
            return parse_all(texts)

        capacity = CapacityStep(client, scraped)
        await capacity.configs(last)  # read once: the reps run on the cached answers

        async def capacity_k() -> Any:
            return await capacity.step(last)

        async def capacity_kc() -> Any:
            return await capacity.configs(last)

        methods: dict[str, Callable[[], Awaitable[Any]]] = {
            "a": guided,
            "s": konsole_s,
            "m": metrics_m,
            "k": capacity_k,
            "kc": capacity_kc,
            "a0": lambda: gather_cluster(client),
            "b": lambda: pyfluss_poll(admin),
            "c": lambda: floor.poll(),  # type: ignore[union-attr]
            "c0": lambda: floor_cold.poll(),  # type: ignore[union-attr]
        }
        for _ in range(args.warmup):
            for fn in methods.values():
                await fn()
        times: dict[str, list[float]] = defaultdict(list)
        # this process's CPU (all its threads: pyfluss's included) per poll
        cpu: dict[str, list[float]] = defaultdict(list)
        retried: dict[str, int] = defaultdict(int)
        extra: dict[str, Any] = {}
        started = time.monotonic()
        for _ in range(args.reps):
            for key, fn in methods.items():
                t0, c0 = time.perf_counter(), time.process_time()
                result = await fn()
                times[key].append(time.perf_counter() - t0)
                cpu[key].append(time.process_time() - c0)
                if key in ("a", "a0"):
                    extra[key] = (result.requests, result.round_trips, len(result.errors))
                elif key == "b":
                    extra[key] = (result.calls, result.stages)
                    retried[key] += result.retries
            if time.monotonic() - started > args.budget:
                log(f"time budget of {args.budget}s spent after {len(times['a'])} reps")
                break
        summary = {
            "bootstrap": bootstrap,
            "metrics_endpoints": len(texts),
            "metrics_bytes": sum(len(t) for _, t in texts),
            "events_in_reps": konsole_step.events,
            "tablet_servers": len(view.tablet_servers),
            "tables": len(view.tables),
            "bench_tables": len(names),
            "buckets": len(ours_buckets),
            "replication_factor": args.rf,
            "reps": len(times["a"]),
            "warmup": args.warmup,
            "methods": {},
        }
        labels = {
            "a": "(a) gather_cluster, guided",
            "a0": "(a0) gather_cluster, first poll",
            "b": "(b) pyfluss",
            "c": "(c) raw-RPC floor of (a)",
            "c0": "(c0) raw-RPC floor of (a0)",
            "s": "(s) snapshot+events+health on (a)",
            "m": "(m) parse the metrics scrapes",
            "k": "(k) capacity part, steady state",
            "kc": "(kc) capacity configs read",
        }
        rpcs = {
            "a": (f"{extra['a'][0]} RPCs", f"{extra['a'][1]}"),
            "a0": (f"{extra['a0'][0]} RPCs", f"{extra['a0'][1]}"),
            "b": (f"{extra['b'][0]} calls", f"{extra['b'][1]} stages"),
            "c": (f"{recorded.count} RPCs", "1"),
            "c0": (f"{recorded_cold.count} RPCs", "1"),
            "s": ("-", "-"),
            "m": (f"{len(texts)} texts", "-"),
            "k": (f"{len(capacity.metrics)} servers", "-"),
            "kc": (f"{len(view.tablet_servers)} RPCs", "1"),
        }
        for key, values in times.items():
            summary["methods"][key] = {
                "label": labels[key],
                "median_ms": statistics.median(values) * 1000,
                "p90_ms": percentile(values, 0.9) * 1000,
                "cpu_ms": statistics.median(cpu[key]) * 1000,
                "requests": rpcs[key][0],
                "round_trips": rpcs[key][1],
            }
        summary["gather_errors"] = extra["a"][2] + extra["a0"][2]
        summary["pyfluss_retries"] = dict(retried)
        med = {k: v["median_ms"] for k, v in summary["methods"].items()}
        summary["ratios"] = {
            "ours/pyfluss": med["a"] / med["b"],
            "ours/floor": med["a"] / med["c"],
            "first/pyfluss": med["a0"] / med["b"],
            "first/floor": med["a0"] / med["c0"],
        }
        cpu_of = {k: v["cpu_ms"] for k, v in summary["methods"].items()}
        summary["added_cpu"] = {
            "snapshot_events_health/guided": cpu_of["s"] / cpu_of["a"],
            "metrics_parse/guided": cpu_of["m"] / cpu_of["a"],
            "capacity/guided": cpu_of["k"] / cpu_of["a"],
            # the configs read every 60 s, per poll at a 5 s interval
            "capacity_configs/guided": cpu_of["kc"] / 12 / cpu_of["a"],
        }
        return summary
    finally:
        for f in (floor, floor_cold):
            if f is not None:
                await f.close()
        await client.close()
        if pconn is not None:
            await pyfluss_close(pconn)


def print_table(s: dict[str, Any]) -> None:
    print(
        f"poll of {s['tablet_servers']} tablet servers, {s['tables']} tables "
        f"({s['bench_tables']} bench tables), {s['buckets']} buckets, "
        f"RF {s['replication_factor']}; "
        f"{s['reps']} reps after {s['warmup']} warm-up"
    )
    print(
        f"{'method':34} {'requests':>12} {'round trips':>12} {'median ms':>10} {'p90 ms':>9} "
        f"{'client CPU ms':>14}"
    )
    for m in s["methods"].values():
        print(
            f"{m['label']:34} {m['requests']:>12} {m['round_trips']:>12} "
            f"{m['median_ms']:>10.1f} {m['p90_ms']:>9.1f} {m['cpu_ms']:>14.1f}"
        )
    r = s["ratios"]
    print(
        f"guided: ours/pyfluss = {r['ours/pyfluss']:.2f}  ours/floor = {r['ours/floor']:.2f}; "
        f"first poll: ours/pyfluss = {r['first/pyfluss']:.2f}  "
        f"ours/floor = {r['first/floor']:.2f}"
    )
    added = s["added_cpu"]
    print(
        f"client CPU added to a guided poll: snapshot+events+health (s)/(a) = "
        f"{added['snapshot_events_health/guided']:.1%} (goal <= 25%); metrics parse (m)/(a) = "
        f"{added['metrics_parse/guided']:.1%} of {s['metrics_endpoints']} scrapes "
        f"({s['metrics_bytes'] / 1024:.0f} KiB); {s['events_in_reps']} events in the reps"
    )
    print(
        f"client CPU the capacity part adds to a guided poll: (k)/(a) = "
        f"{added['capacity/guided']:.1%} (goal < 10%), plus its configs read every 60 s "
        f"(kc)/12/(a) = {added['capacity_configs/guided']:.1%} at a 5 s interval"
    )
    if any(s["pyfluss_retries"].values()):
        print(f"note: pyfluss calls retried during the measured polls: {s['pyfluss_retries']}")
    if s["gather_errors"]:
        print(f"note: gather_cluster reported {s['gather_errors']} errors")


async def bounded(coro: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    async with asyncio.timeout(RUN_LIMIT_S):
        return await coro


def main(argv: list[str] | None = None) -> int:
    # A SIGTERM (e.g. from `timeout`) unwinds like Ctrl-C, so the own cluster is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    cluster_options(parser)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--rf", type=int, default=1, help="replication factor of new tables")
    parser.add_argument("--written-tables", type=int, default=20)
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--budget", type=float, default=120.0, help="seconds for the reps")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--metrics",
        action="append",
        default=[],
        metavar="URL",
        help="a server's Prometheus endpoint for (s) and (m), with --bootstrap (repeatable)",
    )
    add_quick(
        parser,
        {
            "tables": 3,
            "buckets": 2,
            "written_tables": 1,
            "rows": 5,
            "reps": 2,
            "warmup": 1,
            "budget": 20.0,
        },
    )
    args = parse_args(parser, argv)
    if min(args.tables, args.buckets, args.rf, args.reps) < 1 or args.warmup < 0:
        parser.error("--tables, --buckets, --rf and --reps must be >= 1, --warmup >= 0")

    with bench_cluster(args) as (bootstrap, desc):
        # The description is a named record (ClusterDescription), not its JSON dict.
        urls = list(args.metrics) or [
            str(p.metrics_url) for p in (desc.processes if desc else ()) if p.metrics_url
        ]
        summary = asyncio.run(bounded(run(args, bootstrap, urls)))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_table(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
