"""A recorded cluster story for the console's screen tests (and ``bench/ui.py``).

Every state the screens are tested with comes out of a real history file: the snapshots
below are written by :class:`konsole.collect.history.recorder.Recorder` (events derived
as live) and read
back with :func:`konsole.ui.feed.state_at`, so a screen test exercises the same path
as time travel. The clock is fixed: nothing here reads the wall clock.

The story, one poll every 10 s from ``T0``:

- polls 1-6: coordinators 0 (active, :9123) and 1 (standby, :9124); tablet servers 1-3;
  databases ``shop`` (``orders`` log 4 buckets, ``customers`` PK 3 buckets, ``visits``
  partitioned by day) and ``metrics`` (``cpu`` log 2 buckets); offsets rise every poll;
- poll 7 (``T_STOPPED``): tablet server 3 is gone, its buckets led elsewhere or leaderless;
- poll 9 (``T_CREATED``): ``shop.returns`` (log, 2 buckets) is created;
- polls 11-12 (``T_UNREACHABLE``...): the cluster does not answer.
"""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from fluss_proto.client import TablePath
from fluss_proto.model import BucketView, ClusterView, PartitionInfo, ServerInfo, TableView
from fluss_proto.types import FrozenDict, TableInfo, parse_table_descriptor
from konsole.collect.cluster.metrics import ServerMetrics
from konsole.collect.profiles import Profile
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole, CoordinatorStatus
from konsole.ui.feed import state_at, with_history
from konsole.ui.state import ConsoleState, HistoryMode, HistoryStatus
from tests._testutil.judging import JudgingRecorder, showing

__all__ = [
    "NOW",
    "T0",
    "T_CREATED",
    "T_STOPPED",
    "T_UNREACHABLE",
    "empty_state",
    "fake_preview",
    "large_snapshot",
    "large_state",
    "record_story",
    "settle",
    "story_snapshot",
    "story_state",
    "wait_for_workers",
]

T0 = 1_780_000_000.0  # 2026-05-28T20:26:40Z
STEP = 10.0
T_STOPPED = T0 + 6 * STEP
T_CREATED = T0 + 8 * STEP
T_UNREACHABLE = T0 + 10 * STEP
#: The "now" of the live states: two seconds after the last poll.
NOW = T0 + 11 * STEP + 2
PROFILE = "demo"

