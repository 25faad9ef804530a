"""A KeyedTable whose rows are plain sequences: a list of keys and a function making the
cells of row ``i`` when it is drawn. Nothing is kept per row.

DataTable keeps, per row, a dict of its cells, a ``Row``, a ``RowKey`` and an entry in a
two-way dict of locations, builds a list of them all whenever it is asked for its ordered
rows, and sums their heights to find a row's place; for 10,000 tables that bookkeeping
and the cells of every row were most of the Tables screen's open and refresh.
:class:`VirtualTable` replaces those stores with read-only views over the sequences it is
given (:meth:`VirtualTable.show`), so a refresh costs the rows in view, not the rows held:

- ``_data``, ``rows`` and ``_row_locations`` answer for one key or index at a time; a
  row's ``Row`` and cells are made when DataTable asks for them (only for drawn lines, the
  cursor's row and the row a message names);
- every row is one line high: offsets, regions and the virtual height are arithmetic;
- column widths come with the rows (the screen measures them from its own figures,
  cheaper than measuring cells), and, as in DataTable, only grow.

Drawing, styles, the cursor, the mouse, keys and messages are DataTable's and
:class:`~konsole.ui.widgets.lean_table.LeanTable`'s own, which is why the Tables screen
looks exactly as it did (its snapshots are unchanged) rather than a ``ScrollView`` of our
own drawing its lines. Chosen over ``textual-fastdatatable`` for the reasons
:mod:`konsole.ui.widgets.lean_table` gives (pyarrow at its import, its own look, no
cursor kept by key). The Textual internals read here are the same pinned ones as
LeanTable's (``tests/pilot/test_console_virtual_table.py`` fails when they move).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from rich.text import Text
from textual.geometry import Region
from textual.widgets._data_table import Row as RowMeta
from textual.widgets.data_table import RowKey

from konsole.ui.widgets.keyed_table import Cell, KeyedTable, Row
from konsole.ui.widgets.lean_table import column_widths

__all__ = ["RowSource", "VirtualTable"]


@dataclass(frozen=True, slots=True)
class RowSource:
    """The rows a :class:`VirtualTable` shows: their keys in order, the cells of row ``i``
    (called only for rows drawn or asked for) and each column's widest cell."""

    keys: Sequence[str]
    cells: Callable[[int], Sequence[Cell | None]]
    widths: Sequence[int]

    @classmethod
    def of(cls, rows: Sequence[Row], widths: Sequence[int]) -> RowSource:
        """A source of rows already made (key, cells)."""
        keys = [k for k, _ in rows]
        return cls(keys, lambda i: rows[i][1], widths)


_EMPTY = RowSource((), lambda i: (), ())


class _Index:
    """The keys' positions without a dict of every key per source: DataTable finds a drawn
    line's row by index (:meth:`note`, which keeps the key's position) and then asks that
    key's position, so the rows drawn are found in a small dict; any other key is searched
    in the list (C speed: a fraction of a millisecond at 10,000) and kept too."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = keys
        self._kept: dict[str, int | None] = {}

    def note(self, index: int) -> str:
        key = self.keys[index]
        self._keep(key, index)
        return key

    def of(self, key: object) -> int | None:
        name = key.value if isinstance(key, RowKey) else key
        if not isinstance(name, str):
            return None
        if name in self._kept:
            return self._kept[name]
        try:
            at: int | None = self.keys.index(name)
        except ValueError:
            at = None  # the header's key, asked for every header line drawn
        self._keep(name, at)
        return at

    def _keep(self, key: str, index: int | None) -> None:
        if len(self._kept) >= 1024:  # bounded: the rows in view are a few dozen
            self._kept.clear()
        self._kept[key] = index


class _Keyed:
    """What DataTable's stores answer alike: whether a key is there, how many, each key."""

    def __init__(self, index: _Index) -> None:
        self._index = index

    def __contains__(self, key: object) -> bool:
        return self._index.of(key) is not None

    def __len__(self) -> int:
        return len(self._index.keys)

    def __iter__(self) -> Iterator[RowKey]:
        return (RowKey(k) for k in self._index.keys)


