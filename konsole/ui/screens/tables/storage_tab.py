"""The table detail's Storage tab: per bucket, each tier's offsets, ages and lag.

A widget the table detail screen holds and feeds (``show``); figures from
:mod:`konsole.model.storage` (unknown ``-``, ages marked ``≥`` while they are lower bounds),
the retention settings above them.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from konsole.collect.history.reads import untiered_series
from konsole.model.storage import (
    RETENTION_KEYS,
    BucketStorage,
    kv_age,
    lake_lag,
    untiered,
)
from konsole.model.timefmt import age_text, clock_text, to_ms
from konsole.ui.screens.tables.storage import num
from konsole.ui.services import services
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.grid_cells import Cell, Right
from konsole.ui.widgets.grid_rows import Row
from konsole.ui.widgets.spark import Spark

__all__ = ["SERIES_PARTS", "StorageTab"]

#: Storage parts of the tiering-lag sparkline (one per recorded storage poll, the newest).
SERIES_PARTS = 120

_COLUMNS = (
    ("partition", "partition", False),
    ("bucket", "bucket", True),
    ("start", "start", True),
    ("end", "end", True),
    ("remote", "remote", True),
    ("untiered", "untiered", True),
    ("tier_age", "tier age", True),
    ("kv", "kv snap", False),
    ("kv_age", "kv age", True),
    ("lake", "lake lag", True),
    ("rows", "rows", True),
)


def _offsets(value: float | None) -> str:
    return "-" if value is None else num(round(value))


def _age(seconds: float | None, lower_bound: bool) -> str:
    text = age_text(seconds)
    return f"≥{text}" if lower_bound and seconds is not None else text


class StorageTab(Vertical):
    """The Storage tab's widgets; the table detail screen feeds it states (``show``)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._series_for: tuple[str, float] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="storage-tab-head")
        with Horizontal(id="storage-tab-rate"):
            yield Static("untiered", id="storage-tab-label")
            yield Spark(show=_offsets, id="storage-tab-sparkline")
        yield KeyedGrid(id="storage-tab-buckets")

    def on_mount(self) -> None:
        self.query_one(KeyedGrid).set_columns(
            [(k, Text(label, justify="right" if r else "left")) for k, label, r in _COLUMNS]
        )

    @property
    def grid(self) -> KeyedGrid:
        return self.query_one(KeyedGrid)

    def show(self, state: ConsoleState, table_path: str) -> None:
        snap = state.last_ok
        part = snap.storage if snap is not None else None
        facts = part.table(table_path) if part is not None else None
        head = self.query_one("#storage-tab-head", Static)
        if part is None or facts is None:
            head.update(Text("no storage poll has seen this table yet", style="dim"))
            self.grid.sync([])
            return
        now = part.taken_at
        t = Text()
        t.append(f"storage poll at {clock_text(part.taken_at)}", style="dim")
        settings = [
            f"{key.removeprefix('table.')} = {facts.retention.get(key) or f'default ({d})'}"
            for key, d in RETENTION_KEYS.items()
            if d is not None or facts.retention.get(key)
        ]
        t.append("\n" + " · ".join(settings[:3]))
        if facts.lake_note:
            t.append(f"\nlake: {facts.lake_note}", style="dim")
        head.update(t)
        rows: list[Row] = [
            (f"{b.partition_id}:{b.bucket_id}", self._cells(b, now))
            for b in sorted(
                part.buckets_of(facts.table_id),
                key=lambda b: (b.partition_name or "", b.bucket_id),
            )
        ]
        self.grid.set_class(state.stale, "stale")
        self.grid.sync(rows)
        if self._series_for != (table_path, part.taken_at):
            self._series_for = (table_path, part.taken_at)
            self._load_series(table_path, to_ms(part.taken_at))

    @work(exclusive=True, group="storage-series", exit_on_error=False)
    async def _load_series(self, table_path: str, until_ms: int) -> None:
        """The tiering lag from the history's storage parts, read in a thread."""
        path = services(self.app).feed.history_path
        values = await untiered_series(path, table_path, until_ms, SERIES_PARTS)
        spark = self.query_one("#storage-tab-sparkline", Spark)
        label = self.query_one("#storage-tab-label", Static)
        # a storage poll that did not know a bucket's lag is a gap, never zero
        spark.update_series(values or [])
        label.update(
            "untiered (no history)" if values is None else f"untiered, {len(values)} storage polls"
        )

    @staticmethod
    def _cells(b: BucketStorage, now: float) -> list[Cell]:
        tier_age = None if b.remote_since is None else max(0.0, now - b.remote_since)
        kv = "-" if b.kv_snapshot_id is None else f"{b.kv_snapshot_id} @ {num(b.kv_log_offset)}"
        return [
            b.partition_name or "-",
            Right(str(b.bucket_id)),
            Right(num(b.log_start)),
            Right(num(b.log_end)),
            Right(num(b.remote_end)),
            Right(num(untiered(b))),
            Right(_age(tier_age if b.remote_end is not None else None, not b.remote_changed)),
            kv,
            Right(_age(kv_age(b, now), not b.kv_changed)),
            Right(num(lake_lag(b))),
            Right(num(b.row_count)),
        ]
