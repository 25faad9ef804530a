"""Which of a table's columns fit its width (pure, no Textual).

A table too wide for the terminal loses whole columns, the least important first, never
a column cut mid-word at the right edge: an operator reads a missing column as "not
shown" and a cut one ("out" for "out/s", "20K" for "20K/s") as a wrong value.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text

__all__ = ["ColumnFitError", "column_widths", "fitting_columns"]


class ColumnFitError(ValueError):
    """The columns, their widths and their priorities do not describe one table."""


def column_widths(
    labels: Sequence[str], rows: Sequence[Sequence[Text | str]], padding: int
) -> list[int]:
    """Each column's width on screen: its widest label or cell, ``padding`` each side."""
    widths = [cell_len(label) for label in labels]
    for row in rows:
        if len(row) != len(labels):
            raise ColumnFitError(f"a row of {len(row)} cells under {len(labels)} columns")
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], cell.cell_len if isinstance(cell, Text) else cell_len(cell))
    return [w + 2 * padding for w in widths]


def fitting_columns(widths: Sequence[int], drop_order: Sequence[int], available: int) -> list[int]:
    """The indexes (in table order) of the columns shown in ``available`` cells: every
    column when they fit, else the columns of ``drop_order`` (least important first)
    taken away one by one until the rest fit. A column not in ``drop_order`` always
    stays, even when the table is still too wide without the others."""
    if len(set(drop_order)) != len(drop_order) or not all(0 <= i < len(widths) for i in drop_order):
        raise ColumnFitError(f"drop order {list(drop_order)} is not of {len(widths)} columns")
    shown = set(range(len(widths)))
    total = sum(widths)
    for index in drop_order:
        if total <= available:
            break
        shown.discard(index)
        total -= widths[index]
    return sorted(shown)
