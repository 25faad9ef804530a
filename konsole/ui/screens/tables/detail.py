"""Table detail: schema, properties, partitions, buckets, throughput, KV snapshots, storage.

The table is found by name in every state (ids change when a table is re-created), so a
table dropped since, or not yet created at the moment time travel shows, says so instead
of showing another table's figures. The throughput sparkline is read from the history in
a worker; the latest KV snapshot per bucket of a primary-key table is asked of the app's
feed (:meth:`konsole.ui.feed.Feed.kv_snapshots`) in a worker, never in time travel: the
cluster's answer is about now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Static, TabbedContent, TabPane

from konsole.collect.history.reads import table_rate_series
from konsole.collect.history.rows import redact
from konsole.model.placement import alive_servers, is_offline, is_under_replicated
from konsole.model.table_stats import BucketKey, bucket_rates
from konsole.model.timefmt import age_text, clock_text, to_ms
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.screens.tables.screen import rate_text
from konsole.ui.screens.tables.storage_tab import StorageTab
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.grid_cells import Cell, Right
from konsole.ui.widgets.grid_rows import Row
from konsole.ui.widgets.spark import Spark

if TYPE_CHECKING:
    from fluss_proto.model import TableView
    from fluss_proto.types import TableInfo

__all__ = ["SERIES_POINTS", "TableDetailScreen", "notable_property"]

#: Points of the throughput sparkline (one per recorded poll, the newest).
SERIES_POINTS = 120
#: Reload the sparkline when the live state has moved on by this much.
SERIES_REFRESH_S = 30.0
_NOTABLE = ("ttl", "compaction", "tiering", "datalake", "merge-engine", "changelog", "retention")


def notable_property(key: str) -> bool:
    """TTLs, compaction, tiering and lake settings: shown first and bold."""
    return any(word in key for word in _NOTABLE)


def _rows_per_s(value: float | None) -> str:
    return "-" if value is None else f"{rate_text(value)}/s"


def _offset(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _head_text(table_path: str, state: ConsoleState, table: TableView | None) -> Text:
    """The table's name, the moment, and what kind of table it is (or why it is not shown)."""
    t = Text()
    t.append(table_path, style="bold")
    if state.stale:
        t.append("  UNREACHABLE ", style="bold reverse red")
        t.append(f" as of the last good poll, {age_text(state.data_age)} ago")
    elif state.historic:
        when = clock_text(state.last_ok.taken_at) if state.last_ok else "-"
        t.append(f"  as recorded at {when}", style="bold")
    t.append("\n")
    if state.last_ok is None:
        t.append("no data yet: waiting for the first successful poll", style="dim")
        return t
    if table is None:
        moment = "at this moment" if state.historic else "in the latest poll"
        t.append(
            f"no table {table_path} {moment}: dropped, or not created yet",
            style="bold yellow",
        )
        return t
    info = table.info
    if info is None:
        t.append(f"metadata unreadable: {table.error}", style="bold red")
        return t
    kind = "primary-key table" if info.is_pk_table else "log table"
    parts = [
        kind,
        f"id {info.table_id}",
        f"{info.bucket_count} bucket(s)",
        f"replication {info.replication_factor or '-'}",
        f"created {clock_text(info.created_ms / 1000)}",
    ]
    if info.is_partitioned:
        parts.insert(3, f"{len(table.partitions)} partition(s)")
    t.append(" · ".join(parts))
    if info.comment:
        t.append(f"\n{info.comment}", style="italic dim")
    return t


def _properties_text(info: TableInfo) -> Text:
    """Notable properties first and bold, then the rest, the custom ones, the remote dir."""
    props = redact(info.properties)
    custom = redact(info.custom_properties)
    t = Text()
    ordered = sorted(props, key=lambda k: (not notable_property(k), k))
    for key in ordered:
        t.append(key, style="bold" if notable_property(key) else "")
        t.append(f" = {props[key]}\n")
    if not props:
        t.append("no table properties\n", style="dim")
    if custom:
        t.append("\ncustom properties\n", style="bold underline")
        for key in sorted(custom):
            t.append(f"{key} = {custom[key]}\n")
    if info.remote_data_dir:
        t.append(f"\nremote data dir: {info.remote_data_dir}\n")
    return t


