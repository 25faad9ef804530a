"""Health findings as Alertmanager alerts, with a ``for:`` hold and flap damping. Pure.

:func:`advance_alerts` takes one cluster's :class:`~konsole.model.health.Health` and the
events of the same poll and carries an immutable :class:`AlertState` from poll to poll:

- every finding that is not GREEN is an alert candidate named by its rule
  (:data:`ALERTNAMES`, one ``alertname`` per health rule, docs/alerts.md), except that the
  findings of one down tablet server are one alert, ``FlussTabletServerDown``, with one
  severity whichever of them says it, and what follows from it is folded into that alert
  while it lasts (:mod:`konsole.model.causes`); its labels are
  ``alertname``, ``cluster``, ``severity`` (RED: critical, YELLOW and UNKNOWN: warning) and
  the subject (``server``: a tablet server's id or a coordinator's address; ``database`` and
  ``table``); its annotations the finding's text and the event that raised it;
- a candidate fires only once it has held for ``for_s`` seconds (like a Prometheus rule's
  ``for:``); ``startsAt`` is when it was first seen;
- a firing alert whose finding clears keeps firing for ``keep_firing_s`` from the first
  poll that no longer sees it (the hold-down): a finding that flaps back within it neither
  resolves nor pages again, and keeps its ``startsAt``; once clear for that long the alert
  resolves (``endsAt`` = that poll's time; 0 resolves on the first clear poll);
- a finding that was not judged this poll is not resolved: when the poll failed, every
  alert but ``FlussClusterUnreachable`` stays as it was; when a server's metrics are
  unknown, the alerts of the metric rules about it stay (unknown is not GREEN);
- a coordinator failover (the ``coordinator_failover`` event) raises
  ``FlussCoordinatorFailover`` at once, active for ``event_hold_s`` seconds.

Alerts are identified by their labels (as Alertmanager does); the delivery (re-sending
active alerts, retrying) is :mod:`konsole.serve.alerts.delivery`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final

from fluss_proto.model import HealthStatus
from konsole.model import subjects
from konsole.model.causes import (
    CONSEQUENCE_RULES,
    SERVER_DOWN_ALERT,
    SERVER_DOWN_RULES,
    SERVER_DOWN_SEVERITY,
    down_servers,
)
from konsole.model.events.base import Event, EventKind
from konsole.model.health import METRIC_RULES, Finding, Health
from konsole.model.timefmt import rfc3339_text

__all__ = [
    "ALERTNAMES",
    "EVENT_ALERTS",
    "Alert",
    "AlertSettings",
    "AlertState",
    "AlertUpdate",
    "advance_alerts",
    "alert_payload",
    "subject_labels",
]

#: One alertname per health rule (konsole.model.health); GREEN findings never alert.
ALERTNAMES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "no_data": "FlussNoData",
        "unreachable": "FlussClusterUnreachable",
        "coordinator": "FlussCoordinatorDown",
        "standby": "FlussStandbyCoordinatorUnreachable",
        # One cause, one alert (konsole.model.causes): a down server, whichever finding says it.
        "server_unreachable": SERVER_DOWN_ALERT,
        "leaders": "FlussBucketsOffline",
        "replicas_offline": SERVER_DOWN_ALERT,
        "server_gone": SERVER_DOWN_ALERT,
        "cluster_health": "FlussClusterHealthDegraded",
        "disk_write_locked": "FlussWritesRejected",
        "disk_usage": "FlussDiskUsageHigh",
        "under_replicated": "FlussUnderReplicated",
        "under_min_isr": "FlussUnderMinIsr",
        "kv_backpressure": "FlussKvBackpressure",
        "kv_rejections": "FlussKvWritesRejected",
        "heap": "FlussHeapHigh",
        "metrics_unknown": "FlussMetricsUnknown",
        "read_errors": "FlussReadErrors",
        "tiering_stalled": "FlussTieringStalled",
        "kv_snapshot_stale": "FlussKvSnapshotStale",
        "lake_lag": "FlussLakeLagHigh",
        "disk_headroom": "FlussDiskHeadroomLow",
        "write_lock_forecast": "FlussWriteLockForecast",
    }
)
#: Alerts raised by an event rather than a finding: event kind -> alertname.
EVENT_ALERTS: Final[Mapping[EventKind, str]] = MappingProxyType(
    {EventKind.COORDINATOR_FAILOVER: "FlussCoordinatorFailover"}
)
#: The events that explain a rule's finding (the ``event`` annotation).
_RULE_EVENTS: Final[Mapping[str, frozenset[EventKind]]] = MappingProxyType(
    {
        "unreachable": frozenset({EventKind.POLL_FAILED}),
        "coordinator": frozenset({EventKind.COORDINATOR_UNREACHABLE}),
        "standby": frozenset({EventKind.STANDBY_LOST, EventKind.COORDINATOR_FAILOVER}),
        "leaders": frozenset({EventKind.BUCKET_OFFLINE}),
        "replicas_offline": frozenset({EventKind.SERVER_LEFT, EventKind.REPLICAS_OFFLINE}),
        "server_gone": frozenset({EventKind.SERVER_LEFT}),
        "cluster_health": frozenset({EventKind.HEALTH_CHANGED}),
        "disk_write_locked": frozenset({EventKind.WRITE_REJECTED}),
        "disk_usage": frozenset({EventKind.DISK_PRESSURE}),
        "under_replicated": frozenset({EventKind.UNDER_REPLICATED}),
        "under_min_isr": frozenset({EventKind.UNDER_REPLICATED}),
        "kv_rejections": frozenset({EventKind.WRITE_REJECTED}),
        "write_lock_forecast": frozenset({EventKind.WRITE_LOCK_FORECAST}),
    }
)
#: Findings of a poll that could not look at the cluster at all.
_POLL_FAILED: Final = frozenset({"unreachable", "no_data"})
_SEVERITY: Final = {
    HealthStatus.RED: "critical",
    HealthStatus.YELLOW: "warning",
    HealthStatus.UNKNOWN: "warning",
}
#: Alertmanager's "no end" value is the zero time; we leave endsAt out instead.
Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class AlertSettings:
    """How findings become alerts (``serve``'s ``--alert-for`` and the config file)."""

    #: Seconds a finding must hold before its alert fires (Prometheus's ``for:``).
    for_s: float = 30.0
    #: Seconds a firing alert stays firing after its finding clears (flap hold-down).
    keep_firing_s: float = 30.0
    #: Seconds an event-raised alert (coordinator failover) stays active.
    event_hold_s: float = 300.0


@dataclass(frozen=True, slots=True)
class Alert:
    """One alert as Alertmanager knows it; ``ends_at`` None while it fires."""

    labels: Labels
    annotations: Labels
    starts_at: float
    ends_at: float | None = None

    @property
    def name(self) -> str:
        return dict(self.labels)["alertname"]

    def label(self, key: str) -> str | None:
        return dict(self.labels).get(key)


@dataclass(frozen=True, slots=True)
class _Track:
    """One alert's life: pending (not fired), firing, or clearing (firing, finding gone)."""

    alert: Alert
    #: When the alert fired (None while pending).
    fired_at: float | None = None
    #: When its finding was last seen.
    last_seen: float = 0.0
    #: Event alerts expire at this time instead of following a finding.
    expires_at: float | None = None
    #: The first poll that no longer saw the finding of a firing alert (the hold-down).
    cleared_at: float | None = None
    #: The health rule and subject of a finding alert ("" for an event alert).
    rule: str = ""
    subject: str = ""


@dataclass(frozen=True, slots=True)
class AlertState:
    tracks: Mapping[Labels, _Track] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class AlertUpdate:
    """What one poll changed: every alert firing now, and those that resolved now."""

    firing: tuple[Alert, ...]
    resolved: tuple[Alert, ...]
    #: Findings held back by ``for_s`` (labels), for the curious (docs, tests).
    pending: tuple[Labels, ...] = ()


def advance_alerts(
    state: AlertState,
    cluster: str,
    health: Health | None,
    events: Sequence[Event],
    now: float,
    settings: AlertSettings | None = None,
) -> tuple[AlertUpdate, AlertState]:
    """The alerts of ``cluster`` after this poll (taken at ``now``)."""
    settings = settings or AlertSettings()
    # A down server's alert still active (pending, firing, or in its hold-down) keeps its
    # consequences folded: a server just back catches up before they may page.
    cause_active = any(t.alert.name == SERVER_DOWN_ALERT for t in state.tracks.values())
    seen = _candidates(cluster, health, events, now, settings, cause_active)
    blind = _blind(health)
    tracks: dict[Labels, _Track] = {}
    resolved: list[Alert] = []
    for key, fresh in seen.items():
        tracks[key] = _follow(state.tracks.get(key), fresh, now)
    for key, old in state.tracks.items():
        if key in seen:
            continue
        if blind(old):
            tracks[key] = old  # not seen because not judged: unknown is not resolved
            continue
        kept = _without_finding(old, now, settings)
        if kept is None:
            if old.fired_at is not None:
                resolved.append(replace(old.alert, ends_at=now))
        else:
            tracks[key] = kept
    firing = []
    pending = []
    for key, track in tracks.items():
        if track.fired_at is None and now - track.alert.starts_at >= settings.for_s:
            track = tracks[key] = replace(track, fired_at=now)
        if track.fired_at is None:
            pending.append(key)
        else:
            firing.append(track.alert)
    update = AlertUpdate(tuple(firing), tuple(resolved), tuple(pending))
    return update, AlertState(MappingProxyType(tracks))


def _blind(health: Health | None) -> Callable[[_Track], bool]:
    """Which tracks this poll could not judge: all of them when the poll failed (or there
    is no health), those of a metric rule whose server's metrics are unknown."""
    findings = health.findings if health is not None else ()
    if health is None or any(f.rule in _POLL_FAILED for f in findings):
        return lambda track: bool(track.rule) and track.rule not in _POLL_FAILED
    unknown = {f.subject for f in findings if f.rule == "metrics_unknown"}
    if not unknown:
        return lambda track: False
    # An endpoint that names no server may be anyone's; a table's figure may come from any.
    anyone = any(not u.startswith("tablet-server ") for u in unknown)
    return lambda track: (
        track.rule in METRIC_RULES
        and (anyone or track.subject in unknown or not track.subject.startswith("tablet-server "))
    )


def _follow(old: _Track | None, fresh: _Track, now: float) -> _Track:
    """A candidate seen this poll, after its earlier track (kept: startsAt, fired)."""
    if old is None:
        return fresh
    event = fresh.alert.annotations
    if not dict(event).get("event"):
        # No new event this poll: keep the one that raised it.
        old_event = dict(old.alert.annotations).get("event")
        if old_event:
            event = (*event, ("event", old_event))
    alert = replace(fresh.alert, annotations=event, starts_at=old.alert.starts_at)
    expires = fresh.expires_at if fresh.expires_at is not None else old.expires_at
    return _Track(alert, old.fired_at, now, expires, None, fresh.rule, fresh.subject)


def _without_finding(old: _Track, now: float, settings: AlertSettings) -> _Track | None:
    """A track whose finding is gone this poll: kept while the hold-down lasts."""
    if old.expires_at is not None:
        return old if now < old.expires_at else None
    if old.fired_at is None:
        return None  # pending: it never fired, it just goes
    cleared = old.cleared_at if old.cleared_at is not None else now
    if now - cleared < settings.keep_firing_s:
        return replace(old, cleared_at=cleared)
    return None


def _candidates(
    cluster: str,
    health: Health | None,
    events: Sequence[Event],
    now: float,
    settings: AlertSettings,
    cause_active: bool = False,
) -> dict[Labels, _Track]:
    out: dict[Labels, _Track] = {}
    findings = health.findings if health is not None else ()
    down = down_servers(findings)
    folding = bool(down) or cause_active
    if down:
        out.update(_server_down(cluster, down, findings, events, now))
    for finding in findings:
        name = ALERTNAMES.get(finding.rule)
        if name is None or finding.status is HealthStatus.GREEN:
            continue
        if finding.rule in SERVER_DOWN_RULES or (folding and finding.rule in CONSEQUENCE_RULES):
            continue  # the cause's one alert carries them
        labels = _labels(name, cluster, _SEVERITY[finding.status], finding.subject)
        notes: Labels = (("summary", str(finding)), ("description", finding.reason))
        cause = _cause(finding, events)
        if cause is not None:
            notes = (*notes, ("event", cause.message))
        alert = Alert(labels, notes, now)
        out[labels] = _Track(alert, None, now, rule=finding.rule, subject=finding.subject)
    for event in events:
        name = EVENT_ALERTS.get(event.kind)
        if name is None:
            continue
        subject = subjects.coordinator(event.details.get("new"))
        labels = _labels(name, cluster, "warning", subject)
        # An event alert fires at once: the event is already the settled fact.
        alert = Alert(labels, (("summary", event.message), ("event", event.message)), event.time)
        out[labels] = _Track(alert, now, now, event.time + settings.event_hold_s)
    return out


def _server_down(
    cluster: str,
    down: Mapping[str, tuple[Finding, ...]],
    findings: Sequence[Finding],
    events: Sequence[Event],
    now: float,
) -> dict[Labels, _Track]:
    """One alert per down server, whichever findings say it this poll, with one severity:
    its identity holds from "does not answer" through "gone from metadata" until it is
    back. What follows from it (CONSEQUENCE_RULES) is told in its description."""
    folded = [
        str(f)
        for f in findings
        if f.rule in CONSEQUENCE_RULES and f.status is not HealthStatus.GREEN
    ]
    out: dict[Labels, _Track] = {}
    for causes in down.values():
        subject = causes[0].subject
        labels = _labels(SERVER_DOWN_ALERT, cluster, SERVER_DOWN_SEVERITY, subject)
        description = "; ".join(f.reason for f in causes)
        if folded:
            description += f". Following from it: {'; '.join(folded)}"
        notes: Labels = (("summary", str(causes[-1])), ("description", description))
        cause = next((e for e in (_cause(f, events) for f in causes) if e is not None), None)
        if cause is not None:
            notes = (*notes, ("event", cause.message))
        out[labels] = _Track(
            Alert(labels, notes, now), None, now, rule=causes[0].rule, subject=subject
        )
    return out


def _labels(name: str, cluster: str, severity: str, subject: str) -> Labels:
    labels = {"alertname": name, "cluster": cluster, "severity": severity}
    labels.update(subject_labels(subject))
    return tuple(sorted(labels.items()))


def subject_labels(subject: str) -> dict[str, str]:
    """A finding's subject as labels: ``tablet-server 2`` -> server=2, ``coordinator a:1``
    -> server=a:1, ``table db.t`` -> database=db, table=t; ``cluster`` has none. The
    ``server`` values are those of the exposition's ``server`` label."""
    kind, _, name = subject.partition(" ")
    if kind == "tablet-server" and name:
        return {"server": name}
    if kind == "coordinator" and name:
        return {"server": name}
    if kind == "table" and name:
        database, dot, table = name.partition(".")
        return {"database": database, "table": table} if dot else {"table": name}
    return {}


def _cause(finding: Finding, events: Iterable[Event]) -> Event | None:
    """The event of this poll that explains ``finding``: one of its rule's kinds about
    the same subject first, else about the cluster."""
    kinds = _RULE_EVENTS.get(finding.rule, frozenset())
    subject = finding.subject.removeprefix("table ")
    fallback = None
    for event in events:
        if event.kind not in kinds:
            continue
        if event.subject.name == subject:
            return event
        if fallback is None and (event.subject.kind == "cluster" or finding.subject == "cluster"):
            fallback = event
    return fallback


def alert_payload(alert: Alert, *, generator_url: str = "") -> dict[str, Any]:
    """The alert as one item of Alertmanager's ``POST /api/v2/alerts`` body."""
    body: dict[str, Any] = {
        "labels": dict(alert.labels),
        "annotations": dict(alert.annotations),
        "startsAt": rfc3339_text(alert.starts_at),
    }
    if alert.ends_at is not None:
        body["endsAt"] = rfc3339_text(alert.ends_at)
    if generator_url:
        body["generatorURL"] = generator_url
    return body
