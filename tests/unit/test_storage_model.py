"""The storage model: carrying observed times, derived figures, the stall and staleness
judgement shared by health, check and the events, the history body, the poll's bounds."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from konsole.collect.cluster.poller import Poller, PollerConfig
from konsole.collect.cluster.storage import StorageCursor, poll_storage
from konsole.collect.history.rows import poll_record, snapshot_at
from konsole.collect.history.storage_rows import pack_storage, unpack_storage
from konsole.model.check import measure
from konsole.model.events import EventConfig, EventKind, EventState, advance
from konsole.model.health import HealthRules
from konsole.model.placement import placement
from konsole.model.storage import (
    BucketStorage,
    StorageCapabilities,
    StoragePart,
    TableStorage,
    carry,
    kv_age,
    lake_lag,
    server_load,
    summaries,
    tiering_stalled,
    untiered,
)
from konsole.model.storage_report import storage_dict
from store import open_reader, open_writer
from tests._testutil.builders import T0, snap, table, tm, view
from tests._testutil.judging import health_of, judged, placement_of
from tests._testutil.poller import Fakes

CAPS = StorageCapabilities(remote_manifests=True, kv_snapshots=True, table_stats=True)
V = view(tables=[table("db.t", 1, [(0, (0, 1), 5), (1, (1, 0), 5)])])
RULES = HealthRules(tiering_stall_s=60.0, kv_snapshot_stale_s=60.0)


def bucket(t: float, log_end: int, remote: int | None, *, b: int = 0, **kw: Any) -> BucketStorage:
    """A reading as the collector stamps it: every value first seen at ``t``."""
    return BucketStorage(
        table_id=1,
        partition_id=None,
        partition_name=None,
        bucket_id=b,
        log_end=log_end,
        remote_end=remote,
        remote_since=t if remote is not None else None,
        log_end_at_remote=log_end if remote is not None else None,
        **kw,
    )


def part(t: float, *buckets: BucketStorage, caps: StorageCapabilities = CAPS) -> StoragePart:
    return StoragePart(t, 0.01, caps, (TableStorage(1, "db.t", False, False),), buckets)


def chain(*parts: StoragePart) -> StoragePart:
    out: StoragePart | None = None
    for p in parts:
        out = carry(out, p)
    assert out is not None
    return out


def test_a_value_that_stands_still_keeps_its_first_sighting() -> None:
    p = chain(part(0, bucket(0, 100, 50)), part(30, bucket(30, 180, 50)))
    [b] = p.buckets
    assert (b.remote_since, b.log_end_at_remote, b.remote_changed) == (0, 100, False)
    assert untiered(b) == 130
    assert tiering_stalled(b, 30, 20) and not tiering_stalled(b, 30, 40)


def test_a_value_that_moves_starts_again_and_says_it_moved() -> None:
    p = chain(part(0, bucket(0, 100, 50)), part(30, bucket(30, 180, 120)))
    [b] = p.buckets
    assert (b.remote_since, b.log_end_at_remote, b.remote_changed) == (30, 180, True)
    assert not tiering_stalled(b, 30, 0)


def test_no_stall_without_growth_or_before_any_tiering() -> None:
    quiet = chain(part(0, bucket(0, 100, 50)), part(300, bucket(300, 100, 50)))
    assert not tiering_stalled(quiet.buckets[0], 300, 60)  # the log did not grow
    never = chain(part(0, bucket(0, 10, 0)), part(300, bucket(300, 40, 0)))
    assert not tiering_stalled(never.buckets[0], 300, 60)  # nothing was ever tiered


def test_a_failed_read_keeps_the_last_reading_and_its_time() -> None:
    p = chain(part(0, bucket(0, 100, 50)), part(30, bucket(30, 150, None)))
    [b] = p.buckets
    assert (b.remote_end, b.remote_since, b.log_end_at_remote) == (50, 0, 100)


def test_unknown_is_never_zero() -> None:
    b = BucketStorage(1, None, None, 0)
    assert untiered(b) is None and kv_age(b, 10) is None and lake_lag(b) is None
    [row] = summaries(part(0, b), 0, stall_after_s=1, kv_stale_after_s=1)
    assert row.untiered is None and row.row_count is None
    # one unknown bucket makes the table's sum unknown
    [row] = summaries(part(0, b, bucket(0, 5, 2, b=1)), 0, stall_after_s=1, kv_stale_after_s=1)
    assert row.untiered is None


def test_kv_staleness_needs_writes_since_the_snapshot() -> None:
    def kv(t: float, end: int, snap_id: int, offset: int) -> BucketStorage:
        return bucket(
            t,
            end,
            None,
            kv_snapshot_id=snap_id,
            kv_log_offset=offset,
            kv_since=t,
            log_end_at_kv=end,
        )

    tables = (TableStorage(1, "db.t", True, False),)
    p1 = replace(part(0, kv(0, 10, 3, 10)), tables=tables)
    p2 = replace(part(120, kv(120, 30, 3, 10)), tables=tables)
    [row] = summaries(chain(p1, p2), 120, stall_after_s=60, kv_stale_after_s=60)
    assert (row.kv_age_s, row.stale_kv_buckets) == (120, 1)
    idle = replace(part(120, kv(120, 10, 3, 10)), tables=tables)
    [row] = summaries(chain(p1, idle), 120, stall_after_s=60, kv_stale_after_s=60)
    assert row.stale_kv_buckets == 0


def test_stall_events_health_and_check_agree() -> None:
    config = EventConfig(rules=RULES)
    s1 = snap(V, seq=1, t=0).with_storage(part(0, bucket(0, 100, 50)))
    s2 = snap(V, seq=2, t=100).with_storage(chain(s1.storage, part(100, bucket(100, 200, 50))))  # type: ignore[arg-type]
    s3 = snap(V, seq=3, t=105).with_storage(s2.storage)  # no new storage poll: nothing new
    s4 = snap(V, seq=4, t=130).with_storage(chain(s2.storage, part(130, bucket(130, 210, 190))))  # type: ignore[arg-type]
    state = EventState()
    kinds = []
    for s in (s1, s2, s3, s4):
        events, state = advance(state, s, config=config)
        kinds.append([e.kind for e in events if e.kind.value.startswith("tiering")])
    assert kinds == [[], [EventKind.TIERING_STALLED], [], [EventKind.TIERING_RESUMED]]
    health = health_of(s2, RULES)
    [finding] = [f for f in health.findings if f.rule == "tiering_stalled"]
    assert finding.subject == "table db.t" and health.status.name == "YELLOW"
    m = measure(judged(s2, RULES), rules=RULES)
    assert m["tiering_stalled_tables"].value == 1 and m["untiered_offsets"].value == 150
    assert not [f for f in health_of(s4, RULES).findings if f.rule == "tiering_stalled"]


def test_check_measures_are_unknown_without_a_storage_look_or_the_api() -> None:
    m = measure(judged(snap(V), RULES), rules=RULES)
    assert m["tiering_stalled_tables"].value is None and m["untiered_offsets"].value is None
    old = snap(V).with_storage(
        part(0, bucket(0, 5, None), caps=StorageCapabilities(kv_snapshots=True))
    )
    m = measure(judged(old, RULES), rules=RULES)
    assert m["tiering_stalled_tables"].value is None
    assert "ListRemoteLogManifests" in (m["tiering_stalled_tables"].why_unknown or "")
    # one look with nothing seen before it: a stall cannot be told yet (unknown, not 0)
    first = measure(judged(snap(V).with_storage(part(0, bucket(0, 100, 50))), RULES), rules=RULES)
    assert first["tiering_stalled_tables"].value is None
    assert first["untiered_offsets"].value == 50


def test_history_body_round_trips_and_a_bad_body_is_none() -> None:
    p = chain(part(0, bucket(0, 100, 50)), part(30, bucket(30, 180, 120, row_count=7)))
    p = replace(p, tables=(TableStorage(1, "db.t", True, False, {"table.log.ttl": "2 h"}),))
    back = unpack_storage(pack_storage(p))
    assert back == p
    assert unpack_storage(b"not zlib") is None and unpack_storage(None) is None


def test_server_load_counts_placement() -> None:
    loads = {s.server_id: s for s in server_load(V, placement=placement(V))}
    assert (loads[0].replicas, loads[0].leaders, loads[1].replicas, loads[1].leaders) == (
        2,
        1,
        2,
        1,
    )
    assert loads[0].bytes_held is None


def test_server_load_takes_bytes_from_each_servers_own_scrape() -> None:
    metrics = (
        tm(0, local_size=1000, remote_log_size=200),
        # a coordinator's figures are not a tablet server's
        replace(tm(1, local_size=5, remote_log_size=5), role="coordinator"),
    )
    loads = {s.server_id: s for s in server_load(V, metrics, placement=placement(V))}
    assert (loads[0].bytes_held, loads[0].remote_log_bytes) == (1000, 200)
    # server 1 was not scraped (or does not export them): unknown, never 0
    assert (loads[1].bytes_held, loads[1].remote_log_bytes) == (None, None)
    assert loads[0].as_dict()["remote_log_bytes"] == 200
    report = storage_dict(None, V, placement(V), RULES, metrics=metrics)
    held = {s["server"]: (s["bytes_held"], s["remote_log_bytes"]) for s in report["servers"]}
    assert (held[0], held[1]) == ((1000, 200), (None, None))


def test_server_bytes_are_recorded_and_come_back_as_of(tmp_path: Path) -> None:
    m = tm(0, local_size=1000, remote_log_size=200)
    with open_writer(tmp_path / "h.sqlite") as w:
        w.record(poll_record(snap(V, t=T0, metrics=[m]), ()))
    with open_reader(tmp_path / "h.sqlite") as r:
        past = snapshot_at(r, T0)
    assert past is not None
    report = storage_dict(
        None, past.snapshot.view, placement_of(past.snapshot), RULES, metrics=past.snapshot.metrics
    )
    held = {s["server"]: (s["bytes_held"], s["remote_log_bytes"]) for s in report["servers"]}
    assert held[0] == (1000, 200)


def test_report_lists_the_most_behind_first() -> None:
    tables = (TableStorage(1, "db.a", False, False), TableStorage(2, "db.b", False, False))
    b2 = replace(bucket(0, 500, 10), table_id=2)
    stored = replace(part(0, bucket(0, 20, 10), b2), tables=tables)
    report = storage_dict(stored, V, placement(V), RULES)
    assert [t["table"] for t in report["tables"]] == ["db.b", "db.a"]
    assert report["tables"][0]["bucket_detail"][0]["untiered_offsets"] == 490


def test_summaries_of_many_tables_equal_each_table_alone() -> None:
    """The buckets are grouped in one pass (not looked up per table): each table's row is
    what a part holding that table alone gives, whatever the order of the buckets."""
    tables = tuple(TableStorage(i, f"db.t{i}", i % 2 == 0, False) for i in range(1, 6))
    buckets = tuple(
        replace(bucket(0, 100 * i + b, 10 * i if b else None, b=b), table_id=i)
        for b in range(3)
        for i in range(1, 6)  # interleaved: t1 b0, t2 b0, ..., t1 b1, ...
    )
    whole = replace(part(0, *buckets), tables=tables)
    rows = {r.name: r for r in summaries(whole, 90, stall_after_s=60, kv_stale_after_s=60)}
    for t in tables:
        alone = replace(part(0, *(b for b in buckets if b.table_id == t.table_id)), tables=(t,))
        assert [rows[t.name]] == summaries(alone, 90, stall_after_s=60, kv_stale_after_s=60)
    # a table with no bucket read has no figures (unknown, not zero)
    empty = replace(whole, tables=(*tables, TableStorage(9, "db.none", False, False)))
    none = next(
        r
        for r in summaries(empty, 90, stall_after_s=60, kv_stale_after_s=60)
        if r.name == "db.none"
    )
    assert (none.buckets, none.untiered, none.row_count) == (0, None, None)


class NoCalls:
    """A client of a server that advertises none of the storage APIs: any request fails."""

    class features:
        list_remote_log_manifests = kv_snapshots = table_stats = lake_snapshot = False

    async def call(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a request was sent")

    async def call_many(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a request was sent")


async def test_nothing_is_sent_that_the_server_does_not_advertise() -> None:
    v = view(tables=[table("db.t", 1, [(0, (0,), 5)])])
    p = await poll_storage(NoCalls(), v, now=1.0)
    assert p.requests == 0 and not p.errors
    [b] = p.buckets
    assert b.log_end == 5 and b.remote_end is None and b.kv_snapshot_id is None


async def test_the_request_bound_defers_tables_in_turn() -> None:
    class Remote(NoCalls):
        class features:
            list_remote_log_manifests = True
            kv_snapshots = table_stats = lake_snapshot = False

        async def call_many(self, items: Any, **kwargs: Any) -> Any:
            return [RuntimeError("no such table here") for _ in items]

    v = view(tables=[table(f"db.t{i}", 1, [(0, (0,), 5)]) for i in range(5)])
    cursor = StorageCursor()
    first = await poll_storage(Remote(), v, now=1.0, max_requests=2, cursor=cursor)
    second = await poll_storage(Remote(), v, now=2.0, max_requests=2, cursor=cursor)
    assert (first.requests, first.deferred, second.requests) == (2, 3, 2)
    assert {e.split(":")[0] for e in first.errors}.isdisjoint(
        e.split(":")[0] for e in second.errors
    )


async def test_the_storage_poll_runs_beside_the_polls_on_its_own_cadence() -> None:
    fakes = Fakes()
    started: list[float] = []
    gate = asyncio.Event()

    async def storage(client: Any, v: Any, now: float) -> StoragePart:
        started.append(now)
        await gate.wait()
        return part(now)

    clock = iter(range(1000))
    poller = Poller(
        PollerConfig(interval=1, storage_interval=10),
        connect=fakes.connect,
        gather=fakes.gather,
        probe=fakes.probe,
        storage=storage,
        clock=lambda: float(next(clock)),
    )
    first = await poller.poll()  # starts the storage poll, does not wait for it
    await asyncio.sleep(0)
    assert first.storage is None and len(started) == 1
    gate.set()
    await asyncio.sleep(0)
    second = await poller.poll()
    assert second.storage is not None and len(started) == 1  # not due again yet
    await poller.aclose()


async def test_a_one_look_waits_for_the_storage_poll() -> None:
    fakes = Fakes()

    async def storage(client: Any, v: Any, now: float) -> StoragePart:
        return part(now)

    poller = Poller(
        PollerConfig(storage_inline=True),
        connect=fakes.connect,
        gather=fakes.gather,
        probe=fakes.probe,
        storage=storage,
    )
    assert (await poller.poll()).storage is not None
    await poller.aclose()


@pytest.mark.parametrize("bad", [0, -1, True, "x"])
def test_profile_seconds_limits_are_checked(bad: object, tmp_path: Any) -> None:
    from konsole.collect.profiles import ProfileError, load_profiles

    f = tmp_path / "c.toml"
    value = str(bad).lower() if isinstance(bad, bool) else repr(bad).replace("'", '"')
    f.write_text(
        f'[profiles.a]\nbootstrap = "h:1"\n[profiles.a.health]\ntiering_stall_s = {value}\n'
    )
    with pytest.raises(ProfileError):
        load_profiles(f)


def test_kv_and_lake_events_fire_once_per_stretch() -> None:
    tables = (
        TableStorage(1, "db.t", True, False),
        TableStorage(2, "db.lake", False, False, lake_enabled=True),
    )

    def at(t: float, end: int) -> StoragePart:
        kv = bucket(t, end, None, kv_snapshot_id=3, kv_log_offset=10, kv_since=t, log_end_at_kv=end)
        lake = replace(bucket(t, 5_000_000, None), table_id=2, lake_log_offset=10)
        return replace(part(t, kv, lake), tables=tables)

    config = EventConfig(rules=RULES)
    state = EventState()
    seen = []
    stored: StoragePart | None = None
    for i, (t, end) in enumerate([(0, 10), (100, 50), (200, 90)]):
        stored = carry(stored, at(t, end))
        events, state = advance(state, snap(V, seq=i + 1, t=t).with_storage(stored), config=config)
        seen.append(
            sorted((e.kind.value, e.subject.name) for e in events if e.subject.kind == "table")
        )
    assert seen == [
        [("lake_lag_high", "db.lake")],
        [("kv_snapshot_stale", "db.t")],
        [],
    ]
    rules = {f.rule for f in health_of(snap(V, t=200).with_storage(stored), RULES).findings}
    assert {"kv_snapshot_stale", "lake_lag"} <= rules


def test_the_recorder_writes_each_storage_part_once_and_time_travel_reads_it(
    tmp_path: Any,
) -> None:
    import sqlite3

    from konsole.collect.history.recorded_look import recorded_look
    from konsole.collect.history.rows import snapshot_at
    from store import open_reader
    from tests._testutil.judging import JudgingRecorder

    path = tmp_path / "h.sqlite"
    first = part(100, bucket(100, 100, 50))
    second = carry(first, part(130, bucket(130, 200, 50)))
    r = JudgingRecorder(path, clock=lambda: 200.0)
    r.open()
    r.record(snap(V, seq=1, t=90))  # before any storage poll
    r.record(snap(V, seq=2, t=105).with_storage(first))
    r.record(snap(V, seq=3, t=110).with_storage(first))  # carried: not written again
    r.record(snap(V, seq=4, t=135).with_storage(second))
    r.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM storage").fetchone()[0] == 2
    with open_reader(path) as reader:
        assert snapshot_at(reader, 95).snapshot.storage is None  # type: ignore[union-attr]
        at_110 = snapshot_at(reader, 112).snapshot.storage  # type: ignore[union-attr]
        at_end = snapshot_at(reader, 140).snapshot.storage  # type: ignore[union-attr]
    assert at_110 == first and at_end == second
    # the Storage tab's sparkline: the table's untiered offsets per recorded storage part
    from konsole.collect.history.reads import untiered_values

    with open_reader(path) as reader:
        assert untiered_values(reader, "db.t", 140_000, 120) == [50.0, 150.0]
        assert untiered_values(reader, "db.t", 140_000, 1) == [150.0]  # the newest part
        assert untiered_values(reader, "db.t", 120_000, 120) == [50.0]
        assert untiered_values(reader, "db.other", 140_000, 120) == []
    # konsole history as-of --format json carries the part as recorded
    import json

    from click.testing import CliRunner

    from konsole.cli.main import main

    out = CliRunner().invoke(
        main,
        ["history", "as-of", "--history", str(path), "1970-01-01T00:01:52Z", "--format", "json"],
    )
    assert out.exit_code == 0, out.output
    [row] = json.loads(out.output)["storage"]["tables"]
    assert row["table"] == "db.t" and row["untiered_offsets"] == 50
    # the check starts from the file's last part (the one with the stall's first sighting)
    assert recorded_look(path).storage == second
    assert recorded_look(tmp_path / "none").storage is None
