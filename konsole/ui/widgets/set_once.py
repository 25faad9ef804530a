"""Setting a widget's content, title or rows only when they change: Textual lays out and
repaints a widget whenever one is set, so a panel that did not change (health and events
on a quiet cluster) is not painted again on every poll."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

__all__ = ["SetOnce", "cell_key", "text_key"]


class SetOnce:
    """What each widget shows ((the widget's id(), what) -> its key)."""

    def __init__(self) -> None:
        self._shown: dict[tuple[int, str], object] = {}

    def changed(self, widget: Widget, what: str, key: object) -> bool:
        """Whether ``widget``'s ``what`` is to be set to what ``key`` stands for (it shows
        something else); noted as shown."""
        if self._shown.get((id(widget), what)) == key:
            return False
        self._shown[(id(widget), what)] = key
        return True

    def update(self, panel: Static, text: Text) -> None:
        """``panel.update(text)`` unless the panel shows that text already."""
        if self.changed(panel, "content", text_key(text)):
            panel.update(text)

    def title(self, panel: Widget, title: str) -> None:
        """Set ``panel``'s border title unless it has that one already."""
        if self.changed(panel, "title", title):
            panel.border_title = title


def text_key(text: Text) -> tuple[object, ...]:
    """All a Text is drawn from: two texts with one key look the same."""
    return (
        text.plain,
        tuple(text.spans),
        str(text.style),
        text.justify,
        text.overflow,
        text.no_wrap,
        text.end,
    )


def cell_key(cell: object) -> object:
    return text_key(cell) if isinstance(cell, Text) else cell
