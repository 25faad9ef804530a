"""What every console screen shares: the status bar, the footer, being fed states."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from konsole.ui.state import ConsoleState
from konsole.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from konsole.ui.app import KonsoleApp

__all__ = ["ConsoleScreen"]


class ConsoleScreen(Screen[None]):
    """A screen that shows the app's current state (live, or the moment travelled to)."""

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status-bar")
        yield from self.compose_body()
        yield Footer()

    def compose_body(self) -> ComposeResult:
        """The screen's own widgets (between the status bar and the footer)."""
        return iter(())

    @property
    def konsole(self) -> KonsoleApp:
        return cast("KonsoleApp", self.app)

    def show(self, state: ConsoleState) -> None:
        """Called by the app with every new state while this screen is shown."""
        if not self.is_mounted:
            return
        self.query_one(StatusBar).show(state)
        self.render_state(state)

    def render_state(self, state: ConsoleState) -> None:
        """Update the screen's widgets from ``state`` (cheap: called on every poll)."""

    def on_screen_resume(self) -> None:
        state = self.konsole.state
        if state is not None:
            self.show(state)

    def on_mount(self) -> None:
        state = self.konsole.state
        if state is not None:
            self.show(state)
