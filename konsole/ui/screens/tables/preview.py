"""Preview: the server-side scan of one table (or partition) in a grid.

The scan is asked of the app's feed (:meth:`konsole.ui.feed.Feed.preview`: a live feed
connects with the profile and runs :func:`fluss_proto.scan.preview_table`; a static feed
answers with the fake it was given) in a worker; escape cancels it (the scan closes its
ScanKv sessions and its client when cancelled). Rows are rendered once, exactly (decimals
as their digits, via :mod:`konsole.render.values`), and shown a page at a time; column types
are in the header. For log reads ``f`` follows the tail: a tail preview every few seconds,
rows newer than the last offset seen per bucket appended, at most :data:`MAX_FOLLOW_ROWS`
kept.

``/`` opens the filter box (the language of ``konsole preview --where``, checked against the
schema as typed: a parse error is one line under the box); the scan then sends the filter
(with FetchLog where the server advertises it) and the head says rows scanned, rows matched
and the batches the server skipped. ``l`` looks a key (or a bucket-key prefix) up
(:class:`~konsole.ui.modals.lookup_dialog.LookupDialog`); its rows replace the page, escape
goes back to the scan. Every answer comes masked (:mod:`konsole.collect.cluster.table_reads`); a
profile with ``export = false`` has no export action.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.console import JustifyMethod
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState

from konsole.collect.cluster.table_reads import LookupRequest, LookupRows, export_allowed, masks_of
from konsole.export.mask import MASKED_TYPE_LABEL
from konsole.render.values import cell_text, json_values, right_aligned, type_label
from konsole.ui.feed import PreviewRequest
from konsole.ui.modals.export_dialog import ExportDialog
from konsole.ui.modals.lookup_dialog import LookupDialog, lookup_specs
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.grid_cells import Cell, Left, Right
from konsole.ui.widgets.text_input import TextInput

if TYPE_CHECKING:
    from fluss_proto.scan import Preview, ScanReport

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_FOLLOW_ROWS",
    "PAGE_ROWS",
    "PreviewRequest",
    "PreviewScreen",
    "page_rows_for",
    "preview_cells",
]

#: Rows asked for by the first scan (``m`` asks for 4x more, up to MAX_LIMIT).
DEFAULT_LIMIT = 2000
MAX_LIMIT = 100_000
#: Rows per page in the grid (fewer for very wide tables: a page's cells are made and
#: measured up front; each becomes a ``Text`` only when its row is drawn).
PAGE_ROWS = 500
#: Columns in the grid at once (``]``/``[`` move the window over wider tables).
COLUMN_WINDOW = 24
#: Rows of each tail read while following, the pause between reads, rows kept.
FOLLOW_LIMIT = 200
FOLLOW_INTERVAL_S = 2.0
MAX_FOLLOW_ROWS = 5000


def page_rows_for(columns: int) -> int:
    """Rows per page: PAGE_ROWS, fewer when a page would hold over 6,000 cells (each made
    and measured when the page is shown: a page turn stays well under a frame)."""
    return max(50, min(PAGE_ROWS, 6_000 // max(1, columns)))


def preview_cells(result: Preview | LookupRows) -> list[tuple[str | None, ...]]:
    """Every row of the preview (or lookup) as display texts (exact decimals, escaped
    newlines); None is SQL NULL. A masked column is text whatever its table type."""
    table = result.table
    types = {c.name: c.type for c in result.info.schema.columns}
    masked = {
        f.name for f in table.schema if (f.metadata or {}).get(b"fluss.type") == MASKED_TYPE_LABEL
    }
    columns = [
        [
            None if v is None else cell_text(v)
            for v in json_values(
                table.column(i).combine_chunks(), None if name in masked else types.get(name)
            )
        ]
        for i, name in enumerate(table.column_names)
    ]
    return list(zip(*columns, strict=True)) if columns else []


def _row_position(
    result: Preview | LookupRows,
) -> Callable[[tuple[str | None, ...]], tuple[str, str, int] | None]:
    """(partition, bucket, offset) of a rendered row of a log read; None without offsets."""
    names = result.table.column_names
    if "_offset" not in names or "_bucket" not in names:
        return lambda row: None
    o, b = names.index("_offset"), names.index("_bucket")
    p = names.index("_partition") if "_partition" in names else None

    def position(row: tuple[str | None, ...]) -> tuple[str, str, int] | None:
        try:
            return (row[p] or "" if p is not None else "", row[b] or "", int(row[o] or ""))
        except ValueError:
            return None

    return position


def _filter_head(report: ScanReport) -> str:
    """The head's filter line: the filter, rows scanned and matched, what the server skipped."""
    text = (
        f"where {report.filter} · {report.rows_scanned:,} row(s) scanned · "
        f"{report.rows_read:,} matched · "
    )
    if report.filter_pushed is None:
        return text + "not sent to the server"
    return text + f"{report.server_skipped_runs:,} batch run(s) skipped by the server"