class _Locations(_Keyed):
    """DataTable's ``_row_locations`` (a two-way dict row key <-> index), read only."""

    def get(self, key: object, default: int | None = None) -> int | None:
        found = self._index.of(key)
        return default if found is None else found

    def get_key(self, index: int) -> RowKey | None:
        keys = self._index.keys
        return RowKey(keys[index]) if 0 <= index < len(keys) else None


class _Store(_Keyed):
    """DataTable's ``rows`` (key -> ``Row``) or ``_data`` (key -> cells by column key),
    read only: an entry is made when asked for."""

    def __init__(self, index: _Index, make: Callable[[int], Any]) -> None:
        super().__init__(index)
        self._make = make

    def get(self, key: object, default: Any = None) -> Any:
        found = self._index.of(key)
        return default if found is None else self._make(found)

    def __getitem__(self, key: object) -> Any:
        found = self._index.of(key)
        if found is None:
            raise KeyError(key)
        return self._make(found)

    def keys(self) -> Iterator[RowKey]:
        return iter(self)

    def values(self) -> Iterator[Any]:
        return (self._make(i) for i in range(len(self._index.keys)))

    def clear(self) -> None:
        """DataTable's ``clear()`` empties its stores; a view has nothing to empty."""


class _Lines(Sequence[Any]):
    """``ordered_rows`` (a ``Row`` per index) or ``_y_offsets`` ((row key, 0) per line)
    over a range of indexes: slices are views too (DataTable slices them to count a page)."""

    def __init__(self, make: Callable[[int], Any], span: range) -> None:
        self._make, self._span = make, span

    @overload
    def __getitem__(self, at: int) -> Any: ...
    @overload
    def __getitem__(self, at: slice) -> _Lines: ...
    def __getitem__(self, at: int | slice) -> Any:
        if isinstance(at, slice):
            return _Lines(self._make, self._span[at])
        return self._make(self._span[at])

    def __len__(self) -> int:
        return len(self._span)

    def clear(self) -> None:
        """DataTable's ``clear()`` empties its offsets list; a view has nothing to empty."""


