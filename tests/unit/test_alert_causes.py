"""One page per cause (konsole.model.causes): the findings of one down tablet server are one
alert, ``FlussTabletServerDown{server}``, from "does not answer" to "gone" until it is back;
what follows from it is folded into that alert; ``/metrics``' ``konsole_tablet_server_up``
reads the same judgement. Real sequences replayed poll by poll through health_of(), and the
``server_gone`` finding (a server known alive, no longer in metadata) as health gives it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from fluss_proto.model import HealthStatus
from konsole.model.alerts import (
    ALERTNAMES,
    Alert,
    AlertSettings,
    AlertState,
    AlertUpdate,
    advance_alerts,
)
from konsole.model.causes import (
    CONSEQUENCE_RULES,
    SERVER_DOWN_ALERT,
    SERVER_DOWN_RULES,
    down_servers,
)
from konsole.model.health import Finding, Health
from konsole.model.snapshot import ClusterSnapshot
from konsole.serve.exposition import Exposition
from tests._testutil.builders import all_metrics, metrics_error, snap, table, view, with_time
from tests._testutil.judging import health_of, judged_as

NOW = AlertSettings(for_s=0.0, keep_firing_s=0.0)
T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
# Tablet server 1 killed: first listed but not answering (its metrics do not answer either),
# then dropped from metadata by the coordinator with its replicas offline, leaders moved.
UP = snap(view(tables=[T]), metrics=all_metrics())
SILENT = snap(
    view(tables=[T], server_errors={1: "connection refused"}),
    metrics=all_metrics((0, 2)),
    metrics_errors=[metrics_error(1)],
)
T_WITHOUT_1 = table("db.t", 1, [(0, (0, 1, 2), 10), (2, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
LEFT = snap(
    view((0, 2), tables=[T_WITHOUT_1]),
    metrics=all_metrics((0, 2), under_replicated=1),
    metrics_errors=[metrics_error(1)],
)


def replay(polls: Sequence[tuple[float, ClusterSnapshot]]) -> list[AlertUpdate]:
    state, out, previous = AlertState(), [], None
    for t, s in polls:
        s = with_time(s, t)
        update, state = advance_alerts(state, "prod", health_of(s, previous=previous), (), t, NOW)
        out.append(update)
        previous = s
    return out


def down_alerts(alerts: Sequence[Alert]) -> list[Alert]:
    return [a for a in alerts if a.name == SERVER_DOWN_ALERT]


def test_every_down_rule_is_one_alertname() -> None:
    assert {ALERTNAMES[r] for r in SERVER_DOWN_RULES} == {SERVER_DOWN_ALERT}
    # every other rule keeps an alertname of its own
    others = {r: n for r, n in ALERTNAMES.items() if r not in SERVER_DOWN_RULES}
    assert len(set(others.values())) == len(others)
    assert SERVER_DOWN_ALERT not in others.values()


def test_the_hand_over_from_unreachable_to_gone_is_one_alert_that_never_resolves() -> None:
    """Before the fix, FlussTabletServerUnreachable resolved as FlussTabletServerDown took
    over while the server stayed dead (issue 38)."""
    polls = [(0.0, UP), (5.0, SILENT), (10.0, SILENT), (15.0, LEFT), (20.0, LEFT), (25.0, UP)]
    updates = replay(polls)
    assert not updates[0].firing
    for u in updates[1:5]:
        (alert,) = down_alerts(u.firing)
        assert dict(alert.labels) == {
            "alertname": SERVER_DOWN_ALERT,
            "cluster": "prod",
            "severity": "warning",
            "server": "1",
        }
        assert alert.starts_at == 5.0
        assert not u.resolved, u.resolved  # nothing resolves while it is dead
    assert "did not answer" in dict(updates[1].firing[0].annotations)["summary"]
    assert "not alive" in dict(down_alerts(updates[3].firing)[0].annotations)["summary"]
    (resolved,) = updates[5].resolved
    assert resolved.name == SERVER_DOWN_ALERT and resolved.ends_at == 25.0
    assert not updates[5].firing


def test_its_consequences_are_folded_into_it_not_paged() -> None:
    """The six pages of issue 38's seeded kill (unreachable, down, under-replicated, read
    errors, metrics unknown) are one; its description still says what followed."""
    updates = replay([(0.0, UP), (5.0, SILENT), (15.0, LEFT)])
    for u in updates[1:]:
        assert {a.name for a in u.firing} == {SERVER_DOWN_ALERT}
    assert "metrics_unknown" in {f.rule for f in health_of(SILENT).findings}
    assert "under_replicated" in {f.rule for f in health_of(LEFT).findings}
    description = dict(updates[2].firing[0].annotations)["description"]
    assert "Following from it" in description and "under-replicated" in description


def _health(*findings: Finding) -> Health:
    return Health(HealthStatus.RED, findings, "derived", 0.0)


def run(*healths: Health, settings: AlertSettings = NOW) -> list[AlertUpdate]:
    state, out = AlertState(), []
    for i, h in enumerate(healths):
        update, state = advance_alerts(state, "c", h, (), float(i), settings)
        out.append(update)
    return out


UNANSWERED = Finding(
    HealthStatus.YELLOW, "server_unreachable", "tablet-server 1", "listed but did not answer"
)
GONE = Finding(HealthStatus.YELLOW, "server_gone", "tablet-server 1", "gone from metadata")
GONE_RED = Finding(HealthStatus.RED, "server_gone", "tablet-server 1", "gone, held 3 replicas")
BUCKETS = Finding(HealthStatus.RED, "leaders", "table db.t", "1 bucket without an active leader")
LAGGING = Finding(HealthStatus.YELLOW, "under_replicated", "tablet-server 0", "1 bucket")


def test_an_empty_clusters_dead_server_stays_one_alert_whatever_its_severity() -> None:
    """No replicas on it: "did not answer", then gone (YELLOW, then RED once judged to hold
    replicas): one identity, one severity label, until it is back."""
    updates = run(
        _health(), _health(UNANSWERED), _health(GONE), _health(GONE_RED), _health(GONE), _health()
    )
    keys = {a.labels for u in updates[1:5] for a in u.firing}
    assert len(keys) == 1 and dict(next(iter(keys)))["severity"] == "warning"
    assert all(not u.resolved for u in updates[:5])
    assert [a.name for a in updates[5].resolved] == [SERVER_DOWN_ALERT]


def test_offline_buckets_page_on_their_own_and_consequences_wait_for_after_it() -> None:
    """Offline buckets are not folded (data is unavailable); a consequence that outlives the
    cause's alert (its hold-down included) is a new candidate held by ``for`` from then."""
    held = AlertSettings(for_s=2.0, keep_firing_s=0.0)
    updates = run(
        _health(GONE, BUCKETS, LAGGING),
        _health(GONE, BUCKETS, LAGGING),
        _health(GONE, BUCKETS, LAGGING),
        _health(LAGGING),
        _health(LAGGING),
        _health(),
        settings=held,
    )
    assert {a.name for a in updates[2].firing} == {SERVER_DOWN_ALERT, "FlussBucketsOffline"}
    # back at [3]: the cause's alert resolves there, so it still folds what follows;
    # from [4] the under-replication is a candidate of its own, held by its for
    assert [a.name for a in updates[3].resolved] == [SERVER_DOWN_ALERT, "FlussBucketsOffline"]
    assert not updates[3].pending and not updates[3].firing
    assert updates[4].pending and not updates[4].firing
    assert not updates[5].firing and not updates[5].pending


