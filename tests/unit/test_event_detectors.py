"""Each event detector alone: its slice, the snapshots it compares, its events, its new slice.

Table-driven, no I/O. ``tests/unit/test_events.py`` covers the detectors run together by
``advance`` (order, grouping, the state carried).
"""

from __future__ import annotations

from typing import Any

import pytest

from fluss_proto.model import HealthStatus
from konsole.model.events import Event, EventConfig, EventKind
from konsole.model.events.coordinators import CoordinatorState, detect_coordinators
from konsole.model.events.disks import Disk, DiskState, detect_disks
from konsole.model.events.health_change import detect_health
from konsole.model.events.ingest import IngestState, TableIngest, detect_ingest
from konsole.model.events.kv import KvState, detect_kv
from konsole.model.events.leaders import detect_leaders
from konsole.model.events.poll import PollState, detect_poll
from konsole.model.events.replication import ReplicationState, detect_replication
from konsole.model.events.servers import detect_servers
from konsole.model.events.state import EventState, advance
from konsole.model.events.tables import detect_tables
from konsole.model.health import HealthRules
from konsole.model.poll_facts import facts_of
from konsole.model.snapshot import ClusterSnapshot
from tests._testutil.builders import (
    all_metrics,
    health,
    kv,
    probe,
    snap,
    table,
    tm,
    view,
)
from tests._testutil.judging import health_of, judged, placement_of

K = EventKind
CONFIG = EventConfig(rules=HealthRules(require_metrics=False))

# three servers, one table with a bucket led by each, every bucket on every server
T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
STEADY = snap(view(tables=[T]), metrics=all_metrics())
#: tablet-server 2 gone; its bucket's leader moved to 0
GONE = snap(
    view(
        (0, 1),
        tables=[table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (0, (2, 0, 1), 10)])],
    ),
    metrics=all_metrics((0, 1)),
)
FAILED = snap(None, failed="refused")


def kinds(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.kind.value, e.subject.name) for e in events]


# --------------------------------------------------------------------------- poll


@pytest.mark.parametrize(
    ("state", "previous", "current", "expected", "failing_since"),
    [
        (PollState(), None, STEADY, [], None),
        (PollState(), None, FAILED, [("poll_failed", "cluster")], 1000.0),
        (PollState(), STEADY, FAILED, [("poll_failed", "cluster")], 1000.0),
        (PollState(900.0), FAILED, FAILED, [], 900.0),
        (PollState(900.0), FAILED, STEADY, [("poll_recovered", "cluster")], None),
    ],
    ids=["first ok", "first failed", "starts failing", "keeps failing", "recovers"],
)
def test_poll(
    state: PollState,
    previous: ClusterSnapshot | None,
    current: ClusterSnapshot,
    expected: list[tuple[str, str]],
    failing_since: float | None,
) -> None:
    events, new = detect_poll(state, previous, current, CONFIG)
    assert kinds(events) == expected
    assert new == PollState(failing_since)


def test_poll_recovered_says_how_long_polls_failed() -> None:
    (event,) = detect_poll(PollState(990.0), FAILED, STEADY, CONFIG)[0]
    assert event.message == "poll succeeded again after 10s of failed polls"
    assert dict(event.details) == {"failed_for_s": 10.0}


# --------------------------------------------------------------------------- coordinators

A, B = "127.0.0.1:9123", "127.0.0.1:9124"