_COLUMNS = {
    "BIGINT": {"type": "BIGINT"},
    "STRING": {"type": "STRING"},
    "DECIMAL": {"type": "DECIMAL", "precision": 10, "scale": 2},
    "TIMESTAMP_LTZ": {"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 3},
    "DATE": {"type": "DATE"},
}


def _info(
    name: str,
    table_id: int,
    buckets: int,
    columns: Sequence[tuple[str, str]],
    *,
    primary_key: Sequence[str] = (),
    partition_key: Sequence[str] = (),
    properties: Mapping[str, str] | None = None,
) -> TableInfo:
    path = TablePath.of(name)
    schema: dict[str, Any] = {
        "version": 1,
        "columns": [
            {"name": c, "data_type": dict(_COLUMNS[t]), "id": i} for i, (c, t) in enumerate(columns)
        ],
    }
    if primary_key:
        schema["primary_key"] = list(primary_key)
    doc = {
        "version": 1,
        "schema": schema,
        "partition_key": list(partition_key),
        "bucket_count": buckets,
        "properties": dict(properties or {"table.replication.factor": "3"}),
        "custom_properties": {},
        "comment": f"{path.table} of the scenario",
    }
    return TableInfo.from_descriptor(
        path.database,
        path.table,
        table_id=table_id,
        schema_id=1,
        descriptor=parse_table_descriptor(doc),
        created_ms=int(T0 * 1000) - 86_400_000 + table_id,
        modified_ms=int(T0 * 1000) - 86_400_000 + table_id,
    )


_TABLES = {
    "shop.orders": _info(
        "shop.orders",
        11,
        4,
        [
            ("order_id", "BIGINT"),
            ("customer", "STRING"),
            ("amount", "DECIMAL"),
            ("placed_at", "TIMESTAMP_LTZ"),
        ],
        properties={"table.replication.factor": "3", "table.log.ttl": "7d"},
    ),
    "shop.customers": _info(
        "shop.customers",
        12,
        3,
        [("id", "BIGINT"), ("name", "STRING"), ("city", "STRING")],
        primary_key=["id"],
        properties={"table.replication.factor": "3", "table.datalake.enabled": "false"},
    ),
    "shop.visits": _info(
        "shop.visits",
        13,
        2,
        [("visitor", "STRING"), ("page", "STRING"), ("day", "STRING")],
        partition_key=["day"],
    ),
    "metrics.cpu": _info("metrics.cpu", 21, 2, [("host", "STRING"), ("load", "BIGINT")]),
    "shop.returns": _info("shop.returns", 14, 2, [("order_id", "BIGINT"), ("reason", "STRING")]),
}
_RATES = {
    "shop.orders": 120,
    "shop.customers": 15,
    "shop.visits": 40,
    "metrics.cpu": 6,
    "shop.returns": 3,
}  # rows per second per bucket


def _table(name: str, seq: int, alive: Sequence[int]) -> TableView:
    info = _TABLES[name]
    groups: list[tuple[int | None, str | None]] = [(None, None)]
    parts: list[PartitionInfo] = []
    if info.partition_keys:
        groups = []
        for i, day in enumerate(("2026-05-27", "2026-05-28")):
            pid = info.table_id * 100 + i
            parts.append(PartitionInfo(pid, day, FrozenDict({"day": day})))
            groups.append((pid, day))
    buckets = []
    for g, (pid, pname) in enumerate(groups):
        for b in range(info.bucket_count):
            replicas = tuple((info.table_id + b + g + k) % 3 + 1 for k in range(3))
            leader: int | None = next((r for r in replicas if r in alive), None)
            offset = 1000 * (b + 1) + _RATES[name] * int(STEP) * seq
            buckets.append(
                BucketView(
                    table_id=info.table_id,
                    partition_id=pid,
                    partition_name=pname,
                    bucket_id=b,
                    leader_id=leader,
                    replica_ids=replicas,
                    leader_epoch=0 if leader == replicas[0] else 1,
                    latest_offset=offset if leader is not None else None,
                    earliest_offset=100 * b,
                )
            )
    return TableView(TablePath.of(name), info.table_id, info, tuple(parts), tuple(buckets))


def _metrics(seq: int, t: float, alive: Sequence[int]) -> tuple[ServerMetrics, ...]:
    out = []
    for sid in alive:
        out.append(
            ServerMetrics(
                url=f"http://127.0.0.1:{9250 + sid}/metrics",
                role="tablet",
                server_id=str(sid),
                host="127.0.0.1",
                scraped_at=t,
                duration_s=0.004,
                disk_usage_ratio=0.31 + 0.05 * sid,
                disk_write_locked=False,
                under_replicated=0 if len(alive) == 3 else 4,
                leader_count=5 + sid,
                replica_count=15,
                bytes_in_rate=51_200.0 * sid + 100 * seq,
                bytes_out_rate=20_480.0 * sid,
                messages_in_rate=180.0 * sid,
                heap_used=256e6 + 1e6 * seq,
                heap_max=1024e6,
            )
        )
    return tuple(out)


def _snapshot(seq: int, *, empty: bool = False) -> ClusterSnapshot:
    t = T0 + (seq - 1) * STEP
    coords = (
        CoordinatorStatus("127.0.0.1:9123", CoordinatorRole.ACTIVE, latency_s=0.002),
        CoordinatorStatus("127.0.0.1:9124", CoordinatorRole.STANDBY, latency_s=0.002),
    )
    if t >= T_UNREACHABLE:
        unreachable = tuple(
            CoordinatorStatus(c.address, CoordinatorRole.UNREACHABLE, "connection refused")
            for c in coords
        )
        return ClusterSnapshot.failed(
            seq=seq,
            taken_at=t,
            latency_s=5.0,
            error="cannot reach 127.0.0.1:9123: connection refused",
            consecutive_failures=int((t - T_UNREACHABLE) / STEP) + 1,
            coordinators=unreachable,
        )
    alive = (1, 2) if t >= T_STOPPED else (1, 2, 3)
    names = [] if empty else [n for n in _TABLES if n != "shop.returns" or t >= T_CREATED]
    tables = tuple(_table(n, seq, alive) for n in names)
    view = ClusterView(
        coordinator=ServerInfo(0, "coordinator", "127.0.0.1", 9123),
        tablet_servers=tuple(
            ServerInfo(i, "tablet", "127.0.0.1", 9200 + i, rack=f"rack-{i}") for i in alive
        ),
        databases=() if empty else ("metrics", "shop"),
        tables=tables,
        errors=(),
        round_trips=3,
        requests=12,
        started_at=t,
        duration_s=0.038,
        earliest_read=True,
    )
    return ClusterSnapshot.assemble(
        seq=seq,
        taken_at=t,
        latency_s=0.041,
        view=view,
        coordinators=coords,
        metrics=_metrics(seq, t, alive),
    )


def record_story(path: Path, *, polls: int = 12, empty: bool = False) -> Path:
    """Write the story's first ``polls`` polls into a new history file at ``path``."""
    recorder = JudgingRecorder(
        path, say=lambda _text: None, clock=lambda: T0, retention_every_s=1e12
    )
    recorder.open()
    try:
        for seq in range(1, polls + 1):
            recorder.record(_snapshot(seq, empty=empty))
    finally:
        recorder.close()
    return path


def story_state(
    path: Path, at: float, *, live: bool = True, now: float | None = None
) -> ConsoleState:
    """The console state at ``at`` read back from the history at ``path``.

    ``live`` makes it the live state (no ``as_of``), as the feed would publish it.
    """
    history = HistoryStatus(HistoryMode.RECORDING, path)
    found = with_history(
        path, lambda reader: (state_at(reader, at, name=PROFILE, history=history, now=now),)
    )
    assert found is not None, path
    state = found[0]
    assert state is not None, at
    if live:
        state = replace(state, as_of=None, now=at + 2 if now is None else now)
    return state


# =========================================================================== a large cluster


def large_snapshot(
    seq: int, *, tables: int = 200, buckets: int = 8, t0: float = T0
) -> ClusterSnapshot:
    """A healthy cluster of ``tables`` log tables with ``buckets`` buckets each (200 x 8 =
    the issue's 1,600 buckets), offsets rising every poll: for refresh timings."""
    t = t0 + (seq - 1) * STEP
    alive = (1, 2, 3)
    views = []
    for i in range(tables):
        name = f"db{i % 10}.table_{i:03d}"
        info = _info(name, 1000 + i, buckets, [("id", "BIGINT"), ("payload", "STRING")])
        views.append(
            TableView(
                TablePath.of(name),
                info.table_id,
                info,
                (),
                tuple(
                    BucketView(
                        table_id=info.table_id,
                        partition_id=None,
                        partition_name=None,
                        bucket_id=b,
                        leader_id=(i + b) % 3 + 1,
                        replica_ids=tuple((i + b + k) % 3 + 1 for k in range(3)),
                        leader_epoch=0,
                        latest_offset=10_000 + (i + 1) * (b + 1) * seq,
                        earliest_offset=0,
                    )
                    for b in range(buckets)
                ),
            )
        )
    view = ClusterView(
        coordinator=ServerInfo(0, "coordinator", "127.0.0.1", 9123),
        tablet_servers=tuple(ServerInfo(i, "tablet", "127.0.0.1", 9200 + i) for i in alive),
        databases=tuple(sorted({v.path.database for v in views})),
        tables=tuple(views),
        errors=(),
        round_trips=3,
        requests=12,
        started_at=t,
        duration_s=0.2,
        earliest_read=True,
    )
    return ClusterSnapshot.assemble(seq=seq, taken_at=t, latency_s=0.2, view=view)


def large_state(seq: int = 2, **kwargs: Any) -> ConsoleState:
    """A live state of :func:`large_snapshot` (poll ``seq`` and the one before it)."""
    last, previous = large_snapshot(seq, **kwargs), large_snapshot(seq - 1, **kwargs)
    state = ConsoleState(profile=PROFILE, now=last.taken_at + 2)
    return showing(state, last, last_ok=last, previous_ok=previous)


# =========================================================================== previews


def fake_preview(
    name: str = "shop.orders",
    rows: int = 20,
    *,
    first_offset: int = 0,
    tail: bool = False,
    columns: int | None = None,
) -> Any:
    """A :class:`fluss_proto.scan.Preview` of one of the story's tables, built with pyarrow
    (no cluster): ``rows`` rows over the table's buckets, log offsets from ``first_offset``.
    ``columns`` makes a wide log table of that many BIGINT columns instead."""
    from decimal import Decimal

    import pyarrow as pa

    from fluss_proto.scan import BucketScan, BucketStatus, Preview, ScanMethod, ScanReport

    if columns is not None:
        info = _info(name, 99, 1, [(f"c{i:03d}", "BIGINT") for i in range(columns)])
    else:
        info = _TABLES[name]
    arrays: dict[str, pa.Array] = {}
    fields = []
    for c in info.schema.columns:
        t = str(c.type).split(" ")[0]
        if t == "BIGINT":
            arrow, values = pa.int64(), [i * 7 for i in range(rows)]
        elif t.startswith("DECIMAL"):
            arrow = pa.decimal128(10, 2)
            values = [Decimal(f"{i}.{i % 100:02d}") + Decimal("0.01") for i in range(rows)]
        elif t.startswith("TIMESTAMP_LTZ"):
            arrow = pa.timestamp("ms")
            values = [int(T0 * 1000) + i * 1500 for i in range(rows)]
        else:
            arrow, values = pa.string(), [f"{c.name}-{i}" for i in range(rows)]
        if rows and c.name in ("customer", "city"):
            values[0] = None
        arrays[c.name] = pa.array(values, arrow)
        fields.append(pa.field(c.name, arrow).with_metadata({b"fluss.type": str(c.type).encode()}))
    log = tail or not info.is_pk_table
    buckets = max(1, info.bucket_count)
    if log:
        arrays["_offset"] = pa.array([first_offset + i // buckets for i in range(rows)], pa.int64())
        arrays["_change_type"] = pa.array(["+A"] * rows, pa.string())
        fields += [pa.field("_offset", pa.int64(), False), pa.field("_change_type", pa.string())]
    arrays["_bucket"] = pa.array([i % buckets for i in range(rows)], pa.int32())
    fields.append(pa.field("_bucket", pa.int32(), False))
    table = pa.Table.from_arrays(list(arrays.values()), schema=pa.schema(fields))
    method = (
        ScanMethod.FETCH_LOG_TAIL
        if tail
        else (ScanMethod.SCAN_KV if info.is_pk_table else ScanMethod.LIMIT_SCAN)
    )
    scans = tuple(
        BucketScan(
            partition_id=None,
            partition_name=None,
            bucket_id=b,
            leader_id=b % 3 + 1,
            method=method,
            status=BucketStatus.SCANNED if rows else BucketStatus.EMPTY,
            rows_read=len(range(b, rows, buckets)),
            rows_returned=len(range(b, rows, buckets)),
            requests=1,
            elapsed_s=0.01,
        )
        for b in range(buckets)
    )
    report = ScanReport(
        table_path=name,
        table_id=info.table_id,
        primary_key=info.is_pk_table,
        tail=tail,
        limit=max(rows, 1),
        buckets=scans,
        rows_returned=rows,
        rows_read=rows,
        limit_cut=False,
        elapsed_s=0.05,
        deadline_s=10.0,
        schema_ids=(1,),
        schema_id=1,
    )
    return Preview(table=table, report=report, info=info)


def empty_state(path: Path) -> ConsoleState:
    """A reachable cluster with no database yet (three polls recorded)."""
    record_story(path, polls=3, empty=True)
    return story_state(path, T0 + 2 * STEP)


def story_snapshot(seq: int) -> ClusterSnapshot:
    """Poll ``seq`` of the story (1-based), as the poller would have made it."""
    return _snapshot(seq)


async def settle(pilot: Any, predicate: Any, *, tries: int = 150) -> None:
    """Let the app run (bounded: ``tries`` x 20 ms) until ``predicate()`` holds, or fail."""
    for _ in range(tries):
        if predicate():
            return
        await pilot.pause(0.02)
    raise AssertionError("the app did not reach the expected state in time")


#: The feed's worker runs as long as the app: never waited for.
_ENDLESS = ("feed",)


async def wait_for_workers(pilot: Any, *, ignore: Collection[str] = (), tries: int = 250) -> None:
    """Wait until every worker (but the feed's and those of the groups in ``ignore``) has
    finished and the screen has handled what they posted, however long that takes on a
    loaded machine; bounded: ``tries`` looks 20 ms apart, then fail.

    The one wait of the pilot and snapshot tests: a fixed pause is either too short on a
    busy machine (a flaky test) or wasted time on an idle one.
    """
    skip = {*_ENDLESS, *ignore}
    busy: list[Any] = []
    quiet = 0
    for _ in range(tries):
        await pilot.pause()  # handle what is queued (a handler may start another worker)
        busy = [w for w in pilot.app.workers if w.group not in skip and not w.is_finished]
        quiet = 0 if busy else quiet + 1
        if quiet == 2:  # nothing ran, and nothing handled since started anything
            return
        if busy:
            await asyncio.sleep(0.02)
    raise AssertionError(f"workers still running: {[w.name for w in busy]}")


def screen_text(app: Any) -> str:
    """What the terminal shows, as plain text (from the app's own SVG screenshot)."""
    svg = app.export_screenshot()
    parts = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return html.unescape(" ".join(parts)).replace("\xa0", " ")


async def until(pilot: Any, what: str, predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / 0.1) + 1):
        if predicate():
            return
        if time.monotonic() > deadline:
            break
        await pilot.pause(0.1)
    raise AssertionError(f"{what}: not within {timeout:g}s; screen: {screen_text(pilot.app)}")


def unreachable_profile() -> Profile:
    """A profile of port 9 (discard) on loopback: nothing answers, so a poll fails fast and
    never hangs (the feed's tests without a cluster)."""
    return Profile(
        name="demo",
        source="profile",
        bootstrap=("127.0.0.1:9",),
        poll_interval=0.05,
        connect_timeout=0.5,
        request_timeout=0.5,
    )