def test_down_servers_reads_only_tablet_servers_judged_down() -> None:
    findings = (
        UNANSWERED,
        GONE_RED,
        Finding(HealthStatus.YELLOW, "replicas_offline", "tablet-server 4", "2 replicas"),
        Finding(HealthStatus.YELLOW, "server_unreachable", "bootstrap 127.0.0.1:1", "x"),
        LAGGING,
    )
    assert down_servers(findings) == {"1": (UNANSWERED, GONE_RED), "4": (findings[2],)}
    assert not CONSEQUENCE_RULES & SERVER_DOWN_RULES


def up_series(exposition: Exposition) -> dict[str, float]:
    text = generate_latest(exposition.registry).decode()
    return {
        s.labels["server"]: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "konsole_tablet_server_up"
    }


def test_metrics_say_down_exactly_when_the_alert_does() -> None:
    """``konsole_tablet_server_up`` is 0 for a server listed but not answering and for one
    judged gone; absent once no finding names it (back, or retired)."""
    exposition = Exposition(["a"])

    def feed(s: ClusterSnapshot, health: Health) -> dict[str, float]:
        asyncio.run(exposition.on_poll("a", judged_as(s, health)))
        return up_series(exposition)

    silent = with_time(SILENT, 1.0)
    assert feed(silent, health_of(silent)) == {"0": 1.0, "1": 0.0, "2": 1.0}
    empty = snap(view((0, 2)), t=2.0)
    gone = Health(HealthStatus.YELLOW, (GONE,), "derived", 2.0)
    assert feed(empty, gone) == {"0": 1.0, "1": 0.0, "2": 1.0}
    retired = with_time(empty, 3.0)
    assert feed(retired, health_of(retired)) == {"0": 1.0, "2": 1.0}


def test_consequences_stay_folded_through_the_causes_hold_down() -> None:
    """A server just back catches up: its under-replication does not page while the cause's
    alert is kept firing, and pages only if it outlasts that by its own ``for``."""
    held = AlertSettings(for_s=1.0, keep_firing_s=3.0)
    healths = [_health(GONE, LAGGING)] * 2 + [_health(LAGGING)] * 6
    updates = run(*healths, settings=held)
    firing = [sorted(a.name for a in u.firing) for u in updates]
    assert firing[:5] == [[], [SERVER_DOWN_ALERT]] + [[SERVER_DOWN_ALERT]] * 3
    assert [a.name for a in updates[5].resolved] == [SERVER_DOWN_ALERT]
    assert firing[5] == [] and not updates[5].pending  # still folded as the cause resolves
    assert firing[6] == [] and updates[6].pending  # a candidate of its own from [6]
    assert firing[7] == ["FlussUnderReplicated"]
