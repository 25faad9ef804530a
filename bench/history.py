"""Benchmark the operating history: a month of polls of a 1,600-bucket cluster.

Usage::

    .venv/bin/python bench/history.py                  # 30 days (a few minutes)
    .venv/bin/python bench/history.py --days 3 --json  # quicker, same shape

The cluster: 200 tables (180 log tables x 8 buckets, 20 partitioned x 2 partitions x 4),
6 tablet servers and a coordinator, polled every 10 s. 20 hot tables take ~1,000 rows/s
each, 60 warm ones ~10 rows/s, the rest are idle. Events: a tablet server restart about
every 3 days (server down/up, the leaders it held moving and coming back, one event per
moved leader), a table created and one dropped each day, a partition added each day per
partitioned table, and a steady trickle of warnings (~100 a day); the default run writes
about 270 events a day (printed).

Every poll is a real :class:`~konsole.snapshot.ClusterSnapshot`, converted by
:func:`konsole.history.poll_record` and written by :class:`store.HistoryWriter`; retention
runs every simulated hour, as the recorder runs it. Polls that retention would drop anyway
are not all generated (labelled in the output): the last ``--full-days`` are written at
every 10 s poll, older days of the minute band one poll per minute, days beyond it one poll
per hour. Write cost is measured on the full-rate polls.

Times are wall clock and, where the machine is shared, this process's CPU time beside
them. Printed: the file size, the write cost per poll (conversion and store separately), the
events query over the whole range, cluster-as-of(T) at random past times, and the size a
naive table with one row per bucket per poll would take for the same kept polls (measured
on a sample written to a scratch SQLite file), with the ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from fluss_proto.client import TablePath  # noqa: E402
from fluss_proto.model import (  # noqa: E402
    BucketView,
    ClusterView,
    PartitionInfo,
    ServerInfo,
    TableView,
)
from fluss_proto.types import FrozenDict, TableInfo, parse_table_descriptor  # noqa: E402
from konsole.history import poll_record, snapshot_at  # noqa: E402
from konsole.metrics import ServerMetrics  # noqa: E402
from konsole.snapshot import ClusterSnapshot, CoordinatorRole, CoordinatorStatus  # noqa: E402
from store import RetentionPolicy, apply_retention, open_reader, open_writer  # noqa: E402
from store.rows import EventRow  # noqa: E402

DAY = 86_400.0
SERVERS = 6
POLL = 10.0


@dataclass
class Table:
    table_id: int
    name: str
    info: TableInfo
    rate: float  # rows/s over the whole table
    partitions: list[tuple[int, str]]  # (partition id, name); empty: not partitioned
    buckets: int
    offsets: dict[tuple[int | None, int], float]
    replicas: dict[tuple[int | None, int], tuple[int, ...]]


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


class Cluster:
    """A simulated cluster that moves on by ``dt`` seconds per step."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.next_id = 1
        self.next_partition = 10_000
        self.tables: dict[int, Table] = {}
        self.down: int | None = None  # a tablet server that is stopped
        self.leaders: dict[tuple[int, int | None, int], int] = {}
        self.epochs: dict[tuple[int, int | None, int], int] = {}
        for i in range(180):
            rate = 1000.0 if i < 20 else 10.0 if i < 80 else 0.0
            self.add_table(f"db{i % 5}.log_{i:03d}", 8, rate, partitioned=False)
        for i in range(20):
            self.add_table(f"db{i % 5}.part_{i:03d}", 4, 50.0, partitioned=True)

    def add_table(self, name: str, buckets: int, rate: float, *, partitioned: bool) -> Table:
        tid = self.next_id
        self.next_id += 1
        t = Table(tid, name, table_info(name, tid, buckets, partitioned), rate, [], buckets, {}, {})
        if partitioned:
            for day in ("d0", "d1"):
                self.add_partition(t, day)
        else:
            self._place(t, None)
        self.tables[tid] = t
        return t

    def add_partition(self, t: Table, name: str) -> None:
        pid = self.next_partition
        self.next_partition += 1
        t.partitions.append((pid, name))
        if len(t.partitions) > 2:
            old, _ = t.partitions.pop(0)
            for b in range(t.buckets):
                t.offsets.pop((old, b), None)
                t.replicas.pop((old, b), None)
                self.leaders.pop((t.table_id, old, b), None)
        self._place(t, pid)

    def _place(self, t: Table, pid: int | None) -> None:
        for b in range(t.buckets):
            first = self.rng.randrange(1, SERVERS + 1)
            replicas = tuple((first + k - 1) % SERVERS + 1 for k in range(3))
            t.replicas[(pid, b)] = replicas
            t.offsets[(pid, b)] = 0.0
            self.leaders[(t.table_id, pid, b)] = replicas[0]
            self.epochs[(t.table_id, pid, b)] = 0

    def step(self, dt: float) -> None:
        rng = self.rng
        for t in self.tables.values():
            if not t.rate:
                continue
            per_bucket = t.rate * dt / len(t.offsets)
            for key in t.offsets:
                t.offsets[key] += per_bucket * rng.uniform(0.5, 1.5)

    def move_leaders(self, server: int, *, away: bool) -> list[str]:
        moved = []
        for t in self.tables.values():
            for (pid, b), replicas in t.replicas.items():
                key = (t.table_id, pid, b)
                if away and self.leaders[key] == server:
                    self.leaders[key] = next(r for r in replicas if r != server)
                elif not away and replicas[0] == server:
                    self.leaders[key] = server
                else:
                    continue
                self.epochs[key] += 1
                moved.append(f"table {t.name}#{b}")
        return moved

    def view(self, at: float) -> ClusterView:
        tables = []
        for t in self.tables.values():
            parts = tuple(
                PartitionInfo(pid, name, FrozenDict({"day": name})) for pid, name in t.partitions
            )
            names = dict(t.partitions)
            buckets = tuple(
                BucketView(
                    table_id=t.table_id,
                    partition_id=pid,
                    partition_name=names.get(pid) if pid is not None else None,
                    bucket_id=b,
                    leader_id=self.leaders[(t.table_id, pid, b)],
                    replica_ids=t.replicas[(pid, b)],
                    leader_epoch=self.epochs[(t.table_id, pid, b)],
                    latest_offset=int(t.offsets[(pid, b)]),
                )
                for (pid, b) in t.offsets
            )
            tables.append(TableView(TablePath.of(t.name), t.table_id, t.info, parts, buckets))
        return ClusterView(
            coordinator=ServerInfo(0, "coordinator", "10.0.0.1", 9123),
            tablet_servers=tuple(
                ServerInfo(i, "tablet", f"10.0.0.{i + 1}", 9123)
                for i in range(1, SERVERS + 1)
                if i != self.down
            ),
            databases=tuple(f"db{i}" for i in range(5)),
            tables=tuple(tables),
            errors=(),
            round_trips=1,
            requests=11,
            started_at=at,
            duration_s=0.02,
        )

    def metrics(self, at: float) -> tuple[ServerMetrics, ...]:
        rng = self.rng
        out = [
            ServerMetrics(
                url=f"http://10.0.0.{i + 1}:9249/metrics",
                role="tablet",
                server_id=str(i),
                host=f"10.0.0.{i + 1}",
                scraped_at=at,
                duration_s=0.01,
                disk_usage_ratio=0.4 + rng.random() * 0.01,
                disk_write_locked=False,
                under_replicated=0 if self.down is None else 50,
                under_min_isr=0,
                at_min_isr=0,
                isr_shrinks_rate=0.0,
                isr_expands_rate=0.0,
                leader_count=270,
                replica_count=800,
                bytes_in_rate=rng.random() * 1e6,
                bytes_out_rate=rng.random() * 1e6,
                messages_in_rate=rng.random() * 4000,
                heap_used=rng.random() * 1e9,
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
                heap_used=rng.random() * 1e9,
                heap_max=2e9,
            )
        )
        return tuple(out)


