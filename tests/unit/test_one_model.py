"""One model: every face prints the same counts for the same poll.

Each scenario is one poll after a steady one. Its snapshot goes to every face that prints a
count: the overview's facts (``cluster_facts``), the tables screen's (``table_figures``) and
the table detail's per-bucket marks, ``check``'s measures, its findings and the rendered
Nagios perfdata line, ``watch``'s events (``advance`` over the steady poll, then the
scenario), and the history (``poll_record``'s rows read back into the as-of snapshot, and
the event rows read back into events). Every count must equal what
:mod:`konsole.model.placement` gives for that poll, in its unit: buckets with buckets,
replicas with replicas.

No I/O: the history's rows are turned back into a snapshot the way ``snapshot_at`` does
after reading them, without a file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from fluss_proto.model import ClusterHealth, HealthStatus
from konsole.collect.history.rows import event_from_row, event_row, poll_record, snapshot_from_state
from konsole.model.check import CheckFinding, assess
from konsole.model.events import Event, EventKind, EventState, advance
from konsole.model.placement import (
    Placement,
    Replication,
    alive_servers,
    is_offline,
    is_under_replicated,
    placement,
)
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.table_stats import table_figures
from konsole.render.check import render_nagios
from konsole.ui.screens.cluster_facts import bucket_counts, server_rows
from konsole.ui.state import ConsoleState
from store.queries import StateAt
from store.rows import PollRow
from tests._testutil.builders import Bucket, probe, snap, table, tm, view
from tests._testutil.judging import judged, showing

T0 = 1000.0
TABLETS = (0, 1, 2, 3)

# Four tablet servers, replication factor 3; each server leads some buckets.
ORDERS: list[Bucket] = [(0, (0, 1, 2), 100), (1, (1, 2, 3), 100), (2, (2, 3, 0), 100)]
ORDERS += [(3, (3, 0, 1), 100)]
DAY1: list[Bucket] = [(1, (1, 2, 3), 5), (3, (3, 1, 2), 5)]
DAY2: list[Bucket] = [(2, (2, 3, 0), 7), (0, (0, 1, 2), 7)]
QUIET: list[Bucket] = [(0, (0, 1, 2), 1), (1, (1, 2, 3), 1)]


def cluster(
    *,
    orders: Sequence[Bucket] = ORDERS,
    day1: Sequence[Bucket] = DAY1,
    quiet: Sequence[Bucket] = QUIET,
    tablets: Sequence[int] = TABLETS,
    t: float = T0,
    seq: int = 1,
    coords: tuple[str, ...] = ("active", "standby"),
    health: ClusterHealth | None = None,
    under: dict[int, int] | None = None,
    locked: Sequence[int] = (),
) -> ClusterSnapshot:
    """The three tables on ``tablets``; ``under``: server -> its underReplicated metric."""
    tables = [
        table("db.orders", 1, orders),
        table("db.events", 2, partitions={"2024-06-01": day1, "2024-06-02": DAY2}),
        table("db.quiet", 3, quiet),
    ]
    metrics = [
        tm(
            i,
            under_replicated=(under or {}).get(i, 0),
            disk_write_locked=i in locked,
            disk_usage_ratio=0.95 if i in locked else 0.3,
        )
        for i in tablets
    ]
    return snap(
        view(tablets, tables),
        seq=seq,
        t=t,
        coords=probe(*coords),
        cluster_health=health,
        metrics=metrics,
    )


STEADY = cluster()

SCENARIOS: dict[str, ClusterSnapshot] = {
    "steady": cluster(t=T0 + 5, seq=2),
    # Tablet server 3 gone: db.orders#3 lost its leader, db.events[2024-06-01]#1 is still
    # said to be led by 3 (the coordinator has not noticed yet), 7 replicas sit on 3. The
    # servers report the under-replicated buckets they lead: 1 leads 3 of them, 2 leads 2.
    "server_gone": cluster(
        orders=[*ORDERS[:3], (None, (3, 0, 1), 100)],
        tablets=(0, 1, 2),
        under={1: 3, 2: 2},
        t=T0 + 5,
        seq=2,
    ),
    "failover": cluster(coords=("standby", "active"), t=T0 + 5, seq=2),
    "write_lock": cluster(locked=(1,), t=T0 + 5, seq=2),
    "leaderless_table": cluster(
        quiet=[(None, (0, 1, 2), 1), (None, (1, 2, 3), 1)], t=T0 + 5, seq=2
    ),
    # A 1.0 poll: GetClusterHealth says 3 of 10 leaders inactive and 5 of 30 replicas out
    # of sync, the servers' metrics say 4 buckets; placement sees one leaderless bucket.
    "health_1_0": cluster(
        orders=[(None, (0, 1, 2), 100), *ORDERS[1:]],
        health=ClusterHealth(30, 25, 10, 7, HealthStatus.RED),
        under={1: 2, 2: 2},
        t=T0 + 5,
        seq=2,
    ),
}

#: What placement and replication give for each scenario, written out so a change of the
#: definitions shows here: (offline, under-replicated, out-of-sync replicas) cluster-wide,
#: then (offline, under-replicated, replicas offline) by placement alone.
EXPECTED: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "steady": ((0, 0, 0), (0, 0, 0)),
    "server_gone": ((2, 7, 7), (2, 7, 7)),
    "failover": ((0, 0, 0), (0, 0, 0)),
    "write_lock": ((0, 0, 0), (0, 0, 0)),
    "leaderless_table": ((2, 0, 0), (2, 0, 0)),
    "health_1_0": ((3, 4, 5), (1, 0, 0)),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_definitions_give_the_expected_figures(name: str) -> None:
    rep = _replication(SCENARIOS[name])
    facts = rep.placement
    cluster_wide = (rep.offline_buckets, rep.under_replicated_buckets, rep.out_of_sync_replicas)
    by_placement = (
        len(facts.offline),
        len(facts.under_replicated),
        facts.replicas_offline_count,
    )
    assert (cluster_wide, by_placement) == EXPECTED[name]


# =========================================================================== the faces


@dataclass(frozen=True, slots=True)
class Faces:
    """The counts each face prints for one poll."""

    #: figure name -> value, per face (faces that do not print a figure leave it out).
    overview: dict[str, int]
    check: dict[str, int]
    perfdata: dict[str, int]
    history: dict[str, int]


def _replication(s: ClusterSnapshot) -> Replication:
    rep = judged(s).replication
    assert rep is not None
    return rep


def _state(s: ClusterSnapshot) -> ConsoleState:
    return showing(ConsoleState(profile="demo", now=s.taken_at), s, last_ok=s)


def _overview(s: ClusterSnapshot) -> dict[str, int]:
    counts = bucket_counts(s, judged(s).replication)
    assert counts is not None
    rows = server_rows(_state(s))
    return {
        "offline_buckets": counts.offline_buckets,
        "under_replicated_buckets": counts.under_replicated_buckets,
        "out_of_sync_replicas": counts.out_of_sync_replicas,
        "buckets": counts.buckets,
        "tablet_servers": sum(r.state == "alive" for r in rows),
        "write_locked_servers": sum(
            1 for r in rows if r.metrics is not None and r.metrics.disk_write_locked
        ),
        "standby_coordinators": sum(r.state == "standby" for r in rows),
    }


def _check(s: ClusterSnapshot) -> tuple[dict[str, int], dict[str, int]]:
    """The check's measures, and the perfdata of its rendered Nagios line."""
    result = assess(judged(s))
    measures = {
        label: int(m.value)
        for label, m in result.measures.items()
        if m.value is not None and float(m.value).is_integer()
    }
    # The health findings the check prints name counts too: leaders (buckets per table)
    # and replicas_offline (replicas per server).
    measures["leaderless_buckets"] = _finding_sum(result.findings, "leaders")
    measures["replicas_offline"] = _finding_sum(result.findings, "replicas_offline")
    measures["named_offline_buckets"] = len(result.offline_buckets)
    measures["named_under_replicated_buckets"] = len(result.under_replicated_buckets)
    first = render_nagios(result).splitlines()[0]
    perf = {k: int(v) for k, v in re.findall(r"'(\w+)'=(\d+)(?:[;\s]|$)", first)}
    return measures, perf


