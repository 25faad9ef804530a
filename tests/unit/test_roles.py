"""Roles come from what the cluster says, never from a bootstrap address's place in the list.

A bootstrap list mixes the coordinator and the tablet servers (Fluss clients take any
server); a dead tablet server in it must not be judged a coordinator by any face.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fluss_proto.model import HealthStatus
from konsole.collect.history.recorded_look import recorded_look
from konsole.collect.history.rows import poll_record, snapshot_at
from konsole.model.check import assess
from konsole.model.health import Finding
from konsole.model.roles import (
    AddressRoles,
    Probed,
    Role,
    sort_probes,
    unanswered,
)
from konsole.model.snapshot import ClusterSnapshot, CoordinatorRole
from konsole.render.check import render
from store import open_reader, open_writer
from tests._testutil.builders import T0, addr, snap, table, view
from tests._testutil.judging import health_of, judged, judged_as
from tests._testutil.poller import Fakes

C = addr(0)  # the builders' coordinator, 127.0.0.1:9123


def ts(node_id: int) -> str:
    """The builders' tablet server address (127.0.0.1:9200 + id)."""
    return f"127.0.0.1:{9200 + node_id}"


#: The issue's list: the coordinator and every tablet server, tablet server 1 dead.
BOOTSTRAP = (C, ts(0), ts(1), ts(2))
ANSWERS = {C: "active", ts(0): "tablet", ts(2): "tablet"}
#: Metadata without tablet server 1, whose replicas are still placed on it.
WITHOUT_1 = view((0, 2), [table("db.t", 1, [(0, (0, 1), 5), (2, (2, 1), 7)])])
#: The same without any replica on tablet server 1 (an empty server died).
WITHOUT_1_EMPTY = view((0, 2), [table("db.t", 1, [(0, (0, 2), 5)])])


# =========================================================================== sort_probes


def test_an_unreachable_address_nobody_named_is_a_bootstrap_address() -> None:
    coordinators, errors = sort_probes(
        [
            Probed(C, "active"),
            Probed(ts(0), "tablet-server"),
            Probed(ts(1), "unreachable", "refused"),
        ],
        AddressRoles(),
        declared=(),
    )
    assert [(c.address, c.role) for c in coordinators] == [(C, CoordinatorRole.ACTIVE)]
    assert [(e.scope, e.subject, e.message) for e in errors] == [
        ("bootstrap", f"bootstrap {ts(1)}", f"{ts(1)}: refused")
    ]


@pytest.mark.parametrize(
    ("known", "declared", "coordinator", "subject"),
    [
        (Role("tablet-server", 1), (), False, "tablet-server 1"),
        (Role("tablet-server"), (), False, f"bootstrap {ts(1)}"),  # a probe said: no node id
        (Role("coordinator"), (), True, None),
        (None, (ts(1),), True, None),  # the profile declares it a coordinator
        (Role("tablet-server", 1), (ts(1),), True, None),  # declared wins
    ],
)
def test_an_unreachable_address_keeps_the_role_the_cluster_last_gave_it(
    known: Role | None, declared: tuple[str, ...], coordinator: bool, subject: str | None
) -> None:
    roles = AddressRoles()
    if known is not None:
        roles.learn(ts(1), known)
    coordinators, errors = sort_probes(
        [Probed(ts(1), "unreachable", "refused")], roles, declared=declared
    )
    assert [c.role for c in coordinators] == ([CoordinatorRole.UNREACHABLE] if coordinator else [])
    assert [e.subject for e in errors] == ([] if subject is None else [subject])


def test_roles_learn_from_metadata_and_answers_newest_word_wins() -> None:
    roles = AddressRoles()
    roles.learn_view(view((0, 1)))
    assert roles.get(C) == Role("coordinator")
    assert roles.get(ts(1)) == Role("tablet-server", 1)
    roles.learn_answer(ts(1), "tablet-server")  # no node id in an answer: the id is kept
    assert roles.get(ts(1)) == Role("tablet-server", 1)
    roles.learn_answer(ts(1), "standby")  # the port now serves a standby coordinator
    assert roles.get(ts(1)) == Role("coordinator")
    roles.learn_answer("127.0.0.1:1", "unreachable")  # says nothing
    assert roles.get("127.0.0.1:1") is None
    assert roles.coordinators == [C, ts(1)]