def ev(at: float, kind: str, severity: str, subject: str, message: str) -> EventRow:
    return EventRow(round(at * 1000), kind, severity, subject, message)


def happenings(cluster: Cluster, at: float, step: float, rng: random.Random) -> list[EventRow]:
    """Things that happen in ``[at, at + step)``, at about the rates in the module docs."""
    events: list[EventRow] = []

    def chance(per_day: float) -> bool:
        return rng.random() < per_day * step / DAY

    if cluster.down is None and chance(1 / 3):
        server = rng.randrange(1, SERVERS + 1)
        cluster.down = server
        events.append(ev(at, "server_down", "critical", f"tablet-server {server}", "gone"))
        for subject in cluster.move_leaders(server, away=True):
            events.append(ev(at, "leader_changed", "warning", subject, f"leader left {server}"))
    elif cluster.down is not None and chance(48):  # back after ~30 min
        server, cluster.down = cluster.down, None
        events.append(ev(at, "server_up", "info", f"tablet-server {server}", "back"))
        for subject in cluster.move_leaders(server, away=False):
            events.append(ev(at, "leader_changed", "info", subject, f"leader back on {server}"))
    if chance(1):
        t = cluster.add_table(f"db9.new_{cluster.next_id}", 8, 5.0, partitioned=False)
        events.append(ev(at, "table_created", "info", f"table {t.name}", "created"))
    if chance(1) and len(cluster.tables) > 200:
        victim = next(t for t in cluster.tables.values() if t.name.startswith("db9."))
        del cluster.tables[victim.table_id]
        events.append(ev(at, "table_dropped", "info", f"table {victim.name}", "dropped"))
    for t in list(cluster.tables.values()):
        if t.partitions and chance(1):
            cluster.add_partition(t, f"d{int(at // DAY)}_{t.table_id}")
            events.append(ev(at, "partition_created", "info", f"table {t.name}", "partition"))
    if chance(100):
        events.append(ev(at, "request_errors", "warning", "tablet-server 2", "errors/s above 0"))
    return events


