"""How a :class:`~konsole.ui.widgets.grid.KeyedGrid` line is drawn, and what is kept of it.

A line is the cells of the columns in view (never the others: a 300-column preview's line
costs the dozen cells it shows), each a column wide with one blank each side, then the
blank that fills the view beyond the last column; it is cropped to the view and segments of
equal style are merged. A cell's style is the row's (the header's or the grid's own), a
``{"row", "column"}`` meta for the mouse, the cursor's or the hover's component style, and
the cursor's colour over the cell's own; the filler's the row's with ``out_of_bounds``.
That is the look Textual's ``DataTable`` gives its cells, kept so the screens look exactly
as they did (``tests/pilot/test_grid_look.py`` compares every line with a ``DataTable``'s).

Cells of printable ASCII text (``str``, :class:`~konsole.ui.widgets.grid_cells.Right`,
:class:`~konsole.ui.widgets.grid_cells.Left`, ``None``) are one segment made with a few
string operations; any other cell is rendered by Rich (``Padding`` of its ``Text``), once
per text and width. Drawn lines are kept per row and cursor state until the rows, the
columns, the view's position or width or the styles change.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import NamedTuple

from rich.console import Console, ConsoleOptions
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from konsole.ui.widgets.grid_cells import PLAIN, Right, as_text

__all__ = ["CELL_PADDING", "CURSOR", "HOVER", "Frame", "Layout", "Painter", "Palette"]

#: Blank cells each side of every cell.
CELL_PADDING = 1
#: Bits of a row's state: under the cursor, under the mouse.
CURSOR, HOVER = 1, 2

#: Kept per grid: rendered styled cells, cell styles, drawn lines.
_RENDERS_KEPT = 8192
_STYLES_KEPT = 16384
_LINES_KEPT = 2048


class Palette(NamedTuple):
    """The styles a grid draws with (from its CSS; they change with focus)."""

    base: Style
    header: Style
    cursor: Style
    hover: Style
    header_hover: Style


class Layout(NamedTuple):
    """Column geometry: each column's width with its padding, where each starts."""

    widths: tuple[int, ...]
    starts: tuple[int, ...]

    @classmethod
    def of(cls, content_widths: Sequence[int]) -> Layout:
        widths = tuple(w + 2 * CELL_PADDING for w in content_widths)
        return cls(widths, tuple(accumulate(widths, initial=0)))

    @property
    def total(self) -> int:
        return self.starts[-1]

    def in_view(self, x1: int, x2: int) -> range:
        """The columns that meet cells ``x1`` to ``x2`` (exclusive)."""
        count = len(self.widths)
        first = max(0, bisect_right(self.starts, x1) - 1)
        return range(min(first, count), min(count, bisect_left(self.starts, x2)))


class Frame(NamedTuple):
    """What every line of one paint shares: a line kept under another frame is stale."""

    palette: Palette
    layout: Layout
    #: The first cell in view and the view's width.
    x: int
    width: int
    header_height: int


def plain_text(cell: object, width: int) -> str | None:
    """A cell of printable ASCII text (or none) as the ``width`` cells it is drawn as,
    cropped and padded: what Rich draws for it in one string. None for any other cell."""
    if cell is None:
        cell = ""
    elif type(cell) not in PLAIN or not (cell.isascii() and cell.isprintable()):  # type: ignore[attr-defined]
        return None
    inner = width - 2 * CELL_PADDING
    if inner <= 0:
        return None
    text: str = cell  # type: ignore[assignment]
    side = " " * CELL_PADDING
    if type(cell) is Right:
        return side + text.rstrip()[:inner].rjust(inner) + side
    return side + text[:inner].ljust(inner) + side


def _text_key(text: Text, width: int) -> tuple[object, ...]:
    return (
        text.plain,
        text.style,
        tuple(text.spans),
        text.justify,
        text.overflow,
        text.no_wrap,
        text.tab_size,
        width,
    )


def _padded(console: Console, options: ConsoleOptions, text: Text) -> list[list[Segment]]:
    """The lines of a cell's text with its blank each side, unstyled (Rich's own render)."""
    return console.render_lines(Padding(text, (0, CELL_PADDING)), options)


