"""Events: the history timeline."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from konsole.console_state import ConsoleState
from konsole.screens.base import ConsoleScreen

__all__ = ["EventsScreen"]


class EventsScreen(ConsoleScreen):
    def compose_body(self) -> ComposeResult:
        yield Static(id="body")

    def render_state(self, state: ConsoleState) -> None:
        self.query_one("#body", Static).update("events")
