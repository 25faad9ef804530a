"""The console's footer: Textual's, with the keys that do not fit its width left out whole.

Which keys stay is :mod:`konsole.ui.widgets.footer_fit`'s rule. A screen names its main
keys (kept longest) by their actions in ``FOOTER_MAIN``; the footer composes its keys
again when its width changes.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer

from konsole.ui.widgets.footer_fit import FooterEntry, fitting_keys, key_width

__all__ = ["KeyFooter"]

#: The class Textual's footer gives the palette key (docked right, a border on its left).
_PALETTE = "-command-palette"
#: Cells the palette key takes beside its text: the border on its left, its right padding.
_PALETTE_EDGES = 2


def _entry_width(widget: Widget) -> int:
    return key_width(getattr(widget, "key_display", ""), getattr(widget, "description", ""))


class KeyFooter(Footer):
    def __init__(self) -> None:
        super().__init__()
        #: The width the keys were last chosen for.
        self.fitted_width = 0

    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        width = self.size.width or self.app.size.width
        self.fitted_width = width
        palette = [w for w in widgets if w.has_class(_PALETTE)]
        keys = [w for w in widgets if not w.has_class(_PALETTE)]
        # a key without an action is not a binding's (a group's label): kept as it is
        if not keys or any(not hasattr(k, "action") for k in keys):
            yield from widgets
            return
        available = width - sum(_entry_width(p) + _PALETTE_EDGES for p in palette)
        active = self.screen.active_bindings
        entries = [
            FooterEntry(
                action=getattr(k, "action", ""),
                width=_entry_width(k),
                own=key in active and active[key].node is not self.app,
            )
            for k in keys
            for key in [getattr(k, "key", "")]
        ]
        shown = fitting_keys(
            entries,
            available,
            main=getattr(self.screen, "FOOTER_MAIN", ()),
            current=f"switch_mode({self.app.current_mode!r})",
        )
        yield from (keys[i] for i in shown)
        yield from palette

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self.fitted_width:
            self.call_after_refresh(self.recompose)