@pytest.mark.parametrize(
    ("state", "previous_roles", "roles", "expected", "new"),
    [
        (CoordinatorState(), None, ("active",), [], CoordinatorState(A)),
        (CoordinatorState(A), ("active",), ("active",), [], CoordinatorState(A)),
        (
            CoordinatorState(A),
            ("active", "standby"),
            ("unreachable", "active"),
            [("coordinator_failover", f"coordinator {B}")],
            CoordinatorState(B),
        ),
        (
            CoordinatorState(A),
            ("active",),
            ("unreachable",),
            [("coordinator_unreachable", f"coordinator {A}")],
            CoordinatorState(A, 1000.0),
        ),
        (
            CoordinatorState(A, 990.0),
            ("unreachable",),
            ("unreachable",),
            [],
            CoordinatorState(A, 990.0),
        ),
        (
            CoordinatorState(A, 990.0),
            ("unreachable",),
            ("active",),
            [("coordinator_recovered", f"coordinator {A}")],
            CoordinatorState(A),
        ),
        (
            CoordinatorState(A),
            ("active", "standby"),
            ("active", "unreachable"),
            [("standby_lost", f"coordinator {B}")],
            CoordinatorState(A),
        ),
        (
            CoordinatorState(A),
            ("active", "unreachable"),
            ("active", "standby"),
            [("standby_joined", f"coordinator {B}")],
            CoordinatorState(A),
        ),
        # no previous snapshot: standbys found are not "joined"
        (CoordinatorState(), None, ("active", "standby"), [], CoordinatorState(A)),
    ],
    ids=[
        "first",
        "steady",
        "failover",
        "unreachable",
        "still unreachable",
        "recovered",
        "standby lost",
        "standby joined",
        "standbys of the first poll",
    ],
)
def test_coordinators(
    state: CoordinatorState,
    previous_roles: tuple[str, ...] | None,
    roles: tuple[str, ...],
    expected: list[tuple[str, str]],
    new: CoordinatorState,
) -> None:
    previous = snap(view(tables=[T]), coords=probe(*previous_roles)) if previous_roles else None
    current = snap(view(tables=[T]), coords=probe(*roles))
    events, state = detect_coordinators(state, previous, current, CONFIG)
    assert kinds(events) == expected
    assert state == new


def test_failover_after_a_gap_gives_the_gap() -> None:
    previous = snap(view(tables=[T]), coords=probe("unreachable", "standby"))
    current = snap(view(tables=[T]), coords=probe("unreachable", "active"), t=1012.5)
    (event,) = detect_coordinators(CoordinatorState(A, 1000.0), previous, current, CONFIG)[0]
    assert dict(event.details) == {"old": A, "new": B, "no_coordinator_s": 12.5}
    assert (
        event.message == f"coordinator failover: {A} -> {B} (12.5s without an active coordinator)"
    )


# --------------------------------------------------------------------------- servers, leaders


@pytest.mark.parametrize(
    ("previous", "current", "expected"),
    [
        (STEADY, STEADY, []),
        (STEADY, GONE, [("server_left", "tablet-server 2")]),
        (GONE, STEADY, [("server_joined", "tablet-server 2")]),
    ],
    ids=["steady", "left", "joined"],
)
def test_servers(
    previous: ClusterSnapshot, current: ClusterSnapshot, expected: list[tuple[str, str]]
) -> None:
    assert kinds(detect_servers(previous, current, CONFIG)) == expected


def test_server_left_says_how_many_buckets_it_led() -> None:
    (event,) = detect_servers(STEADY, GONE, CONFIG)
    assert event.message == "tablet-server 2 (127.0.0.1:9202) left; it led 1 bucket"
    assert event.details["leaders_before"] == 1


