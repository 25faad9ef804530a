"""A DataTable whose rows are replaced by key on every refresh, cheaply.

Screens hand :meth:`KeyedTable.sync` the full list of rows they want (key, cells) on every
state. When the keys and their order are unchanged, only the cells that differ are updated
in place (a poll of 1,600 buckets changes a few hundred cells, not the table); otherwise
the rows are rebuilt and the cursor stays on the row it was on (by key), so a refresh
never throws the operator's place away.

Cells are compared as the screens give them: plain strings (and :class:`Right`, a string
shown right-aligned) compare fast, so screens use ``rich.text.Text`` only for styled cells.
They are kept as given and become ``Text`` only when their row is drawn, and a rebuild
loads every row in one pass (:class:`~konsole.ui.widgets.lean_table.LeanTable`): a
1,600-bucket table or a 10,000-table list costs a few dictionary entries per cell to fill,
and only the rows in view are ever rendered.

Textual's internals: an in-place update writes DataTable's private fields (``_data``, the
column widths, ``_update_count`` and the render caches) because the public
``DataTable.update_cell`` repaints the whole table per cell (see :meth:`KeyedTable._write`).
That is why ``pyproject.toml`` pins textual to the minor these were read from and tested on
(``textual>=8.2.8,<8.3``); ``tests/pilot/test_console_keyed_table.py`` fails when the
internals move. Another layout does not break the table: the update falls back to
``update_cell``, slower.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets.data_table import ColumnKey, RowKey

from konsole.ui.widgets.lean_table import Cell, LeanTable, Right, as_text, cell_width, unlink_cache

__all__ = ["Cell", "KeyedTable", "Right", "Row"]

#: (row key, cells in column order)
Row = tuple[str, Sequence[Cell]]


class KeyedTable(LeanTable):
    """A row-cursor DataTable refreshed by :meth:`sync`."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self._keys: list[str] = []
        #: The cells as the screen gave them (compared on the next sync).
        self._cells: dict[str, tuple[Cell, ...]] = {}
        self._column_keys: list[str] = []
        self._labels: list[tuple[str, Text]] = []

    def set_columns(self, columns: Sequence[tuple[str, str | Text]]) -> None:
        """(key, label) per column. A changed label (a sort arrow) rebuilds the table
        with the same rows: header widths are measured when columns are added."""
        labels = [(k, label if isinstance(label, Text) else Text(label)) for k, label in columns]
        if labels == self._labels:
            return
        saved = [(k, self._cells[k]) for k in self._keys]
        selected, old_row, old_scroll = self.selected_key, self.cursor_row, self.scroll_y
        self.clear(columns=True)
        for key, label in labels:
            self.add_column(label, key=key)
        self._labels = labels
        self._column_keys = [k for k, _ in labels]
        self._keys, self._cells = [], {}
        if saved and len(saved[0][1]) == len(labels):
            self._rebuild(saved, selected, old_row, old_scroll)

    @property
    def selected_key(self) -> str | None:
        """The key of the row under the cursor (None when the table is empty)."""
        if not self._keys:
            return None
        row = min(max(self.cursor_row, 0), len(self._keys) - 1)
        return self._keys[row]

    @property
    def row_keys(self) -> list[str]:
        return list(self._keys)

    def sync(self, rows: Sequence[Row]) -> None:
        """Show exactly ``rows``, in this order."""
        keys = [k for k, _ in rows]
        if keys == self._keys:
            self._update_in_place(rows)
            return
        self._rebuild(rows, self.selected_key, self.cursor_row, self.scroll_y)

    def _rebuild(
        self, rows: Sequence[Row], selected: str | None, old_row: int, old_scroll: float
    ) -> None:
        keys = [k for k, _ in rows]
        self._cells = {key: tuple(cells) for key, cells in rows}
        self._keys = keys
        self.replace_rows(rows)
        if not keys:
            return
        if selected is not None and selected in self._cells:
            index = keys.index(selected)
        else:
            index = min(old_row, len(keys) - 1)
        self.move_cursor(row=index, animate=False, scroll=False)
        # The virtual size is recomputed on the next refresh; scroll back once it is.
        self.call_after_refresh(self._restore_scroll, old_scroll, index)

    def _restore_scroll(self, scroll_y: float, index: int) -> None:
        self.scroll_to(y=scroll_y, animate=False, immediate=True)
        self.move_cursor(row=index, animate=False, scroll=True)

    def _update_in_place(self, rows: Sequence[Row]) -> None:
        changes: list[tuple[str, str, Cell]] = []
        columns = self._column_keys
        for key, cells in rows:
            values = tuple(cells)
            old = self._cells[key]
            if old == values:
                continue
            self._cells[key] = values
            changes.extend((key, columns[i], v) for i, v in enumerate(values) if old[i] != v)
        if changes:
            self._write(changes)

    def _write(self, changes: list[tuple[str, str, Cell]]) -> None:
        # What DataTable.update_cell does, with one repaint for all the cells: update_cell
        # repaints per call. Widths are kept here too: DataTable re-measures a whole column
        # for every cell that got narrower (200 cells x 200 rows: ~0.2 s a refresh, seen in
        # bench/ui.py), so columns only grow here, which also keeps them from jittering.
        try:
            widened = False
            for key, column, value in changes:
                row_key, column_key = RowKey(key), ColumnKey(column)
                self._data[row_key][column_key] = value  # made a Text when drawn
                col = self.columns[column_key]
                width = cell_width(value)
                if width > col.content_width:
                    col.content_width = width
                    widened = True
            if widened:
                self._update_count += 1  # every cached render is stale: new widths
                self._require_update_dimensions = True
            elif not self._forget_renders(changes):
                self._update_count += 1
        except (AttributeError, KeyError):  # another Textual's internals: the public way
            for key, column, value in changes:
                self.update_cell(key, column, as_text(value), update_width=True)
        self.refresh()

    def _forget_renders(self, changes: list[tuple[str, str, Cell]]) -> bool:
        """Drop the cached renders of the changed cells and of their rows only.

        Bumping DataTable's update count re-renders every visible cell on the next paint
        (about 25 ms for a screenful of 9 columns); a poll usually changes one or two
        columns (offsets, rates), so the unchanged cells keep their renders. The caches are
        keyed (row key, column key, ...), (row key, ...) and (update count, row index); any
        other layout (another Textual) answers False and the caller bumps the count instead.
        """
        cells = {(RowKey(k), ColumnKey(c)) for k, c, _ in changes}
        rows = {row for row, _ in cells}
        try:
            cell_cache, row_cache = self._cell_render_cache, self._row_render_cache
            renderables = self._row_renderable_cache  # (update count, row index)
            indexes = {self._row_locations.get(row) for row in rows}
            # LRUCache is no dict: its keys() view is what iterates
            cell_keys, row_keys, renderable_keys = (
                cell_cache.keys(),
                row_cache.keys(),
                renderables.keys(),
            )
            stale_cells = [k for k in cell_keys if (k[0], k[1]) in cells]
            stale_rows = [k for k in row_keys if k[0] in rows]
            stale_renderables = [k for k in renderable_keys if k[1] in indexes]
            for cell_key in stale_cells:
                cell_cache.discard(cell_key)
            for row_key in stale_rows:
                row_cache.discard(row_key)
            for renderable_key in stale_renderables:
                renderables.discard(renderable_key)
            unlink_cache(self._line_cache)  # its entries freed now, not by a full collection
            self._line_cache.clear()
        except (AttributeError, TypeError, IndexError):
            return False
        return True
