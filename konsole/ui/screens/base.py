"""What every console screen shares: the status bar, the footer, being fed states.

The life of a screen, as Textual runs it (``textual.message_pump._pre_process``, and
``App.push_screen`` / ``App.switch_mode``, which post ``ScreenResume`` when they show it):

1. ``compose``: the status bar, :meth:`ConsoleScreen.compose_body`, the footer. Textual
   mounts every composed widget, nested ones too, before it sends the screen ``Mount``.
2. ``on_mount`` (a subclass's own, when it has one): one-time set-up of the widgets
   (columns, focus). Nothing is painted from a state here.
3. ``on_screen_resume``: the screen is current, first after its mount and again whenever
   it comes back (a mode switched to, a modal or a pushed screen closed). It shows the
   app's current state: this is the first paint.
4. While it is current, the app hands it every new state through :meth:`ConsoleScreen.show`.
   A state can arrive between ``push_screen`` and the mount (the feed does not wait):
   ``show`` skips it, and the resume that follows paints the newest state.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.screen import Screen

from konsole.ui.services import ConsoleServices, services
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.key_footer import KeyFooter
from konsole.ui.widgets.status_bar import StatusBar

__all__ = ["ConsoleScreen"]


class ConsoleScreen(Screen[None]):
    """A screen that shows the app's current state (live, or the moment travelled to)."""

    #: The actions of the screen's main keys: the footer keeps them longest when narrow
    #: (konsole.ui.widgets.footer_fit).
    FOOTER_MAIN: ClassVar[tuple[str, ...]] = ()

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status-bar")
        yield from self.compose_body()
        yield KeyFooter()

    def compose_body(self) -> ComposeResult:
        """The screen's own widgets (between the status bar and the footer)."""
        return iter(())

    @property
    def konsole(self) -> ConsoleServices:
        return services(self.app)

    def show(self, state: ConsoleState) -> None:
        """Called by the app with every new state while this screen is current."""
        if not self.is_mounted:
            return  # pushed, not mounted yet: its resume paints the newest state
        self.query_one(StatusBar).show(state)
        self.render_state(state)

    def render_state(self, state: ConsoleState) -> None:
        """Update the screen's widgets from ``state`` (cheap: called on every poll)."""

    def on_screen_resume(self) -> None:
        state = self.konsole.state
        if state is not None:
            self.show(state)
