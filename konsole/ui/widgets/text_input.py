"""The console's text input: Textual's ``Input`` with the app's cursor settings.

Every box the operator types into (filters, search, notes, time travel, export paths) is a
:class:`TextInput`, so :class:`konsole.ui.services.ConsoleSettings` applies to all of them
in one place (the screen snapshots turn the blinking off: a blink is a timing).
"""

from __future__ import annotations

from textual.widgets import Input

from konsole.ui.services import ConsoleSettings

__all__ = ["TextInput"]


class TextInput(Input):
    def on_mount(self) -> None:
        settings = getattr(self.app, "settings", None)
        if isinstance(settings, ConsoleSettings):  # else another app (a widget test)
            self.cursor_blink = settings.cursor_blink
