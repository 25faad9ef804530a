"""Health: health_changed when :func:`konsole.model.health.evaluate`'s status changes.

The message names the finding that set the new status (the first finding with it). The
state slice is the last :class:`~konsole.model.health.Health` itself.
"""

from __future__ import annotations

from fluss_proto.model import HealthStatus
from konsole.model.events.base import CLUSTER, Emitter, Event, EventConfig, EventKind, Severity
from konsole.model.health import Health, evaluate
from konsole.model.poll_facts import PollFacts
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["detect_health"]

_SEVERITY = {
    HealthStatus.GREEN: Severity.INFO,
    HealthStatus.YELLOW: Severity.WARNING,
    HealthStatus.RED: Severity.CRITICAL,
}


def detect_health(
    state: Health | None,
    previous: ClusterSnapshot | None,
    current: ClusterSnapshot,
    config: EventConfig,
    facts: PollFacts | None,
    *,
    last_ok: ClusterSnapshot | None,
) -> tuple[list[Event], Health]:
    """The health of ``current``, and an event when its status differs from ``state``'s.
    ``facts``: those of ``current``, derived once as the poll is judged (None: it failed);
    ``last_ok``: the last good poll before ``current`` (the rules that need two looks
    compare with it)."""
    out = Emitter(current, config)
    health = evaluate(current, config.rules, previous=last_ok, facts=facts)
    if previous is None or state is None or state.status == health.status:
        return out.events, health
    cause = _cause(health)
    out.emit(
        EventKind.HEALTH_CHANGED,
        _SEVERITY.get(health.status, Severity.WARNING),
        CLUSTER,
        f"health {state.status.name} -> {health.status.name}" + (f": {cause}" if cause else ""),
        {"old": state.status.name, "new": health.status.name, "reasons": list(health.reasons)},
    )
    return out.events, health


def _cause(health: Health) -> str | None:
    """The first finding that has the new status: the reason the status is what it is.
    None for GREEN: its findings are information (metrics not configured), not a cause."""
    if health.status is HealthStatus.GREEN:
        return None
    for finding in health.findings:
        if finding.status == health.status:
            return str(finding)
    return health.reasons[0] if health.reasons else None
