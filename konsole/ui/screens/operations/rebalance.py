"""Rebalance (``R``): goals, the plan, start, live per-bucket progress, cancel.

The goals are toggled with ``1``-``3``. The plan is the current placement (replicas per
tablet server, from the state shown): the Fluss server plans the moves itself and has no
dry run, so the screen says so and the moves appear in the progress once started. The
progress is ListRebalanceProgress read live every few seconds (a read: no opt-in), one
row a bucket: old -> new replicas and leader, its status. The reads go through the
:class:`~konsole.ui.cluster_actions.HeldReads` the screen holds from its mount to its
unmount: the action service's one read client (shared with the Config screen), not one
per read. ``S`` starts a
rebalance (``g`` is the app's Storage key) and ``x`` cancels the running one, both through
the confirmation modal (plan, rails, the subject typed, audit), greyed with why when
actions are off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from fluss_proto.errors import FlussError
from konsole.errors import KonsoleError
from konsole.model.actions import progress_counts, replicas_on
from konsole.ui.cluster_actions import GOALS, ActionRequest, HeldReads
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.grid_rows import Row

if TYPE_CHECKING:
    from fluss_proto.model import ClusterView, RebalanceProgress
    from konsole.model.placement import Placement

__all__ = ["RebalanceScreen"]

#: Seconds between progress reads while the screen is shown.
POLL_EVERY = 3.0

_COLUMNS = (
    ("table", "Table"),
    ("bucket", "Bucket"),
    ("replicas", "Replicas old → new"),
    ("leader", "Leader old → new"),
    ("status", "Status"),
)


class RebalanceScreen(ConsoleScreen):
    DEFAULT_CSS = """
    RebalanceScreen #rb-top { height: auto; padding: 0 1; }
    RebalanceScreen #rb-goals, RebalanceScreen #rb-plan { height: auto; }
    RebalanceScreen #rb-progress-title { height: auto; padding: 0 1; margin: 1 0 0 0; }
    RebalanceScreen KeyedGrid { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(i + 1), f"goal({i})", g.lower(), show=False) for i, g in enumerate(GOALS)),
        Binding("S", "start", "Start"),
        Binding("x", "cancel", "Cancel rebalance"),
        Binding("r", "refresh", "Refresh progress"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.goals: list[bool] = [True, True, False]
        #: The last progress read (None: not read yet); its error when the read failed.
        self.progress: RebalanceProgress | None = None
        self.progress_error: str | None = None
        #: The reads held for the screen's life (made at the mount, closed at the unmount);
        #: a profile switched to gets reads of its own.
        self.held = HeldReads(lambda: self.konsole)

    def compose_body(self) -> ComposeResult:
        with Vertical(id="rb-top"):
            yield Static(id="rb-goals")
            yield Static(id="rb-plan")
        yield Static(id="rb-progress-title")
        yield KeyedGrid(id="rb-table")

    def on_mount(self) -> None:
        self.held.open()
        self.query_one(KeyedGrid).set_columns(_COLUMNS)
        self._draw_goals()
        self._draw_progress()
        self.set_interval(POLL_EVERY, self._tick)

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.action_refresh()

    async def on_unmount(self) -> None:
        await self.held.close()

    def render_state(self, state: ConsoleState) -> None:
        snapshot = state.last_ok
        plan = _plan(snapshot.view if snapshot else None, state.placement)
        self.query_one("#rb-plan", Static).update(plan)
        self._draw_progress()

    # ------------------------------------------------------------------ actions

    def action_goal(self, index: int) -> None:
        self.goals[index] = not self.goals[index]
        self._draw_goals()

    def chosen_goals(self) -> list[str]:
        return [g for g, on in zip(GOALS, self.goals, strict=True) if on]

    def action_start(self) -> None:
        from konsole.ui.modals.action_confirm import open_action

        request = ActionRequest("rebalance", value=",".join(self.chosen_goals()))
        open_action(self.app, "Rebalance · start", request, on_end=self._after)

    def action_cancel(self) -> None:
        from konsole.ui.modals.action_confirm import open_action

        request = ActionRequest("rebalance-cancel")
        open_action(self.app, "Rebalance · cancel", request, on_end=self._after)

    def _tick(self) -> None:
        # Only while shown: a mode's screen lives on behind the others, its timer too.
        if self.is_current:
            self.action_refresh()

    def _after(self, ran: bool | None) -> None:
        self.action_refresh()

    @work(exclusive=True, group="rebalance-progress", exit_on_error=False)
    async def action_refresh(self) -> None:
        reads, renewed = await self.held.current()
        if reads is None:
            return  # unmounted
        if renewed:
            self.progress = None
        try:
            self.progress = await reads.progress()
            self.progress_error = None
        except (KonsoleError, FlussError, OSError) as exc:  # unknown, said so
            self.progress_error = str(exc) or type(exc).__name__
        if self.is_mounted:
            self._draw_progress()

    # ------------------------------------------------------------------ drawing

    def _draw_goals(self) -> None:
        t = Text("Goals  ", style="bold")
        for i, (goal, on) in enumerate(zip(GOALS, self.goals, strict=True)):
            t.append(f" {i + 1} ", style="bold reverse")
            t.append(f" [{'x' if on else ' '}] {goal}   ", style="" if on else "dim")
        t.append("\n S: start with these goals · x: cancel the running one", style="dim")
        self.query_one("#rb-goals", Static).update(t)

    def _draw_progress(self) -> None:
        title = self.query_one("#rb-progress-title", Static)
        table = self.query_one(KeyedGrid)
        state = self.konsole.state
        view = state.last_ok.view if state is not None and state.last_ok is not None else None
        if self.progress_error is not None:
            title.update(Text(f"Progress unknown: {self.progress_error}", style="bold red"))
            table.sync([])
        elif self.progress is None:
            title.update(Text("Progress: reading the coordinator...", style="dim"))
            table.sync([])
        elif not self.progress.exists:
            title.update(Text("Progress: no rebalance to report (none started)", style="dim"))
            table.sync([])
        else:
            done, total, status = progress_counts(self.progress)
            title.update(
                Text(
                    f"Rebalance {self.progress.rebalance_id}: {status}, "
                    f"{done}/{total} buckets done",
                    style="bold",
                )
            )
            table.sync(_rows(self.progress, view))


def _plan(view: ClusterView | None, placement: Placement | None) -> Text:
    """``placement``: that of ``view``'s poll (the state's, derived once as it was judged)."""
    t = Text("Plan  ", style="bold")
    if view is None or placement is None:
        t.append("unknown: no successful poll yet", style="yellow")
        return t
    counts = [(s.node_id, replicas_on(placement, s.node_id)[0]) for s in view.tablet_servers]
    t.append("the current placement (the Fluss server plans the moves itself, no dry run)\n")
    t.append("      replicas per tablet server now: ")
    t.append(", ".join(f"{node}={n}" for node, n in sorted(counts)) or "(no tablet server)")
    return t


def _rows(progress: RebalanceProgress, view: ClusterView | None) -> list[Row]:
    names: dict[int, str] = {}
    if view is not None:
        names = {t.table_id: str(t.path) for t in view.tables if t.table_id is not None}
    rows: list[Row] = []
    for t in progress.tables:
        name = names.get(t.table_id, f"table {t.table_id}")
        for b in t.buckets:
            part = "" if b.partition_id is None else f"p{b.partition_id}/"
            where = f"{part}{b.bucket_id}"
            rows.append(
                (
                    f"{t.table_id}:{b.partition_id}:{b.bucket_id}",
                    (
                        name,
                        where,
                        f"{list(b.original_replicas)} → {list(b.new_replicas)}",
                        f"{b.original_leader} → {b.new_leader}",
                        getattr(b.status, "name", str(b.status)),
                    ),
                )
            )
    return rows