class _PagedTable(KeyedGrid):
    """Page down on the last row (page up on the first) turns the preview's page."""

    def action_page_down(self) -> None:
        if self.row_count and self.cursor_row >= self.row_count - 1:
            screen = self.screen
            if isinstance(screen, PreviewScreen) and screen.action_next_page():
                return
        super().action_page_down()

    def action_page_up(self) -> None:
        if self.cursor_row <= 0:
            screen = self.screen
            if isinstance(screen, PreviewScreen) and screen.action_previous_page(to_end=True):
                return
        super().action_page_up()


def _cells(row: tuple[str | None, ...], window: range, right: list[bool]) -> list[Cell]:
    """The cells of ``row`` in the column window: NULL dimmed, numbers right-aligned (each
    made a ``Text`` only when its row is drawn)."""
    out: list[Cell] = []
    for i in window:
        v = row[i]
        if v is None:
            justify: JustifyMethod = "right" if right[i] else "left"
            out.append(Text("NULL", style="dim italic", justify=justify))
        else:
            out.append(Right(v) if right[i] else Left(v))
    return out


def _page_cells(
    page: list[tuple[str | None, ...]], window: range, right: list[bool]
) -> list[list[Cell]]:
    """:func:`_cells` of every row of a page, made column by column. NULL is one ``Text``
    per justification, shared: cells are never changed in place."""
    nulls = {j: Text("NULL", style="dim italic", justify=j) for j in ("left", "right")}
    columns: list[list[Cell]] = []
    for i in window:
        wrap, null = (Right, nulls["right"]) if right[i] else (Left, nulls["left"])
        columns.append([null if row[i] is None else wrap(row[i]) for row in page])
    return [list(cells) for cells in zip(*columns, strict=True)]


