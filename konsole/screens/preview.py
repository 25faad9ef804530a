"""Preview: the server-side scan of one table (or partition) in a DataTable."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from konsole.screens.base import ConsoleScreen

__all__ = ["PreviewScreen"]


class PreviewScreen(ConsoleScreen):
    def __init__(self, table_path: str, partition: str | None = None) -> None:
        super().__init__()
        self.table_path = table_path
        self.partition = partition

    def compose_body(self) -> ComposeResult:
        yield Static(self.table_path, id="body")
