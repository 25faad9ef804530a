"""server_version_changed: a server's line (told by its API keys) changes, across its
restart too; nothing when the line stays or the server could not be asked."""

from __future__ import annotations

import dataclasses

from fluss_proto.model import ApiVersionRange, ClusterView
from konsole.model.events import EventConfig, EventState, advance
from konsole.model.health import HealthRules
from konsole.model.snapshot import ClusterSnapshot
from tests._testutil.builders import snap, table, view

T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
OLD = range(1000, 1052)
NEW = range(1000, 1065)
CONFIG = EventConfig(rules=HealthRules(require_metrics=False))


def poll(
    lines: dict[int, range | None], coordinator: range | None = OLD, seq: int = 1
) -> ClusterSnapshot:
    def keys(k: range | None) -> tuple[ApiVersionRange, ...]:
        return () if k is None else tuple(ApiVersionRange(i, 0, 1) for i in k)

    v: ClusterView = view(tuple(lines), tables=[T])
    assert v.coordinator is not None
    v = dataclasses.replace(
        v,
        coordinator=dataclasses.replace(v.coordinator, api_versions=keys(coordinator)),
        tablet_servers=tuple(
            dataclasses.replace(s, api_versions=keys(lines[s.node_id])) for s in v.tablet_servers
        ),
    )
    return snap(v, seq=seq, t=1000.0 + seq)


def changes(*polls: ClusterSnapshot) -> list[tuple[str, dict[str, object]]]:
    state = EventState()
    found = []
    for p in polls:
        events, state = advance(state, p, config=CONFIG)
        found += [
            (e.subject.name, dict(e.details))
            for e in events
            if e.kind.value == "server_version_changed"
        ]
    return found


def test_a_tablet_server_restarted_on_the_new_line_is_said_once_across_its_absence() -> None:
    found = changes(
        poll({0: OLD, 1: OLD, 2: OLD}, seq=1),
        poll({1: OLD, 2: OLD}, seq=2),  # tablet-server 0 down
        poll({0: NEW, 1: OLD, 2: OLD}, seq=3),  # back on 1.0
        poll({0: NEW, 1: OLD, 2: OLD}, seq=4),
    )
    assert found == [
        (
            "tablet-server 0",
            {"server": "tablet-server 0", "old": "0.9", "new": "1.0", "max_api_key": 1064},
        )
    ]


def test_the_coordinator_and_a_step_back_are_said_too() -> None:
    found = changes(
        poll({0: NEW}, coordinator=OLD, seq=1),
        poll({0: NEW}, coordinator=NEW, seq=2),
        poll({0: OLD}, coordinator=NEW, seq=3),
    )
    assert [(subject, d["old"], d["new"]) for subject, d in found] == [
        ("coordinator 127.0.0.1:9123", "0.9", "1.0"),
        ("tablet-server 0", "1.0", "0.9"),
    ]


def test_nothing_when_the_line_stays_or_a_server_was_not_asked() -> None:
    assert (
        changes(
            poll({0: OLD, 1: OLD}, seq=1),
            poll({0: None, 1: OLD}, seq=2),  # not asked: its line is kept, not lost
            poll({0: OLD, 1: OLD}, seq=3),
        )
        == []
    )