def _finding_sum(findings: Sequence[CheckFinding], rule: str) -> int:
    """The counts the findings of ``rule`` print ("2 buckets ...", "7 replicas ...")."""
    total = 0
    for f in findings:
        if f.rule == rule:
            match = re.match(r"(\d+) (?:bucket|replica)", f.reason)
            assert match, f
            total += int(match.group(1))
    return total


def _history(s: ClusterSnapshot) -> dict[str, int]:
    """What the history gives back for this poll: its rows made into the as-of snapshot."""
    record = poll_record(s)
    assert record.servers is not None and record.databases is not None
    assert record.tables is not None and record.partitions is not None
    assert record.placement is not None and record.coordinators is not None
    poll = PollRow(
        1, record.at_ms, record.seq, record.latency_ms, record.ok, None, 0, record.errors, 0
    )
    state = StateAt(
        poll=poll,
        servers=record.servers,
        coordinators=record.coordinators,
        databases=record.databases,
        tables=record.tables,
        schemas=record.schemas,
        partitions=record.partitions,
        placement=record.placement,
        offsets=record.offsets,
        metrics=record.metrics,
    )
    back = snapshot_from_state(state)
    rep = _replication(back)
    return {
        "offline_buckets": rep.offline_buckets,
        "under_replicated_buckets": rep.under_replicated_buckets,
        "out_of_sync_replicas": rep.out_of_sync_replicas,
        "buckets": rep.placement.buckets,
        "tablet_servers": len(rep.placement.alive),
        "write_locked_servers": sum(1 for m in back.metrics if m.disk_write_locked),
        "standby_coordinators": len(back.standby_coordinators),
    }


def faces(s: ClusterSnapshot) -> Faces:
    check, perf = _check(s)
    return Faces(_overview(s), check, perf, _history(s))