# =========================================================================== the poller


async def test_a_dead_tablet_server_in_the_bootstrap_list_is_not_a_coordinator() -> None:
    fakes = Fakes(views=[WITHOUT_1], roles=dict(ANSWERS))
    poller = fakes.poller(coordinators=(), bootstrap=BOOTSTRAP)
    s = await poller.poll()
    assert [(c.address, c.role) for c in s.coordinators] == [(C, CoordinatorRole.ACTIVE)]
    assert [u.subject for u in unanswered(s)] == [f"bootstrap {ts(1)}"]
    assert not [e for e in s.errors if e.scope == "coordinator"]


async def test_seeded_roles_name_the_dead_address_as_the_tablet_server_it_was() -> None:
    fakes = Fakes(views=[WITHOUT_1], roles=dict(ANSWERS))
    poller = fakes.poller(coordinators=(), bootstrap=BOOTSTRAP)
    poller.seed_roles([(ts(1), Role("tablet-server", 1)), (C, Role("coordinator"))])
    s = await poller.poll()
    assert [(u.subject, u.address) for u in unanswered(s)] == [("tablet-server 1", ts(1))]
    assert [c.address for c in s.coordinators] == [C]


async def test_a_failed_poll_names_no_bootstrap_address_a_coordinator() -> None:
    fakes = Fakes(views=[RuntimeError("down")], roles={C: "unreachable"})
    poller = fakes.poller(coordinators=(), bootstrap=BOOTSTRAP)
    s = await poller.poll()
    assert not s.ok and s.coordinators == ()
    assert sorted(u.address for u in unanswered(s)) == sorted(BOOTSTRAP)
    health = health_of(s)
    assert [(f.rule, f.subject) for f in health.findings] == [("unreachable", "cluster")]
    details = assess(judged_as(s, health)).details
    assert f"seen: bootstrap {ts(1)} unreachable (no answer)" in details
    assert not any("coordinator" in line for line in details)


async def test_a_standby_answering_from_the_bootstrap_list_is_probed_every_poll() -> None:
    standby = ts(5)
    fakes = Fakes(views=[WITHOUT_1], roles={**ANSWERS, standby: "standby"})
    poller = fakes.poller(coordinators=(), bootstrap=(*BOOTSTRAP, standby))
    await poller.poll()
    fakes.probed.clear()
    fakes.roles[standby] = "unreachable"
    s = await poller.poll()
    assert sorted(fakes.probed) == sorted([C, standby])  # tablet servers are not asked again
    assert [(c.address, c.role) for c in s.coordinators] == [
        (C, CoordinatorRole.ACTIVE),
        (standby, CoordinatorRole.UNREACHABLE),
    ]
    assert unanswered(s) == ()


# =========================================================================== health and check


def _bootstrap_snapshot(v: object, subject_of_1: str) -> ClusterSnapshot:
    roles = AddressRoles()
    if subject_of_1 == "tablet-server 1":
        roles.learn(ts(1), Role("tablet-server", 1))
    coordinators, errors = sort_probes(
        [Probed(C, "active"), Probed(ts(1), "unreachable", "refused")], roles, declared=()
    )
    base = snap(v, t=T0, coords=coordinators)  # type: ignore[arg-type]
    return replace(base, errors=(*errors, *base.errors))


@pytest.mark.parametrize("known", ["bootstrap", "tablet-server 1"])
def test_the_check_headline_names_the_tablet_server_first_and_no_coordinator(known: str) -> None:
    s = _bootstrap_snapshot(WITHOUT_1, known)
    result = assess(judged(s))
    assert result.status.name == "WARNING"
    assert result.summary.startswith("tablet-server 1: 2 replicas placed on this server")
    assert result.unreachable_coordinators == ()
    assert not [f for f in result.findings if f.subject.startswith("coordinator")]
    line = render(result, "nagios").splitlines()[0]
    assert "coordinator 127.0.0.1:9201" not in line


def test_an_empty_dead_tablet_server_known_from_history_is_named_and_warns() -> None:
    s = _bootstrap_snapshot(WITHOUT_1_EMPTY, "tablet-server 1")
    result = assess(judged(s))
    assert result.status.name == "WARNING"
    assert result.summary.startswith(f"tablet-server 1: not in metadata, and its address {ts(1)}")
    assert [f.rule for f in result.findings if f.subject == "tablet-server 1"] == [
        "server_unreachable"
    ]


