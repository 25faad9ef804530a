"""Storage: one row per table, where its data lives and how far behind each tier is.

Rows come from :func:`konsole.model.storage.summaries` over the state's storage part (the
same figures ``konsole storage`` prints and the health rules judge), the most behind first:
stalled tiering, stale KV snapshots, then the offsets only on local disk. ``enter`` opens the
table's Storage tab. Unknown is ``-``, never 0; before the first storage poll the screen
says so. In time travel it shows the storage part as recorded.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from konsole.model.storage import TableSummary, summaries
from konsole.model.timefmt import age_text, clock_text
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.grid_cells import Cell, Right

__all__ = ["COLUMNS", "StorageScreen", "num"]

COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("table", "table", False),
    ("tiers", "tiers", False),
    ("untiered", "untiered", True),
    ("tier_age", "tier age", True),
    ("kv_age", "kv age", True),
    ("lake_lag", "lake lag", True),
    ("rows", "rows", True),
    ("ttl", "log ttl", False),
    ("state", "state", False),
)


def num(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


class StorageScreen(ConsoleScreen):
    CSS_PATH = "storage.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open storage tab", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._state: ConsoleState | None = None

    def compose_body(self) -> ComposeResult:
        yield Static(id="storage-summary")
        yield Static("", id="storage-empty")
        yield KeyedGrid(id="storage-table")

    def on_mount(self) -> None:
        table = self.query_one(KeyedGrid)
        table.set_columns(
            [(k, Text(label, justify="right" if right else "left")) for k, label, right in COLUMNS]
        )
        table.focus()

    def render_state(self, state: ConsoleState) -> None:
        self._state = state
        snap = state.last_ok
        part = snap.storage if snap is not None else None
        rules = self.konsole.feed.profile.health if self.konsole.feed.profile else None
        stall = rules.tiering_stall_s if rules else 600.0
        stale_kv = rules.kv_snapshot_stale_s if rules else 1800.0
        rows = (
            summaries(part, part.taken_at, stall_after_s=stall, kv_stale_after_s=stale_kv)
            if part is not None
            else []
        )
        grid = self.query_one(KeyedGrid)
        grid.set_class(state.stale, "stale")
        grid.sync([(f"t:{s.name}", self._cells(s, state.stale)) for s in rows])
        empty = self.query_one("#storage-empty", Static)
        empty.display = not rows
        if snap is None:
            empty.update("no data yet: waiting for the first successful poll")
        elif part is None:
            empty.update(
                "no storage poll yet (every storage_interval seconds, 30 by default)"
                if not state.historic
                else "no storage part recorded at this moment"
            )
        else:
            empty.update("no tables")
        self.query_one("#storage-summary", Static).update(self._summary(state, rows))

    def _summary(self, state: ConsoleState, rows: list[TableSummary]) -> Text:
        t = Text()
        snap = state.last_ok
        part = snap.storage if snap is not None else None
        if state.stale:
            t.append(" UNREACHABLE ", style="bold reverse red")
            t.append(" ")
        if part is None:
            return t
        when = clock_text(part.taken_at)
        t.append("as recorded at " if state.historic else "storage poll at ", style="dim")
        t.append(f"{when} ({age_text(max(0.0, state.now - part.taken_at))} ago) · ")
        stalled = sum(1 for s in rows if s.stalled_buckets)
        t.append(f"{len(rows)} tables")
        if stalled:
            t.append(f" · {stalled} stalled", style="bold yellow")
        caps = part.capabilities
        if not caps.remote_manifests:
            t.append(" · remote log unknown (not advertised)", "dim")
        if part.errors:
            t.append(f" · {len(part.errors)} not read", style="yellow")
        return t

    @staticmethod
    def _cells(s: TableSummary, stale: bool) -> list[Cell]:
        state: Cell = ""
        if s.stalled_buckets:
            state = Text("STALLED", style="" if stale else "bold yellow")
        elif s.stale_kv_buckets:
            state = Text("KV STALE", style="" if stale else "bold yellow")
        return [
            s.name,
            ",".join(s.tiers),
            Right(num(s.untiered)),
            Right(age_text(s.tiering_age_s)),
            Right(age_text(s.kv_age_s)),
            Right(num(s.lake_lag)),
            Right(num(s.row_count)),
            s.log_ttl or "default",
            state,
        ]

    def on_keyed_grid_row_selected(self, event: KeyedGrid.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        key = self.query_one(KeyedGrid).selected_key
        if key is not None and key.startswith("t:"):
            self.konsole.open_table(key[2:], tab="storage")
