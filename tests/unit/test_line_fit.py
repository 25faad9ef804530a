"""A panel too short for its lines drops whole lines by priority and says how many
(konsole.ui.widgets.line_fit), and the Health panel ranks its lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from konsole.ui.widgets.line_fit import fitting_lines


def test_every_line_when_they_fit() -> None:
    assert fitting_lines([1, 2, 1], [2, 1], 4) == [0, 1, 2]


def test_too_short_drops_the_least_important_whole_and_keeps_a_row_for_more() -> None:
    # 5 rows of lines in 4: dropping line 2 (1 row) would fit 4, but "+1 more" needs a row
    assert fitting_lines([1, 2, 1, 1], [3, 2, 1], 4) == [0, 1]
    assert fitting_lines([1, 2, 1, 1], [3, 2, 1], 0) == [0]  # not in the drop order: stays


@given(st.lists(st.integers(1, 4), max_size=10), st.integers(0, 30))
def test_what_is_shown_and_its_more_line_fit_unless_only_the_kept_lines_are_left(
    heights: list[int], rows: int
) -> None:
    order = list(range(len(heights) - 1, 0, -1))  # the first line always stays
    shown = fitting_lines(heights, order, rows)
    dropped = len(heights) - len(shown)
    used = sum(heights[i] for i in shown) + (1 if dropped else 0)
    assert used <= rows or shown == [0]
