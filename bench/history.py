"""Benchmark the operating history: a month of 10 s polls of a 1,600-bucket cluster.

Usage::

    .venv/bin/python bench/history.py           # 30 days, every poll: 259,200 polls (~15 min)
    .venv/bin/python bench/history.py --days 2  # shorter, same shape
    .venv/bin/python bench/history.py --quick   # CI smoke: 3 hours, retention scaled down

The cluster: 200 tables (180 log tables x 8 buckets, 20 partitioned x 2 partitions x 4),
6 tablet servers and a coordinator, polled every 10 s. 20 hot tables take ~1,000 rows/s
each, 60 warm ones ~10 rows/s (a batch every 20 s, each pausing now and then), the
partitioned ones 50 rows/s,
the rest are idle; every table starts at an offset it reached before the recording began.
What happens: a tablet server stopped for ~30 min about every 3 days (its leaders move and
come back), a table created and one dropped each day, a partition rolled over each day per
partitioned table, a failed poll about once a day, a server's disk filling past the warning
level now and then.

Every one of the 259,200 polls is a real :class:`~konsole.model.snapshot.ClusterSnapshot` given
to the real :class:`konsole.collect.history.recorder.Recorder` on a simulated clock: its
events come from
:func:`konsole.model.events.advance`, its rows from
:func:`konsole.collect.history.rows.poll_record`, its write from :class:`store.HistoryWriter`, and
retention runs every 10 simulated minutes as the
recorder runs it, and once more at the end. The generator keeps every unchanged table's
view from the poll before (as a quiet cluster is) and rebuilds only moving offsets.

Times are wall clock and, where the machine is shared, this process's CPU time beside
them. Printed: the file size, the write cost per poll (the store's write, and the whole
recorder step: events, conversion, write, retention), the events query over the whole
range, cluster-as-of(T) at random past times, and the size a naive table with one row per
bucket per poll would take for the same kept polls: real offsets decoded from the file, for
a sample of the kept polls, written to a scratch SQLite file.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import konsole.collect.history.recorder as recorder_module  # noqa: E402
import konsole.model.poll as poll_module  # noqa: E402
from fluss_proto.client import TablePath  # noqa: E402
from fluss_proto.model import (  # noqa: E402
    BucketView,
    ClusterView,
    PartitionInfo,
    ServerInfo,
    TableView,
)
from fluss_proto.types import FrozenDict, TableInfo, parse_table_descriptor  # noqa: E402
from konsole.collect.cluster.metrics import ServerMetrics  # noqa: E402
from konsole.collect.history.recorder import Recorder  # noqa: E402
from konsole.collect.history.rows import snapshot_at  # noqa: E402
from konsole.collect.recording import Recording  # noqa: E402
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole, CoordinatorStatus  # noqa: E402
from store import HistoryWriter, RetentionPolicy, apply_retention, open_reader  # noqa: E402

DAY = 86_400.0
SERVERS = 6
POLL = 10.0
COORDINATORS = (CoordinatorStatus("10.0.0.1:9123", CoordinatorRole.ACTIVE),)
HOT, WARM, IDLE_RATE = 1000.0, 10.0, 0.0
DATABASES = ("db0", "db1", "db2", "db3", "db4", "db9")
#: Polls between two batches of a warm table's producer.
WARM_FLUSH = 2


def table_info(name: str, table_id: int, buckets: int, partitioned: bool) -> TableInfo:
    db, _, t = name.partition(".")
    doc = {
        "version": 1,
        "schema": {
            "version": 1,
            "columns": [
                {"name": "id", "data_type": {"type": "BIGINT"}, "id": 0},
                {"name": "v", "data_type": {"type": "STRING"}, "id": 1},
                {"name": "day", "data_type": {"type": "STRING"}, "id": 2},
            ],
        },
        "partition_key": ["day"] if partitioned else [],
        "bucket_count": buckets,
        "properties": {"table.replication.factor": "3"},
        "custom_properties": {},
    }
    return TableInfo.from_descriptor(
        db,
        t,
        table_id=table_id,
        schema_id=1,
        descriptor=parse_table_descriptor(doc),
        created_ms=0,
        modified_ms=0,
    )


@dataclass
class Group:
    """The buckets of one table or partition."""

    partition_id: int | None
    partition_name: str | None
    replicas: list[tuple[int, ...]]
    leaders: list[int]
    epochs: list[int]
    offsets: list[float]


@dataclass
class Table:
    table_id: int
    name: str
    info: TableInfo
    rate: float  # rows/s over the whole table
    buckets: int
    groups: list[Group] = field(default_factory=list)
    paused_until: float = 0.0
    #: The view of the last poll; None when something in it changed since.
    view: TableView | None = None

    @property
    def partitioned(self) -> bool:
        return self.groups[0].partition_id is not None if self.groups else False


class Cluster:
    """A simulated cluster that moves on by ``dt`` seconds per step."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.next_id = 1
        self.next_partition = 10_000
        self.tables: dict[int, Table] = {}
        self.down: int | None = None  # a tablet server that is stopped
        self.disk_full: int | None = None
        for i in range(180):
            rate = HOT if i < 20 else WARM if i < 80 else IDLE_RATE
            self.add_table(f"db{i % 5}.log_{i:03d}", 8, rate, partitioned=False)
        for i in range(20):
            self.add_table(f"db{i % 5}.part_{i:03d}", 4, 50.0, partitioned=True)
        self._servers: tuple[ServerInfo, ...] = ()
        self._servers_down: int | None = -1

    def add_table(
        self, name: str, buckets: int, rate: float, *, partitioned: bool, fresh: bool = False
    ) -> Table:
        tid = self.next_id
        self.next_id += 1
        t = Table(tid, name, table_info(name, tid, buckets, partitioned), rate, buckets)
        if partitioned:
            for day in ("d0", "d1"):
                self.add_partition(t, day, fresh=fresh)
        else:
            t.groups.append(self._group(t, None, None, fresh=fresh))
        self.tables[tid] = t
        return t

    def add_partition(self, t: Table, name: str, *, fresh: bool = True) -> None:
        pid = self.next_partition
        self.next_partition += 1
        t.groups.append(self._group(t, pid, name, fresh=fresh))
        if len(t.groups) > 2:
            t.groups.pop(0)
        t.view = None

    def _group(self, t: Table, pid: int | None, name: str | None, *, fresh: bool) -> Group:
        rng = self.rng
        replicas = []
        for _ in range(t.buckets):
            first = rng.randrange(1, SERVERS + 1)
            replicas.append(tuple((first + k - 1) % SERVERS + 1 for k in range(3)))
        # Tables that existed before the recording began have offsets of their own.
        top = 0 if fresh else 5e8 if t.rate else 1e6
        offsets = [float(int(rng.uniform(0, top))) for _ in range(t.buckets)]
        return Group(pid, name, replicas, [r[0] for r in replicas], [0] * t.buckets, offsets)

    def step(self, at: float, dt: float) -> None:
        rnd = self.rng.random
        tick = int(at // dt)
        for t in self.tables.values():
            if not t.rate or t.paused_until > at:
                continue
            if t.rate == WARM:  # a batch every 20 s (3 quiet polls would be a stall event)
                if (tick + t.table_id) % WARM_FLUSH:
                    continue
                dt_table = dt * WARM_FLUSH
            else:
                dt_table = dt
            per_bucket = t.rate * dt_table / (t.buckets * len(t.groups))
            for g in t.groups:
                offsets = g.offsets
                for i in range(len(offsets)):
                    offsets[i] += per_bucket * (0.5 + rnd())
            t.view = None

    def move_leaders(self, server: int, *, away: bool) -> None:
        for t in self.tables.values():
            for g in t.groups:
                for b, replicas in enumerate(g.replicas):
                    if away and g.leaders[b] == server:
                        g.leaders[b] = next(r for r in replicas if r != server)
                    elif not away and replicas[0] == server and g.leaders[b] != server:
                        g.leaders[b] = server
                    else:
                        continue
                    g.epochs[b] += 1
                    t.view = None

    def table_view(self, t: Table) -> TableView:
        if t.view is None:
            parts = tuple(
                PartitionInfo(
                    g.partition_id,
                    g.partition_name or "",
                    FrozenDict({"day": g.partition_name or ""}),
                )
                for g in t.groups
                if g.partition_id is not None
            )
            tid = t.table_id
            buckets = tuple(
                BucketView(
                    tid,
                    g.partition_id,
                    g.partition_name,
                    b,
                    g.leaders[b],
                    g.replicas[b],
                    g.epochs[b],
                    int(g.offsets[b]),
                )
                for g in t.groups
                for b in range(t.buckets)
            )
            t.view = TableView(TablePath.of(t.name), tid, t.info, parts, buckets)
        return t.view

    def view(self, at: float) -> ClusterView:
        if self._servers_down != self.down:
            self._servers = tuple(
                ServerInfo(i, "tablet", f"10.0.0.{i + 1}", 9123)
                for i in range(1, SERVERS + 1)
                if i != self.down
            )
            self._servers_down = self.down
        return ClusterView(
            coordinator=ServerInfo(0, "coordinator", "10.0.0.1", 9123),
            tablet_servers=self._servers,
            databases=DATABASES,
            tables=tuple(self.table_view(t) for t in self.tables.values()),
            errors=(),
            round_trips=1,
            requests=11,
            started_at=at,
            duration_s=0.02,
        )

    def metrics(self, at: float) -> tuple[ServerMetrics, ...]:
        rnd = self.rng.random
        out = [
            ServerMetrics(
                url=f"http://10.0.0.{i + 1}:9249/metrics",
                role="tablet",
                server_id=str(i),
                host=f"10.0.0.{i + 1}",
                scraped_at=at,
                duration_s=0.01,
                disk_usage_ratio=(0.91 if i == self.disk_full else 0.4) + rnd() * 0.01,
                disk_write_locked=False,
                under_replicated=0 if self.down is None else 50,
                under_min_isr=0,
                at_min_isr=0,
                isr_shrinks_rate=0.0,
                isr_expands_rate=0.0,
                leader_count=270,
                replica_count=800,
                bytes_in_rate=rnd() * 1e6,
                bytes_out_rate=rnd() * 1e6,
                messages_in_rate=rnd() * 4000,
                heap_used=rnd() * 1e9,
                heap_max=2e9,
            )
            for i in range(1, SERVERS + 1)
            if i != self.down
        ]
        out.append(
            ServerMetrics(
                url="http://10.0.0.1:9249/metrics",
                role="coordinator",
                server_id=None,
                host="10.0.0.1",
                scraped_at=at,
                duration_s=0.01,
                active_coordinator_count=1,
                active_tablet_server_count=SERVERS - (self.down is not None),
                offline_bucket_count=0,
                table_count=len(self.tables),
                bucket_count=1600,
                heap_used=rnd() * 1e9,
                heap_max=2e9,
            )
        )
        return tuple(out)

    def happen(self, at: float, step: float) -> bool:
        """Things that happen in ``[at, at + step)``; False when this poll fails."""
        rng = self.rng

        def chance(per_day: float) -> bool:
            return rng.random() < per_day * step / DAY

        if self.down is None and chance(1 / 3):
            self.down = rng.randrange(1, SERVERS + 1)
            self.move_leaders(self.down, away=True)
        elif self.down is not None and chance(48):  # back after ~30 min
            server, self.down = self.down, None
            self.move_leaders(server, away=False)
        if chance(1):
            self.add_table(f"db9.new_{self.next_id}", 8, 5.0, partitioned=False, fresh=True)
        if chance(1) and len(self.tables) > 200:
            victim = next(t for t in self.tables.values() if t.name.startswith("db9."))
            del self.tables[victim.table_id]
        for t in self.tables.values():
            if t.partitioned and chance(1):
                self.add_partition(t, f"d{int(at // DAY)}_{t.table_id}")
            elif t.rate == WARM and t.paused_until <= at and chance(1 / 3):
                t.paused_until = at + rng.uniform(600, 3600)  # a producer stops a while
        if self.disk_full is None and chance(1 / 2):
            self.disk_full = rng.randrange(1, SERVERS + 1)
        elif self.disk_full is not None and chance(12):
            self.disk_full = None
        return not chance(1)


class Timed:
    """Wall and CPU milliseconds of each call of ``fn``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.wall.append((time.perf_counter() - t0) * 1000)
            self.cpu.append((time.process_time() - c0) * 1000)


def naive_bytes_per_poll(path: Path, polls: list[int]) -> float:
    """Bytes per poll of ``naive(poll_id, table_id, partition_id, bucket_id, offset)``, one
    row per bucket per poll, for the given kept polls' real offsets (decoded from the
    history), written to a scratch file without an index (which favours naive)."""
    with open_reader(path) as reader:
        rows: list[list[tuple[int, int, int | None, int, int | None]]] = []
        for poll_id in polls:
            offsets = reader.offsets_at_poll(poll_id)
            assert offsets is not None
            values = iter(offsets.latest)
            rows.append(
                [
                    (poll_id, slot.table_id, slot.partition_id, b, next(values))
                    for slot in offsets.layout
                    for b in range(slot.buckets)
                ]
            )
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / "naive.sqlite"
        conn = sqlite3.connect(scratch)
        conn.execute(
            "CREATE TABLE naive (poll_id INTEGER, table_id INTEGER, partition_id INTEGER, "
            "bucket_id INTEGER, offset INTEGER)"
        )
        for poll_rows in rows:
            conn.executemany("INSERT INTO naive VALUES (?, ?, ?, ?, ?)", poll_rows)
        conn.commit()
        conn.close()
        return scratch.stat().st_size / len(polls)


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--days", type=float, default=30.0)
    ap.add_argument(
        "--quick", action="store_true", help="3 hours, retention 30 min / 90 min (CI smoke)"
    )
    ap.add_argument("--path", type=Path, default=None, help="keep the file here")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    days = 3 / 24 if args.quick else args.days
    policy = (
        RetentionPolicy(full_ms=1_800_000, minute_ms=5_400_000) if args.quick else RetentionPolicy()
    )
    rng = random.Random(args.seed)
    cluster = Cluster(rng)
    tmp = tempfile.TemporaryDirectory()
    path = args.path or Path(tmp.name) / "history.sqlite"
    for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        stale.unlink(missing_ok=True)
    end = 1_790_000_000.0  # fixed: results do not depend on today's date
    start = end - days * DAY
    now = start

    # The recorder's own steps, timed where it calls them.
    retention = Timed(apply_retention)
    recorder_module.apply_retention = retention  # type: ignore[assignment]
    # The judge's step (the session's, before the recorder writes what it is handed).
    events_step = Timed(poll_module.advance)
    poll_module.advance = events_step  # type: ignore[assignment]
    convert = Timed(recorder_module.poll_record)
    recorder_module.poll_record = convert  # type: ignore[assignment]
    # The generator allocates ~600 frozen dataclasses a poll; the set-up's objects live for
    # the whole run: keep them out of the collector's way (the times are the recorder's).
    gc.collect()
    gc.freeze()
    lines: list[str] = []
    recorder = Recorder(path, policy=policy, clock=lambda: now, say=lines.append)
    recorder.open()
    writer = recorder._writer
    assert isinstance(writer, HistoryWriter), lines
    store_write = Timed(writer.record)
    writer.record = store_write  # type: ignore[method-assign]
    step_wall: list[float] = []
    step_cpu: list[float] = []
    events = polls = failed = 0
    recording = Recording(recorder)  # stamps and judges each poll, then has it written
    wall = time.perf_counter()
    seq = 0
    while now < end:
        ok = cluster.happen(now, POLL)
        cluster.step(now, POLL)
        seq += 1
        if ok:
            snap = ClusterSnapshot.assemble(
                seq=seq,
                taken_at=now,
                latency_s=0.02,
                view=cluster.view(now),
                coordinators=COORDINATORS,
                metrics=cluster.metrics(now),
            )
        else:
            failed += 1
            snap = ClusterSnapshot.failed(
                seq=seq, taken_at=now, latency_s=5.0, error="timed out", coordinators=COORDINATORS
            )
        t0, c0 = time.perf_counter(), time.process_time()
        events += len(recording.take(snap).events)
        step_wall.append((time.perf_counter() - t0) * 1000)
        step_cpu.append((time.process_time() - c0) * 1000)
        polls += 1
        now += POLL
    now = end
    apply_retention(writer, policy, round(end * 1000))  # the last word, as at a clean stop
    writer.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    recorder.close()
    generate_s = time.perf_counter() - wall
    assert recorder.status.polls_missed == 0, lines

    size = path.stat().st_size
    with open_reader(path) as reader:
        kept_polls = reader.polls()
        kept = len(kept_polls)
        t0, c0 = time.perf_counter(), time.process_time()
        all_events = reader.events(round(start * 1000), round(end * 1000))
        events_ms = (time.perf_counter() - t0) * 1000
        events_cpu = (time.process_time() - c0) * 1000
        as_of_ms, as_of_cpu, store_ms = [], [], []
        for _ in range(10):
            when = rng.uniform(start + 600, end)
            t0 = time.perf_counter()
            reader.state_at(round(when * 1000))
            t1, c1 = time.perf_counter(), time.process_time()
            past = snapshot_at(reader, when)
            t2, c2 = time.perf_counter(), time.process_time()
            assert past is not None
            store_ms.append((t1 - t0) * 1000)
            as_of_ms.append((t2 - t1) * 1000)
            as_of_cpu.append((c2 - c1) * 1000)
        table = next(iter(cluster.tables.values()))
        database, _, name = table.name.partition(".")
        (span,) = reader.tables_named(database, name)
        t0, c0 = time.perf_counter(), time.process_time()
        series = reader.throughput(span.table_id, since=round((end - DAY) * 1000), step_ms=60_000)
        series_ms = (time.perf_counter() - t0) * 1000
        series_cpu = (time.process_time() - c0) * 1000
        conn = reader._conn
        by_table = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
        unused = conn.execute("SELECT sum(unused) FROM dbstat WHERE name = 'offsets'").fetchone()
        offsets_by_level = {
            f"level {level}": {"rows": n, "keys": keys, "avg_bytes": round(avg or 0)}
            for level, n, keys, avg in conn.execute(
                "SELECT p.level, count(*), sum(o.base_poll IS NULL), avg(length(o.latest)) "
                "FROM offsets o JOIN polls p ON p.id = o.poll_id GROUP BY p.level"
            )
        }
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        freelist = conn.execute("PRAGMA freelist_count").fetchone()[0]
    with_offsets = [p.id for p in kept_polls if p.ok]
    sample = with_offsets[:: max(1, len(with_offsets) // 100)]
    naive_poll = naive_bytes_per_poll(path, sample)
    naive_total = naive_poll * kept
    out = {
        "days": days,
        "polls_written": polls,
        "polls_failed": failed,
        "polls_kept": kept,
        "events_written": events,
        "events_kept": len(all_events),
        "file_bytes": size,
        "page_size": page_size,
        "free_pages": freelist,
        "offsets_table_bytes": by_table.get("offsets", 0),
        "offsets_unused_bytes": unused[0] or 0,
        "offsets_by_level": offsets_by_level,
        "bytes_by_table": dict(sorted(by_table.items(), key=lambda kv: -kv[1])[:8]),
        "write_ms_per_poll_median": statistics.median(store_write.wall),
        "write_ms_per_poll_p90": percentile(store_write.wall, 0.9),
        "write_ms_per_poll_max": max(store_write.wall),
        "write_cpu_ms_per_poll_median": statistics.median(store_write.cpu),
        "events_cpu_ms_per_poll_median": statistics.median(events_step.cpu),
        "convert_cpu_ms_per_poll_median": statistics.median(convert.cpu),
        "recorder_ms_per_poll_median": statistics.median(step_wall),
        "recorder_ms_per_poll_mean": statistics.fmean(step_wall),
        "recorder_cpu_ms_per_poll_mean": statistics.fmean(step_cpu),
        "retention_runs": len(retention.wall),
        "retention_ms_median": statistics.median(retention.wall) if retention.wall else None,
        "retention_ms_max": max(retention.wall) if retention.wall else None,
        "events_query_ms": events_ms,
        "events_query_cpu_ms": events_cpu,
        "as_of_first_ms": as_of_ms[0],
        "as_of_snapshot_cpu_ms_median": statistics.median(as_of_cpu),
        "as_of_store_ms_median": statistics.median(store_ms),
        "as_of_snapshot_ms_median": statistics.median(as_of_ms),
        "as_of_snapshot_ms_max": max(as_of_ms),
        "throughput_24h_per_minute_ms": series_ms,
        "throughput_cpu_ms": series_cpu,
        "throughput_points": len(series),
        "naive_sample_polls": len(sample),
        "naive_bytes_per_poll": naive_poll,
        "naive_bytes_for_kept_polls": naive_total,
        "ratio_file_to_naive": size / naive_total,
        "ratio_offsets_to_naive": by_table.get("offsets", 0) / naive_total,
        "generate_s": generate_s,
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        _print(out)
    tmp.cleanup()
    return out


def _print(o: dict[str, Any]) -> None:
    mb = 1 << 20
    print(f"history bench: {o['days']:g} days of 10 s polls, 1,600 buckets / 200 tables")
    print(
        f"  written: {o['polls_written']:,} polls, every one through the recorder "
        f"({o['polls_failed']} failed polls among them), {o['events_written']:,} events; "
        f"{o['generate_s']:.0f} s in all"
    )
    print(f"  kept after retention: {o['polls_kept']:,} polls, {o['events_kept']:,} events")
    print(
        f"  file size: {o['file_bytes'] / mb:.1f} MB ({o['page_size']} B pages, "
        f"{o['free_pages']} free; offsets table {o['offsets_table_bytes'] / mb:.1f} MB, "
        f"{o['offsets_unused_bytes'] / mb:.1f} MB of it unused page space)   goal < 500 MB"
    )
    print(
        "  largest tables and indexes: "
        + ", ".join(f"{k} {v / mb:.1f} MB" for k, v in o["bytes_by_table"].items())
    )
    print(
        "  offsets rows by level (0 full, 1 minute, 2 hour): "
        + "; ".join(
            f"{k}: {v['rows']:,} rows, {v['keys']:,} keys, {v['avg_bytes']} B avg"
            for k, v in o["offsets_by_level"].items()
        )
    )
    print(
        f"  store write per poll (goal < 5 ms): median {o['write_ms_per_poll_median']:.2f} ms "
        f"wall / {o['write_cpu_ms_per_poll_median']:.2f} ms CPU, p90 "
        f"{o['write_ms_per_poll_p90']:.2f} ms, max {o['write_ms_per_poll_max']:.0f} ms"
    )
    print(
        f"  whole recorder step per poll (events + rows + write + retention): median "
        f"{o['recorder_ms_per_poll_median']:.2f} ms, mean {o['recorder_ms_per_poll_mean']:.2f} ms"
        f" wall / {o['recorder_cpu_ms_per_poll_mean']:.2f} ms CPU; of it (median CPU) events "
        f"{o['events_cpu_ms_per_poll_median']:.2f} ms, snapshot -> rows "
        f"{o['convert_cpu_ms_per_poll_median']:.2f} ms"
    )
    if o["retention_ms_median"] is not None:
        print(
            f"  retention ({o['retention_runs']:,} runs, every 10 simulated minutes): median "
            f"{o['retention_ms_median']:.0f} ms, max {o['retention_ms_max']:.0f} ms"
        )
    print(
        f"  events over the whole range ({o['events_kept']:,}): {o['events_query_ms']:.1f} ms "
        f"wall / {o['events_query_cpu_ms']:.1f} ms CPU   goal < 100 ms"
    )
    print(
        f"  as-of(T) at 10 random past times: store rows median {o['as_of_store_ms_median']:.1f}"
        f" ms; as ClusterSnapshot median {o['as_of_snapshot_ms_median']:.1f} ms wall / "
        f"{o['as_of_snapshot_cpu_ms_median']:.1f} ms CPU, first (table infos not cached yet) "
        f"{o['as_of_first_ms']:.1f} ms, max {o['as_of_snapshot_ms_max']:.1f} ms   goal < 200 ms"
    )
    print(
        f"  throughput of one table, last 24 h per minute: {o['throughput_24h_per_minute_ms']:.0f}"
        f" ms wall / {o['throughput_cpu_ms']:.0f} ms CPU ({o['throughput_points']} points)"
    )
    print(
        f"  naive one row per bucket per poll (real offsets of {o['naive_sample_polls']} kept "
        f"polls): {o['naive_bytes_per_poll'] / 1024:.1f} KB/poll x {o['polls_kept']:,} kept "
        f"polls = {o['naive_bytes_for_kept_polls'] / mb:.0f} MB; ratio whole file / naive "
        f"{o['ratio_file_to_naive']:.3f}x, offsets / naive {o['ratio_offsets_to_naive']:.3f}x"
        "   aim <= 0.05x"
    )


if __name__ == "__main__":
    main()
