"""The known false positives that must not page anyone (issue 19, item 4), each replayed
poll by poll: a new table's leaders being elected (RED for about a second), a producer
that writes once a minute (stalled / resumed every minute under the old count-based rule).
The third, error 65 at the end of a coordinator election, is tests/unit/test_client_retry_65.py.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from fluss_proto.model import ClusterHealth, HealthStatus, TableView
from konsole.collect.profiles import ProfileError, parse_profiles
from konsole.model.events import EventState, advance
from konsole.model.events.base import EventConfig
from konsole.model.health import HealthRules
from konsole.model.snapshot import ClusterSnapshot
from tests._testutil.builders import all_metrics, snap, table, view
from tests._testutil.judging import health_of

OLD = table("db.old", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
T_CREATED = 1_780_000_000.0


def created_at(t: TableView, at: float) -> TableView:
    assert t.info is not None
    return replace(t, info=replace(t.info, created_ms=int(at * 1000)))


def new_table(leaders: bool) -> TableView:
    spec = [(i, (i, (i + 1) % 3), 0) if leaders else (None, (i, (i + 1) % 3), 0) for i in range(3)]
    return created_at(table("db.new", 2, spec), T_CREATED)


def poll(at: float, new: TableView, health: ClusterHealth | None = None) -> ClusterSnapshot:
    return snap(view(tables=[OLD, new]), t=at, metrics=all_metrics(), cluster_health=health)


# ------------------------------------------------------------------ (a) a new table


def test_new_table_settling_is_not_red() -> None:
    """Seen on both lines: the poll right after CreateTable shows the new table's buckets
    without a leader (the 1.0 server's GetClusterHealth: RED, 3 of 6 leaders active); the
    next poll, a second later, has them."""
    settling_health = ClusterHealth(12, 12, 6, 3, HealthStatus.RED)
    sequence = [
        poll(T_CREATED + 0.4, new_table(leaders=False), settling_health),
        poll(
            T_CREATED + 1.4,
            new_table(leaders=True),
            ClusterHealth(12, 12, 6, 6, HealthStatus.GREEN),
        ),
    ]
    first, second = (health_of(s) for s in sequence)
    assert first.status is HealthStatus.GREEN, first.findings
    (note,) = [f for f in first.findings if f.rule == "new_table"]
    assert note.subject == "table db.new" and "3 buckets awaiting a leader" in note.reason
    assert second.status is HealthStatus.GREEN
    # the same poll without the grace: the false positive this removes
    no_grace = health_of(sequence[0], HealthRules(new_table_grace=0))
    assert no_grace.status is HealthStatus.RED
    assert {f.rule for f in no_grace.findings} == {"leaders", "cluster_health"}


def test_a_table_still_leaderless_after_the_grace_is_red() -> None:
    late = poll(T_CREATED + 30.0, new_table(leaders=False))
    health = health_of(late)
    assert health.status is HealthStatus.RED
    assert [f.subject for f in health.findings if f.rule == "leaders"] == ["table db.new"]


def test_server_red_beyond_the_new_tables_stays_red() -> None:
    """More inactive leaders than the new table has buckets: something else is down."""
    health = health_of(
        poll(
            T_CREATED + 0.4, new_table(leaders=False), ClusterHealth(12, 12, 6, 1, HealthStatus.RED)
        )
    )
    assert health.status is HealthStatus.RED
    assert [f.rule for f in health.findings if f.status is HealthStatus.RED] == ["cluster_health"]


# ------------------------------------------------------------------ (b) once a minute


def ingest_events(totals: list[tuple[float, int]], rules: HealthRules) -> list[tuple[float, str]]:
    """(time, kind) of every ingest event over polls of a table whose offsets are given."""
    config = EventConfig(rules=rules)
    state = EventState()
    out = []
    for at, total in totals:
        t = table("db.t", 1, [(0, (0, 1, 2), total)])
        events, state = advance(
            state, snap(view(tables=[t]), t=at, metrics=all_metrics()), config=config
        )
        out += [(at, e.kind.value) for e in events if e.kind.value.startswith("ingest")]
    return out


def once_a_minute(minutes: int, interval: float = 10.0) -> list[tuple[float, int]]:
    """Polls every ``interval`` s of a producer that writes 100 rows at each minute."""
    return [
        (i * interval, 100 * (1 + int(i * interval // 60)))
        for i in range(int(minutes * 60 / interval))
    ]


def test_a_producer_writing_once_a_minute_is_not_stalled() -> None:
    polls = once_a_minute(10)
    assert ingest_events(polls, HealthRules()) == []
    # the replayed problem: 5 quiet polls between writes, where the old 3-poll rule fired
    quiet = [b[1] == a[1] for a, b in itertools.pairwise(polls)]
    assert quiet.count(False) == 9 and quiet[:5] == [True] * 5


def test_it_is_stalled_after_three_of_its_gaps_without_a_write() -> None:
    polls = once_a_minute(5)
    last = polls[-1][1]
    stops_at = polls[-1][0]
    polls += [(stops_at + 10.0 * i, last) for i in range(1, 30)]
    events = ingest_events(polls, HealthRules())
    assert [k for _, k in events] == ["ingest_stalled"]
    ((at, _),) = events
    # last advance seen at 240 s (the minute-4 write); 3 x its 60 s gap later
    assert 240 + 180 <= at < 240 + 180 + 10


def test_a_fast_producer_still_stalls_after_ingest_stall_after() -> None:
    polls = [(float(i), i * 10) for i in range(10)]  # one write a second, polled each second
    polls += [(10.0 + i, 90) for i in range(30)]
    events = ingest_events(polls, HealthRules(ingest_stall_after=15))
    assert [k for _, k in events] == ["ingest_stalled"]
    assert events[0][0] >= 9 + 15


# ------------------------------------------------------------------ the profile keys


def test_profile_health_reads_the_time_keys_and_the_old_count() -> None:
    text = (
        "[profiles.p]\nbootstrap = 'h'\n[profiles.p.health]\n"
        "ingest_stall_polls = 4\ningest_stall_after = 120\nnew_table_grace = 5\n"
    )
    health = parse_profiles(text, Path("/c.toml"))["p"].health
    assert (health.ingest_stall_polls, health.ingest_stall_after) == (4, 120)
    assert health.new_table_grace == 5
    old = parse_profiles(
        "[profiles.p]\nbootstrap = 'h'\n[profiles.p.health]\ningest_stall_polls = 6\n",
        Path("/c.toml"),
    )
    assert old["p"].health.ingest_stall_polls == 6  # the old key is still read
    with pytest.raises(ProfileError, match="seconds"):
        parse_profiles(text.replace("120", "-1"), Path("/c.toml"))