def test_an_unknown_dead_bootstrap_address_is_a_warning_naming_the_address() -> None:
    # was a GREEN note: a check after the coordinator dropped the server said OK (issue 38)
    s = _bootstrap_snapshot(WITHOUT_1_EMPTY, "bootstrap")
    health = health_of(s)
    without = health_of(replace(s, errors=tuple(e for e in s.errors if e.scope != "bootstrap")))
    assert set(health.findings) - set(without.findings) == {
        Finding(HealthStatus.YELLOW, "bootstrap", f"bootstrap {ts(1)}", health.findings[0].reason)
    }
    assert "does not answer (refused)" in health.findings[0].reason


# =========================================================================== history


def test_the_history_keeps_the_bootstrap_subject_and_the_roles_seen(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    alive = snap(view((0, 1, 2), [table("db.t", 1, [(0, (0, 1), 5)])]), seq=1, t=T0)
    dead = _bootstrap_snapshot(WITHOUT_1, "tablet-server 1")
    dead = replace(dead, seq=2, taken_at=T0 + 10)
    with open_writer(path) as w:
        w.record(poll_record(alive))
        w.record(poll_record(dead))
    # Tablet server 1 left metadata at the second poll; the file still says who it was.
    assert (ts(1), Role("tablet-server", 1)) in recorded_look(path).roles
    assert (C, Role("coordinator")) in recorded_look(path).roles
    with open_reader(path) as r:
        recorded = snapshot_at(r, T0 + 10)
    assert recorded is not None
    assert unanswered(recorded.snapshot) == unanswered(dead)
    placement_rules = {"bootstrap", "server_unreachable", "replicas_offline", "standby"}

    def judged(snapshot: ClusterSnapshot) -> list[tuple[str, str]]:
        return [
            (f.rule, f.subject) for f in health_of(snapshot).findings if f.rule in placement_rules
        ]

    assert judged(recorded.snapshot) == judged(dead) == [("replicas_offline", "tablet-server 1")]


def test_no_history_means_no_roles(tmp_path: Path) -> None:
    assert recorded_look(None).roles == []
    assert recorded_look(tmp_path / "missing.sqlite").roles == []
    (tmp_path / "junk.sqlite").write_text("not a database")
    assert recorded_look(tmp_path / "junk.sqlite").roles == []


# =========================================================================== every face


async def test_every_face_names_the_dead_tablet_server_and_no_coordinator_at_its_address() -> None:
    """The same poll through watch's events, serve's series and alerts, and check: one
    subject for tablet server 1, and T1's address never appears as a coordinator."""
    from konsole.model.alerts import AlertSettings, AlertState, advance_alerts
    from konsole.model.events import EventState, advance
    from konsole.serve.exposition.families import cluster_series

    fakes = Fakes(views=[view((0, 1, 2), [table("db.t", 1, [(0, (0, 1), 5)])]), WITHOUT_1])
    fakes.roles = {**ANSWERS, ts(1): "tablet"}
    first = await fakes.poller(coordinators=(), bootstrap=BOOTSTRAP).poll()
    fakes.roles = dict(ANSWERS)  # T1 is killed; a fresh process (check, a new console) looks
    s = await fakes.poller(coordinators=(), bootstrap=BOOTSTRAP).poll()
    health = health_of(s)
    _, state = advance(EventState(), first)
    events, _ = advance(state, s)
    series = cluster_series(replace(judged_as(s, health), previous_ok=first))
    alerts, _ = advance_alerts(
        AlertState(), "c", health, events, s.taken_at, AlertSettings(for_s=0)
    )
    coordinator_series = [labels for labels, _ in series["konsole_coordinator_up"]]
    assert coordinator_series == [(C, "active")]
    assert [e.subject.name for e in events if e.kind.value == "server_left"] == ["tablet-server 1"]
    assert not [e for e in events if ts(1) in e.subject.name]
    down = [a for a in alerts.firing if a.name == "FlussTabletServerDown"]
    assert [a.label("server") for a in down] == ["1"]
    assert all(a.label("server") != ts(1) for a in alerts.firing)
    assert assess(judged_as(s, health)).summary.startswith("tablet-server 1: ")
