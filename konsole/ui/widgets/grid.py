"""KeyedGrid: the console's table widget, on Textual's Line API over a keyed row model.

Screens give it the full list of rows they want on every refresh, by key:

- :meth:`KeyedGrid.sync` takes rows already made (key, cells); :meth:`KeyedGrid.show`
  takes a :class:`~konsole.ui.widgets.grid_rows.RowSource` whose cells are made only for
  the rows drawn (the Tables screen's 10,000 tables). With the same keys in the same order
  only the rows whose cells changed are drawn again; otherwise the cursor stays on its
  row's key (or its place when that row is gone) and the view where it was.
- :meth:`KeyedGrid.replace_rows` shows a page (the preview's): cursor and view at the top.
- :meth:`KeyedGrid.append_rows` adds rows at the end (a followed tail).

Every change is checked before anything is replaced (unique keys, cells that fit the
columns; :class:`~konsole.ui.widgets.grid_rows.GridError` otherwise, the rows as they
were). Columns are (key, label) and as wide as their widest label or cell seen, growing
only until the columns are set again (a refresh never makes them jitter).

It is a ``ScrollView`` drawing each line in :meth:`KeyedGrid.render_line`: only the lines
in view are drawn, and of a line only the columns in view
(:mod:`konsole.ui.widgets.grid_paint`). Keys: up/down, page up/down (row cursor),
ctrl+home/ctrl+end (first/last row), left/right/home/end (scroll across), enter selects;
a click moves the cursor (again: selects), a click on a header names its column. Messages
are :class:`KeyedGrid.RowHighlighted`, :class:`KeyedGrid.RowSelected` and
:class:`KeyedGrid.HeaderSelected`.

Only Textual's public API is used (``ScrollView``, ``render_line``, ``Strip``, component
classes, ``scroll_to_region``); the look is Textual ``DataTable``'s with a row cursor,
which the console used before (``tests/pilot/test_grid_look.py`` compares them line by
line). ``textual-fastdatatable`` was not taken: it stores rows in pyarrow (an import the
Tables screen does not otherwise pay), draws its own way and keeps no cursor by key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final, TypeAlias

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size, Spacing
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from konsole.ui.widgets.grid_columns import GridColumn, GridColumns
from konsole.ui.widgets.grid_paint import CURSOR, HOVER, Frame, Painter
from konsole.ui.widgets.grid_paint import Palette as _Palette
from konsole.ui.widgets.grid_rows import GridRows, Row, RowSource

__all__ = ["GridColumn", "KeyedGrid"]


#: The grid's keys (DataTable's, for a row cursor).
GRID_KEYS: Final[list[BindingType]] = [
    Binding("enter", "select_cursor", "Select", show=False),
    Binding("up", "cursor_up", "Cursor up", show=False),
    Binding("down", "cursor_down", "Cursor down", show=False),
    Binding("pageup", "page_up", "Page up", show=False),
    Binding("pagedown", "page_down", "Page down", show=False),
    Binding("ctrl+home", "first_row", "First row", show=False),
    Binding("ctrl+end", "last_row", "Last row", show=False),
    Binding("home", "scroll_home", "Leftmost", show=False),
    Binding("end", "scroll_end", "Rightmost", show=False),
]

#: The look of Textual's DataTable (its default theme values) with a row cursor.
GRID_CSS: Final = """
    KeyedGrid {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;

        &:focus {
            background-tint: $foreground 5%;
            & > .keyed-grid--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .keyed-grid--header {
                background-tint: $foreground 5%;
            }
        }
        & > .keyed-grid--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .keyed-grid--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .keyed-grid--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .keyed-grid--header-hover {
            background: $accent 30%;
        }
        & > .keyed-grid--hover {
            background: $block-hover-background;
        }
    }
    """


class _GridRowMessage(Message):
    def __init__(self, grid: KeyedGrid, row_index: int, row_key: str) -> None:
        super().__init__()
        self.grid = grid
        self.row_index = row_index
        self.row_key = row_key

    @property
    def control(self) -> KeyedGrid:
        return self.grid


class RowHighlighted(_GridRowMessage, namespace="keyed_grid"):
    """The cursor is on another row (or the rows under it changed): ``KeyedGrid.RowHighlighted``."""


class RowSelected(_GridRowMessage, namespace="keyed_grid"):
    """Enter (or a second click) on the cursor's row."""


