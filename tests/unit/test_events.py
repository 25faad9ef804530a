"""Events: one table-driven case per kind, grouping, and the state carried between polls."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from fluss_proto.errors import FlussError
from fluss_proto.model import GatherError, HealthStatus
from konsole.model.events import (
    Event,
    EventConfig,
    EventKind,
    EventState,
    Severity,
    advance,
    diff,
)
from konsole.model.health import HealthRules
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

K = EventKind

# three servers, one table with a bucket led by each
T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
BASE = view(tables=[T])


def s(v=BASE, **kwargs) -> ClusterSnapshot:  # type: ignore[no-untyped-def]
    kwargs.setdefault("metrics", all_metrics())
    return snap(v, **kwargs)


def run(*snapshots: ClusterSnapshot, config: EventConfig | None = None) -> list[list[Event]]:
    """Events of each step, after the first snapshot (which only sets the baseline)."""
    state = EventState()
    steps = []
    for i, snapshot in enumerate(snapshots):
        events, state = advance(state, snapshot, config=config)
        if i:
            steps.append(events)
    return steps


def kinds(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.kind.value, e.subject.name) for e in events]


def last(*snapshots: ClusterSnapshot, config: EventConfig | None = None) -> list[tuple[str, str]]:
    return kinds(run(*snapshots, config=config)[-1])


#: A second database "other" with one table, then a poll that could not list it.
WITH_OTHER = s(view(tables=[T, table("other.u", 2, [(0, (0,), 0)])]))
OTHER_UNLISTED = s(
    view(tables=[T], errors=[GatherError("database", "other", "LIST_TABLES", FlussError("x"))])
)

# each case: name, the snapshots, the (kind, subject) pairs of the last step
CASES: list[tuple[str, list[ClusterSnapshot], list[tuple[str, str]]]] = [
    ("nothing changed", [s(), s()], []),
    (
        "poll failed",
        [s(), snap(None, failed="refused", coords=probe("active"))],
        [("poll_failed", "cluster"), ("health_changed", "cluster")],
    ),
    (
        "poll failed only once while it keeps failing",
        [s(), snap(None, coords=probe("active")), snap(None, coords=probe("active"))],
        [],
    ),
    (
        "poll recovered",
        [s(), snap(None, coords=probe("active")), s()],
        [("poll_recovered", "cluster"), ("health_changed", "cluster")],
    ),
    (
        "coordinator failover in one poll",
        [s(coords=probe("active", "standby")), s(coords=probe("unreachable", "active"))],
        [("coordinator_failover", "coordinator 127.0.0.1:9124"), ("health_changed", "cluster")],
    ),
    (
        "coordinator unreachable",
        [s(coords=probe("active", "standby")), s(coords=probe("unreachable", "standby"))],
        [("coordinator_unreachable", "coordinator 127.0.0.1:9123"), ("health_changed", "cluster")],
    ),
    (
        "coordinator recovered (the same one)",
        [s(coords=probe("active")), s(coords=probe("unreachable")), s(coords=probe("active"))],
        [("coordinator_recovered", "coordinator 127.0.0.1:9123"), ("health_changed", "cluster")],
    ),
    (
        "standby lost",
        [s(coords=probe("active", "standby")), s(coords=probe("active", "unreachable"))],
        [("standby_lost", "coordinator 127.0.0.1:9124"), ("health_changed", "cluster")],
    ),
    (
        "standby joined",
        [s(coords=probe("active", "unreachable")), s(coords=probe("active", "standby"))],
        [("standby_joined", "coordinator 127.0.0.1:9124"), ("health_changed", "cluster")],
    ),
    (
        "server left: leaders moved, replicas offline",
        [
            s(),
            s(
                view(
                    (0, 1),
                    tables=[
                        table(
                            "db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (0, (2, 0, 1), 10)]
                        )
                    ],
                ),
                metrics=all_metrics((0, 1)),
            ),
        ],
        [
            ("server_left", "tablet-server 2"),
            ("leaders_moved", "tablet-server 2"),
            ("replicas_offline", "tablet-server 2"),
            ("under_replicated", "cluster"),
            ("health_changed", "cluster"),
        ],
    ),
    (
        "server joined",
        [s(view((0, 1), tables=[T]), metrics=all_metrics((0, 1))), s()],
        [
            ("server_joined", "tablet-server 2"),
            # T's bucket led by 2 was offline while 2 was gone (placement's rule): online again.
            ("bucket_online", "tablet-server 2"),
            ("replicas_in_sync", "cluster"),
            ("health_changed", "cluster"),
        ],
    ),
    (
        "bucket offline",
        [s(), s(view(tables=[table("db.t", 1, [(0, (0,), 10), (None, (1,), 10), (2, (2,), 10)])]))],
        [("bucket_offline", "tablet-server 1"), ("health_changed", "cluster")],
    ),
    (
        "bucket online",
        [s(view(tables=[table("db.t", 1, [(0, (0,), 10), (None, (1,), 10), (2, (2,), 10)])])), s()],
        [("bucket_online", "tablet-server 1"), ("health_changed", "cluster")],
    ),
    (
        "table created",
        [s(), s(view(tables=[T, table("db.u", 2, [(0, (0,), 0)])]))],
        [("table_created", "db.u")],
    ),
    (
        "table dropped",
        [s(view(tables=[T, table("db.u", 2, [(0, (0,), 0)])])), s()],
        [("table_dropped", "db.u")],
    ),
    (
        "table dropped and created again under the same name",
        [s(), s(view(tables=[table("db.t", 9, [(0, (0,), 0)])]))],
        [("table_dropped", "db.t"), ("table_created", "db.t")],
    ),
    (
        "a database that could not be listed does not drop its tables",
        [
            WITH_OTHER,
            OTHER_UNLISTED,
        ],
        [("health_changed", "cluster")],
    ),
    (
        "a database listed again after a poll that could not list it: its tables are not new",
        [
            WITH_OTHER,
            OTHER_UNLISTED,
            WITH_OTHER,
        ],
        [("health_changed", "cluster")],
    ),
    (
        "a table dropped while its database could not be listed is dropped once it is",
        [
            WITH_OTHER,
            OTHER_UNLISTED,
            OTHER_UNLISTED,
            s(view(tables=[T])),
        ],
        [("table_dropped", "other.u"), ("health_changed", "cluster")],
    ),
    (
        "partition created",
        [
            s(view(tables=[table("db.p", 3, partitions={"2024": [(0, (0,), 1)]})])),
            s(
                view(
                    tables=[
                        table(
                            "db.p", 3, partitions={"2024": [(0, (0,), 1)], "2025": [(1, (1,), 0)]}
                        )
                    ]
                )
            ),
        ],
        [("partition_created", "db.p[2025]")],
    ),
    (
        "partitions dropped (grouped per table)",
        [
            s(
                view(
                    tables=[
                        table(
                            "db.p",
                            3,
                            partitions={
                                "a": [(0, (0,), 1)],
                                "b": [(0, (0,), 1)],
                                "c": [(0, (0,), 1)],
                            },
                        )
                    ]
                )
            ),
            s(view(tables=[table("db.p", 3, partitions={"c": [(0, (0,), 1)]})])),
        ],
        [("partition_dropped", "db.p")],
    ),
    (
        "schema changed",
        [
            s(),
            s(
                view(
                    tables=[
                        table(
                            "db.t",
                            1,
                            [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)],
                            schema_id=2,
                        )
                    ]
                )
            ),
        ],
        [("schema_changed", "db.t")],
    ),
    (
        "disk write lock engaged",
        [s(), s(metrics=[tm(0, disk_write_locked=True, disk_usage_ratio=0.5), tm(1), tm(2)])],
        [("write_rejected", "tablet-server 0"), ("health_changed", "cluster")],
    ),
    (
        "disk write lock released",
        [
            s(metrics=[tm(0, disk_write_locked=False), tm(1), tm(2)]),
            s(metrics=[tm(0, disk_write_locked=True), tm(1), tm(2)]),
            s(metrics=[tm(0, disk_write_locked=False), tm(1), tm(2)]),
        ],
        [("writes_accepted", "tablet-server 0"), ("health_changed", "cluster")],
    ),
    (
        "kv backpressure rejections rising",
        [
            s(metrics=[tm(0, tables=[kv("db.k", rejections=3)]), tm(1), tm(2)]),
            s(
                metrics=[
                    tm(0, tables=[kv("db.k", rejections=10)]),
                    tm(1, tables=[kv("db.k", rejections=0)]),
                    tm(2),
                ]
            ),
        ],
        # The health compares with the last good poll as every face's does: YELLOW.
        [("write_rejected", "db.k"), ("health_changed", "cluster")],
    ),
    (
        "kv backpressure rejections stop",
        [
            s(metrics=[tm(0, tables=[kv("db.k", rejections=3)]), tm(1), tm(2)]),
            s(metrics=[tm(0, tables=[kv("db.k", rejections=10)]), tm(1), tm(2)]),
            s(metrics=[tm(0, tables=[kv("db.k", rejections=10)]), tm(1), tm(2)]),
        ],
        [("writes_accepted", "db.k"), ("health_changed", "cluster")],
    ),
    (
        "disk pressure over the warn threshold",
        [s(), s(metrics=[tm(0, disk_usage_ratio=0.85), tm(1), tm(2)])],
        [("disk_pressure", "tablet-server 0"), ("health_changed", "cluster")],
    ),
    (
        "disk pressure climbs from warn to critical",
        [
            s(metrics=[tm(0, disk_usage_ratio=0.85), tm(1), tm(2)]),
            s(metrics=[tm(0, disk_usage_ratio=0.95), tm(1), tm(2)]),
        ],
        [("disk_pressure", "tablet-server 0"), ("health_changed", "cluster")],
    ),
    (
        "under-replicated from the servers' metrics",
        [
            s(metrics=all_metrics(under_replicated=0)),
            s(metrics=[tm(0, under_replicated=2), tm(1, under_replicated=0), tm(2)]),
        ],
        [("under_replicated", "cluster"), ("health_changed", "cluster")],
    ),
    (
        "under-replicated from GetClusterHealth",
        [
            s(cluster_health=health(HealthStatus.GREEN)),
            s(cluster_health=health(HealthStatus.YELLOW, in_sync=7)),
        ],
        [("under_replicated", "cluster"), ("health_changed", "cluster")],
    ),
    (
        "replicas in sync again",
        [
            s(metrics=[tm(0, under_replicated=0)]),
            s(metrics=[tm(0, under_replicated=2)]),
            s(metrics=[tm(0, under_replicated=0)]),
        ],
        [("replicas_in_sync", "cluster"), ("health_changed", "cluster")],
    ),
]


@pytest.mark.parametrize(
    ("snapshots", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_event_kinds(snapshots: list[ClusterSnapshot], expected: list[tuple[str, str]]) -> None:
    config = EventConfig(rules=HealthRules(require_metrics=False))
    assert last(*snapshots, config=config) == expected


def test_every_kind_is_covered_by_a_case() -> None:
    config = EventConfig(rules=HealthRules(require_metrics=False))
    seen = {k for _, snaps, _ in CASES for k, _ in last(*snaps, config=config)}
    seen |= {"ingest_stalled", "ingest_resumed"}  # below, they need several polls
    seen |= {"history_trouble"}  # the recorder's, not a detector's: test_recorder_faults.py
    seen |= {"operator"}  # konsole admin's, not a detector's: test_actions_model.py
    seen |= {"history_taken_over"}  # a following console's: tests/pilot/test_console_takeover.py
    # storage parts over time: test_storage_model.py
    seen |= {"tiering_stalled", "tiering_resumed", "kv_snapshot_stale", "lake_lag_high"}
    # forecasts over a series of polls: test_capacity_model.py
    seen |= {"write_lock_forecast", "write_lock_forecast_cleared"}
    seen |= {"server_version_changed"}  # lines told by API keys: test_upgrade_events.py
    assert seen == {k.value for k in EventKind}


def offsets(total: int) -> ClusterSnapshot:
    return s(view(tables=[table("db.t", 1, [(0, (0,), total), (1, (1,), 5), (2, (2,), 5)])]))


@pytest.mark.parametrize(
    ("totals", "stall_polls", "expected"),
    [
        # advancing, then quiet for 3 polls -> stalled once; it stays stalled silently
        ([1, 2, 2, 2, 2, 2, 2], 3, [[], [], [], ["ingest_stalled"], [], []]),
        ([1, 2, 2], 1, [[], ["ingest_stalled"]]),
        # never advanced: an idle table is not "stalled"
        ([1, 1, 1, 1, 1], 2, [[], [], [], []]),
        # resumes
        ([1, 2, 2, 2, 7], 2, [[], [], ["ingest_stalled"], ["ingest_resumed"]]),
        # offsets going back (table truncated or recreated) start over
        ([1, 2, 0, 0, 0], 2, [[], [], [], []]),
    ],
)
def test_ingest_stalled_and_resumed(
    totals: list[int], stall_polls: int, expected: list[list[str]]
) -> None:
    config = EventConfig(
        rules=HealthRules(
            ingest_stall_polls=stall_polls, ingest_stall_after=0, require_metrics=False
        )
    )
    steps = run(*(offsets(n) for n in totals), config=config)
    assert [[e.kind.value for e in step] for step in steps] == expected


def test_unknown_offsets_keep_the_ingest_track() -> None:
    config = EventConfig(
        rules=HealthRules(ingest_stall_polls=2, ingest_stall_after=0, require_metrics=False)
    )
    unknown = s(view(tables=[table("db.t", 1, [(0, (0,), None), (1, (1,), 5), (2, (2,), 5)])]))
    steps = run(offsets(1), offsets(2), unknown, offsets(2), offsets(2), config=config)
    assert [[e.kind.value for e in step] for step in steps] == [[], [], [], ["ingest_stalled"]]


def test_failover_after_a_gap_is_one_event_with_old_new_and_gap() -> None:
    steps = run(
        s(coords=probe("active", "standby"), t=100.0),
        s(coords=probe("unreachable", "standby"), t=105.0),
        s(coords=probe("unreachable", "standby"), t=110.0),
        s(coords=probe("unreachable", "active"), t=115.0),
        s(coords=probe("unreachable", "active"), t=120.0),
    )
    flat = [e for step in steps for e in step if e.kind.value.startswith("coordinator")]
    assert [e.kind for e in flat] == [K.COORDINATOR_UNREACHABLE, K.COORDINATOR_FAILOVER]
    failover = flat[1]
    assert dict(failover.details) == {
        "old": "127.0.0.1:9123",
        "new": "127.0.0.1:9124",
        "no_coordinator_s": 10.0,
    }
    assert failover.severity is Severity.WARNING


def test_standby_promoted_is_not_standby_lost() -> None:
    events = last(s(coords=probe("active", "standby")), s(coords=probe("unreachable", "active")))
    assert ("standby_lost", "coordinator 127.0.0.1:9124") not in events


def test_a_server_with_500_leaders_leaving_gives_a_handful_of_events() -> None:
    n = 500
    before = table("db.big", 7, [(0, (0, 1), 100)] * n + [(1, (1, 0), 100)] * 10)
    # half the leaders moved to server 1, the other half found no leader yet
    after = table(
        "db.big",
        7,
        [(1, (0, 1), 100)] * (n // 2) + [(None, (0, 1), 100)] * (n // 2) + [(1, (1, 0), 100)] * 10,
    )
    steps = run(
        s(view((0, 1), tables=[before]), metrics=all_metrics((0, 1))),
        s(view((1,), tables=[after]), metrics=all_metrics((1,))),
    )
    events = steps[-1]
    assert len(events) == 6
    by_kind = {e.kind: e for e in events}
    assert set(by_kind) == {
        K.SERVER_LEFT,
        K.LEADERS_MOVED,
        K.BUCKET_OFFLINE,
        K.REPLICAS_OFFLINE,
        K.UNDER_REPLICATED,
        K.HEALTH_CHANGED,
    }
    assert by_kind[K.UNDER_REPLICATED].count == n + 10
    assert by_kind[K.SERVER_LEFT].details["leaders_before"] == n
    assert by_kind[K.LEADERS_MOVED].count == n // 2
    assert by_kind[K.LEADERS_MOVED].details["to"] == {"1": n // 2}
    assert by_kind[K.BUCKET_OFFLINE].count == n // 2
    assert by_kind[K.REPLICAS_OFFLINE].count == n + 10
    assert by_kind[K.REPLICAS_OFFLINE].details["tables"] == {"db.big": n + 10}
    for event in events:
        assert len(event.samples) <= 5
        assert event.subject.name in ("tablet-server 0", "cluster")


def test_many_tables_created_at_once_are_grouped_per_database() -> None:
    many = [table(f"db.t{i}", 10 + i, [(0, (0,), 0)]) for i in range(20)]
    events = run(s(), s(view(tables=[T, *many])))[-1]
    assert [(e.kind, e.count, e.subject.name) for e in events] == [(K.TABLE_CREATED, 20, "db.*")]
    assert len(events[0].samples) == 5


def test_diff_without_state_matches_advance_for_two_snapshots() -> None:
    a, b = s(coords=probe("active", "standby")), s(coords=probe("unreachable", "active"))
    assert [e.kind for e in diff(a, b)] == [e.kind for e in run(a, b)[-1]]
    assert diff(None, a) == []
    assert [e.kind for e in diff(None, snap(None))] == [K.POLL_FAILED]


def test_data_diffs_compare_with_the_last_good_snapshot_after_failures() -> None:
    config = EventConfig(rules=HealthRules(require_metrics=False))
    gone = s(view((0, 1), tables=[T]), metrics=all_metrics((0, 1)))
    events = run(s(), snap(None), gone, config=config)[-1]
    assert ("server_left", "tablet-server 2") in kinds(events)


def test_events_are_json_ready_and_state_is_bounded() -> None:
    a = s(metrics=[tm(0, tables=[kv("db.k", rejections=1)]), tm(1), tm(2)])
    b = s(view((0, 1), tables=[T]), metrics=[tm(0, tables=[kv("db.k", rejections=5)]), tm(1)])
    state = EventState()
    for snapshot in (a, b):
        events, state = advance(state, snapshot)
    for event in events:
        json.dumps(event.as_dict())
    # tablet-server 2 left: nothing about it is kept
    assert set(state.disks.servers) == {"tablet-server 0", "tablet-server 1"}
    assert state.previous is b and state.baseline is b


def test_severities() -> None:
    severities = Counter(
        (e.kind, e.severity)
        for _, snaps, _ in CASES
        for e in run(*snaps, config=EventConfig(rules=HealthRules(require_metrics=False)))[-1]
    )
    assert (K.POLL_FAILED, Severity.CRITICAL) in severities
    assert (K.BUCKET_OFFLINE, Severity.CRITICAL) in severities
    assert (K.SERVER_JOINED, Severity.INFO) in severities
    assert (K.SERVER_LEFT, Severity.WARNING) in severities


# --------------------------------------------------------------------------- seen live


LOCKED = tm(2, disk_write_locked=True, disk_usage_ratio=0.7)
FREE = tm(2, disk_write_locked=False, disk_usage_ratio=0.7)
WITHOUT_2 = view(tablets=(0, 1), tables=[T])


def test_a_locked_server_scraped_before_it_is_back_in_metadata_is_reported_once() -> None:
    """Live on 1.0: a tablet server restarted with a write limit answers metrics some
    polls before it is in metadata again; write_rejected came once per poll."""
    steps = run(
        s(),
        s(WITHOUT_2, metrics=[tm(0), tm(1)]),
        s(WITHOUT_2, metrics=[tm(0), tm(1), LOCKED]),
        s(WITHOUT_2, metrics=[tm(0), tm(1), LOCKED]),
        s(metrics=[tm(0), tm(1), LOCKED]),
        s(metrics=[tm(0), tm(1), LOCKED]),
    )
    rejected = [e for step in steps for e in step if e.kind is K.WRITE_REJECTED]
    assert [e.subject.name for e in rejected] == ["tablet-server 2"]


def test_a_server_that_left_locked_gives_writes_accepted_when_it_returns_unlocked() -> None:
    """Live on 1.0: stopped while locked, restarted with normal settings; the lock state
    was forgotten with the server, so writes_accepted never came."""
    steps = run(
        s(metrics=[tm(0), tm(1), FREE]),
        s(metrics=[tm(0), tm(1), LOCKED]),
        s(WITHOUT_2, metrics=[tm(0), tm(1)]),
        s(WITHOUT_2, metrics=[tm(0), tm(1)]),
        s(metrics=[tm(0), tm(1), FREE]),
        s(metrics=[tm(0), tm(1), FREE]),
    )
    flat = [(e.kind, e.subject.name) for step in steps for e in step]
    assert flat.count((K.WRITE_REJECTED, "tablet-server 2")) == 1
    assert flat.count((K.WRITES_ACCEPTED, "tablet-server 2")) == 1
    assert flat.index((K.WRITES_ACCEPTED, "tablet-server 2")) > flat.index(
        (K.SERVER_JOINED, "tablet-server 2")
    )


def test_servers_that_left_locked_are_remembered_up_to_a_bound() -> None:
    from konsole.model.events import MAX_GONE_LOCKED

    many = range(MAX_GONE_LOCKED + 5)
    locked = [tm(i, disk_write_locked=True) for i in many]
    state = EventState()
    for snapshot in (s(view(tablets=many), metrics=locked), s(view(tablets=()), metrics=[])):
        _, state = advance(state, snapshot)
    assert len(state.disks.servers) == MAX_GONE_LOCKED


def test_health_changed_names_the_finding_that_set_the_new_status() -> None:
    """Live: "GREEN -> RED: tablet-server 2: listed in metadata but did not answer" cited
    a YELLOW finding (the first) for a RED status."""
    unanswered = view(tables=[T], server_errors={2: "refused"})
    red = s(unanswered, cluster_health=health(HealthStatus.RED))
    (step,) = run(s(cluster_health=health(HealthStatus.GREEN)), red)
    (changed,) = [e for e in step if e.kind is K.HEALTH_CHANGED]
    assert changed.message.startswith("health GREEN -> RED: cluster:")