@pytest.mark.parametrize("name", SCENARIOS)
def test_overview_check_and_history_print_the_same_counts(name: str) -> None:
    s = SCENARIOS[name]
    rep = _replication(s)
    facts = rep.placement
    seen = faces(s)
    cluster_wide = {
        "offline_buckets": rep.offline_buckets,
        "under_replicated_buckets": rep.under_replicated_buckets,
        "out_of_sync_replicas": rep.out_of_sync_replicas,
        "buckets": facts.buckets,
        "tablet_servers": len(facts.alive),
        "write_locked_servers": sum(1 for m in s.metrics if m.disk_write_locked),
        "standby_coordinators": len(s.standby_coordinators),
    }
    assert seen.overview == cluster_wide
    assert seen.history == cluster_wide
    shared = ("offline_buckets", "under_replicated_buckets", "tablet_servers")
    shared += ("write_locked_servers",)
    for label in shared:
        assert seen.check[label] == cluster_wide[label], label
        assert seen.perfdata[label] == cluster_wide[label], label
    assert seen.check["coordinators_standby"] == cluster_wide["standby_coordinators"]
    # What the check names bucket by bucket is placement's (no server names buckets).
    assert seen.check["leaderless_buckets"] == len(facts.offline)
    assert seen.check["named_offline_buckets"] == len(facts.offline)
    assert seen.check["named_under_replicated_buckets"] == len(facts.under_replicated)
    assert seen.check["replicas_offline"] == facts.replicas_offline_count


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_tables_screens_sum_to_placement(name: str) -> None:
    """Per table only placement knows: the tables screen's rows sum to it, and each row
    agrees with the table detail's per-bucket marks."""
    s = SCENARIOS[name]
    facts = placement(s.view)  # type: ignore[arg-type]
    figures = table_figures(s, STEADY, facts)
    assert sum(f.offline for f in figures) == len(facts.offline)
    assert sum(f.under_replicated for f in figures) == len(facts.under_replicated)
    alive = alive_servers(s.view)  # type: ignore[arg-type]
    for f, t in zip(figures, s.view.tables, strict=True):  # type: ignore[union-attr]
        assert f.offline == sum(is_offline(b, alive) for b in t.buckets), f.path
        assert f.under_replicated == sum(is_under_replicated(b, alive) for b in t.buckets)
    # Nothing per table exceeds the cluster-wide figures the overview shows.
    rep = _replication(s)
    assert sum(f.offline for f in figures) <= rep.offline_buckets
    assert sum(f.under_replicated for f in figures) <= rep.under_replicated_buckets


# =========================================================================== watch's events


def _events(s: ClusterSnapshot) -> list[Event]:
    """``watch``'s events for the scenario, after a steady poll, as the history keeps them."""
    state = advance(EventState(), STEADY)[1]
    events = advance(state, s)[0]
    back = [event_from_row(event_row(e)) for e in events]
    assert [(e.kind, e.count) for e in back] == [(e.kind, e.count) for e in events]
    return back


def _event_count(events: Sequence[Event], kind: EventKind) -> int:
    return sum(e.count for e in events if e.kind is kind)


def _expected_event_count(figure: str, facts: Placement, rep: Replication) -> int:
    """What the events should carry after a steady poll (which had none of these)."""
    if figure == "bucket_offline":  # they name buckets: placement's offline ones
        return len(facts.offline)
    if figure == "replicas_offline":  # per server not alive: the replicas placed on it
        return facts.replicas_offline_count
    return rep.under_replicated_buckets  # cluster-wide, in buckets


_FIGURES = {
    "bucket_offline": EventKind.BUCKET_OFFLINE,
    "replicas_offline": EventKind.REPLICAS_OFFLINE,
    "under_replicated": EventKind.UNDER_REPLICATED,
}
_AGREE = [(n, f) for n in SCENARIOS for f in _FIGURES]


def _check_events(name: str, figure: str) -> None:
    s = SCENARIOS[name]
    rep = _replication(s)
    events = _events(s)
    assert _event_count(events, _FIGURES[figure]) == _expected_event_count(
        figure, rep.placement, rep
    )


@pytest.mark.parametrize(("name", "figure"), _AGREE)
def test_events_carry_the_same_counts(name: str, figure: str) -> None:
    _check_events(name, figure)


@pytest.mark.parametrize("name", SCENARIOS)
def test_events_name_the_write_lock_the_check_counts(name: str) -> None:
    s = SCENARIOS[name]
    rejected = {
        e.details.get("server")
        for e in _events(s)
        if e.kind is EventKind.WRITE_REJECTED and e.details.get("cause") == "disk_write_locked"
    }
    assert len(rejected) == faces(s).check["write_locked_servers"]


def test_the_scenarios_are_what_they_say() -> None:
    """Guards the builders: each scenario differs from the steady poll in its one way."""
    assert _event_count(_events(SCENARIOS["steady"]), EventKind.BUCKET_OFFLINE) == 0
    kinds = {e.kind for e in _events(SCENARIOS["failover"])}
    assert EventKind.COORDINATOR_FAILOVER in kinds
    assert EventKind.SERVER_LEFT in {e.kind for e in _events(SCENARIOS["server_gone"])}
