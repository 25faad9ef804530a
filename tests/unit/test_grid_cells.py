"""The grid's cells: a plain cell drawn in one string is exactly the text of Rich's
segments of the same cell (padded, cropped, justified) at every width; any other cell is
declined (drawn by Rich); column widths are each column's widest cell."""

from __future__ import annotations

from rich.console import Console
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from konsole.ui.widgets.grid_cells import Left, Right, as_text, cell_width, column_widths
from konsole.ui.widgets.grid_paint import CELL_PADDING, Layout, plain_text

WORDS = [
    "",
    "-",
    "0",
    "1,234,567",
    "1 (gone)",
    "0,1!,2",
    "a" * 30,
    "über",
    "日本語",
    " pad ",
    "[x]",
    "tab\there",
]


def _rich_line(console: Console, cell: object, width: int, style: Style) -> list[Segment]:
    """The segments Rich draws for the cell (its Text padded one blank each side), one
    style over them all, merged where styles are equal."""
    options = console.options.update_dimensions(width, 1).update(no_wrap=True)
    [line] = console.render_lines(Padding(as_text(cell), (0, CELL_PADDING)), options)
    return list(Segment.simplify(Segment.apply_style(line, style)))


def test_a_plain_cell_is_the_text_of_rich_s_segments() -> None:
    console = Console(width=200)
    style = Style(bgcolor="blue") + Style.from_meta({"row": 3, "column": 1})
    checked = declined = 0
    for width in (1, 2, 3, 5, 8, 12, 40):
        for word in WORDS:
            for cell in (word, Right(word), Left(word), None):
                line = plain_text(cell, width)
                if line is None:  # wide characters, tabs, or no room: Rich's way
                    assert width <= 2 * CELL_PADDING or not (word.isascii() and word.isprintable())
                    declined += 1
                    continue
                assert [Segment(line, style)] == _rich_line(console, cell, width, style), (
                    width,
                    cell,
                )
                checked += 1
    assert checked > 150 and declined > 40


def test_styled_text_is_never_a_plain_cell() -> None:
    for cell in (Text("x"), Text("x", style="bold"), 1, 2.5):
        assert plain_text(cell, 10) is None


def test_column_widths_are_the_widest_cell_width_of_each_column() -> None:
    rows = [
        ["ab", Right("12,345"), None, Left("x"), "wide 表格"],
        ["abcdef", Right("7"), Text("NULL", style="dim"), Left("tab\there"), "narrow"],
        ["", Right(""), Text("a much longer styled text"), Left(""), "new\nline and more"],
        ["short"],  # fewer cells than columns
    ]
    expected = [
        max((cell_width(row[i]) for row in rows if i < len(row)), default=0) for i in range(5)
    ]
    assert column_widths(rows, 5) == expected == [6, 6, 25, 7, 13]
    assert column_widths([], 3) == [0, 0, 0]


def test_the_columns_in_view_are_those_that_meet_it() -> None:
    layout = Layout.of([3, 1, 8, 0])  # render widths 5, 3, 10, 2: starts 0, 5, 8, 18, 20
    assert layout.starts == (0, 5, 8, 18, 20) and layout.total == 20
    assert layout.in_view(0, 5) == range(0, 1)
    assert layout.in_view(4, 6) == range(0, 2)
    assert layout.in_view(5, 18) == range(1, 3)
    assert layout.in_view(17, 40) == range(2, 4)
    assert layout.in_view(20, 30) == range(4, 4)  # beyond the last column: none
    assert Layout.of([]).in_view(0, 10) == range(0, 0)