class VirtualTable(KeyedTable):
    """A row-cursor table over a :class:`RowSource`: :meth:`show` swaps the rows in O(1)
    (plus a key look-up for the cursor) and only drawn rows' cells are ever made."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        self._source = _EMPTY
        self._index = _Index(())
        #: The cells of the rows made since the last show (the rows in view, a few more).
        self._made_cells: dict[int, dict[Any, Cell | None]] = {}
        super().__init__(id=id, classes=classes)
        self._install(_EMPTY)

    # ------------------------------------------------------------------ the views

    def _install(self, source: RowSource) -> None:
        index = self._index = _Index(source.keys)
        self._source = source
        self._made_cells = {}
        self._data = _Store(index, self._cells_at)  # type: ignore[assignment]
        self.rows = _Store(index, self._row)  # type: ignore[assignment]
        self._row_locations = _Locations(index)  # type: ignore[assignment]

    def _row(self, index: int) -> RowMeta:
        return RowMeta(RowKey(self._index.note(index)), 1)

    def _offset(self, index: int) -> tuple[RowKey, int]:
        return (RowKey(self._index.note(index)), 0)

    def _cells_at(self, index: int) -> dict[Any, Cell | None]:
        made = self._made_cells.get(index)
        if made is None:
            if len(self._made_cells) > 512:  # bounded: the rows in view are a few dozen
                self._made_cells.clear()
            cells = self._source.cells(index)
            keys = [c.key for c in self.ordered_columns]  # missing cells are None, as add_row's
            made = {k: cells[i] if i < len(cells) else None for i, k in enumerate(keys)}
            self._made_cells[index] = made
        return made

    @property
    def ordered_rows(self) -> Sequence[RowMeta]:  # type: ignore[override]
        return _Lines(self._row, range(len(self._source.keys)))

    @property
    def _y_offsets(self) -> Sequence[tuple[RowKey, int]]:  # type: ignore[override]
        return _Lines(self._offset, range(len(self._source.keys)))

    @property
    def _total_row_height(self) -> int:
        return len(self._source.keys)

    def _get_row_region(self, row_index: int) -> Region:
        if not self.is_valid_row_index(row_index):
            return Region(0, 0, 0, 0)
        width = sum(c.get_render_width(self) for c in self.ordered_columns)
        width += self._row_label_column_width
        y = row_index + (self.header_height if self.show_header else 0)
        return Region(0, y, max(self.size.width, width), 1)

    def _get_cell_region(self, coordinate: Any) -> Region:
        if not self.is_valid_coordinate(coordinate):
            return Region(0, 0, 0, 0)
        row_index, column_index = coordinate
        widths = [c.get_render_width(self) for c in self.ordered_columns]
        x = sum(widths[:column_index]) + self._row_label_column_width
        y = row_index + (self.header_height if self.show_header else 0)
        return Region(x, y, widths[column_index], 1)

    def clear(self, columns: bool = False) -> VirtualTable:
        super().clear(columns)
        self._install(_EMPTY)
        return self

    # ------------------------------------------------------------------ KeyedTable's API

    @property
    def selected_key(self) -> str | None:
        keys = self._source.keys
        if not keys:
            return None
        return keys[min(max(self.cursor_row, 0), len(keys) - 1)]

    @property
    def row_keys(self) -> list[str]:
        return list(self._source.keys)

    def set_columns(self, columns: Sequence[tuple[str, str | Text]]) -> None:
        """(key, label) per column; a changed label (a sort arrow) keeps the rows."""
        labels = [(k, label if isinstance(label, Text) else Text(label)) for k, label in columns]
        if labels == self._labels:
            return
        source = self._source
        selected, old_row, old_scroll = self.selected_key, self.cursor_row, self.scroll_y
        super().clear(columns=True)
        for key, label in labels:
            self.add_column(label, key=key)
        self._labels = labels
        self._column_keys = [k for k, _ in labels]
        self._install(_EMPTY)
        if source.keys and len(source.widths) == len(labels):
            self._load_source(source, selected, old_row, old_scroll)

    def sync(self, rows: Sequence[Row]) -> None:
        """Show exactly ``rows`` (cells already made): measured here, then :meth:`show`."""
        self.show(RowSource.of(rows, column_widths([c for _, c in rows], len(self.columns))))

    def show(self, source: RowSource) -> None:
        """Show ``source``'s rows; the cursor stays on its row's key when it is still there."""
        old = self._source
        if old.keys is source.keys or list(old.keys) == list(source.keys):
            self._install(source)
            self._widen(source.widths)
            self._update_count += 1  # every drawn row is stale: new cells
            self.refresh()
            return
        self._load_source(source, self.selected_key, self.cursor_row, self.scroll_y)

    def _load_source(
        self, source: RowSource, selected: str | None, old_row: int, old_scroll: float
    ) -> None:
        self._install(source)
        self._widen(source.widths)
        self._update_count += 1
        self._require_update_dimensions = True
        self.check_idle()
        self.refresh()
        keys = source.keys
        if not keys:
            return
        found = self._row_locations.get(RowKey(selected)) if selected is not None else None
        index = found if found is not None else min(old_row, len(keys) - 1)
        self.move_cursor(row=index, animate=False, scroll=False)
        self.call_after_refresh(self._restore_scroll, old_scroll, index)

    def _widen(self, widths: Sequence[int]) -> None:
        for column, widest in zip(self.ordered_columns, widths, strict=False):
            if widest > column.content_width:
                column.content_width = widest
                self._require_update_dimensions = True
        if self._require_update_dimensions:
            self.check_idle()
