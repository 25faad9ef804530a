"""Columns that do not fit are dropped by priority, never cut (konsole.ui.widgets.column_fit)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.text import Text

from konsole.ui.widgets.column_fit import ColumnFitError, column_widths, fitting_columns


def test_widths_are_the_widest_label_or_cell_with_padding() -> None:
    rows = [["coord", Text("51K/s")], ["tablet", "-"]]
    assert column_widths(["role", "in/s"], rows, 1) == [8, 7]


def test_everything_shown_when_it_fits() -> None:
    assert fitting_columns([10, 10, 10], [2, 1], 30) == [0, 1, 2]


def test_the_least_important_go_first_and_no_more_than_needed() -> None:
    # the Servers screen at 100 columns: dropping rack alone lets out/s stay whole
    assert fitting_columns([10, 8, 10, 7], [1, 0], 30) == [0, 2, 3]
    assert fitting_columns([10, 8, 10, 7], [1, 0], 20) == [2, 3]


def test_columns_not_in_the_drop_order_always_stay() -> None:
    assert fitting_columns([50, 50], [1], 10) == [0]


@pytest.mark.parametrize("order", [[0, 0], [3], [-1]])
def test_a_drop_order_of_other_columns_is_refused(order: list[int]) -> None:
    with pytest.raises(ColumnFitError):
        fitting_columns([1, 2, 3], order, 5)


def test_a_row_of_another_width_is_refused() -> None:
    with pytest.raises(ColumnFitError):
        column_widths(["a", "b"], [["x"]], 1)


@given(
    st.lists(st.integers(1, 30), min_size=1, max_size=12),
    st.integers(0, 200),
    st.randoms(use_true_random=False),
)
def test_what_is_shown_fits_unless_only_the_kept_remain(
    widths: list[int], available: int, rnd: object
) -> None:
    order = list(range(len(widths)))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    droppable = order[: len(order) // 2 + 1]
    shown = fitting_columns(widths, droppable, available)
    kept = set(range(len(widths))) - set(droppable)
    assert kept <= set(shown) and shown == sorted(shown)
    dropped = [i for i in droppable if i not in shown]
    assert dropped == droppable[: len(dropped)]  # in the drop order, a prefix of it
    fits = sum(widths[i] for i in shown) <= available
    assert fits or set(shown) == kept
    if dropped:  # no more than needed: the last one dropped did not fit
        assert sum(widths[i] for i in shown) + widths[dropped[-1]] > available