class PreviewScreen(ConsoleScreen):
    """One table's rows: the scan, its pages, the column window, following the tail, export.

    Longer than the ~350 lines a class should stay under, on purpose: the five share one
    result, one row list and one position in it, and splitting them would pass that state
    around instead of holding it.
    """

    CSS_PATH = "preview.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_or_back", "Cancel/back"),
        Binding("n", "next_page", "Next page"),
        Binding("b", "previous_page", "Prev page", show=False),
        Binding("l", "lookup", "Lookup"),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("f", "follow", "Follow tail"),
        Binding("r", "rescan", "Rescan"),
        Binding("x", "export", "Export"),
        Binding("right_square_bracket", "columns(1)", "More columns", key_display="]"),
        Binding("left_square_bracket", "columns(-1)", "Previous columns", show=False),
        Binding("m", "more", "More rows", show=False),
    ]
    #: Kept in a narrow footer: leaving, paging through rows and through columns.
    FOOTER_MAIN: ClassVar[tuple[str, ...]] = ("cancel_or_back", "next_page", "columns(1)")

    def __init__(
        self,
        table_path: str,
        partition: str | None = None,
        *,
        limit: int = DEFAULT_LIMIT,
    ) -> None:
        super().__init__()
        self.table_path = table_path
        self.partition = partition
        self.limit = limit
        self.result: Preview | LookupRows | None = None
        #: The filter the scans send (``/``), None: every row.
        self.where: str | None = None
        self.rows: list[tuple[str | None, ...]] = []
        self.page = 0
        self.page_rows = PAGE_ROWS
        self.error: str | None = None
        self.following = False
        self._scanning = False
        self._seen: dict[tuple[str, str], int] = {}
        self._position: Callable[[tuple[str | None, ...]], tuple[str, str, int] | None] = (
            lambda row: None
        )
        self._shown_from = 0
        self._next_key = 0
        self._right: list[bool] = []
        #: The first column of the window shown (see COLUMN_WINDOW).
        self.first_column = 0
        self._scan_worker: Worker[None] | None = None

    def compose_body(self) -> ComposeResult:
        yield Static(id="preview-head")
        yield TextInput(
            placeholder="filter, e.g. amount > 1000 AND region IN ('eu') (enter: scan, "
            "escape: close; empty: every row)",
            id="preview-filter",
        )
        yield Static(id="preview-filter-error")
        yield Static(id="preview-error")
        yield _PagedTable(id="preview-rows", header_height=2)
        yield Static(id="preview-report")

    def on_mount(self) -> None:
        self.query_one("#preview-error", Static).display = False
        self.query_one("#preview-report", Static).border_title = "what was scanned"
        self.query_one(_PagedTable).focus()
        self._start_scan()

    @property
    def scanning(self) -> bool:
        return self._scanning

    # ------------------------------------------------------------------ scanning

    def _request(self, *, tail: bool, limit: int) -> PreviewRequest:
        database, _, table = self.table_path.partition(".")
        return PreviewRequest((database, table), self.partition, limit, tail, where=self.where)

    def _start_scan(self) -> None:
        self._scanning = True
        self.error = None
        self._render_head()
        self._scan_worker = self._run_scan(self._request(tail=False, limit=self.limit))

    class Scanned(Message):
        """A scan ended with rows (rendered as display texts off the event loop)."""

        def __init__(
            self, result: Preview | LookupRows, rows: list[tuple[str | None, ...]]
        ) -> None:
            super().__init__()
            self.result = result
            self.rows = rows

    class ScanFailed(Message):
        """A scan failed as a whole (unknown table, unreachable cluster...)."""

        def __init__(self, error: BaseException) -> None:
            super().__init__()
            self.error = error

    @work(exclusive=True, group="preview-scan", exit_on_error=False)
    async def _run_scan(self, request: PreviewRequest) -> None:
        try:
            result = await self.konsole.feed.preview(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # shown on the screen: unknown table, unreachable...
            self.post_message(self.ScanFailed(exc))
            return
        # Rendering 100,000 cells takes a while: off the event loop.
        rows = await asyncio.to_thread(preview_cells, result)
        self.post_message(self.Scanned(result, rows))

    def on_preview_screen_scanned(self, message: Scanned) -> None:
        self._scanning = False
        self._show_result(message.result, message.rows)

    def on_preview_screen_scan_failed(self, message: ScanFailed) -> None:
        self._scan_failed(message.error)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._scan_worker and event.state is WorkerState.CANCELLED:
            self._scanning = False
            self.error = "scan cancelled"
            self._render_head()
        elif event.worker is self._scan_worker and event.state is WorkerState.ERROR:
            self._scan_failed(event.worker.error or RuntimeError("the preview failed"))
        elif event.worker.group == "preview-follow" and event.state in (
            WorkerState.CANCELLED,
            WorkerState.ERROR,
            WorkerState.SUCCESS,
        ):
            self.following = False
            self._render_head()

    def _scan_failed(self, exc: BaseException) -> None:
        self._scanning = False
        # one line: a filter or key error's text may carry a caret line under it
        self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        self._render_head()

    def _show_result(
        self, result: Preview | LookupRows, rows: list[tuple[str | None, ...]]
    ) -> None:
        self.result = result
        self.rows = rows
        self._position = _row_position(result)
        self._seen = {}
        for row in self.rows:
            self._remember(row)
        self._right = [f.name in right_aligned(result.table.schema) for f in result.table.schema]
        self.page_rows = page_rows_for(min(len(self._right), COLUMN_WINDOW))
        self.page = 0
        self.first_column = 0
        self._show_columns()
        self.query_one("#preview-report", Static).update("\n".join(result.report.summary_lines()))
        # The rows stay for the screen's life: out of the cyclic collector's full passes,
        # which otherwise stop a page turn every few keys for 100-170 ms (the app's objects
        # and the preview's, traversed whole). Given back when the screen goes.
        gc.freeze()

    def on_unmount(self) -> None:
        gc.unfreeze()

    def _show_columns(self) -> None:
        """Put the window of columns into the grid: a page's cells are made up front, so a
        300-column table is shown COLUMN_WINDOW columns at a time."""
        assert self.result is not None
        grid = self.query_one(_PagedTable)
        grid.clear(columns=True)
        schema = self.result.table.schema
        labels: list[tuple[str, str | Text]] = []
        for i in self._window():
            field = schema.field(i)
            label = Text(f"{field.name}\n{type_label(field)}")
            if self._right[i]:
                label.justify = "right"
            labels.append((str(i), label))
        grid.set_columns(labels)
        self._show_page()

    def _window(self) -> range:
        return range(self.first_column, min(len(self._right), self.first_column + COLUMN_WINDOW))

    def _remember(self, row: tuple[str | None, ...]) -> bool:
        """Note the row's offset; False when it is not newer than what was seen."""
        pos = self._position(row)
        if pos is None:
            return True
        key = (pos[0], pos[1])
        if pos[2] <= self._seen.get(key, -1):
            return False
        self._seen[key] = pos[2]
        return True

    def _cells(self, row: tuple[str | None, ...]) -> list[Cell]:
        return _cells(row, self._window(), self._right)

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.rows) // self.page_rows))

    def _show_page(self) -> None:
        start = self.page * self.page_rows
        self._shown_from = start
        page = self.rows[start : start + self.page_rows]
        first = self._next_key
        self._next_key += len(page)
        cells = _page_cells(page, self._window(), self._right)
        keyed = [(str(first + i), row) for i, row in enumerate(cells)]
        self.query_one(_PagedTable).replace_rows(keyed)
        self._render_head()

    def _render_head(self) -> None:
        t = Text()
        t.append(self.table_path, style="bold")
        if self.partition:
            t.append(f" [{self.partition}]")
        state = self.konsole.state
        if state is not None and state.historic:
            t.append("  live rows, not the recorded moment", style="bold magenta")
        t.append("\n")
        if self._scanning:
            t.append("scanning… (escape cancels)", style="bold yellow")
        elif self.result is not None:
            n = len(self.rows)
            start = self.page * self.page_rows
            shown = f"rows {start + 1}-{min(n, start + self.page_rows)}" if n else "no rows"
            t.append(f"{shown} of {n} · page {self.page + 1}/{self.pages} · limit {self.limit:,}")
            if len(self._right) > COLUMN_WINDOW:
                w = self._window()
                t.append(f" · columns {w.start + 1}-{w.stop} of {len(self._right)} ([ ])")
            if isinstance(self.result, LookupRows):
                t.append("\n")
                t.append(self.result.headline(), style="bold")
                t.append(" (escape: back to the scan)", style="dim")
            else:
                report = self.result.report
                t.append(" · tail" if report.tail else (" · PK scan" if report.primary_key else ""))
                if self.following:
                    t.append("  FOLLOWING (f or escape stops)", style="bold green")
                if report.filter is not None:
                    t.append("\n")
                    t.append(_filter_head(report), style="bold")
        elif self.error is None:
            t.append("no scan yet", style="dim")
        else:
            t.append("no rows to show (r scans again)", style="dim")
        self.query_one("#preview-head", Static).update(t)
        box = self.query_one("#preview-error", Static)
        box.display = self.error is not None
        box.update(Text(f"error: {self.error}" if self.error else "", style="bold red"))
        # Before any result there is nothing to tabulate or report.
        self.query_one(_PagedTable).display = self.result is not None
        self.query_one("#preview-report", Static).display = self.result is not None

    # ------------------------------------------------------------------ following the tail

    def action_follow(self) -> None:
        if self.following:
            self._stop_follow()
            return
        if self._scanning:
            return
        if self.result is not None and "_offset" not in self.result.table.column_names:
            self.notify("follow reads a log: this preview has no offsets", severity="warning")
            return
        self.following = True
        self.page = max(0, self.pages - 1)
        self._show_page()
        self._follow()

    def _stop_follow(self) -> None:
        self.workers.cancel_group(self, "preview-follow")
        self.following = False
        self._render_head()

    @work(exclusive=True, group="preview-follow", exit_on_error=False)
    async def _follow(self) -> None:
        feed = self.konsole.feed
        while self.following:
            try:
                result = await feed.preview(self._request(tail=True, limit=FOLLOW_LIMIT))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.error = f"following stopped: {exc}"
                self.following = False
                self._render_head()
                return
            self.error = None
            self._append(result, await asyncio.to_thread(preview_cells, result))
            await asyncio.sleep(FOLLOW_INTERVAL_S)

    def _append(self, result: Preview, rows: list[tuple[str | None, ...]]) -> None:
        if self.result is None or result.table.schema != self.result.table.schema:
            self._show_result(result, rows)  # first read, or the schema changed: start over
            self.page = max(0, self.pages - 1)
            self._show_page()
            return
        self._position = _row_position(result)
        fresh = [row for row in rows if self._remember(row)]
        self.query_one("#preview-report", Static).update("\n".join(result.report.summary_lines()))
        if not fresh:
            self._render_head()
            return
        self.rows.extend(fresh)
        grid = self.query_one(_PagedTable)
        if len(self.rows) > MAX_FOLLOW_ROWS:
            del self.rows[: len(self.rows) - MAX_FOLLOW_ROWS]
        self.page = max(0, self.pages - 1)
        start = self.page * self.page_rows
        if start != self._shown_from:
            self._show_page()  # the page moved on (or old rows were dropped)
        else:
            first = self._next_key
            self._next_key += len(fresh)
            grid.append_rows([(str(first + i), self._cells(row)) for i, row in enumerate(fresh)])
            self._render_head()
        grid.move_cursor(row=grid.row_count - 1, animate=False)

    # ------------------------------------------------------------------ actions

    def action_cancel_or_back(self) -> None:
        box = self.query_one("#preview-filter", Input)
        if box.has_focus:
            self._close_filter()
            return
        if self._scanning:
            self.workers.cancel_group(self, "preview-scan")
            return
        if self.following:
            self._stop_follow()
            return
        if isinstance(self.result, LookupRows):
            self._start_scan()  # back from a lookup's rows to the scan's
            return
        self.app.pop_screen()

    def action_next_page(self) -> bool:
        if self.page + 1 >= self.pages:
            return False
        self.page += 1
        self._show_page()
        return True

    def action_previous_page(self, to_end: bool = False) -> bool:
        if self.page == 0:
            return False
        self.page -= 1
        self._show_page()
        if to_end:
            grid = self.query_one(_PagedTable)
            grid.move_cursor(row=grid.row_count - 1, animate=False)
        return True

    def action_columns(self, step: int) -> None:
        if self.result is None:
            return
        first = self.first_column + step * COLUMN_WINDOW
        if first < 0 or first >= len(self._right):
            return
        self.first_column = first
        self._show_columns()

    def action_rescan(self) -> None:
        if self.following:
            self._stop_follow()
        self._start_scan()

    def action_more(self) -> None:
        if self.limit >= MAX_LIMIT:
            self.notify(f"at most {MAX_LIMIT:,} rows in a preview", severity="warning")
            return
        self.limit = min(MAX_LIMIT, self.limit * 4)
        self.action_rescan()

    @property
    def export_allowed(self) -> bool:
        """False under a profile with ``export = false``: rows are shown, never written."""
        return export_allowed(self.konsole.feed.profile)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # export = false: hidden from the footer, the help and the palette
        return action != "export" or self.export_allowed

    def palette_commands(self) -> list[tuple[str, Callable[[], object], str]]:
        """This screen's commands for the command palette."""
        commands: list[tuple[str, Callable[[], object], str]] = [
            ("Lookup a key…", self.action_lookup, "rows of this table by primary key"),
            ("Filter rows…", self.action_filter, "the scan keeps rows matching an expression"),
        ]
        if self.export_allowed:
            commands.append(("Export rows…", self.action_export, "write the rows to a file"))
        return commands

    # ------------------------------------------------------------------ filter box

    def action_filter(self) -> None:
        box = self.query_one("#preview-filter", Input)
        box.value = self.where or ""
        box.display = True
        box.focus()

    def _close_filter(self) -> None:
        self.query_one("#preview-filter", Input).display = False
        self._filter_error(None)
        self.query_one(_PagedTable).focus()

    def _filter_error(self, text: str | None) -> None:
        box = self.query_one("#preview-filter-error", Static)
        box.display = text is not None
        box.update(Text(f"filter: {text}" if text else ""))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "preview-filter":
            return
        event.stop()
        text = event.value.strip() or None
        problem = self._filter_problem(text)
        if problem is not None:
            self._filter_error(problem)
            return
        self.where = text
        self._close_filter()
        if self.following:
            self._stop_follow()
        self._start_scan()

    def _filter_problem(self, text: str | None) -> str | None:
        """Why ``text`` cannot filter this table (parsed against the schema of the last
        read; a masked column refused), or None. Without a schema yet the scan judges it."""
        if text is None or self.result is None:
            return None
        from fluss_proto.errors import FilterError
        from fluss_proto.filter import columns_of, parse_filter

        try:
            parsed = parse_filter(text, self.result.info.schema)
        except FilterError as exc:
            return str(exc).splitlines()[0]
        masks = masks_of(self.konsole.feed.profile)
        hidden = sorted(c for c in columns_of(parsed.predicate) if masks.masked(self.table_path, c))
        if hidden:
            return f"column(s) {', '.join(hidden)} are masked: they cannot be filtered on"
        return None

    # ------------------------------------------------------------------ lookup

    def action_lookup(self) -> None:
        result = self.result
        if result is None:
            self.notify("the table is not read yet: look up once the scan is shown")
            return
        from fluss_proto.errors import InputError, UnsupportedTableError

        try:
            key, prefix = lookup_specs(result.info)
        except (InputError, UnsupportedTableError) as exc:
            self.notify(str(exc).splitlines()[0], severity="warning")
            return
        masks = masks_of(self.konsole.feed.profile)

        def chosen(request: LookupRequest | None) -> None:
            if request is not None:
                self._start_lookup(request)

        self.app.push_screen(LookupDialog(result.info, key, prefix, masks), chosen)

    def _start_lookup(self, request: LookupRequest) -> None:
        if self.following:
            self._stop_follow()
        self._scanning = True
        self.error = None
        self._render_head()
        self._scan_worker = self._run_lookup(request)

    @work(exclusive=True, group="preview-scan", exit_on_error=False)
    async def _run_lookup(self, request: LookupRequest) -> None:
        try:
            result = await self.konsole.feed.lookup(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # shown on the screen: a key the server refused...
            self.post_message(self.ScanFailed(exc))
            return
        rows = await asyncio.to_thread(preview_cells, result)
        self.post_message(self.Scanned(result, rows))

    # ------------------------------------------------------------------ export

    def action_export(self) -> None:
        """Write the rows read (every page, not only the one shown) to a file, through
        the same writers as ``konsole preview --output`` (:mod:`konsole.export`)."""
        from konsole.collect.cluster.table_reads import refuse_export
        from konsole.errors import ExportForbiddenError

        try:  # hidden under export = false; a key bound by hand still meets the one rule
            refuse_export(self.konsole.feed.profile)
        except ExportForbiddenError as exc:
            self.notify(str(exc), severity="warning")
            return
        result = self.result
        if result is None:
            self.notify("nothing to export yet", severity="warning")
            return
        if isinstance(result, LookupRows):
            self.notify("a lookup is exported with konsole lookup --output", severity="warning")
            return
        suggested = f"{self.table_path.replace('.', '_')}.csv"

        def chosen(path: str | None) -> None:
            if path:
                self._export(result, path)

        self.app.push_screen(ExportDialog(suggested, result.table.num_rows), chosen)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _export(self, result: Preview, path: str) -> None:
        from konsole.export import ExportFormatError, ExportIOError
        from konsole.export.collected import export_preview

        try:
            done = export_preview(result, path)
        except (ExportFormatError, ExportIOError) as exc:
            self.app.call_from_thread(self.notify, f"export failed: {exc}", severity="error")
            return
        self.app.call_from_thread(
            self.notify, f"exported {done.rows:,} row(s) to {done.path}", timeout=10
        )