class HeaderSelected(Message, namespace="keyed_grid"):
    """A click on a column's label."""

    def __init__(self, grid: KeyedGrid, column_key: str, column_index: int) -> None:
        super().__init__()
        self.grid = grid
        self.column_key = column_key
        self.column_index = column_index

    @property
    def control(self) -> KeyedGrid:
        return self.grid


class KeyedGrid(ScrollView, can_focus=True):
    """A row-cursor table of keyed rows (see the module's docstring)."""

    ALLOW_SELECT = False

    BINDINGS: ClassVar[list[BindingType]] = GRID_KEYS

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "keyed-grid--header",
        "keyed-grid--cursor",
        "keyed-grid--hover",
        "keyed-grid--header-hover",
    }

    DEFAULT_CSS = GRID_CSS

    # The grid's messages (handlers: on_keyed_grid_row_highlighted, ...).
    RowHighlighted: TypeAlias = RowHighlighted
    RowSelected: TypeAlias = RowSelected
    HeaderSelected: TypeAlias = HeaderSelected

    def __init__(
        self,
        *,
        header_height: int = 1,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.header_height = header_height
        self._rows = GridRows()
        self._columns = GridColumns()
        self._painter = Painter()
        self._cursor = 0
        #: The row under the mouse (-1: the header), None when the mouse is elsewhere or
        #: the keyboard was used since.
        self._hover: int | None = None
        #: The virtual size changed since the last paint: scroll once laid out.
        self._resized = False
        #: Data-row lines drawn since the grid was made (what a bench or a test waits for).
        self.rows_painted = 0

    # ------------------------------------------------------------------ reading

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def row_keys(self) -> list[str]:
        return list(self._rows.keys)

    @property
    def cursor_row(self) -> int:
        return self._cursor

    @property
    def rows(self) -> GridRows:
        """The keyed row model shown (read it; change the rows through the grid)."""
        return self._rows

    @property
    def selected_key(self) -> str | None:
        """The key of the row under the cursor (None when there is no row)."""
        return self._rows.key_at(self._cursor)

    @property
    def columns(self) -> tuple[GridColumn, ...]:
        return self._columns.described()

    def get_row_at(self, index: int) -> list[Text]:
        """Row ``index``'s cells as they are drawn."""
        return self._rows.texts_at(index)

    def get_row(self, key: str) -> list[Text]:
        return self._rows.texts_of(key)

    def get_cell(self, key: str, column_key: str) -> Text:
        return self._rows.texts_of(key)[self._columns.index(column_key)]

    # ------------------------------------------------------------------ changing

    def set_columns(self, columns: Sequence[tuple[str, str | Text]]) -> None:
        """(key, label) per column; labels never read as markup. New labels for as many
        columns (a sort arrow) keep the rows, the cursor and the view; another number of
        columns drops the rows."""
        source = self._rows.source
        keep = self._columns.set(columns)
        if keep is None:
            return
        self._rows.set_columns(len(self._columns))
        if keep:
            self._rows.install(source)
            self._columns.widen(source.widths)
        else:
            self._cursor = 0
        self._changed(layout=True)

    def sync(self, rows: Sequence[Row]) -> None:
        """Show exactly ``rows`` (key, cells made), in this order."""
        source = RowSource.of(rows, len(self._columns))
        if self._rows.same_keys(source):
            self._update(source, self._rows.changed(source))
        else:
            self._rebuild(source)

    def show(self, source: RowSource) -> None:
        """Show ``source``'s rows; the cursor stays on its row's key when it is there."""
        if self._rows.same_keys(source):
            self._update(source, None)
        else:
            self._rebuild(source)

    def replace_rows(self, rows: Sequence[Row]) -> None:
        """Show ``rows`` as a new page: the cursor on the first, the view at the top left."""
        self._rows.install(RowSource.of(rows, len(self._columns)))
        self._columns.widen(self._rows.source.widths)
        self._cursor = 0
        self._hover = None
        self.scroll_to(0, 0, animate=False, force=True)
        self._changed(layout=True)
        self._highlighted()

    def append_rows(self, rows: Sequence[Row]) -> None:
        """Add ``rows`` after the last row (keys new to the grid)."""
        source = self._rows.appended(rows)
        self._rows.install(source)
        self._columns.widen(source.widths)
        self._changed(layout=True)

    def clear(self, columns: bool = False) -> None:
        """No rows (and no columns); the cursor and the view at the top left."""
        if columns:
            self._columns.clear()
        self._rows.set_columns(len(self._columns))
        self._cursor, self._hover = 0, None
        self.scroll_to(0, 0, animate=False, force=True)
        self._changed(layout=True)

    def move_cursor(self, *, row: int, animate: bool = False, scroll: bool = True) -> None:
        """Put the cursor on row ``row`` (kept within the rows)."""
        old, new = self._cursor, max(0, min(row, len(self._rows) - 1))
        self._cursor = new
        if new != old:
            self._refresh_rows(old, new)
            self._highlighted()
        if scroll:
            self._scroll_to_cursor(animate=animate)

    def _update(self, source: RowSource, changed: list[int] | None) -> None:
        self._rows.install(source)
        if self._columns.widen(source.widths):
            changed = None  # new widths: every line is drawn again
        if changed is None:
            self._changed(layout=True)
        elif changed:
            self._painter.forget(changed)
            self.refresh()

    def _rebuild(self, source: RowSource) -> None:
        selected = self.selected_key
        self._rows.install(source)
        self._columns.widen(source.widths)
        found = None if selected is None else source.positions.get(selected)
        self._cursor = found if found is not None else max(0, min(self._cursor, len(source) - 1))
        self._changed(layout=True)
        self._highlighted()
        # The view stays where it was; once laid out, it follows the cursor if it must.
        self.call_after_refresh(self._scroll_to_cursor, laid_out=True)

    def _changed(self, *, layout: bool) -> None:
        """Every line is stale (new rows or widths); the virtual size follows."""
        if layout:
            total = self._columns.relayout().total
            size = Size(total, len(self._rows) + self.header_height)
            if size != self.virtual_size:
                self.virtual_size = size
                self._resized = True
        self._painter.forget()
        self.refresh()

    def _highlighted(self) -> None:
        key = self.selected_key
        if key is not None:
            self.post_message(RowHighlighted(self, self._cursor, key))

    # ------------------------------------------------------------------ drawing

    def render_lines(self, crop: Region) -> list[Strip]:
        self._resized = False
        self._begin_paint()
        return super().render_lines(crop)

    def _begin_paint(self) -> None:
        """What every line of this paint shares (the styles, the columns, the view)."""
        frame = Frame(
            self._palette(),
            self._columns.layout,
            self.scroll_offset.x,
            self.size.width,
            self.header_height,
        )
        self._painter.begin(frame)

    def render_line(self, y: int) -> Strip:
        if not self._painter.painting:  # a line asked for outside a paint (a test's)
            self._begin_paint()
        console, options = self.app.console, self.app.console_options
        if y < self.header_height:
            labels = self._columns.labels
            return self._painter.header_line(y, self._hover == -1, labels, console, options)
        row = y - self.header_height + self.scroll_offset.y
        if row >= len(self._rows):
            return Strip.blank(self.size.width, self._painter.base_style)
        state = (CURSOR if row == self._cursor else 0) | (HOVER if row == self._hover else 0)
        self.rows_painted += 1
        return self._painter.row_line(row, state, self._rows.cells_at, console, options)

    def _palette(self) -> _Palette:
        return _Palette(
            self.rich_style,
            self.get_component_styles("keyed-grid--header").rich_style,
            self.get_component_rich_style("keyed-grid--cursor"),
            self.get_component_rich_style("keyed-grid--hover"),
            self.get_component_rich_style("keyed-grid--header-hover"),
        )

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.refresh()

    def _refresh_rows(self, *rows: int | None) -> None:
        """Draw these rows again (-1: the header)."""
        width = max(self.virtual_size.width, self.size.width)
        for row in rows:
            if row is None:
                continue
            if row < 0:
                self.refresh(Region(0, 0, width, self.header_height))
            else:
                y = row + self.header_height - self.scroll_offset.y
                if self.header_height <= y < self.size.height:
                    self.refresh(Region(0, y, width, 1))

    # ------------------------------------------------------------------ scrolling

    def _scroll_to_cursor(self, animate: bool = False, *, laid_out: bool = False) -> None:
        """The least scroll that shows the cursor's row below the header (once the grid is
        laid out when its size changed since it was last painted)."""
        if self._resized and not laid_out:
            self.call_after_refresh(self._scroll_to_cursor, animate, laid_out=True)
            return
        top = self.header_height
        width = max(self.size.width, self._columns.layout.total)
        region = Region(self.scroll_offset.x, top + self._cursor, width, 1)
        self.scroll_to_region(region, animate=animate, spacing=Spacing(top, 0, 0, 0), force=True)

    def _page_height(self) -> int:
        return self.scrollable_content_region.height - self.header_height

    # ------------------------------------------------------------------ keys

    def _go(self, row: int) -> None:
        """The cursor moved by a key (the mouse's hover gives way)."""
        self._set_hover(None)
        self.move_cursor(row=row)

    def action_cursor_up(self) -> None:
        self._go(self._cursor - 1)

    def action_cursor_down(self) -> None:
        self._go(self._cursor + 1)

    def action_page_down(self) -> None:
        """A page down: the view by its height, the cursor as many rows."""
        self._page(self._page_height())

    def action_page_up(self) -> None:
        self._page(-self._page_height())

    def _page(self, rows: int) -> None:
        self._set_hover(None)
        self.scroll_relative(y=rows, animate=False, force=rows > 0)
        self.move_cursor(row=self._cursor + rows, scroll=False)

    def action_first_row(self) -> None:
        self._go(0)

    def action_last_row(self) -> None:
        self._go(len(self._rows) - 1)

    def action_scroll_home(self) -> None:
        self._set_hover(None)
        self.scroll_x = 0

    def action_scroll_end(self) -> None:
        self._set_hover(None)
        self.scroll_x = self.max_scroll_x

    def action_scroll_left(self) -> None:
        self._set_hover(None)
        super().action_scroll_left()

    def action_scroll_right(self) -> None:
        self._set_hover(None)
        super().action_scroll_right()

    def action_select_cursor(self) -> None:
        self._set_hover(None)
        key = self.selected_key
        if key is not None:
            self.post_message(RowSelected(self, self._cursor, key))

    # ------------------------------------------------------------------ mouse

    def _set_hover(self, row: int | None) -> None:
        if row != self._hover:
            old, self._hover = self._hover, row
            self._refresh_rows(old, row)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        meta = event.style.meta
        row = meta.get("row") if meta else None
        self._set_hover(row if isinstance(row, int) else None)

    def on_leave(self, event: events.Leave) -> None:
        self._set_hover(None)

    def on_click(self, event: events.Click) -> None:
        meta = event.style.meta
        row, column = meta.get("row"), meta.get("column")
        if not isinstance(row, int) or not isinstance(column, int):
            return
        self._set_hover(row)
        if row < 0:
            if not meta.get("out_of_bounds") and 0 <= column < len(self._columns):
                self.post_message(HeaderSelected(self, self._columns.key_at(column), column))
            return
        event.stop()
        again = row == self._cursor
        self.move_cursor(row=row, animate=True)
        key = self.selected_key
        if again and key is not None:
            self.post_message(RowSelected(self, row, key))
