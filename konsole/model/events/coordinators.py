"""Coordinators: failover, unreachable and recovered (the active one), standbys lost/joined.

The active coordinator comes from the probes in the snapshot; a failover is reported
once with the gap without an active coordinator, however many polls that gap took.
"""

from __future__ import annotations

from dataclasses import dataclass

from konsole.model import subjects
from konsole.model.events.base import Emitter, Event, EventConfig, EventKind, Severity, Subject
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["CoordinatorState", "detect_coordinators"]


@dataclass(frozen=True, slots=True)
class CoordinatorState:
    #: The address of the last coordinator seen active.
    last_active: str | None = None
    #: When the active coordinator stopped answering; None while one answers.
    no_coordinator_since: float | None = None


def _coordinator(address: str) -> Subject:
    return Subject("server", subjects.coordinator(address))


def detect_coordinators(
    state: CoordinatorState,
    previous: ClusterSnapshot | None,
    current: ClusterSnapshot,
    config: EventConfig,
) -> tuple[list[Event], CoordinatorState]:
    """Changes of the active coordinator, then of the standbys (against ``previous``)."""
    out = Emitter(current, config)
    t = current.taken_at
    active = current.active_coordinator
    last = state.last_active
    since = state.no_coordinator_since
    if active is None:
        if last is not None and since is None:
            out.emit(
                EventKind.COORDINATOR_UNREACHABLE,
                Severity.CRITICAL,
                _coordinator(last),
                f"no active coordinator answers (last active: {last})",
                {"last_active": last},
            )
            since = t
    elif last is not None and active != last:
        gap = round(t - since, 3) if since is not None else 0.0
        out.emit(
            EventKind.COORDINATOR_FAILOVER,
            Severity.WARNING,
            _coordinator(active),
            f"coordinator failover: {last} -> {active}"
            + (f" ({gap:g}s without an active coordinator)" if gap else ""),
            {"old": last, "new": active, "no_coordinator_s": gap},
        )
        since = None
    elif last is not None and since is not None:
        down = round(t - since, 3)
        out.emit(
            EventKind.COORDINATOR_RECOVERED,
            Severity.INFO,
            _coordinator(active),
            f"coordinator {active} answers again after {down:g}s",
            {"address": active, "no_coordinator_s": down},
        )
        since = None
    new_state = CoordinatorState(active if active is not None else last, since)
    if previous is not None and current.coordinators:
        _standbys(out, previous, current, active)
    return out.events, new_state


def _standbys(
    out: Emitter, previous: ClusterSnapshot, current: ClusterSnapshot, active: str | None
) -> None:
    before = set(previous.standby_coordinators)
    now = set(current.standby_coordinators)
    # a standby promoted to active is a failover, not a standby lost
    for address in sorted(before - now - {active}):
        out.emit(
            EventKind.STANDBY_LOST,
            Severity.WARNING,
            _coordinator(address),
            f"standby coordinator {address} no longer answers",
            {"address": address},
        )
    for address in sorted(now - before):
        out.emit(
            EventKind.STANDBY_JOINED,
            Severity.INFO,
            _coordinator(address),
            f"standby coordinator {address} answers",
            {"address": address},
        )
