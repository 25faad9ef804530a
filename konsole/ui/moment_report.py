"""The incident report of a moment, written from the console beside its history file.

Any screen may ask for it (the Events screen, an event's evidence, the time-travel picker),
so it lives beside them rather than in one of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from konsole.collect.history.reads import write_report_around
from konsole.model.timefmt import clock_text, file_stamp_text, to_ms
from konsole.ui.services import services

if TYPE_CHECKING:
    from textual.screen import Screen

    from konsole.ui.services import ConsoleServices

__all__ = ["report_path", "write_moment_report"]


def report_path(history: Path, at: float) -> Path:
    """Where the console writes the report of the moment ``at``: beside the history file."""
    return history.parent / "reports" / f"konsole-report-{file_stamp_text(at)}.html"


async def write_moment_report(screen: Screen[Any], at: float) -> None:
    """Write the report of ``at`` (30 minutes around it) in a thread; notify where (any
    screen of the app: the Events screen, the evidence, the time-travel picker)."""
    konsole: ConsoleServices = services(screen.app)
    history = konsole.feed.history_path
    if history is None:
        screen.notify("no history file: a report is drawn from it", severity="warning")
        return
    out = report_path(history, at)
    from konsole.report import DEFAULT_WINDOW_S

    try:
        # The reports folder beside the history is the console's own: made on first use (an
        # output a user names must be in a folder that exists; this one the user did not name).
        written = await write_report_around(history, out, to_ms(at), round(DEFAULT_WINDOW_S * 500))
    except Exception as exc:  # a report that fails must not take the console with it
        screen.notify(f"report not written: {exc}", severity="error", timeout=10)
        return
    if written is not None:
        screen.notify(f"report of {clock_text(at)} written to {written}", timeout=10)
