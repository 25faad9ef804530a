"""The grid's columns: keys, labels and widths (pure, no Textual).

A column's width is that of its widest label or cell seen; widths only grow, so a refresh
never makes the columns dance. :class:`GridColumns` is what a :class:`KeyedGrid` holds
for them; its geometry (:class:`~konsole.ui.widgets.grid_paint.Layout`) is made again
when a width or the set of columns changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from konsole.ui.widgets.grid_cells import cell_width
from konsole.ui.widgets.grid_paint import CELL_PADDING, Layout
from konsole.ui.widgets.grid_rows import DuplicateKey

__all__ = ["GridColumn", "GridColumns"]


@dataclass(frozen=True, slots=True)
class GridColumn:
    """A column: its key, its label and the width of its widest label or cell."""

    key: str
    label: Text
    content_width: int

    @property
    def render_width(self) -> int:
        """Its width on screen, the blank each side included."""
        return self.content_width + 2 * CELL_PADDING


class GridColumns:
    """The columns one grid shows."""

    def __init__(self) -> None:
        self._labels: list[tuple[str, Text]] = []
        self._widths: list[int] = []
        self.layout = Layout.of(())

    def __len__(self) -> int:
        return len(self._labels)

    @property
    def labels(self) -> list[Text]:
        return [label for _, label in self._labels]

    def key_at(self, index: int) -> str:
        return self._labels[index][0]

    def index(self, key: str) -> int:
        """The position of column ``key``; KeyError when there is none."""
        for i, (k, _) in enumerate(self._labels):
            if k == key:
                return i
        raise KeyError(f"no column {key!r}")

    def described(self) -> tuple[GridColumn, ...]:
        return tuple(
            GridColumn(key, label, width)
            for (key, label), width in zip(self._labels, self._widths, strict=True)
        )

    def set(self, columns: Sequence[tuple[str, str | Text]]) -> bool | None:
        """(key, label) per column; labels never read as markup. None when nothing changed,
        True for new labels on as many columns (the rows stay), False for another number."""
        labels = [(k, label if isinstance(label, Text) else Text(label)) for k, label in columns]
        keys = [k for k, _ in labels]
        if len(set(keys)) != len(keys):
            raise DuplicateKey(f"a column key is given twice: {keys}")
        if labels == self._labels:
            return None
        keep = len(labels) == len(self._labels)
        self._labels = labels
        self._widths = [cell_width(label) for _, label in labels]
        return keep

    def clear(self) -> None:
        self._labels, self._widths = [], []

    def widen(self, widths: Sequence[int]) -> bool:
        """Columns only grow: True when one did."""
        grew = False
        for index, widest in enumerate(widths[: len(self._widths)]):
            if widest > self._widths[index]:
                self._widths[index] = widest
                grew = True
        return grew

    def relayout(self) -> Layout:
        """The geometry of the widths as they are now."""
        self.layout = Layout.of(self._widths)
        return self.layout
