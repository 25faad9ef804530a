"""A sparkline that fills the width it is given and says its scale.

The drawing is :mod:`konsole.render.spark`'s (unknown points are gaps, never zero). One
row: ``label  ▁▃▅█▇  now 3 KiB/s · min 0 B/s · max 4 KiB/s``, the bars taking what the
label and the scale leave; two rows or more: the label and the scale above, the bars the
whole width below. When the row is too narrow the scale's words drop whole (max, then min,
then now), never cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual.widget import Widget

from konsole.render.spark import scale_of, spark_text

__all__ = ["Spark"]

#: The fewest columns of bars worth drawing beside a label and scale on one row.
MIN_BARS = 8


def _plain(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


class Spark(Widget):
    DEFAULT_CSS = """
    Spark {
        height: 1;
    }
    """

    def __init__(
        self,
        label: str = "",
        *,
        show: Callable[[float | None], str] = _plain,
        label_width: int = 0,
        with_current: bool = True,
        scale_width: int = 0,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.label = label
        self.show = show
        self.label_width = label_width
        #: False where the current value is shown beside the line already.
        self.with_current = with_current
        #: Columns kept for the scale on one row (0: what it needs), so that the bars of
        #: sparklines stacked in one panel start and end in the same columns.
        self.scale_width = scale_width
        self._values: list[float | None] = []
        self.style_bars = "green"

    @property
    def values(self) -> list[float | None]:
        return self._values

    def update_series(self, values: Sequence[float | None], *, style: str | None = None) -> None:
        """Draw ``values`` (oldest first; None: unknown then)."""
        new = list(values)
        if style is not None:
            self.style_bars = style
        if new != self._values:
            self._values = new
            self.refresh()

    def scale_words(self) -> list[str]:
        """``now …``, ``min …``, ``max …``, or ``no figures`` when none is known."""
        scale = scale_of(self._values)
        if scale.low is None:
            return ["no figures"]
        words = [f"min {self.show(scale.low)}", f"max {self.show(scale.high)}"]
        if self.with_current:
            now = self.show(scale.current) if scale.current is not None else "unknown"
            words.insert(0, f"now {now}")
        return words

    def render(self) -> Text:
        width, height = self.size.width, self.size.height
        words = self.scale_words()
        label = self.label.ljust(self.label_width) if self.label else ""
        if height >= 2:
            head = Text(no_wrap=True)
            head.append(label, style="bold")
            head.append("  " if label else "")
            head.append(_fit(words, width - head.cell_len), style="dim")
            return Text("\n").join([head, Text(spark_text(self._values, width), self.style_bars)])
        line = Text(no_wrap=True)
        line.append(label + (" " if label else ""), style="bold")
        room = width - line.cell_len
        scale = _fit(words, room - MIN_BARS - 1)
        if scale and self.scale_width and room - self.scale_width - 1 >= MIN_BARS:
            scale = scale.ljust(self.scale_width)
        bars = room - (len(scale) + 1 if scale else 0)
        line.append(spark_text(self._values, max(bars, 0)), style=self.style_bars)
        if scale:
            line.append(" " + scale, style="dim")
        return line


def _fit(words: list[str], room: int) -> str:
    """As many of ``words`` (the first ones first) as fit ``room`` whole, joined by `` · ``."""
    while words:
        text = " · ".join(words)
        if len(text) <= room:
            return text
        words = words[:-1]
    return ""
