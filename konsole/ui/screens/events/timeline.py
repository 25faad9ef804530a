"""An event as the Events screen and its evidence show it, and where its subject leads.

Both screens use these, so they live here rather than in either (the two screens open one
another).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from konsole.model.timefmt import to_ms

if TYPE_CHECKING:
    from konsole.model.events import Event
    from konsole.ui.screens.base import ConsoleScreen

__all__ = ["TimelineEntry", "open_subject", "subject_target"]


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    key: str
    time: float
    severity: str
    kind: str
    subject: str
    message: str
    #: A few of the items a grouped event stands for ("3 of 12: db.t#1, ...").
    samples: str = ""

    @classmethod
    def of_event(cls, event: Event) -> TimelineEntry:
        ms = to_ms(event.time)
        key = f"e{ms}|{event.kind.value}|{event.subject.name}|{event.message}"
        samples = ""
        if event.samples:
            samples = f"{len(event.samples)} of {event.count}: {', '.join(event.samples)}"
        return cls(
            key,
            ms / 1000,
            event.severity.value,
            event.kind.value,
            event.subject.name,
            event.message,
            samples,
        )


def subject_target(subject: str) -> tuple[str, int | str] | None:
    """Where enter goes for an event subject: ``("server", id)``, ``("table", "db.t")``
    or None (the cluster, a whole database)."""
    name = subject.strip()
    if m := re.fullmatch(r"tablet-server (\d+)", name):
        return ("server", int(m.group(1)))
    if name.startswith("coordinator"):
        return ("server", 0)  # Fluss numbers the coordinator 0
    for prefix in ("table ", "partition ", "bucket "):
        name = name.removeprefix(prefix)
    name = re.sub(r"(\[.*\])?(#\d+)?$", "", name)
    database, dot, table = name.partition(".")
    if dot and database and table and table != "*" and " " not in name:
        return ("table", name)
    return None


def open_subject(screen: ConsoleScreen, subject: str) -> None:
    """Open what ``subject`` names (a server's detail, a table's), or say there is none."""
    target = subject_target(subject)
    if target is None:
        screen.notify(f"nothing to open for {subject}", severity="information")
    elif target[0] == "server":
        screen.konsole.open_server(int(target[1]))
    else:
        screen.konsole.open_table(str(target[1]))
