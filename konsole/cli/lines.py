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
    from konsole.model.snapshot import ClusterSnapshot

__all__ = ["LINE_FORMATS", "event_line", "health_line", "totals_document"]

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


def health_line(health: Health, fmt: str, snapshot: ClusterSnapshot | None = None) -> str:
    """``fmt`` is ``text`` or ``jsonl``; a JSON line carries the cluster's totals of
    ``snapshot`` (the poll judged) under ``totals``: null figures are unknown, not 0."""
    if fmt == "jsonl":
        doc = {"type": "health", **health.as_dict()}
        taken = health.taken_at
        doc["time"] = iso_text(taken) if taken is not None else None
        doc["time_ms"] = to_ms(taken) if taken is not None else None
        if snapshot is not None and snapshot.ok:
            doc["totals"] = totals_document(snapshot)
        return json.dumps(doc, default=str)
    when = iso_text(health.taken_at) if health.taken_at is not None else "-"
    reasons = "; ".join(health.reasons) or "no findings"
    return f"{when} HEALTH   {health.status.name} ({health.source}): {reasons}"


def totals_document(snapshot: ClusterSnapshot) -> dict[str, object]:
    """``{"messages_in_per_s": .., "bytes_in_per_s": .., "bytes_out_per_s": ..,
    "tablet_servers": n, "cpu_load": {server: 0..1}, "heap_used_ratio": {server: 0..1}}``:
    the throughput summed over the tablet servers' own rates, each server by id (a
    coordinator by its metrics' host); a server without the figure is left out."""
    from konsole.model.totals import cluster_totals

    totals = cluster_totals(snapshot.metrics)
    cpu: dict[str, float] = {}
    heap: dict[str, float] = {}
    for m in snapshot.metrics:
        name = m.server_id if m.role == "tablet" else m.host or m.url
        if name is None:
            continue
        if m.cpu_load is not None:
            cpu[name] = m.cpu_load
        if m.heap_ratio is not None:
            heap[name] = m.heap_ratio
    return {
        "messages_in_per_s": totals.messages_in_rate,
        "bytes_in_per_s": totals.bytes_in_rate,
        "bytes_out_per_s": totals.bytes_out_rate,
        "tablet_servers": totals.servers,
        "cpu_load": cpu,
        "heap_used_ratio": heap,
    }