def leaders_view(*leaders: int | None, tablets: tuple[int, ...] = (0, 1, 2)) -> ClusterSnapshot:
    replicas = [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    return snap(
        view(
            tablets,
            tables=[table("db.t", 1, list(zip(leaders, replicas, [10] * 3, strict=True)))],
        )
    )


@pytest.mark.parametrize(
    ("previous", "current", "expected"),
    [
        (leaders_view(0, 1, 2), leaders_view(0, 1, 2), []),
        (
            leaders_view(0, 1, 2),
            leaders_view(0, 1, 0),
            [("leaders_moved", "tablet-server 2", 1)],
        ),
        (
            leaders_view(0, 1, 2),
            leaders_view(0, None, 2),
            [("bucket_offline", "tablet-server 1", 1)],
        ),
        (
            leaders_view(0, None, None),
            leaders_view(0, 1, 1),
            [("bucket_online", "tablet-server 1", 2)],
        ),
        (
            leaders_view(0, 1, 2),
            leaders_view(0, 0, None, tablets=(0, 1)),
            [
                ("leaders_moved", "tablet-server 1", 1),
                ("bucket_offline", "tablet-server 2", 1),
                ("replicas_offline", "tablet-server 2", 3),
            ],
        ),
        # replicas_offline once per server: not again while it stays away
        (
            leaders_view(0, 1, 0, tablets=(0, 1)),
            leaders_view(0, 1, 0, tablets=(0, 1)),
            [],
        ),
    ],
    ids=["steady", "moved", "offline", "online", "server gone", "still gone"],
)
def test_leaders(
    previous: ClusterSnapshot,
    current: ClusterSnapshot,
    expected: list[tuple[str, str, int]],
) -> None:
    now, before = placement_of(current), placement_of(previous)
    assert now is not None and before is not None
    events = detect_leaders(previous, current, CONFIG, now=now, before=before)
    assert [(e.kind.value, e.subject.name, e.count) for e in events] == expected


def test_leader_events_agree_with_placement_for_the_same_poll() -> None:
    previous = leaders_view(0, 1, 2)
    current = leaders_view(0, 0, None, tablets=(0, 1))
    facts, kept = placement_of(current), placement_of(previous)
    assert facts is not None and kept is not None
    events = detect_leaders(previous, current, CONFIG, now=facts, before=kept)
    by_kind = {e.kind: e for e in events}
    offline = by_kind[K.BUCKET_OFFLINE]
    assert set(offline.samples) <= {"db.t#2"} and offline.count <= len(facts.offline)
    gone = by_kind[K.REPLICAS_OFFLINE]
    assert gone.count == len(facts.replicas_offline[2]) == facts.replicas_offline_count
    assert gone.details["tables"] == {"db.t": 3}


# --------------------------------------------------------------------------- tables


def catalog(*tables: Any) -> ClusterSnapshot:
    return snap(view(tables=list(tables)))


U = table("db.u", 2, [(0, (0,), 0)])


@pytest.mark.parametrize(
    ("previous", "current", "expected"),
    [
        (catalog(T), catalog(T), []),
        (catalog(T), catalog(T, U), [("table_created", "db.u")]),
        (catalog(T, U), catalog(T), [("table_dropped", "db.u")]),
        (
            catalog(U),
            catalog(table("db.u", 3, [(0, (0,), 0)])),
            [("table_dropped", "db.u"), ("table_created", "db.u")],
        ),
        (
            catalog(T),
            catalog(table("db.t", 1, [(0, (0, 1, 2), 10)] * 3, schema_id=4)),
            [("schema_changed", "db.t")],
        ),
        (
            catalog(table("db.p", 5, partitions={"a": [(0, (0,), 1)]})),
            catalog(table("db.p", 5, partitions={"a": [(0, (0,), 1)], "b": [(0, (0,), 1)]})),
            [("partition_created", "db.p[b]")],
        ),
        (
            catalog(T),
            catalog(T, *(table(f"db.n{i}", 10 + i, [(0, (0,), 0)]) for i in range(4))),
            [("table_created", "db.*")],
        ),
    ],
    ids=["steady", "created", "dropped", "recreated", "schema", "partition", "grouped"],
)
def test_tables(
    previous: ClusterSnapshot, current: ClusterSnapshot, expected: list[tuple[str, str]]
) -> None:
    assert kinds(detect_tables(previous, current, CONFIG)) == expected


# --------------------------------------------------------------------------- ingest


def offsets(total: int | None) -> ClusterSnapshot:
    return snap(view(tables=[table("db.t", 1, [(0, (0,), total), (1, (1,), 5)])]))


KEY = "db.t#1"


@pytest.mark.parametrize(
    ("track", "total", "expected", "new"),
    [
        (None, 7, [], TableIngest(12)),
        (TableIngest(10), 7, [], TableIngest(12, advanced=True)),
        (TableIngest(12, True, 1), 7, [], TableIngest(12, True, 2)),
        (
            TableIngest(12, True, 2),
            7,
            ["ingest_stalled"],
            TableIngest(12, True, 3, True),
        ),
        (TableIngest(12, True, 5, True), 7, [], TableIngest(12, True, 6, True)),
        (
            TableIngest(12, True, 5, True),
            9,
            ["ingest_resumed"],
            TableIngest(14, advanced=True),
        ),
        (TableIngest(12, False, 8), 7, [], TableIngest(12, False, 9)),
        (TableIngest(20, True, 1), 7, [], TableIngest(12)),
        (TableIngest(12, True, 1), None, [], TableIngest(12, True, 1)),
    ],
    ids=[
        "first sight",
        "advances",
        "quiet",
        "stalls",
        "stays stalled",
        "resumes",
        "idle is not stalled",
        "goes back",
        "unknown keeps",
    ],
)
def test_ingest(
    track: TableIngest | None, total: int | None, expected: list[str], new: TableIngest
) -> None:
    state = IngestState({KEY: track} if track is not None else {})
    rules = HealthRules(ingest_stall_polls=3, ingest_stall_after=0, require_metrics=False)
    events, state = detect_ingest(state, offsets(total), EventConfig(rules=rules))
    assert [e.kind.value for e in events] == expected
    # the count-based fields (the time-based ones: tests/unit/test_ingest_time.py)
    core = {k: (t.total, t.advanced, t.quiet_polls, t.stalled) for k, t in state.tables.items()}
    assert core == {KEY: (new.total, new.advanced, new.quiet_polls, new.stalled)}


# --------------------------------------------------------------------------- disks, KV


@pytest.mark.parametrize(
    ("was", "fields", "first", "expected", "new"),
    [
        (Disk(), {"disk_write_locked": True}, True, [], Disk(True)),
        (
            Disk(False),
            {"disk_write_locked": True},
            False,
            ["write_rejected"],
            Disk(True),
        ),
        (Disk(True), {"disk_write_locked": True}, False, [], Disk(True)),
        (
            Disk(True),
            {"disk_write_locked": False},
            False,
            ["writes_accepted"],
            Disk(False),
        ),
        (Disk(True), {}, False, [], Disk(True)),
        (Disk(), {"disk_usage_ratio": 0.85}, False, ["disk_pressure"], Disk(None, 1)),
        (
            Disk(None, 1),
            {"disk_usage_ratio": 0.95},
            False,
            ["disk_pressure"],
            Disk(None, 2),
        ),
        (Disk(None, 2), {"disk_usage_ratio": 0.85}, False, [], Disk(None, 1)),
        (Disk(None, 2), {}, False, [], Disk(None, 2)),
    ],
    ids=[
        "first poll",
        "locked",
        "still locked",
        "released",
        "lock unknown",
        "warn",
        "critical",
        "going down",
        "usage unknown",
    ],
)
def test_disks(
    was: Disk, fields: dict[str, Any], first: bool, expected: list[str], new: Disk
) -> None:
    current = snap(view(tables=[T]), metrics=[tm(0, **fields), tm(1), tm(2)])
    state = DiskState({"tablet-server 0": was})
    events, state = detect_disks(state, None if first else STEADY, current, CONFIG)
    assert [e.kind.value for e in events] == expected
    assert all(e.subject.name == "tablet-server 0" for e in events)
    assert state.servers["tablet-server 0"] == new


def test_disks_forget_servers_that_left_unlocked() -> None:
    state = DiskState({"tablet-server 2": Disk(False), "tablet-server 3": Disk(True)})
    _, state = detect_disks(state, STEADY, GONE, CONFIG)
    assert set(state.servers) == {
        "tablet-server 0",
        "tablet-server 1",
        "tablet-server 3",
    }


@pytest.mark.parametrize(
    ("state", "now", "expected"),
    [
        (KvState(), {0: 4.0}, []),
        (KvState({("tablet-server 0", "db.k"): 4.0}), {0: 4.0}, []),
        (
            KvState({("tablet-server 0", "db.k"): 4.0}),
            {0: 9.0, 1: 1.0},
            [("write_rejected", 5)],
        ),
        (
            KvState({("tablet-server 0", "db.k"): 9.0}, frozenset({"db.k"})),
            {0: 9.0},
            [("writes_accepted", 1)],
        ),
    ],
    ids=["first sight", "flat", "rising", "stopped"],
)
def test_kv(state: KvState, now: dict[int, float], expected: list[tuple[str, int]]) -> None:
    metrics = [tm(i, tables=[kv("db.k", rejections=now[i])] if i in now else []) for i in range(3)]
    events, new = detect_kv(state, snap(view(tables=[T]), metrics=metrics), CONFIG)
    assert [(e.kind.value, e.count) for e in events] == expected
    rising = any(kind == "write_rejected" for kind, _ in expected)
    assert new.rejecting == (frozenset({"db.k"}) if rising else frozenset())
    assert new.rejections[("tablet-server 0", "db.k")] == now[0]


# --------------------------------------------------------------------------- replication


def replicated(
    v: Any = None,
    *,
    reported: tuple[int, int, int] | None = None,
    in_sync: int | None = None,
) -> ClusterSnapshot:
    v = v if v is not None else view(tables=[T])
    alive = [s.node_id for s in v.tablet_servers]
    metrics = [tm(i, under_replicated=reported[i]) if reported else tm(i) for i in alive]
    cluster_health = health(HealthStatus.YELLOW, in_sync=in_sync) if in_sync is not None else None
    return snap(v, metrics=metrics, cluster_health=cluster_health)


CLEAN = ReplicationState(0, 0)


@pytest.mark.parametrize(
    ("state", "current", "expected", "new"),
    [
        # the first poll only sets the state
        (
            ReplicationState(),
            replicated(reported=(2, 0, 0)),
            None,
            ReplicationState(2, 0),
        ),
        (CLEAN, replicated(), None, CLEAN),
        (
            CLEAN,
            replicated(reported=(2, 0, 0)),
            (
                "under_replicated",
                2,
                "2 under-replicated buckets",
                {
                    "buckets": 2,
                    "replicas": 0,
                    "servers": {"tablet-server 0": 2},
                    "replicas_offline": 0,
                },
            ),
            ReplicationState(2, 0),
        ),
        (
            CLEAN,
            replicated(in_sync=8),
            (
                "under_replicated",
                1,
                "1 replica out of sync",
                {"buckets": 0, "replicas": 1, "servers": {}, "replicas_offline": 0},
            ),
            ReplicationState(0, 1),
        ),
        # a server gone: its replicas are out of sync, each bucket on it under-replicated;
        # the metric (4 + 4 buckets the others lead) is more than placement's 3 buckets
        (
            CLEAN,
            replicated(GONE.view, reported=(4, 4, 0)),
            (
                "under_replicated",
                8,
                "8 under-replicated buckets, 3 replicas out of sync",
                {
                    "buckets": 8,
                    "replicas": 3,
                    "servers": {"tablet-server 0": 4, "tablet-server 1": 4},
                    "replicas_offline": 3,
                },
            ),
            ReplicationState(8, 3),
        ),
        (ReplicationState(8, 3), replicated(GONE.view), None, ReplicationState(3, 3)),
        (
            ReplicationState(3, 3),
            replicated(),
            (
                "replicas_in_sync",
                1,
                "every replica is in sync again",
                {"buckets": 0, "replicas": 0, "servers": {}, "replicas_offline": 0},
            ),
            CLEAN,
        ),
        # a failed poll knows nothing: the state stays
        (ReplicationState(3, 3), FAILED, None, ReplicationState(3, 3)),
    ],
    ids=[
        "first poll",
        "steady",
        "servers' metric: buckets",
        "cluster health: replicas",
        "server gone: both units",
        "still degraded",
        "in sync again",
        "failed poll",
    ],
)
def test_replication(
    state: ReplicationState,
    current: ClusterSnapshot,
    expected: tuple[str, int, str, dict[str, Any]] | None,
    new: ReplicationState,
) -> None:
    # Through the judge's step: a failed poll has no figures and runs no detector of them.
    events, after = advance(EventState(replication=state), current, config=CONFIG)
    kinds = (K.UNDER_REPLICATED, K.REPLICAS_IN_SYNC)
    got = [(e.kind.value, e.count, e.message, dict(e.details)) for e in events if e.kind in kinds]
    assert got == ([expected] if expected else [])
    assert after.replication == new


def test_replication_counts_are_placements() -> None:
    current = replicated(GONE.view, reported=(1, 0, 0), in_sync=4)
    figures = judged(current).replication
    assert figures is not None
    (event,) = detect_replication(CLEAN, current, CONFIG, figures)[0]
    assert event.details["buckets"] == figures.under_replicated_buckets == 3
    assert event.details["replicas"] == figures.out_of_sync_replicas == 5
    assert event.details["replicas_offline"] == figures.placement.replicas_offline_count == 3
    assert event.samples == ("tablet-server 0",)


# --------------------------------------------------------------------------- health


def test_health_changed_only_on_a_status_change_after_the_first_poll() -> None:
    green = snap(view(tables=[T]), cluster_health=health(HealthStatus.GREEN))
    yellow = snap(view(tables=[T]), cluster_health=health(HealthStatus.YELLOW, in_sync=8))
    first, state = detect_health(
        None, None, green, CONFIG, facts_of(green, CONFIG.rules), last_ok=None
    )
    assert first == [] and state == health_of(green, CONFIG.rules)
    same, state = detect_health(
        state, green, green, CONFIG, facts_of(green, CONFIG.rules), last_ok=green
    )
    assert same == []
    (changed,), state = detect_health(
        state, green, yellow, CONFIG, facts_of(yellow, CONFIG.rules), last_ok=green
    )
    assert (changed.kind, changed.severity.value) == (K.HEALTH_CHANGED, "warning")
    assert changed.message.startswith("health GREEN -> YELLOW: ")
    assert changed.details["old"] == "GREEN" and changed.details["new"] == "YELLOW"
    assert state.status is HealthStatus.YELLOW


def test_a_bucket_left_on_a_gone_leader_is_offline_and_comes_back_online() -> None:
    """Metadata may still name a leader whose server left: that bucket is offline (as the
    overview and check count it), and online again when the server returns."""
    from konsole.model.events import EventKind, EventState, advance
    from konsole.model.placement import placement

    steady = snap(view((0, 1, 2), [table("db.t", 1, [(0, (0, 1, 2), 5), (2, (2, 0, 1), 5)])]))
    gone = snap(view((0, 1), [table("db.t", 1, [(0, (0, 1, 2), 5), (2, (2, 0, 1), 5)])]), seq=2)
    back = snap(view((0, 1, 2), [table("db.t", 1, [(0, (0, 1, 2), 5), (2, (2, 0, 1), 5)])]), seq=3)
    state = advance(EventState(), steady)[1]
    events, state = advance(state, gone)
    offline = [e for e in events if e.kind is EventKind.BUCKET_OFFLINE]
    assert gone.view is not None
    assert sum(e.count for e in offline) == len(placement(gone.view).offline) == 1
    assert offline[0].details["previous_leader"] == 2
    events, _ = advance(state, back)
    online = [e for e in events if e.kind is EventKind.BUCKET_ONLINE]
    assert [(e.count, e.details["leader"]) for e in online] == [(1, 2)]
