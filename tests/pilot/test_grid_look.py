"""KeyedGrid draws what Textual's DataTable (row cursor) draws for the same cells: every
line, segment and style, at every horizontal scroll, cursor place, focus, hover and header
height; and a line renders only the cells of the columns in view.

DataTable is the reference of the look the console's screens had (their snapshots must not
move), used here through its public API only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from rich.segment import Segment
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from konsole.ui.widgets import grid_paint
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.grid_cells import Cell, Left, Right, as_text

pytestmark = pytest.mark.timeout(120)

COLUMNS = 30


def _cells(row: int) -> list[Cell | None]:
    cells: list[Cell | None] = []
    for col in range(COLUMNS):
        kind = (row + col) % 7
        if kind == 0:
            cells.append(Right(f"{row * col:,}"))
        elif kind == 1:
            cells.append(Left(f"r{row}c{col}" + "x" * (col % 7)))
        elif kind == 2:
            cells.append(None if row % 2 else Text("NULL", style="dim italic", justify="right"))
        elif kind == 3:
            cells.append(f"wide 表格 {col}")
        elif kind == 4:
            cells.append(Text.assemble((f"styled {row}", "bold red"), " plain"))
        elif kind == 5:
            cells.append("[b]not markup[/b]" if row % 3 else "tab\there")
        else:
            cells.append(Right("  padded ") if row % 2 else "")
    return cells


class _Both(App[None]):
    """A DataTable and a KeyedGrid of the same columns, narrower than their columns."""

    CSS = "DataTable, KeyedGrid { width: 50; height: 10; }"

    def __init__(self, header_height: int = 1) -> None:
        super().__init__()
        self.header_height = header_height

    def compose(self) -> ComposeResult:
        yield DataTable(id="plain", cursor_type="row", header_height=self.header_height)
        yield KeyedGrid(id="grid", header_height=self.header_height)


def _fill(
    app: _Both, labels: Sequence[tuple[str, Text]], rows: list[tuple[str, list[Cell | None]]]
) -> tuple[DataTable[Any], KeyedGrid]:
    plain, grid = app.query_one(DataTable), app.query_one(KeyedGrid)
    for key, label in labels:
        plain.add_column(label, key=key)
    for key, cells in rows:
        plain.add_row(*(as_text(c) for c in cells), key=key)
    grid.set_columns(labels)
    grid.sync(rows)
    return plain, grid


def _lines(table: DataTable[Any] | KeyedGrid) -> list[list[Segment]]:
    return [list(table.render_line(y)) for y in range(table.size.height)]


async def test_every_line_at_every_scroll_and_cursor_place_is_datatable_s() -> None:
    labels = [
        (str(c), Text(f"c{c}", justify="right" if c % 5 == 0 else "left")) for c in range(COLUMNS)
    ]
    app = _Both()
    async with app.run_test(size=(60, 24)) as pilot:
        plain, grid = _fill(app, labels, [(str(r), _cells(r)) for r in range(12)])
        app.set_focus(None)  # neither focused: the same styles for both
        await pilot.pause()
        assert grid.virtual_size == plain.virtual_size
        assert [c.render_width for c in grid.columns] == [
            c.get_render_width(plain) for c in plain.ordered_columns
        ]
        widest = plain.virtual_size.width - plain.size.width
        assert widest > 100  # far wider than the view: most columns are out of it
        compared = 0
        for row in (0, 3, 11):
            plain.move_cursor(row=row)
            grid.move_cursor(row=row)
            for x in (0, 1, 13, widest // 2, widest - 1, widest):
                for table in (plain, grid):
                    table.scroll_to(x=x, y=0, animate=False, immediate=True)
                await pilot.pause()
                assert grid.scroll_x == plain.scroll_x == x
                assert _lines(grid) == _lines(plain), (row, x)
                compared += 1
        assert compared == 18


async def test_focus_hover_and_a_two_line_header_are_datatable_s() -> None:
    """Focused (the cursor's own colours), the mouse over a row and over the header, a
    header of two lines, a column with no label and no cells, a table narrower than its
    view (the line filled beyond its last column)."""
    labels = [
        ("name", Text("name\nSTRING")),
        ("n", Text("n\nBIGINT", justify="right")),
        ("empty", Text("")),
        ("s", Text("styled\nSTRING")),
    ]
    rows: list[tuple[str, list[Cell | None]]] = [
        (str(r), [f"row {r}", Right(f"{r * 1_001:,}"), None, Text("x" * r, style="green")])
        for r in range(12)
    ]
    app = _Both(header_height=2)
    async with app.run_test(size=(60, 24)) as pilot:
        plain, grid = _fill(app, labels, rows)
        await pilot.pause()
        for table in (plain, grid):
            table.move_cursor(row=4)
        seen: dict[str, list[list[list[Segment]]]] = {"focus": [], "row": [], "header": []}
        for table in (plain, grid):
            table.focus()
            await pilot.pause()
            seen["focus"].append(_lines(table))
            await pilot.hover(type(table), offset=(3, 5))  # row 3 (two header lines)
            await pilot.pause()
            seen["row"].append(_lines(table))
            await pilot.hover(type(table), offset=(3, 0))
            await pilot.pause()
            seen["header"].append(_lines(table))
        assert grid.virtual_size == plain.virtual_size
        assert grid.size.width > grid.virtual_size.width  # the filler is in view
        for what, (reference, ours) in seen.items():
            assert ours == reference, what
        assert seen["row"][1] != seen["focus"][1]  # the hover shows


async def test_a_line_renders_only_the_cells_in_view(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: set[str] = set()
    plain_text = grid_paint.plain_text

    def counting(cell: object, width: int) -> str | None:
        drawn.add(str(cell))
        return plain_text(cell, width)

    monkeypatch.setattr(grid_paint, "plain_text", counting)
    app = _Both()
    async with app.run_test(size=(60, 24)) as pilot:
        grid = app.query_one(KeyedGrid)
        grid.set_columns([(str(c), f"c{c}") for c in range(COLUMNS)])
        grid.sync([(str(r), [f"r{r}c{c:02d}" for c in range(COLUMNS)]) for r in range(12)])
        await pilot.pause()
        drawn.clear()
        grid.scroll_to(x=60, y=0, animate=False, immediate=True)
        await pilot.pause()
        # 50 cells wide, scrolled 60 cells right (columns 8 cells wide): columns 7 to 13
        columns = {int(text[-2:]) for text in drawn}
        assert columns == set(range(7, 14)), sorted(columns)
