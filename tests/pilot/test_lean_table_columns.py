"""LeanTable renders only the columns in view of a line it draws, and draws what DataTable
draws at every horizontal scroll, cursor type and cursor place."""

from __future__ import annotations

from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from konsole.ui.widgets.lean_table import LeanTable, Left, Right, as_text

pytestmark = pytest.mark.timeout(60)

COLUMNS = 30


def _cells(row: int) -> list[str | Text | None]:
    cells: list[str | Text | None] = []
    for col in range(COLUMNS):
        kind = (row + col) % 5
        if kind == 0:
            cells.append(Right(f"{row * col:,}"))
        elif kind == 1:
            cells.append(Left(f"r{row}c{col}" + "x" * (col % 7)))
        elif kind == 2:
            cells.append(None if row % 2 else Text("NULL", style="dim italic"))
        elif kind == 3:
            cells.append(f"wide 表格 {col}")
        else:
            cells.append(Text(f"styled {row}", style="bold"))
    return cells


class _Both(App[None]):
    """A DataTable and a LeanTable of the same 30 columns, narrower than their columns."""

    CSS = "DataTable { width: 50; height: 10; }"

    def __init__(self, cursor_type: Any, zebra: bool) -> None:
        super().__init__()
        self.cursor_type, self.zebra = cursor_type, zebra

    def compose(self) -> ComposeResult:
        for ident, cls in (("plain", DataTable), ("lean", LeanTable)):
            yield cls(id=ident, cursor_type=self.cursor_type, zebra_stripes=self.zebra)


@pytest.mark.parametrize(
    ("cursor_type", "zebra"), [("row", False), ("cell", True), ("column", False), ("none", True)]
)
async def test_every_line_at_every_scroll_is_datatable_s_own(cursor_type: str, zebra: bool) -> None:
    rows = [(str(r), _cells(r)) for r in range(12)]
    app = _Both(cursor_type, zebra)
    async with app.run_test(size=(60, 24)) as pilot:
        plain, lean = app.query_one("#plain", DataTable), app.query_one("#lean", LeanTable)
        for table in (plain, lean):
            for col in range(COLUMNS):
                label = Text(f"c{col}", justify="right" if col % 5 == 0 else "left")
                table.add_column(label, key=str(col))
        for key, cells in rows:
            plain.add_row(*(as_text(c) for c in cells), key=key)
        lean.replace_rows(rows)
        app.set_focus(None)  # neither table focused: the same styles for both
        await pilot.pause()
        assert lean.virtual_size == plain.virtual_size
        widest = plain.virtual_size.width - plain.size.width
        assert widest > 100  # far wider than the view: most columns are out of it
        for row, col in ((0, 0), (3, 7), (11, COLUMNS - 1)):
            for table in (plain, lean):
                table.move_cursor(row=row, column=col, animate=False)
            for x in (0, 1, 13, widest // 2, widest - 1, widest):
                for table in (plain, lean):
                    table.scroll_to(x=x, y=0, animate=False, immediate=True)
                await pilot.pause()
                assert lean.scroll_x == plain.scroll_x == x
                for y in range(plain.size.height):
                    assert list(lean.render_line(y)) == list(plain.render_line(y)), (x, y)


async def test_a_line_renders_only_the_cells_in_view() -> None:
    app = _Both("row", False)
    async with app.run_test(size=(60, 24)) as pilot:
        lean = app.query_one("#lean", LeanTable)
        for col in range(COLUMNS):
            lean.add_column(f"c{col}", key=str(col))
        lean.replace_rows([(str(r), _cells(r)) for r in range(12)])
        await pilot.pause()
        drawn: list[int] = []
        render = lean._render_cell

        def counting(row: int, column: int, *args: Any, **kw: Any) -> Any:
            if row >= 0:
                drawn.append(column)
            return render(row, column, *args, **kw)

        lean._render_cell = counting  # type: ignore[method-assign]
        lean.scroll_to(x=60, y=0, animate=False, immediate=True)
        await pilot.pause()
        lean.refresh()
        await pilot.pause()
        assert drawn, "no line was drawn"
        # 50 cells wide, scrolled 60 cells right: only the few columns there are rendered
        shown = sorted(set(drawn))
        assert shown[0] > 0 and shown[-1] - shown[0] < 8, shown
