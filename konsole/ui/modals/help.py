"""Help: every binding of the app and of the screen below, generated from the bindings."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["HelpScreen", "binding_rows"]

_NOTES = (
    "Time travel: T picks a past moment (typed, or a recorded event); [ and ] step from "
    "event to event; L returns to live. A recorded moment is marked HISTORY in the status bar.",
    "Command palette: ctrl+p lists every screen and action, profile switching and the "
    "light/dark theme.",
)


def binding_rows(node: DOMNode, app: App[object]) -> list[tuple[str, str]]:
    """(keys, description) of ``node``'s bindings, in declaration order."""
    rows: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for bindings in node._bindings.key_to_bindings.values():
        for binding in bindings:
            if binding.system:
                continue
            keys = app.get_key_display(binding)
            what = binding.description or binding.action
            if (binding.action, what) in seen:
                # One action bound to several keys: list the keys together.
                rows = [(k + f", {keys}" if d == what else k, d) for k, d in rows]
                continue
            seen.add((binding.action, what))
            rows.append((keys, what))
    return rows


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    #help {
        width: 90%; max-width: 100; height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self) -> None:
        super().__init__()
        #: (section, keys, description) as listed: what the help shows, for tests too.
        self.entries: list[tuple[str, str, str]] = []

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(self._text(), id="help-text")

    def _text(self) -> Table:
        below = self.app.screen_stack[-1] if self.app.screen_stack else None
        if below is self:
            below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        sections: list[tuple[str, DOMNode]] = [("Everywhere", self.app)]
        if below is not None:
            sections.append((f"This screen ({type(below).__name__})", below))
            focused = below.focused
            if focused is not None and binding_rows(focused, self.app):
                sections.append((f"Focused {type(focused).__name__}", focused))
        for title, node in sections:
            grid.add_row(Text(title, style="bold underline"), "")
            for keys, what in binding_rows(node, self.app):
                self.entries.append((title, keys, what))
                grid.add_row(keys, what)
            grid.add_row("", "")
        for note in _NOTES:
            grid.add_row("", Text(note, style="italic"))
        return grid
