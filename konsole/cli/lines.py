"""One line per event and per health change, as ``watch`` prints them and ``record`` echoes
events: text for a person (times by :func:`konsole.model.timefmt.iso_text`) or JSON lines
(``jsonl``: each event in the one shape of :meth:`konsole.model.events.Event.as_dict`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from konsole.model.timefmt import iso_text, to_ms

if TYPE_CHECKING:
    from konsole.model.events import Event
    from konsole.model.health import Health

__all__ = ["LINE_FORMATS", "event_line", "health_line"]

#: The ``--format`` of a command that prints a line per event (docs/cli.md).
LINE_FORMATS: Final = ("text", "jsonl")


def event_line(event: Event, fmt: str) -> str:
    """``fmt`` is ``text`` or ``jsonl``."""
    if fmt == "jsonl":
        return json.dumps(event.as_dict(), default=str)
    more = f" [{event.count}: {', '.join(event.samples)}]" if event.count > 1 else ""
    return (
        f"{iso_text(event.time)} {event.severity.value.upper():<8} {event.kind.value:<23} "
        f"{event.subject.name}: {event.message}{more}"
    )


def health_line(health: Health, fmt: str) -> str:
    """``fmt`` is ``text`` or ``jsonl``."""
    if fmt == "jsonl":
        doc = {"type": "health", **health.as_dict()}
        taken = health.taken_at
        doc["time"] = iso_text(taken) if taken is not None else None
        doc["time_ms"] = to_ms(taken) if taken is not None else None
        return json.dumps(doc, default=str)
    when = iso_text(health.taken_at) if health.taken_at is not None else "-"
    reasons = "; ".join(health.reasons) or "no findings"
    return f"{when} HEALTH   {health.status.name} ({health.source}): {reasons}"
