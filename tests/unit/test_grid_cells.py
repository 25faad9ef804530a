"""LeanTable's one-line cell path gives exactly the segments of Rich's general one, for
cells of every kind it takes (styles, spans, justify, wide characters, too long, empty)
at every width, and declines the cells it does not take."""

from __future__ import annotations

from rich.console import Console
from rich.style import Style
from rich.text import Text

from konsole.ui.widgets.lean_table import Right, _cell_lines, _one_line, as_text

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
]


def cells() -> list[Text]:
    out: list[Text] = []
    for w in WORDS:
        spanned = Text(w)
        if len(w) > 2:
            spanned.stylize("underline", 1, 2)
        out += [
            as_text(w),
            as_text(Right(w)),
            Text(w, style="bold red"),
            Text(w, justify="left"),
            Text(w, style="yellow", justify="right"),
            Text(w, overflow="crop"),
            spanned,
        ]
    return out


def test_one_line_cells_are_rich_s_own_segments() -> None:
    console = Console(width=200)
    pre = Style(bgcolor="blue") + Style.from_meta({"row": 3, "column": 1})
    post = Style(color="white")
    checked = 0
    for width in (1, 2, 3, 5, 8, 12, 40):
        for padding in (0, 1):
            if width <= 2 * padding:
                continue
            options = console.options.update_dimensions(width, 1).update(no_wrap=True)
            for cell in cells():
                for _ in range(2):  # the second time from the kept segments
                    fast = _one_line(console, options, cell, padding, pre, post)
                    assert fast == _cell_lines(console, options, cell, padding, pre, post), (
                        width,
                        padding,
                        cell,
                    )
                    checked += 1
    assert checked > 1000


def test_other_cells_are_declined() -> None:
    console = Console(width=200)
    one = console.options.update_dimensions(10, 1).update(no_wrap=True)
    for cell in (
        Text("a\nb"),
        Text("a\tb"),
        Text("x", justify="center"),
        Text("x" * 20, overflow="ellipsis"),
    ):
        assert _one_line(console, one, cell, 1, Style(), Style()) is None
    two = console.options.update_dimensions(10, 2)
    assert _one_line(console, two, Text("x"), 1, Style(), Style()) is None


def test_column_widths_are_the_widest_cell_width_of_each_column() -> None:
    from rich.text import Text

    from konsole.ui.widgets.lean_table import Left, cell_width, column_widths

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


def test_a_plain_line_is_the_text_of_rich_s_segments_of_the_cell() -> None:
    from rich.segment import Segment

    from konsole.ui.widgets.lean_table import Left, _plain_line

    console = Console(width=200)
    pre = Style(bgcolor="blue") + Style.from_meta({"row": 3, "column": 1})
    post = Style(color="white")
    checked = declined = 0
    for width in (1, 2, 3, 5, 8, 12, 40):
        for padding in (0, 1, 2):
            options = console.options.update_dimensions(width, 1).update(no_wrap=True)
            for word in WORDS:
                for cell in (word, Right(word), Left(word), None):
                    line = _plain_line(cell, padding, width)
                    if line is None:  # wide characters, or no room: Rich's way
                        assert width <= 2 * padding or not (word.isascii() and word.isprintable())
                        declined += 1
                        continue
                    [rich] = _cell_lines(console, options, as_text(cell), padding, pre, post)
                    # One style for the whole cell, so DataTable's line merges it into one.
                    assert [Segment(line, pre + post)] == list(Segment.simplify(rich)), (
                        width,
                        padding,
                        cell,
                    )
                    checked += 1
    assert checked > 400 and declined > 20
