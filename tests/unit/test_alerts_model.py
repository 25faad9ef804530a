"""Alerts from health findings (konsole.model.alerts): the ``for:`` hold, the flap
hold-down, labels and annotations, event alerts; each real sequence replayed poll by poll
through the same events and health the poller derives."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

import pytest

import konsole.model.health as health_module
from fluss_proto.model import HealthStatus
from konsole.model.alerts import (
    ALERTNAMES,
    Alert,
    AlertSettings,
    AlertState,
    AlertUpdate,
    advance_alerts,
    alert_payload,
    subject_labels,
)
from konsole.model.causes import SERVER_DOWN_RULES
from konsole.model.events import EventState, advance
from konsole.model.health import NOTE_RULES, Finding, Health
from konsole.model.snapshot import ClusterSnapshot
from tests._testutil.builders import addr, all_metrics, probe, snap, table, view, with_time
from tests._testutil.judging import health_of

SETTINGS = AlertSettings(for_s=30.0, keep_firing_s=30.0, event_hold_s=120.0)
T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
ALL_UP = snap(view(tables=[T]), metrics=all_metrics())
# Tablet server 2 stopped and gone from metadata: its replicas are offline, leaders moved.
T_WITHOUT_2 = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (0, (2, 0, 1), 10)])
TS2_DOWN = snap(view((0, 1), tables=[T_WITHOUT_2]), metrics=all_metrics((0, 1)))


def replay(
    polls: Sequence[tuple[float, ClusterSnapshot]], settings: AlertSettings = SETTINGS
) -> list[AlertUpdate]:
    """Each poll through events.advance, health.evaluate and advance_alerts, as serve does."""
    events_state = EventState()
    alerts = AlertState()
    previous = None
    out = []
    for t, s in polls:
        s = with_time(s, t)
        events, events_state = advance(events_state, s)
        health = health_of(s, previous=previous)
        update, alerts = advance_alerts(alerts, "prod", health, events, t, settings)
        out.append(update)
        previous = s
    return out


def names(alerts: Sequence[Alert]) -> set[str]:
    return {a.name for a in alerts}


def test_every_health_rule_has_an_alertname() -> None:
    """The table covers every rule health_of() can report (read from its source)."""
    tree = ast.parse(Path(health_module.__file__).read_text())
    rules = {
        call.args[1].value
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and getattr(call.func, "id", None) == "Finding"
        and len(call.args) > 1
        and isinstance(call.args[1], ast.Constant)
    }
    # The storage rules reach Finding through a table of (rule, tables, reason) tuples.
    source = Path(health_module.__file__).read_text()
    storage_rules = {"tiering_stalled", "kv_snapshot_stale", "lake_lag"}
    assert all(f'"{rule}"' in source for rule in storage_rules)
    rules |= storage_rules
    assert "replicas_offline" in rules and "disk_write_locked" in rules
    assert rules >= NOTE_RULES
    # bootstrap: an address that does not answer warns in the faces; whether it pages is
    # the alerts' call (issue 38): it does not (a tablet server it names is judged down).
    assert rules - NOTE_RULES - {"bootstrap"} <= set(ALERTNAMES)
    # One alertname per rule, but the findings of one down server are one alert.
    own = [name for rule, name in ALERTNAMES.items() if rule not in SERVER_DOWN_RULES]
    assert len(set(own)) == len(own)
    assert {ALERTNAMES[r] for r in SERVER_DOWN_RULES} == {"FlussTabletServerDown"}


def test_tablet_server_stop_fires_after_for_and_resolves_after_hold_down() -> None:
    polls = [(0.0, ALL_UP)] + [(t, TS2_DOWN) for t in (10.0, 20.0, 30.0, 40.0, 50.0)]
    polls += [(t, ALL_UP) for t in (60.0, 70.0, 80.0, 90.0)]
    updates = replay(polls)
    # pending for 30 s from its first sighting at t=10: fires at t=40, startsAt=10
    assert [names(u.firing) for u in updates[:4]] == [set()] * 4
    assert updates[1].pending and not updates[1].firing
    fired = [a for a in updates[4].firing if a.name == "FlussTabletServerDown"]
    assert len(fired) == 1
    alert = fired[0]
    assert alert.starts_at == 10.0 and alert.ends_at is None
    labels = dict(alert.labels)
    assert labels == {
        "alertname": "FlussTabletServerDown",
        "cluster": "prod",
        "severity": "warning",
        "server": "2",
    }
    notes = dict(alert.annotations)
    assert "tablet-server 2" in notes["summary"]
    assert "tablet-server 2" in notes["event"]  # server_left, kept from t=10
    # cleared at t=60: still firing through the hold-down, resolved at t=90 with endsAt
    for u in updates[6:9]:
        assert "FlussTabletServerDown" in names(u.firing) and not u.resolved
    (resolved,) = updates[9].resolved
    assert resolved.name == "FlussTabletServerDown"
    assert resolved.starts_at == 10.0 and resolved.ends_at == 90.0
    assert not updates[9].firing


def test_a_flap_within_the_hold_down_neither_resolves_nor_pages_again() -> None:
    polls = [(t, TS2_DOWN) for t in (0.0, 10.0, 20.0, 30.0)]  # fires at 30
    polls += [(40.0, ALL_UP), (50.0, ALL_UP), (60.0, TS2_DOWN), (70.0, TS2_DOWN)]
    updates = replay(polls)
    for u in updates[3:]:
        assert not u.resolved
        (alert,) = [a for a in u.firing if a.name == "FlussTabletServerDown"]
        assert alert.starts_at == 0.0


def test_a_finding_shorter_than_for_never_fires() -> None:
    blip = [(0.0, ALL_UP), (10.0, TS2_DOWN), (20.0, TS2_DOWN), (30.0, ALL_UP), (40.0, ALL_UP)]
    updates = replay(blip)
    assert all(not u.firing and not u.resolved for u in updates)


def test_for_zero_fires_on_the_first_poll() -> None:
    updates = replay([(5.0, TS2_DOWN)], AlertSettings(for_s=0.0))
    assert "FlussTabletServerDown" in names(updates[0].firing)


def test_coordinator_failover_fires_at_once_and_expires() -> None:
    """The 1.0 line's real sequence: active coordinator killed, one poll without an active
    one, then the standby takes over (the killed one stays unreachable)."""
    both = snap(view(tables=[T]), coords=probe("active", "standby"), metrics=all_metrics())
    none = snap(view(tables=[T]), coords=probe("unreachable", "standby"), metrics=all_metrics())
    moved = snap(view(tables=[T]), coords=probe("unreachable", "active"), metrics=all_metrics())
    polls = [(0.0, both), (10.0, none), (20.0, moved), (30.0, moved)]
    polls += [(t, moved) for t in (60.0, 130.0, 150.0)]
    updates = replay(polls)
    assert not updates[1].firing  # no active coordinator for one poll: under for:
    failover = [a for a in updates[2].firing if a.name == "FlussCoordinatorFailover"]
    assert len(failover) == 1
    assert dict(failover[0].labels)["server"] == addr(1)
    assert "failover" in dict(failover[0].annotations)["summary"]
    # the killed coordinator, now unreachable, is a standby finding held by for:
    assert "FlussStandbyCoordinatorUnreachable" in names(updates[4].firing)
    assert "FlussCoordinatorFailover" in names(updates[5].firing)  # until 20 + 120
    assert "FlussCoordinatorFailover" in names(updates[6].resolved)


def test_severity_follows_the_finding_and_tables_are_labelled() -> None:
    findings = (
        Finding(HealthStatus.RED, "leaders", "table db.orders", "2 buckets without a leader"),
        Finding(HealthStatus.UNKNOWN, "metrics_unknown", "tablet-server 1", "timeout"),
        Finding(HealthStatus.GREEN, "metrics_not_configured", "cluster", "info"),
    )
    health = Health(HealthStatus.RED, findings, "derived", 0.0)
    update, _ = advance_alerts(AlertState(), "c", health, (), 0.0, AlertSettings(for_s=0))
    by_name = {a.name: dict(a.labels) for a in update.firing}
    assert by_name == {
        "FlussBucketsOffline": {
            "alertname": "FlussBucketsOffline",
            "cluster": "c",
            "severity": "critical",
            "database": "db",
            "table": "orders",
        },
        "FlussMetricsUnknown": {
            "alertname": "FlussMetricsUnknown",
            "cluster": "c",
            "severity": "warning",
            "server": "1",
        },
    }


@pytest.mark.parametrize(
    ("subject", "labels"),
    [
        ("tablet-server 3", {"server": "3"}),
        ("coordinator 127.0.0.1:9123", {"server": "127.0.0.1:9123"}),
        ("table db.t", {"database": "db", "table": "t"}),
        ("cluster", {}),
    ],
)
def test_subject_labels(subject: str, labels: dict[str, str]) -> None:
    assert subject_labels(subject) == labels


def test_payload_is_the_v2_api_shape() -> None:
    alert = Alert((("alertname", "X"), ("cluster", "c")), (("summary", "s"),), 0.5, 60.0)
    assert alert_payload(alert, generator_url="http://h/") == {
        "labels": {"alertname": "X", "cluster": "c"},
        "annotations": {"summary": "s"},
        "startsAt": "1970-01-01T00:00:00.500+00:00",
        "endsAt": "1970-01-01T00:01:00.000+00:00",
        "generatorURL": "http://h/",
    }
    firing = alert_payload(Alert((("alertname", "X"),), (), 0.0))
    assert "endsAt" not in firing and "generatorURL" not in firing


def _health(*findings: Finding) -> Health:
    return Health(HealthStatus.RED, findings, "derived", 0.0)


LOCKED = Finding(HealthStatus.RED, "disk_write_locked", "tablet-server 2", "writes rejected")
DOWN = Finding(HealthStatus.YELLOW, "replicas_offline", "tablet-server 1", "3 replicas")
PRESSURE = Finding(HealthStatus.YELLOW, "kv_backpressure", "table db.t", "0.9 on tablet-server 2")
FAILED = Finding(HealthStatus.RED, "unreachable", "cluster", "unreachable (1 failed poll)")


def _run(*healths: Health) -> list[AlertUpdate]:
    state = AlertState()
    settings = AlertSettings(for_s=0.0, keep_firing_s=0.0)
    out = []
    for i, h in enumerate(healths):
        update, state = advance_alerts(state, "c", h, (), float(i), settings)
        out.append(update)
    return out


def test_a_failed_poll_resolves_nothing_it_could_not_see() -> None:
    updates = _run(_health(LOCKED, DOWN), _health(FAILED), _health(FAILED), _health())
    assert names(updates[1].firing) == {
        "FlussWritesRejected",
        "FlussTabletServerDown",
        "FlussClusterUnreachable",
    }
    assert not updates[1].resolved and not updates[2].resolved
    # the next good poll judges again: all three resolve
    assert names(updates[3].resolved) == names(updates[1].firing)


def test_unknown_metrics_keep_the_metric_alerts_of_that_server_only() -> None:
    unknown_2 = Finding(HealthStatus.UNKNOWN, "metrics_unknown", "tablet-server 2", "timeout")
    unknown_1 = Finding(HealthStatus.UNKNOWN, "metrics_unknown", "tablet-server 1", "timeout")
    kept = _run(_health(LOCKED, PRESSURE), _health(unknown_2))
    assert "FlussWritesRejected" in names(kept[1].firing)
    assert "FlussKvBackpressure" in names(kept[1].firing)  # a table's figure: any server's
    other = _run(_health(LOCKED), _health(unknown_1))
    assert names(other[1].resolved) == {"FlussWritesRejected"}
    plain = _run(_health(PRESSURE), _health())
    assert names(plain[1].resolved) == {"FlussKvBackpressure"}
