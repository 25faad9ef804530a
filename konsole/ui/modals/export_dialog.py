"""Asks where to export the rows of a preview (the format follows the file's suffix)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from konsole.ui.widgets.text_input import TextInput

__all__ = ["ExportDialog"]


class ExportDialog(ModalScreen[str | None]):
    """Returns the path typed (None when cancelled)."""

    DEFAULT_CSS = """
    ExportDialog { align: center middle; }
    ExportDialog > Vertical {
        width: 76; max-width: 100%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    ExportDialog #export-error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, suggested: str, rows: int) -> None:
        super().__init__()
        self.suggested = suggested
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(
                f"Export the {self.rows:,} row(s) read to a file: .csv .jsonl .json .parquet "
                ".arrow (enter: write, escape: cancel)"
            )
            yield TextInput(value=self.suggested, id="export-path")
            yield Label("", id="export-error")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        from konsole.export import ExportFormatError, resolve_format

        path = event.value.strip()
        try:
            resolve_format(None, path)  # refused here, before anything is written
        except ExportFormatError as exc:
            self.query_one("#export-error", Label).update(str(exc))
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)
