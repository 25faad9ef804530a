"""The keyed row model a :class:`~konsole.ui.widgets.grid.KeyedGrid` draws from.

A :class:`RowSource` is the rows of one refresh: their keys in order, the cells of row
``i`` (a function, called only for the rows drawn or asked for) and each column's widest
cell. Built by the screen, possibly in a thread worker (the Tables screen's 10,000 tables):
its key index is made, and its keys checked unique, where it is built, so the UI thread
only looks keys up. :class:`GridRows` is what the grid holds: the current source, the cells
made for the rows drawn, and the checks every change passes before anything is replaced
(a bad change raises a :class:`GridError` and leaves the rows as they were).

No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.text import Text

from konsole.ui.widgets.grid_cells import Cell, as_text, column_widths

__all__ = [
    "DuplicateKey",
    "GridError",
    "GridRows",
    "Row",
    "RowSource",
    "TooManyCells",
]

#: (row key, cells in column order)
Row = tuple[str, Sequence[Cell | None]]

#: Rows whose cells are kept made (the rows in view are a few dozen; a page turn more).
_MADE_KEPT = 512


class GridError(ValueError):
    """A change a grid refuses (its rows stay as they were)."""


class DuplicateKey(GridError):
    """A row or column key given twice."""


class TooManyCells(GridError):
    """A row with more cells than the grid has columns."""


def _first_duplicate(keys: Sequence[str]) -> str:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    return ""


@dataclass(frozen=True, slots=True, eq=False)
class RowSource:
    """The rows of one refresh: keys in order, the cells of row ``i`` (made when drawn)
    and each column's widest cell. Keys are unique (:class:`DuplicateKey` otherwise)."""

    keys: Sequence[str]
    cells: Callable[[int], Sequence[Cell | None]]
    widths: Sequence[int]
    #: The rows as given when they were made up front (:meth:`of`); None for a function.
    made: Sequence[Row] | None = None
    positions: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        positions = dict(zip(self.keys, range(len(self.keys)), strict=True))
        if len(positions) != len(self.keys):
            raise DuplicateKey(f"row key {_first_duplicate(self.keys)!r} is given twice")
        object.__setattr__(self, "positions", positions)

    @classmethod
    def of(cls, rows: Sequence[Row], columns: int | None = None) -> RowSource:
        """A source of rows already made (key, cells), measured here over ``columns``
        columns (the widest row's when None)."""
        if columns is None:
            columns = max((len(cells) for _, cells in rows), default=0)
        widths = column_widths([cells for _, cells in rows], columns)
        return cls([k for k, _ in rows], lambda i: rows[i][1], widths, made=rows)

    def __len__(self) -> int:
        return len(self.keys)


EMPTY = RowSource((), lambda i: (), ())


class GridRows:
    """The rows a grid shows over ``columns`` columns: the current :class:`RowSource` and
    the cells made for the rows drawn since it was installed."""

    def __init__(self) -> None:
        self.source = EMPTY
        self.columns = 0
        self._made: dict[int, tuple[Cell | None, ...]] = {}

    def __len__(self) -> int:
        return len(self.source.keys)

    @property
    def keys(self) -> Sequence[str]:
        return self.source.keys

    def index_of(self, key: str) -> int | None:
        return self.source.positions.get(key)

    def key_at(self, index: int) -> str | None:
        keys = self.source.keys
        return keys[index] if 0 <= index < len(keys) else None

    def texts_at(self, index: int) -> list[Text]:
        """Row ``index``'s cells as they are drawn; IndexError past the rows."""
        if not 0 <= index < len(self):
            raise IndexError(f"no row {index} of {len(self)}")
        return [as_text(c) for c in self.cells_at(index)]

    def texts_of(self, key: str) -> list[Text]:
        """Row ``key``'s cells as they are drawn; KeyError for a key not shown."""
        index = self.index_of(key)
        if index is None:
            raise KeyError(f"no row {key!r}")
        return self.texts_at(index)

    def cells_at(self, index: int) -> tuple[Cell | None, ...]:
        """Row ``index``'s cells, one per column (missing ones ``None``), made once."""
        made = self._made.get(index)
        if made is None:
            cells = tuple(self.source.cells(index))
            if len(cells) > self.columns:
                key = self.source.keys[index]
                raise TooManyCells(f"row {key!r} has {len(cells)} cells for {self.columns}")
            made = cells + (None,) * (self.columns - len(cells))
            if len(self._made) >= _MADE_KEPT:
                self._made.clear()
            self._made[index] = made
        return made

    # ------------------------------------------------------------------ changes

    def check(self, source: RowSource) -> None:
        """Raise a :class:`GridError` when ``source`` does not fit the columns."""
        if source.keys and len(source.widths) != self.columns:
            raise GridError(f"{len(source.widths)} column widths for {self.columns} columns")
        if source.made is not None:
            widest = max((len(cells) for _, cells in source.made), default=0)
            if widest > self.columns:
                raise TooManyCells(f"a row has {widest} cells for {self.columns} columns")

    def install(self, source: RowSource) -> None:
        """Show ``source`` (checked first: see :meth:`check`)."""
        self.check(source)
        self.source = source
        self._made = {}

    def set_columns(self, columns: int) -> None:
        """A new set of columns: the rows are dropped."""
        self.columns = columns
        self.source = EMPTY
        self._made = {}

    def same_keys(self, source: RowSource) -> bool:
        old = self.source.keys
        return old is source.keys or (len(old) == len(source.keys) and old == source.keys)

    def changed(self, source: RowSource) -> list[int] | None:
        """The rows of ``source`` (same keys, same order) whose cells differ from those
        shown, when both were made up front; None when that is not known (all changed)."""
        old, new = self.source.made, source.made
        if old is None or new is None:
            return None
        return [
            i
            for i, ((_, before), (_, after)) in enumerate(zip(old, new, strict=True))
            if before is not after and tuple(before) != tuple(after)
        ]

    def appended(self, rows: Sequence[Row]) -> RowSource:
        """The rows shown followed by ``rows`` (their keys new: :class:`DuplicateKey`)."""
        taken = self.source.positions
        for key, _ in rows:
            if key in taken:
                raise DuplicateKey(f"row key {key!r} is shown already")
        if self.source.made is not None:
            return RowSource.of([*self.source.made, *rows], self.columns)
        first, count = self.source, len(self.source.keys)
        extra = RowSource.of(rows, self.columns)

        def cells(index: int) -> Sequence[Cell | None]:
            return first.cells(index) if index < count else rows[index - count][1]

        widths = [max(a, b) for a, b in zip(first.widths, extra.widths, strict=False)]
        return RowSource([*first.keys, *extra.keys], cells, widths or extra.widths)
