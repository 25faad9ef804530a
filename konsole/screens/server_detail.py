"""Server detail: one server's metrics (sparklines from history), its buckets, its log."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from konsole.console_state import ConsoleState
from konsole.screens.base import ConsoleScreen

__all__ = ["ServerDetailScreen"]


class ServerDetailScreen(ConsoleScreen):
    def __init__(self, server_id: int) -> None:
        super().__init__()
        #: The tablet server's node id (0 is the coordinator, as Fluss numbers it).
        self.server_id = server_id

    def compose_body(self) -> ComposeResult:
        yield Static(id="body")

    def render_state(self, state: ConsoleState) -> None:
        self.query_one("#body", Static).update(f"server {self.server_id}")
