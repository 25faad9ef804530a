"""The Tables screen's rows as plain sequences: the tables shown (filtered, sorted), the
empty databases after them, each column's widest cell, and the cells of one row made only
when it is drawn (:class:`~konsole.ui.widgets.grid_rows.RowSource`).

No Textual here: :func:`arrange` runs on the UI thread for a small cluster and in a
thread worker for a big one (the screen decides). Widths are measured from the figures,
not from cells: a column of numbers is as wide as the text of its smallest or its biggest
value (a number's text, ``1,234`` or ``-1,234``, only grows with its magnitude), so 10,000
tables cost a ``min``/``max`` per column instead of 90,000 formatted cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from konsole.model.table_stats import TableFigures
from konsole.ui.widgets.grid_cells import Cell, Right, cell_width
from konsole.ui.widgets.grid_rows import RowSource

__all__ = ["Arranged", "SortKey", "arrange", "kind_text", "num_text", "rate_text"]

#: A column's sort key of a table's figures (None sorts last).
SortKey = Callable[[TableFigures], Any]

_NO_TABLES = Text("(no tables)", style="dim")


def kind_text(f: TableFigures) -> str:
    if f.error is not None:
        return "error"
    if f.primary_key is None:
        return "?"
    return "PK" if f.primary_key else "log"


def rate_text(rate: float | None) -> str:
    """``-`` when unknown, one decimal below 10 rows/s, thousands separators above."""
    if rate is None:
        return "-"
    if rate < 10:
        return f"{rate:.1f}"
    return f"{rate:,.0f}"


def num_text(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _parts_text(value: int | None) -> str:
    return num_text(value) if value else "-"


@dataclass(frozen=True, slots=True)
class Arranged:
    """What the screen shows for one poll, filter and sort."""

    shown: list[TableFigures]
    #: The empty databases that pass the filter (a row each, after the tables).
    databases: list[str]
    source: RowSource


def arrange(
    figures: Sequence[TableFigures],
    empty_databases: Sequence[str],
    needle: str,
    sort: SortKey,
    reverse: bool,
    stale: bool,
) -> Arranged:
    """The rows of ``figures`` whose path holds ``needle`` (any case), sorted by ``sort``
    (ties by path; unknown keys last), then the empty databases holding it."""
    needle = needle.lower()
    if needle:
        figures = [f for f in figures if needle in f.path.lower()]
    keys = [sort(f) for f in figures]
    paths = [f.path for f in figures]
    # By key, ties by path (unique), unknown keys last in the figures' order: two stable
    # sorts of indexes by C-level look-ups, no key function called and no tuple made per
    # table (10,000 tuples were 10,000 objects for the collector to walk). A reversed sort
    # keeps equal keys in their order, so ties come by path reversed, as the keys do.
    known = [i for i, k in enumerate(keys) if k is not None]
    known.sort(key=paths.__getitem__, reverse=reverse)
    known.sort(key=keys.__getitem__, reverse=reverse)
    shown = [figures[i] for i in known] + [
        f for k, f in zip(keys, figures, strict=True) if k is None
    ]
    databases = [db for db in empty_databases if needle in db.lower()]
    row_keys = [f"t:{f.path}" for f in shown] + [f"d:{db}" for db in databases]
    count = len(shown)

    def cells(index: int) -> Sequence[Cell | None]:
        if index < count:
            return table_cells(shown[index], stale)
        return (databases[index - count], _NO_TABLES, *([""] * 7))

    return Arranged(shown, databases, RowSource(row_keys, cells, widths(shown, databases)))


def table_cells(f: TableFigures, stale: bool) -> tuple[Cell, ...]:
    """One table's row; the alarming figures in colour unless the data is stale."""

    def right(text: str, style: str = "") -> Cell:
        return Right(text) if stale or not style else Text(text, style=style, justify="right")

    kind = kind_text(f)
    return (
        f.database,
        f.table,
        kind if stale or kind != "error" else Text(kind, style="bold red"),
        right(num_text(f.buckets)),
        right(_parts_text(f.partitions)),
        right(rate_text(f.rows_per_s)),
        right(num_text(f.offset_span)),
        right(num_text(f.under_replicated), "bold yellow" if f.under_replicated else ""),
        right(num_text(f.offline), "bold red" if f.offline else ""),
    )


def widths(shown: Sequence[TableFigures], databases: Sequence[str]) -> list[int]:
    """Each column's widest cell over the rows :func:`arrange` makes (what measuring every
    cell would answer), from a few candidates per column of numbers."""
    names = [f.database for f in shown] + list(databases)
    tables = [f.table for f in shown] + ([_NO_TABLES.plain] if databases else [])
    errors = any(f.error is not None for f in shown)
    kinds = {f.primary_key for f in shown if f.error is None}
    return [
        _widest_text(names),
        _widest_text(tables),
        max((len(k) for k in ("error",) * errors + tuple(_KIND[p] for p in kinds)), default=0),
        _widest_number([f.buckets for f in shown], num_text),
        _widest_number([f.partitions or None for f in shown], _parts_text),
        _widest_rate([f.rows_per_s for f in shown]),
        _widest_number([f.offset_span for f in shown], num_text),
        _widest_number([f.under_replicated for f in shown], num_text),
        _widest_number([f.offline for f in shown], num_text),
    ]


_KIND = {None: "?", True: "PK", False: "log"}


def _widest_text(texts: Sequence[str] | set[str]) -> int:
    joined = "".join(texts)
    if joined.isascii() and joined.isprintable():
        return max(map(len, texts), default=0)
    return max(map(cell_width, texts), default=0)


def _widest_rate(rates: list[float | None]) -> int:
    """:func:`rate_text`'s widest: the biggest rate's, the smallest's (a negative one's
    grows with its magnitude) or that of the biggest below 10 (``9.96`` is ``10.0``)."""
    known = [r for r in rates if r is not None]
    below = [r for r in known if r < 10]
    candidates = [min(known), max(known), max(below, default=0.0)] if known else []
    widest = max((len(rate_text(r)) for r in candidates), default=0)
    return max(widest, 1) if len(known) < len(rates) else widest  # "-" for an unknown


def _widest_number(values: list[int | None], text: Callable[[int | None], str]) -> int:
    known = [v for v in values if v is not None]
    widest = max((len(text(v)) for v in (min(known), max(known))), default=0) if known else 0
    return max(widest, 1) if len(known) < len(values) else widest  # "-" for an unknown
