"""A panel of lines that drops whole lines by priority when it is too short.

Each line is wrapped at the panel's width here (at spaces; a word longer than the width
is folded), so what is drawn is exactly what was measured; which lines stay is
:func:`konsole.ui.widgets.line_fit.fitting_lines`.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from konsole.ui.widgets.line_fit import RankedLines, fitting_lines

__all__ = ["FittedLines"]


class FittedLines(Widget):
    DEFAULT_CSS = """
    FittedLines {
        height: auto;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.ranked = RankedLines(())
        #: The lines drawn last (their text), and how many were left out: for tests.
        self.shown: list[str] = []
        self.left_out = 0

    def update_lines(self, ranked: RankedLines) -> None:
        if ranked != self.ranked:
            self.ranked = ranked
            self.refresh(layout=True)

    def render(self) -> Text:
        width = max(self.content_size.width, 1)
        rows = self.content_size.height
        # wrapped at spaces even where a line was made not to wrap (an event's line)
        console = self.app.console
        wrapped = [
            line.wrap(console, width, no_wrap=False, overflow="fold") for line in self.ranked.lines
        ]
        shown = fitting_lines([len(w) for w in wrapped], self.ranked.drop_order, rows)
        out = Text(no_wrap=True, overflow="crop")
        for i in shown:
            for part in wrapped[i]:
                if len(out):
                    out.append("\n")
                out.append_text(part)
        self.left_out = len(wrapped) - len(shown)
        if self.left_out:
            more = self.ranked.more.format(n=self.left_out)
            more = more if len(more) <= width else f"+{self.left_out}"  # whole words only
            out.append(("\n" if len(out) else "") + more, style="dim italic")
        self.shown = [self.ranked.lines[i].plain for i in shown]
        return out
