"""The write-lock forecast, per tablet server: write_lock_forecast when a confident forecast
comes within the warning (then the critical) horizon, write_lock_forecast_cleared when it
no longer does (konsole.model.headroom.lock_outlook; the rules' thresholds).

While a server reports its lock on, its level is held: the lock is what was forecast, and
the forecast clears only once the lock is off and no forecast is near (freeing space). A
server whose metrics are missing keeps its level (unknown is not clear). Nothing is
reported for the first snapshot of a stream, as for the disks detector.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from konsole.model.events.base import (
    Emitter,
    Event,
    EventConfig,
    EventKind,
    Severity,
    Subject,
    tablet_subjects,
)
from konsole.model.headroom import ServerHeadroom, lock_outlook
from konsole.model.health import forecast_text
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["CapacityState", "detect_capacity"]


@dataclass(frozen=True, slots=True)
class CapacityState:
    #: tablet-server subject -> its forecast level (1 warning, 2 critical; absent: 0).
    levels: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))


def detect_capacity(
    state: CapacityState,
    previous: ClusterSnapshot | None,
    current: ClusterSnapshot,
    config: EventConfig,
    capacity: Iterable[ServerHeadroom],
) -> tuple[list[Event], CapacityState]:
    """Forecast levels that rose, and forecasts that cleared, since ``state``
    (``capacity``: the headroom of ``current``, derived once as the poll is judged)."""
    out = Emitter(current, config)
    levels = dict(state.levels)
    scraped = current.tablet_metrics
    for server in capacity:
        if server.server_id not in scraped:
            continue  # no metrics this poll: the level stays
        subject = server.subject
        was = levels.get(subject, 0)
        outlook = lock_outlook(server, config.rules, current.taken_at)
        level = max(was, outlook.level) if server.locked else outlook.level
        figure = outlook.figure
        if previous is not None and level > was and figure is not None and outlook.eta_s:
            out.emit(
                EventKind.WRITE_LOCK_FORECAST,
                Severity.CRITICAL if level == 2 else Severity.WARNING,
                Subject("server", subject),
                f"{subject}: " + forecast_text(figure.dir, outlook.eta_s, figure.forecast),
                {
                    "server": server.server_id,
                    "dir": figure.dir,
                    "eta_s": outlook.eta_s,
                    "eta_soonest_s": outlook.soonest_s,
                    "eta_latest_s": outlook.latest_s,
                    "used_ratio": figure.used_ratio,
                    "write_limit_ratio": figure.limit_ratio,
                    "forecast": None if figure.forecast is None else figure.forecast.as_dict(),
                },
            )
        elif previous is not None and level == 0 and was > 0:
            out.emit(
                EventKind.WRITE_LOCK_FORECAST_CLEARED,
                Severity.INFO,
                Subject("server", subject),
                f"{subject}: no write lock forecast any more"
                + (
                    f" ({server.disk.used_ratio:.1%} used)"
                    if server.disk.used_ratio is not None
                    else ""
                ),
                {"server": server.server_id, "used_ratio": server.disk.used_ratio},
            )
        if level:
            levels[subject] = level
        else:
            levels.pop(subject, None)
    names = tablet_subjects(current)  # bounded: servers in metadata or scraped
    kept = {k: v for k, v in levels.items() if k in names}
    return out.events, CapacityState(MappingProxyType(kept))
