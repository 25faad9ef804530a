"""The poll itself: poll_failed when polls start failing, poll_recovered when one succeeds."""

from __future__ import annotations

from dataclasses import dataclass

from konsole.model.events.base import CLUSTER, Emitter, Event, EventConfig, EventKind, Severity
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["PollState", "detect_poll"]


@dataclass(frozen=True, slots=True)
class PollState:
    #: When the current run of failed polls began; None while polls succeed.
    failing_since: float | None = None


def detect_poll(
    state: PollState,
    previous: ClusterSnapshot | None,
    current: ClusterSnapshot,
    config: EventConfig,
) -> tuple[list[Event], PollState]:
    """One poll_failed per run of failures (the first poll counts as "was fine")."""
    out = Emitter(current, config)
    t = current.taken_at
    if not current.ok:
        if previous is None or previous.ok:
            out.emit(
                EventKind.POLL_FAILED,
                Severity.CRITICAL,
                CLUSTER,
                f"poll failed: {current.error}",
                {"error": current.error},
            )
        return out.events, PollState(state.failing_since or t)
    if previous is not None and not previous.ok:
        since = state.failing_since
        down = round(t - since, 3) if since is not None else None
        out.emit(
            EventKind.POLL_RECOVERED,
            Severity.INFO,
            CLUSTER,
            "poll succeeded again"
            + (f" after {down:g}s of failed polls" if down is not None else ""),
            {"failed_for_s": down},
        )
    return out.events, PollState()
