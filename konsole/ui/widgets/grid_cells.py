"""The cells a :class:`~konsole.ui.widgets.grid.KeyedGrid` shows, and how wide they are.

Screens hand cells as they made them: ``str`` (left as it is), :class:`Right` (a number,
right-aligned), :class:`Left` (left-aligned), ``rich.text.Text`` (styled) or ``None``
(empty). They are kept as given and compared as given (plain strings compare fast, which is
why screens use ``Text`` only for styled cells); a cell becomes a ``Text`` only when its row
is drawn, and a string is never read as markup (a table named ``[x]`` shows ``[x]``).

No Textual here: the Tables screen measures its rows in a thread worker.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text

__all__ = ["PLAIN", "Cell", "Left", "Right", "as_text", "cell_width", "column_widths"]


class Right(str):
    """A cell shown right-aligned (numbers); compared as the plain string it is."""

    __slots__ = ()


class Left(str):
    """A cell shown left-aligned (``Text(cell, justify="left")``) made only when its row is
    drawn: a 300-column preview's page is thousands of cells, most never drawn."""

    __slots__ = ()


Cell = str | Text

#: The cell types drawn without Rich when their text is printable ASCII.
PLAIN = frozenset((str, Left, Right))


def as_text(cell: object) -> Text:
    """The ``Text`` a cell is drawn as: strings as they are, never read as markup;
    :class:`Right` right-aligned, :class:`Left` left-aligned; ``None`` and ``""`` empty."""
    if isinstance(cell, Text):
        return cell if cell else Text(no_wrap=True, end="")
    if cell is None or cell == "":
        return Text(no_wrap=True, end="")
    if isinstance(cell, Right):
        return Text(cell, justify="right")
    if isinstance(cell, Left):
        return Text(cell, justify="left")
    return Text(str(cell))


def cell_width(cell: object) -> int:
    """The width a cell needs: the cell length of its widest line (what Rich measures)."""
    if cell is None:
        return 0
    text = cell.plain if isinstance(cell, Text) else cell if isinstance(cell, str) else str(cell)
    if text.isprintable():
        return cell_len(text)
    # Line breaks or control codes: measure the Text it is drawn as (codes stripped).
    return max(map(cell_len, as_text(cell).plain.splitlines()), default=0)


def column_widths(rows: Sequence[Sequence[Cell | None]], columns: int) -> list[int]:
    """Each column's widest cell (:func:`cell_width`) over ``rows``: a column's plain
    strings measured by their length when all are printable ASCII (one join and one
    ``max``), any other cell one by one."""
    out: list[int] = []
    for index in range(columns):
        cells = [row[index] for row in rows if index < len(row)]
        plain: list[str] = [c for c in cells if type(c) in PLAIN]  # type: ignore[misc]
        joined = "".join(plain)
        if joined.isascii() and joined.isprintable():
            widest = max(map(len, plain), default=0)
        else:
            widest = max(map(cell_width, plain), default=0)
        if len(plain) < len(cells):
            others = (c for c in cells if type(c) not in PLAIN)
            widest = max(widest, max(map(cell_width, others), default=0))
        out.append(widest)
    return out
