"""One line per event and per health change, as ``watch`` prints them and ``record`` echoes
events: text for a person (times by :func:`konsole.model.timefmt.iso_text`) or JSON lines."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from konsole.model.timefmt import iso_text

if TYPE_CHECKING:
    from konsole.model.events import Event
    from konsole.model.health import Health

__all__ = ["event_line", "health_line"]


def event_line(event: Event, fmt: str) -> str:
    """``fmt`` is ``text`` or ``json``."""
    if fmt == "json":
        return json.dumps({"type": "event", **event.as_dict()}, sort_keys=False, default=str)
    more = f" [{event.count}: {', '.join(event.samples)}]" if event.count > 1 else ""
    return (
        f"{iso_text(event.time)} {event.severity.value.upper():<8} {event.kind.value:<23} "
        f"{event.subject.name}: {event.message}{more}"
    )


def health_line(health: Health, fmt: str) -> str:
    """``fmt`` is ``text`` or ``json``."""
    if fmt == "json":
        return json.dumps({"type": "health", **health.as_dict()}, default=str)
    when = iso_text(health.taken_at) if health.taken_at is not None else "-"
    reasons = "; ".join(health.reasons) or "no findings"
    return f"{when} HEALTH   {health.status.name} ({health.source}): {reasons}"