def naive_bytes_per_poll(buckets: int, polls: int = 100) -> float:
    """Bytes per poll of ``naive(poll_id, table_id, partition_id, bucket_id, offset)`` with
    one row per bucket per poll, measured on a scratch file (no index, favouring naive)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "naive.sqlite"
        conn = sqlite3.connect(path)
        conn.execute(
            "CREATE TABLE naive (poll_id INTEGER, table_id INTEGER, partition_id INTEGER, "
            "bucket_id INTEGER, offset INTEGER)"
        )
        rng = random.Random(1)
        for p in range(polls):
            conn.executemany(
                "INSERT INTO naive VALUES (?, ?, ?, ?, ?)",
                [
                    (p, 1 + i // 8, None, i % 8, 10_000_000 + p * 1000 + rng.randrange(1000))
                    for i in range(buckets)
                ],
            )
        conn.commit()
        conn.close()
        return path.stat().st_size / polls


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--days", type=float, default=30.0)
    ap.add_argument("--full-days", type=float, default=1.0, help="trailing days at every poll")
    ap.add_argument("--path", type=Path, default=None, help="keep the file here")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    cluster = Cluster(rng)
    policy = RetentionPolicy()
    tmp = tempfile.TemporaryDirectory()
    path = args.path or Path(tmp.name) / "history.sqlite"
    if path.exists():
        path.unlink()
    end = 1_790_000_000.0  # fixed: results do not depend on today's date
    start = end - args.days * DAY
    full_from = end - args.full_days * DAY
    minute_from = end - policy.minute_ms / 1000
    convert_ms: list[float] = []
    convert_cpu: list[float] = []
    write_cpu: list[float] = []
    write_ms: list[float] = []
    retention_ms: list[float] = []
    polls = events = 0
    seq = 0
    at = start
    next_retention = start + 3600
    wall = time.perf_counter()
    with open_writer(path) as writer:
        while at < end:
            step = POLL if at >= full_from else 60.0 if at >= minute_from else 3600.0
            new_events = happenings(cluster, at, step, rng)
            cluster.step(step)
            seq += 1
            snap = ClusterSnapshot.assemble(
                seq=seq,
                taken_at=at,
                latency_s=0.02,
                view=cluster.view(at),
                coordinators=(CoordinatorStatus("10.0.0.1:9123", CoordinatorRole.ACTIVE),),
                metrics=cluster.metrics(at),
            )
            t0, c0 = time.perf_counter(), time.process_time()
            record = poll_record(snap, new_events)
            t1, c1 = time.perf_counter(), time.process_time()
            writer.record(record)
            t2, c2 = time.perf_counter(), time.process_time()
            if step == POLL:
                convert_ms.append((t1 - t0) * 1000)
                write_ms.append((t2 - t1) * 1000)
                convert_cpu.append((c1 - c0) * 1000)
                write_cpu.append((c2 - c1) * 1000)
            polls += 1
            events += len(new_events)
            at += step
            if at >= next_retention:
                t0 = time.perf_counter()
                apply_retention(writer, policy, round(at * 1000))
                retention_ms.append((time.perf_counter() - t0) * 1000)
                next_retention += 3600
        apply_retention(writer, policy, round(end * 1000))
        writer.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    generate_s = time.perf_counter() - wall

    size = path.stat().st_size
    with open_reader(path) as reader:
        kept = len(reader.polls())
        t0, c0 = time.perf_counter(), time.process_time()
        all_events = reader.events(round(start * 1000), round(end * 1000))
        events_ms = (time.perf_counter() - t0) * 1000
        events_cpu = (time.process_time() - c0) * 1000
        as_of_ms, as_of_cpu, store_ms = [], [], []
        for _ in range(10):
            when = rng.uniform(start + 3600, end)
            t0 = time.perf_counter()
            reader.state_at(round(when * 1000))
            t1, c1 = time.perf_counter(), time.process_time()
            past = snapshot_at(reader, when)
            t2, c2 = time.perf_counter(), time.process_time()
            assert past is not None and past.snapshot.view is not None
            store_ms.append((t1 - t0) * 1000)
            as_of_ms.append((t2 - t1) * 1000)
            as_of_cpu.append((c2 - c1) * 1000)
        table = next(iter(cluster.tables.values()))
        (span,) = reader.tables_named(*table.name.split("."))
        t0, c0 = time.perf_counter(), time.process_time()
        series = reader.throughput(span.table_id, since=round((end - DAY) * 1000), step_ms=60_000)
        series_ms = (time.perf_counter() - t0) * 1000
        series_cpu = (time.process_time() - c0) * 1000
        offsets_bytes = dict(
            reader._conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
        )
    naive_poll = naive_bytes_per_poll(1600)
    naive_total = naive_poll * kept
    out = {
        "days": args.days,
        "full_rate_days": args.full_days,
        "polls_written": polls,
        "polls_kept": kept,
        "events_written": events,
        "events_kept": len(all_events),
        "file_bytes": size,
        "offsets_table_bytes": offsets_bytes.get("offsets", 0),
        "bytes_by_table": dict(sorted(offsets_bytes.items(), key=lambda kv: -kv[1])[:8]),
        "write_ms_per_poll_median": statistics.median(write_ms),
        "write_ms_per_poll_p90": percentile(write_ms, 0.9),
        "convert_ms_per_poll_median": statistics.median(convert_ms),
        "write_cpu_ms_per_poll_median": statistics.median(write_cpu),
        "convert_cpu_ms_per_poll_median": statistics.median(convert_cpu),
        "full_rate_polls": len(write_ms),
        "retention_ms_median": statistics.median(retention_ms) if retention_ms else None,
        "retention_ms_max": max(retention_ms) if retention_ms else None,
        "events_query_ms": events_ms,
        "events_query_cpu_ms": events_cpu,
        "as_of_first_ms": as_of_ms[0],
        "as_of_snapshot_cpu_ms_median": statistics.median(as_of_cpu),
        "throughput_cpu_ms": series_cpu,
        "as_of_store_ms_median": statistics.median(store_ms),
        "as_of_snapshot_ms_median": statistics.median(as_of_ms),
        "as_of_snapshot_ms_max": max(as_of_ms),
        "throughput_24h_per_minute_ms": series_ms,
        "throughput_points": len(series),
        "naive_bytes_per_poll": naive_poll,
        "naive_bytes_for_kept_polls": naive_total,
        "ratio_file_to_naive": size / naive_total,
        "ratio_offsets_to_naive": offsets_bytes.get("offsets", 0) / naive_total,
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
        f"  written: {o['polls_written']:,} polls ({o['full_rate_days']:g} trailing days at "
        f"every poll, older ones sampled per minute / per hour as retention would keep them),"
        f" {o['events_written']:,} events; generated in {o['generate_s']:.0f} s"
    )
    print(f"  kept after retention: {o['polls_kept']:,} polls, {o['events_kept']:,} events")
    print(
        f"  file size: {o['file_bytes'] / mb:.1f} MB (offsets table "
        f"{o['offsets_table_bytes'] / mb:.1f} MB)   goal < 500 MB"
    )
    print(
        "  largest tables and indexes: "
        + ", ".join(f"{k} {v / mb:.1f} MB" for k, v in o["bytes_by_table"].items())
    )
    print(
        f"  per poll over {o['full_rate_polls']:,} full-rate polls (median; goal < 5 ms): "
        f"store write {o['write_ms_per_poll_median']:.2f} ms wall / "
        f"{o['write_cpu_ms_per_poll_median']:.2f} ms CPU (p90 wall "
        f"{o['write_ms_per_poll_p90']:.2f} ms); snapshot -> rows "
        f"{o['convert_ms_per_poll_median']:.2f} ms wall / "
        f"{o['convert_cpu_ms_per_poll_median']:.2f} ms CPU"
    )
    if o["retention_ms_median"] is not None:
        print(
            f"  retention (hourly): median {o['retention_ms_median']:.0f} ms, "
            f"max {o['retention_ms_max']:.0f} ms"
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
        f"  naive one row per bucket per poll: {o['naive_bytes_per_poll'] / 1024:.1f} KB/poll x "
        f"{o['polls_kept']:,} kept polls = {o['naive_bytes_for_kept_polls'] / mb:.0f} MB; "
        f"ratio whole file / naive {o['ratio_file_to_naive']:.3f}x, offsets / naive "
        f"{o['ratio_offsets_to_naive']:.3f}x   aim <= 0.05x"
    )


if __name__ == "__main__":
    main()
