"""Upgrade: a rolling upgrade to the 1.0 line, seen from the console's own polls.

The lines each server speaks (told by its API keys), the skew, the gate's verdict on the
shown poll (:func:`konsole.model.upgrade_gate.judge_gate` over the check's judgement of
the poll and its health: the verdict ``konsole upgrade gate`` gives on the same poll,
rebalance aside), the 1.0 upgrade notes checked against this cluster, and the steps left
with their costs (:func:`konsole.model.upgrade_check.report`, as ``konsole upgrade check``).

The notes need the ACLs and every server's configuration: the screen reads them over the
action service's read client (ListAcls, DescribeClusterConfigs; reads, no opt-in), held
from its mount to its unmount, when it is shown and on ``r``. Until they are read, or when
the read failed, the notes say so: never OK for what was not read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from fluss_proto.errors import FlussError
from konsole.errors import ExitCode, KonsoleError
from konsole.model.check import assess
from konsole.model.timefmt import clock_text
from konsole.model.upgrade_check import NoteItem, UpgradeReport, report
from konsole.model.upgrade_gate import GateVerdict, judge_gate
from konsole.ui.cluster_actions import HeldReads
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.state import ConsoleState

if TYPE_CHECKING:
    from konsole.collect.cluster.upgrade_reads import NotesInputs

__all__ = ["UpgradeScreen", "gate_text", "notes_text"]

_STYLE = {ExitCode.OK: "bold green", ExitCode.WARNING: "bold yellow"}


def gate_text(verdict: GateVerdict | None) -> Text:
    if verdict is None:
        return Text("gate: no poll judged yet")
    style = _STYLE.get(verdict.status, "bold red")
    t = Text("gate: ")
    t.append("SAFE" if verdict.safe else "WAIT", style=style)
    if verdict.safe:
        t.append(": the next server may be taken down now")
    for w in verdict.waits:
        t.append(f"\n  {w.line()}")
    return t


def notes_text(
    items: tuple[NoteItem, ...] | None, *, read_at: float | None, error: str | None
) -> RenderableType:
    """The 1.0 upgrade notes, each OK or to act on (a long one wraps under its own
    text); or why they are not known."""
    t = Text("1.0 upgrade notes", style="bold")
    if error is not None:
        t.append(f": ACLs and configs not read: {error}", style="bold red")
        return t
    if items is None or read_at is None:
        t.append(": reading the ACLs and configs...", style="dim")
        return t
    acts = sum(1 for i in items if i.status is not ExitCode.OK)
    t.append(f": {acts} to act on" if acts else ": nothing to act on")
    t.append(f" (ACLs and configs read at {clock_text(read_at)[11:]} · r: read again)", style="dim")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    for i in items:
        what = Text()
        what.append(f"{i.subject}: ", style="dim")
        what.append(i.text)
        grid.add_row(
            Text(f" {i.status.name}", style=_STYLE.get(i.status, "bold red")),
            Text(i.item, style="bold"),
            what,
        )
    return Group(t, grid)


def _verdict(state: ConsoleState) -> GateVerdict | None:
    judged = state.judged
    if judged is None or state.historic:
        return None
    # The state's verdict on its poll, as judged by the session.
    return judge_gate(judged, assess(judged))


class UpgradeScreen(ConsoleScreen):
    CSS_PATH = "upgrade.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh", "Read again"),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: The ACLs and configs last read (None: not yet), when, and why a read failed.
        self.notes: NotesInputs | None = None
        self.notes_at: float | None = None
        self.notes_error: str | None = None
        self._reading = False
        self.held = HeldReads(lambda: self.konsole)

    def compose_body(self) -> ComposeResult:
        yield Static(id="upgrade-summary")
        yield Static(id="upgrade-gate")
        servers: DataTable[Text | str] = DataTable(id="upgrade-servers", cursor_type="row")
        servers.add_columns("server", "line", "told by")
        yield servers
        yield Static(id="upgrade-notes")
        steps: DataTable[Text | str] = DataTable(id="upgrade-steps", cursor_type="row")
        steps.add_columns("step", "server", "leaders", "under-rep.", "offline tables", "state")
        yield steps

    def on_mount(self) -> None:
        try:
            self.held.open()
        except KonsoleError as exc:  # no cluster to read from (no profile): said
            self.notes_error = str(exc)

    async def on_unmount(self) -> None:
        await self.held.close()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.action_refresh()

    @work(exclusive=True, group="upgrade-notes", exit_on_error=False)
    async def action_refresh(self) -> None:
        self._reading = True
        try:
            read = await self._read()
        finally:
            self._reading = False
        state = self.konsole.state
        if read and self.is_mounted and state is not None:
            self.render_state(state)

    async def _read(self) -> bool:
        """Read the ACLs and configs; False when there was nothing to read them from."""
        reads, renewed = await self.held.current()
        live = self.konsole.live_state
        snapshot = live.last_ok if live is not None else None
        if reads is None or live is None or snapshot is None:
            return False  # unmounted, no profile, or no good poll yet (a later state asks)
        if renewed:
            self.notes, self.notes_at = None, None
        try:
            self.notes = await reads.notes_inputs(snapshot)
            # the state's own clock (the screen's pictures stay the same from run to run)
            self.notes_at, self.notes_error = live.now, None
        except (KonsoleError, FlussError, OSError) as exc:  # unknown, said so
            self.notes_error = str(exc) or type(exc).__name__
        return True

    def render_state(self, state: ConsoleState) -> None:
        summary = self.query_one("#upgrade-summary", Static)
        snap = state.last_ok
        if snap is None:
            summary.update("no successful poll yet")
            return
        notes = self.notes
        if notes is None and self.notes_error is None and not self._reading:
            self.action_refresh()  # the first good poll since the screen was shown
        assert state.judged is not None  # it has a good poll
        r = report(
            state.judged,
            acls=notes.acls if notes is not None else None,
            configs=notes.configs if notes is not None else None,
        )
        summary.update(_summary(r))
        self.query_one("#upgrade-gate", Static).update(
            gate_text(_verdict(state)) if not state.historic else "gate: live only"
        )
        servers = self.query_one("#upgrade-servers", DataTable)
        servers.clear()
        for s in r.servers:
            servers.add_row(s.subject, s.line or "-", s.told_by)
        self.query_one("#upgrade-notes", Static).update(
            notes_text(
                r.items if notes is not None else None,
                read_at=self.notes_at,
                error=self.notes_error,
            )
        )
        steps = self.query_one("#upgrade-steps", DataTable)
        steps.clear()
        for st in r.steps:
            steps.add_row(
                str(st.order),
                st.subject,
                Text(str(st.leaders), justify="right"),
                Text(str(st.under_replicated), justify="right"),
                ", ".join(st.offline_tables) or "-",
                Text("done", style="green") if st.done else "to do",
            )


def _summary(r: UpgradeReport) -> Text:
    t = Text(f"to {r.target}: servers speak {'/'.join(r.lines) or 'unknown'}")
    if r.skew:
        t.append(" · version skew", style="bold yellow")
    left = sum(1 for s in r.steps if not s.done)
    t.append(f" · {left} step(s) left" if left else " · every server on the target line")
    return t