class Painter:
    """Draws and keeps a grid's lines (held by the grid, one per grid)."""

    def __init__(self) -> None:
        self._frame: Frame | None = None
        #: Drawn lines by (row, state); the header's by (-1 - line, state).
        self._lines: dict[tuple[int, int], Strip] = {}
        #: (pre, post, both) style of a cell by (row, column, state).
        self._styles: dict[tuple[int, int, int], tuple[Style, Style, Style]] = {}
        self._styles_palette: Palette | None = None
        #: The unstyled segments of a styled cell's one line, by its text and width.
        self._renders: dict[tuple[object, ...], list[Segment]] = {}

    def begin(self, frame: Frame) -> None:
        """Start a paint: lines of another frame are dropped (styles of another palette)."""
        if frame != self._frame:
            self._frame = frame
            self._lines.clear()
        if frame.palette != self._styles_palette:
            self._styles_palette = frame.palette
            self._styles.clear()

    @property
    def painting(self) -> bool:
        """A paint's frame is set (see :meth:`begin`) and its lines are current."""
        return self._frame is not None

    @property
    def base_style(self) -> Style:
        """The grid's own style in the paint under way."""
        return self._current().palette.base

    def forget(self, rows: Sequence[int] | None = None) -> None:
        """Drop the drawn lines of ``rows`` (every line when None)."""
        if rows is None:
            self._frame = None
            self._lines.clear()
            return
        for row in rows:
            for state in range(4):
                self._lines.pop((row, state), None)

    # ------------------------------------------------------------------ lines

    def row_line(
        self,
        row: int,
        state: int,
        cells: Callable[[int], Sequence[object]],
        console: Console,
        options: ConsoleOptions,
    ) -> Strip:
        """Row ``row``'s line in ``state`` (:data:`CURSOR`, :data:`HOVER` bits)."""
        line = self._lines.get((row, state))
        if line is None:
            frame = self._current()
            made = cells(row)
            line = self._draw(
                row,
                state,
                lambda c: self._cell(row, c, made[c], state, console, options),
                frame.palette.base,
            )
            self._keep((row, state), line)
        return line

    def header_line(
        self,
        y: int,
        hovered: bool,
        labels: Sequence[Text],
        console: Console,
        options: ConsoleOptions,
    ) -> Strip:
        """Line ``y`` of the header (hovered: the mouse is over it)."""
        state = HOVER if hovered else 0
        line = self._lines.get((-1 - y, state))
        if line is None:
            frame = self._current()
            line = self._draw(
                -1,
                state,
                lambda c: self._header_cell(y, c, labels[c], state, console, options),
                frame.palette.header,
            )
            self._keep((-1 - y, state), line)
        return line

    def _current(self) -> Frame:
        if self._frame is None:
            raise RuntimeError("a grid line drawn outside a paint")
        return self._frame

    def _keep(self, key: tuple[int, int], line: Strip) -> None:
        if len(self._lines) >= _LINES_KEPT:
            self._lines.clear()
        self._lines[key] = line

    def _draw(
        self, row: int, state: int, cell: Callable[[int], list[Segment]], row_style: Style
    ) -> Strip:
        frame = self._current()
        layout, x1, width = frame.layout, frame.x, frame.width
        columns = layout.in_view(x1, x1 + width)
        segments: list[Segment] = []
        for column in columns:
            segments += cell(column)
        if columns.stop == len(layout.widths):
            filler = row_style + self._component(row < 0, state)[0]
            filler += Style.from_meta({"row": row, "column": 0, "out_of_bounds": True})
            segments.append(Segment(" " * max(0, width - layout.total), filler))
        origin = layout.starts[columns.start] if layout.widths else 0
        strip = Strip(segments).crop(x1 - origin, x1 + width - origin)
        return strip.adjust_cell_length(width, frame.palette.base).simplify()

    # ------------------------------------------------------------------ cells

    def _component(self, header: bool, state: int) -> tuple[Style, Style]:
        """The cursor's and the hover's style for a cell in ``state``, and the style drawn
        over the cell's own (the cursor's colour wins over a cell's)."""
        palette = self._current().palette
        component = Style()
        if state & HOVER:
            component += palette.hover
            if header:
                component += palette.header_hover
        if state & CURSOR:
            component += palette.cursor
        return component, Style.from_color(color=component.color)

    def _styles_of(self, row: int, column: int, state: int) -> tuple[Style, Style, Style]:
        key = (row, column, state)
        found = self._styles.get(key)
        if found is None:
            frame = self._current()
            row_style = frame.palette.header if row < 0 else frame.palette.base
            component, post = self._component(row < 0, state)
            pre = row_style + Style.from_meta({"row": row, "column": column}) + component
            found = (pre, post, pre + post if pre else post)
            if len(self._styles) >= _STYLES_KEPT:
                self._styles.clear()
            self._styles[key] = found
        return found

    def _cell(
        self,
        row: int,
        column: int,
        value: object,
        state: int,
        console: Console,
        options: ConsoleOptions,
    ) -> list[Segment]:
        width = self._current().layout.widths[column]
        pre, post, both = self._styles_of(row, column, state)
        plain = plain_text(value, width)
        if plain is not None:
            return [Segment(plain, both)]
        text = as_text(value)
        key = _text_key(text, width)
        rendered = self._renders.get(key)
        if rendered is None:
            cell_options = options.update_dimensions(width, 1).update(no_wrap=True)
            rendered = _padded(console, cell_options, text)[0]
            if len(self._renders) >= _RENDERS_KEPT:
                self._renders.clear()
            self._renders[key] = rendered
        return list(Segment.apply_style(rendered, pre, post))

    def _header_cell(
        self,
        y: int,
        column: int,
        label: Text,
        state: int,
        console: Console,
        options: ConsoleOptions,
    ) -> list[Segment]:
        frame = self._current()
        pre, post, _ = self._styles_of(-1, column, state)
        height = frame.header_height
        cell_options = options.update_dimensions(frame.layout.widths[column], height)
        if height == 1:
            cell_options = cell_options.update(no_wrap=True)
        return list(Segment.apply_style(_padded(console, cell_options, label)[y], pre, post))
