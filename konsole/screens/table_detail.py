"""Table detail: schema, properties, partitions, buckets, throughput, KV snapshots."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from konsole.console_state import ConsoleState
from konsole.screens.base import ConsoleScreen

__all__ = ["TableDetailScreen"]


class TableDetailScreen(ConsoleScreen):
    def __init__(self, table_path: str) -> None:
        super().__init__()
        #: ``db.table``: the table is found by name in every state (ids change on re-create).
        self.table_path = table_path

    def compose_body(self) -> ComposeResult:
        yield Static(id="body")

    def render_state(self, state: ConsoleState) -> None:
        self.query_one("#body", Static).update(self.table_path)