class TableDetailScreen(ConsoleScreen):
    CSS_PATH = "table_detail.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("p", "preview", "Preview", tooltip="on the Partitions tab: the selected partition"),
        Binding("1", "tab('buckets')", "Buckets"),
        Binding("2", "tab('schema')", "Schema"),
        Binding("3", "tab('properties')", "Properties"),
        Binding("4", "tab('partitions')", "Partitions"),
        Binding("5", "tab('storage')", "Storage"),
        Binding("k", "kv_snapshots", "Ask KV snapshots", show=False),
    ]
    #: Kept in a narrow footer: leaving and the preview (the tabs are on screen).
    FOOTER_MAIN: ClassVar[tuple[str, ...]] = ("app.pop_screen", "preview")

    def __init__(self, table_path: str, *, tab: str | None = None) -> None:
        super().__init__()
        #: The tab shown first ("buckets" unless asked: the Storage screen opens "storage").
        self.first_tab = tab or "buckets"
        #: ``db.table``: the table is found by name in every state (ids change on re-create).
        self.table_path = table_path
        self._state: ConsoleState | None = None
        #: (partition id, bucket) -> "id @ offset"; None until asked (or not askable).
        self.kv_snapshots: dict[BucketKey, str] | None = None
        self._kv_note = "-"
        self._kv_asked = False
        self._series_for: tuple[float | None, float] | None = None
        self._table_id: int | None = None

    def compose_body(self) -> ComposeResult:
        yield Static(id="detail-head")
        with Horizontal(id="detail-rate"):
            yield Static("rows/s", id="detail-rate-label")
            # the current rate is the state's own (beside): the line says its min and max
            yield Spark(show=_rows_per_s, with_current=False, id="detail-sparkline")
            yield Static("", id="detail-rate-now")
        with TabbedContent(id="detail-tabs", initial=self.first_tab):
            with TabPane("1 Buckets", id="buckets"):
                yield KeyedGrid(id="detail-buckets")
            with TabPane("2 Schema", id="schema"):
                yield Static(id="detail-keys")
                yield KeyedGrid(id="detail-schema")
            with TabPane("3 Properties", id="properties"), VerticalScroll():
                yield Static(id="detail-properties")
            with TabPane("4 Partitions", id="partitions"):
                yield KeyedGrid(id="detail-partitions")
            with TabPane("5 Storage", id="storage"):
                yield StorageTab(id="detail-storage")

    def on_mount(self) -> None:
        self.query_one("#detail-buckets", KeyedGrid).set_columns(
            [
                ("partition", "partition"),
                ("bucket", "bucket"),
                ("leader", "leader"),
                ("replicas", "replicas"),
                ("earliest", Text("earliest", justify="right")),
                ("latest", Text("latest", justify="right")),
                ("rate", Text("rows/s", justify="right")),
                ("kv", "kv snapshot"),
            ]
        )
        self.query_one("#detail-schema", KeyedGrid).set_columns(
            [("n", "#"), ("name", "column"), ("type", "type"), ("role", "key"), ("comment", "")]
        )
        self.query_one("#detail-partitions", KeyedGrid).set_columns(
            [("name", "partition"), ("id", "id"), ("spec", "spec"), ("buckets", "buckets")]
        )
        self.action_tab(self.first_tab)

    # ------------------------------------------------------------------ rendering

    def _find(self, state: ConsoleState) -> TableView | None:
        snap = state.last_ok
        if snap is None or snap.view is None:
            return None
        for t in snap.view.tables:
            if str(t.path) == self.table_path:
                return t
        return None

    def render_state(self, state: ConsoleState) -> None:
        self._state = state
        table = self._find(state)
        self._table_id = table.table_id if table is not None else None
        stale = state.stale
        self.query_one("#detail-tabs").set_class(stale, "stale")
        self.query_one("#detail-head", Static).update(_head_text(self.table_path, state, table))
        self._render_buckets(state, table)
        self._render_schema(table)
        self._render_properties(table)
        self._render_partitions(table)
        self.query_one(StorageTab).show(state, self.table_path)
        self._maybe_load_series(state)
        if not self._kv_asked and self._kv_unavailable(state) is None:
            # Once, as soon as it can be asked (``k`` asks again).
            self.action_kv_snapshots(quiet=True)

    def _render_buckets(self, state: ConsoleState, table: TableView | None) -> None:
        grid = self.query_one("#detail-buckets", KeyedGrid)
        snap = state.last_ok
        if table is None or snap is None or snap.view is None:
            grid.sync([])
            self.query_one("#detail-rate-now", Static).update("")
            return
        alive = alive_servers(snap.view)
        rates = bucket_rates(table, snap, state.previous_ok)
        stale = state.stale
        kv = self.kv_snapshots
        rows: list[Row] = []
        for b in sorted(table.buckets, key=lambda b: (b.partition_name or "", b.bucket_id)):
            key = (b.partition_id, b.bucket_id)
            leader: Cell
            if is_offline(b, alive):
                leader = Text(
                    "none" if b.leader_id is None else f"{b.leader_id} (gone)",
                    style="" if stale else "bold red",
                )
            else:
                leader = str(b.leader_id)
            replicas: Cell
            if is_under_replicated(b, alive):
                # Replicas on servers that are not alive are marked with "!".
                replicas = Text(
                    ",".join(f"{r}{'' if r in alive else '!'}" for r in b.replica_ids),
                    style="" if stale else "yellow",
                )
            else:
                replicas = ",".join(map(str, b.replica_ids))
            if state.historic or kv is None:
                kv_cell = "-" if state.historic else self._kv_note
            else:
                kv_cell = kv.get(key, "none")
            cells: list[Cell] = [
                b.partition_name or "-",
                Right(str(b.bucket_id)),
                leader,
                replicas,
                Right(_offset(b.earliest_offset)),
                Right(_offset(b.latest_offset)),
                Right(rate_text(rates.get(key))),
                kv_cell,
            ]
            rows.append((f"{b.partition_id}:{b.bucket_id}", cells))
        grid.sync(rows)
        known = [r for r in rates.values() if r is not None]
        now = Text(f" now {rate_text(sum(known)) if known else '-'} rows/s")
        self.query_one("#detail-rate-now", Static).update(now)

    def _render_schema(self, table: TableView | None) -> None:
        grid = self.query_one("#detail-schema", KeyedGrid)
        keys = self.query_one("#detail-keys", Static)
        info = table.info if table is not None else None
        if info is None:
            grid.sync([])
            keys.update("")
            return
        rows: list[Row] = []
        for i, c in enumerate(info.schema.columns):
            roles = []
            if c.name in info.primary_key:
                roles.append("PK")
            if c.name in info.bucket_keys:
                roles.append("bucket")
            if c.name in info.partition_keys:
                roles.append("partition")
            rows.append(
                (c.name, [str(i + 1), c.name, str(c.type), ", ".join(roles), c.comment or ""])
            )
        grid.sync(rows)
        keys.update(
            Text.assemble(
                ("primary key: ", "bold"),
                ", ".join(info.primary_key) or "- (log table)",
                ("  bucket key: ", "bold"),
                ", ".join(info.bucket_keys) or "- (round robin)",
                ("  partition keys: ", "bold"),
                ", ".join(info.partition_keys) or "-",
            )
        )

    def _render_properties(self, table: TableView | None) -> None:
        info = table.info if table is not None else None
        box = self.query_one("#detail-properties", Static)
        box.update(_properties_text(info) if info is not None else "")

    def _render_partitions(self, table: TableView | None) -> None:
        grid = self.query_one("#detail-partitions", KeyedGrid)
        if table is None:
            grid.sync([])
            return
        counts: dict[int | None, int] = {}
        for b in table.buckets:
            counts[b.partition_id] = counts.get(b.partition_id, 0) + 1
        rows: list[Row] = [
            (
                str(p.partition_id),
                [
                    p.name,
                    str(p.partition_id),
                    "/".join(f"{k}={v}" for k, v in p.spec.items()),
                    str(counts.get(p.partition_id, 0)),
                ],
            )
            for p in sorted(table.partitions, key=lambda p: p.name)
        ]
        grid.sync(rows)

    # ------------------------------------------------------------------ throughput

    def _maybe_load_series(self, state: ConsoleState) -> None:
        moment = (state.as_of, state.now)
        last = self._series_for
        if last is not None and last[0] == state.as_of and state.now - last[1] < SERIES_REFRESH_S:
            return
        self._series_for = moment
        # Up to the poll shown (the moment travelled to, or the latest good poll).
        if state.as_of is not None:
            until: int | None = to_ms(state.as_of)
        else:
            until = to_ms(state.last_ok.taken_at) if state.last_ok is not None else None
        self._load_series(self._table_id, until)

    class SeriesLoaded(Message):
        """The table's rows/s per recorded poll were read (None: no history file)."""

        def __init__(self, values: list[float | None] | None) -> None:
            super().__init__()
            self.values = values

    @work(exclusive=True, group="detail-series", exit_on_error=False)
    async def _load_series(self, table_id: int | None, until_ms: int | None) -> None:
        path = self.konsole.feed.history_path
        values = await table_rate_series(path, self.table_path, table_id, until_ms, SERIES_POINTS)
        self.post_message(self.SeriesLoaded(values))

    def on_table_detail_screen_series_loaded(self, message: SeriesLoaded) -> None:
        self._series_loaded(message.values)

    def _series_loaded(self, values: list[float | None] | None) -> None:
        spark = self.query_one("#detail-sparkline", Spark)
        label = self.query_one("#detail-rate-label", Static)
        if values is None:
            spark.update_series([])
            label.update("rows/s (no history)")
            return
        # an unknown rate (a failed poll, a truncation) is a gap, never zero
        spark.update_series(values)
        label.update(f"rows/s, {len(values)} polls" if values else "rows/s (nothing recorded)")

    # ------------------------------------------------------------------ KV snapshots

    def _kv_unavailable(self, state: ConsoleState | None) -> str | None:
        """Why the KV snapshots cannot be asked now, or None when they can."""
        table = self._find(state) if state is not None else None
        info = table.info if table is not None else None
        if state is None or info is None or not info.is_pk_table:
            return "KV snapshots exist for primary-key tables only"
        if state.historic:
            return "KV snapshots are asked from the live cluster, not in time travel"
        if not state.reachable:
            return "the cluster is not reachable"
        if self.konsole.feed.profile is None:
            return "no connection profile to ask the cluster with"
        return None

    def action_kv_snapshots(self, quiet: bool = False) -> None:
        state = self._state
        reason = self._kv_unavailable(state)
        if reason is not None:
            if not quiet:
                self.notify(reason, severity="warning")
            return
        assert state is not None
        table = self._find(state)
        assert table is not None and table.info is not None
        self._kv_asked = True
        self._kv_note = "…"
        partitions: list[tuple[int | None, str | None]]
        if table.info.is_partitioned:
            partitions = [(p.partition_id, p.name) for p in table.partitions]
        else:
            partitions = [(None, None)]
        self._fetch_kv(partitions)

    class KvSnapshotsFetched(Message):
        """The cluster answered (None: it failed, and said why in a notification)."""

        def __init__(self, snapshots: dict[BucketKey, str] | None) -> None:
            super().__init__()
            self.snapshots = snapshots

    @work(exclusive=True, group="detail-kv", exit_on_error=False)
    async def _fetch_kv(self, partitions: list[tuple[int | None, str | None]]) -> None:
        try:
            found = await self.konsole.feed.kv_snapshots(self.table_path, partitions)
        except Exception as exc:  # shown, never a crash: the cluster may be misbehaving
            self._kv_note = "error"
            self.notify(f"KV snapshots: {exc}", severity="warning", timeout=8)
            found = None
        self.post_message(self.KvSnapshotsFetched(found))

    def on_table_detail_screen_kv_snapshots_fetched(self, message: KvSnapshotsFetched) -> None:
        self.kv_snapshots = message.snapshots
        if self._state is not None:
            self._render_buckets(self._state, self._find(self._state))

    # ------------------------------------------------------------------ actions

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        grid = {"buckets": "#detail-buckets", "schema": "#detail-schema"}.get(tab)
        if tab == "partitions":
            grid = "#detail-partitions"
        if tab == "storage":
            self.query_one(StorageTab).grid.focus()
        elif grid is not None:
            self.query_one(grid, KeyedGrid).focus()

    def action_preview(self) -> None:
        """The whole table; on the Partitions tab, the selected partition."""
        partition = None
        if self.query_one(TabbedContent).active == "partitions":
            key = self.query_one("#detail-partitions", KeyedGrid).selected_key
            state = self._state
            table = self._find(state) if state is not None else None
            if key is not None and table is not None:
                partition = next(
                    (p.name for p in table.partitions if str(p.partition_id) == key), None
                )
        self.konsole.open_preview(self.table_path, partition)
