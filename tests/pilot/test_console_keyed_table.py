"""KeyedTable: in-place updates, rebuilds that keep the cursor's row, text never markup;
LeanTable draws what DataTable draws."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable
from textual.widgets.data_table import DuplicateKey

from konsole.ui.widgets.keyed_table import KeyedTable, Right
from konsole.ui.widgets.lean_table import LeanTable, as_text

pytestmark = pytest.mark.timeout(30)


class _App(App[None]):
    def compose(self) -> ComposeResult:
        yield KeyedTable()


async def test_sync_updates_in_place_and_keeps_the_cursor_on_its_row() -> None:
    app = _App()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(KeyedTable)
        table.set_columns([("name", "name"), ("n", "n")])
        table.sync([("a", ["[bold]a[/]", Right("1")]), ("b", ["b", Right("2")])])
        await pilot.pause()
        assert str(table.get_cell("a", "name")) == "[bold]a[/]"  # shown, not read as markup
        assert table.get_cell("a", "n").justify == "right"
        table.move_cursor(row=1)
        assert table.selected_key == "b"
        # Same keys: cells change in place.
        table.sync([("a", ["a", Right("10")]), ("b", ["b", Right("20")])])
        await pilot.pause()
        assert str(table.get_cell("b", "n")) == "20" and table.selected_key == "b"
        # New order and a new row: rebuilt, the cursor follows "b".
        table.sync([("c", ["c", "3"]), ("b", ["b", "2"]), ("a", ["a", "1"])])
        await pilot.pause()
        assert table.row_keys == ["c", "b", "a"] and table.selected_key == "b"
        # A new label (a sort arrow) keeps rows and cursor.
        table.set_columns([("name", "name ▲"), ("n", "n")])
        await pilot.pause()
        assert table.row_keys == ["c", "b", "a"] and table.selected_key == "b"
        # The cursor's row gone: the cursor stays at its place.
        table.sync([("c", ["c", "3"]), ("a", ["a", "1"])])
        await pilot.pause()
        assert table.selected_key == "a"
        table.sync([])
        assert table.selected_key is None


async def test_an_update_in_place_repaints_the_changed_cells_and_keeps_the_others() -> None:
    """Only the changed cells' renders are dropped: what is painted must still be the new
    value there and the old one elsewhere, after several refreshes."""
    app = _App()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(KeyedTable)
        table.set_columns([("name", "name"), ("n", "n"), ("m", "m")])
        table.sync([("a", ["alpha", Right("1"), "x"]), ("b", ["beta", Right("2"), "y"])])
        await pilot.pause()
        for step in range(3, 7):
            table.sync([("a", ["alpha", Right(str(step)), "x"]), ("b", ["beta", Right("2"), "y"])])
            await pilot.pause()
            first = table.render_line(1).text  # line 0 is the header
            second = table.render_line(2).text
            assert "alpha" in first and str(step) in first and "x" in first, first
            assert "beta" in second and "2" in second and "y" in second, second
        # A wider value (a new column width) repaints everything, still right.
        table.sync([("a", ["alpha", Right("123456789"), "x"]), ("b", ["beta", Right("2"), "y"])])
        await pilot.pause()
        assert "123456789" in table.render_line(1).text


async def test_the_pinned_textual_has_the_internals_an_update_in_place_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On the textual pyproject.toml pins, an in-place update never takes the slow public
    fallback, and the render caches have the layout it forgets cells from."""
    app = _App()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(KeyedTable)
        table.set_columns([("name", "name"), ("n", "n")])
        table.sync([("a", ["alpha", Right("1")]), ("b", ["beta", Right("2")])])
        await pilot.pause()

        def public_fallback(*args: object, **kwargs: object) -> None:
            raise AssertionError("DataTable's internals moved: update_cell fallback taken")

        monkeypatch.setattr(table, "update_cell", public_fallback)
        table.sync([("a", ["alpha", Right("3")]), ("b", ["beta", Right("2")])])
        await pilot.pause()
        assert "3" in table.render_line(1).text
        assert table._forget_renders([("a", "n", Text("3"))]) is True


class _Both(App[None]):
    """A DataTable filled row by row beside a LeanTable filled in one pass."""

    CSS = "DataTable { width: 70; height: 8; }"

    def compose(self) -> ComposeResult:
        yield DataTable(id="plain", cursor_type="row")
        yield LeanTable(id="lean", cursor_type="row")


async def test_a_lean_table_draws_what_a_datatable_of_the_same_cells_draws() -> None:
    """Widths measured from the text, cells made Text when drawn: the same lines, styles
    and sizes as DataTable's own measurement of every cell."""
    rows: list[tuple[str, list[str | Text | None]]] = [
        ("a", ["[b]not markup[/b]", Right("1,234"), Text("red", style="bold red"), ""]),
        ("b", ["wide 表格", Right("5"), None, "x"]),
        ("c", ["tab\there", Right(""), Text("a much longer styled cell", style="dim"), "yz"]),
    ]
    app = _Both()
    async with app.run_test(size=(80, 20)) as pilot:
        plain, lean = app.query_one("#plain", DataTable), app.query_one("#lean", LeanTable)
        for table in (plain, lean):
            for key, label in (("n", "name"), ("v", Text("value", justify="right")), ("s", "s")):
                table.add_column(label, key=key)
            table.add_column("", key="e")
        for key, cells in rows:
            plain.add_row(*(as_text(c) for c in cells), key=key)
        lean.replace_rows(rows)
        app.set_focus(None)
        await pilot.pause()
        assert [c.content_width for c in lean.ordered_columns] == [
            c.content_width for c in plain.ordered_columns
        ]
        assert lean.virtual_size == plain.virtual_size and lean.row_count == 3
        for y in range(5):
            assert list(lean.render_line(y)) == list(plain.render_line(y)), y
        assert str(lean.get_cell("a", "n")) == "[b]not markup[/b]"
        assert lean.get_row_at(1)[1].justify == "right"
        with pytest.raises(DuplicateKey):
            lean.replace_rows([("a", ["1"]), ("a", ["2"])])


async def test_a_lean_cell_render_is_datatable_s_own_for_any_cell_width_and_cursor() -> None:
    """The shorter cell render gives DataTable's segments, styles and meta exactly: cells
    cropped, padded, justified, styled, wide, tabbed, empty; under the cursor or hover."""
    cells: list[str | Text | None] = [
        "plain",
        Right("12,345"),
        Text("styled", style="bold red"),
        Text.assemble(("two", "green"), " spans"),
        Text("centred", justify="center"),
        Text("left", justify="left", style="dim"),
        Right("  padded "),
        "wide 表格 cells",
        "tab\there",
        "",
        None,
        "[b]markup[/b]",
    ]
    app = _Both()
    async with app.run_test(size=(80, 20)) as pilot:
        lean = app.query_one("#lean", LeanTable)
        lean.add_column("c", key="c")
        lean.replace_rows([(str(i), [c]) for i, c in enumerate(cells)])
        await pilot.pause()
        base = lean.rich_style
        for row in range(len(cells)):
            for width in (1, 2, 3, 5, 8, 20):
                for cursor, hover in ((False, False), (True, False), (False, True)):
                    lean._cell_render_cache.clear()
                    fast = lean._render_cell(row, 0, base, width, cursor, hover)
                    lean._cell_render_cache.clear()
                    slow = DataTable._render_cell(lean, row, 0, base, width, cursor, hover)
                    assert fast == slow, (cells[row], width, cursor, hover)
