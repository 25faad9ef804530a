"""Which of a panel's lines fit its height (pure, no Textual).

The rule is the tables' columns' (:mod:`konsole.ui.widgets.column_fit`), turned on its
side: a panel too short for its lines loses whole lines, the least important first, and
says how many with a last ``+N more`` line; a line is never cut at the bottom edge or in
the middle of a word (a cut finding reads as a different finding).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from konsole.ui.widgets.column_fit import fitting_columns

__all__ = ["RankedLines", "fitting_lines"]


@dataclass(frozen=True, slots=True)
class RankedLines:
    """A panel's lines in screen order, and which may drop (least important first)."""

    lines: tuple[Text, ...]
    #: Indexes of ``lines``, the first dropped first; a line not here always stays.
    drop_order: tuple[int, ...] = ()
    #: What the last line says when ``n`` lines were left out.
    more: str = "+{n} more"


def fitting_lines(heights: Sequence[int], drop_order: Sequence[int], rows: int) -> list[int]:
    """The indexes (in screen order) of the lines shown in ``rows`` rows, each line taking
    ``heights[i]`` rows: all when they fit, else the lines left when those of ``drop_order``
    are taken away one by one until the rest fit one row less (the ``+N more`` row)."""
    if sum(heights) <= rows:
        return list(range(len(heights)))
    return fitting_columns(heights, drop_order, max(rows - 1, 0))
