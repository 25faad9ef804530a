"""Upgrade: a rolling upgrade to the 1.0 line, seen from the console's own polls.

The lines each server speaks (told by its API keys), the skew, the gate's verdict on the
shown poll (:func:`konsole.model.upgrade_gate.judge_gate` over the check's judgement of
the poll and its health: the verdict ``konsole upgrade gate`` gives on the same poll,
rebalance aside), and the steps left with their costs (:func:`konsole.model.upgrade_check.report`).
The console opens no client of its own here: the ACL and configuration items of the
upgrade notes need ``konsole upgrade check``, which the screen says.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from konsole.errors import ExitCode
from konsole.model.check import assess
from konsole.model.upgrade_check import UpgradeReport, report
from konsole.model.upgrade_gate import GateVerdict, judge_gate
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.state import ConsoleState

__all__ = ["UpgradeScreen", "gate_text"]

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


def _verdict(state: ConsoleState) -> GateVerdict | None:
    snap, health = state.snapshot, state.health
    if snap is None or health is None or state.historic:
        return None
    return judge_gate(snap, assess(snap, health))


class UpgradeScreen(ConsoleScreen):
    CSS_PATH = "upgrade.tcss"

    def compose_body(self) -> ComposeResult:
        yield Static(id="upgrade-summary")
        yield Static(id="upgrade-gate")
        servers: DataTable[Text | str] = DataTable(id="upgrade-servers", cursor_type="row")
        servers.add_columns("server", "line", "told by")
        yield servers
        steps: DataTable[Text | str] = DataTable(id="upgrade-steps", cursor_type="row")
        steps.add_columns("step", "server", "leaders", "under-rep.", "offline tables", "state")
        yield steps
        yield Static(
            "ACLs and configuration keys of the 1.0 upgrade notes: `konsole upgrade check`",
            id="upgrade-note",
        )

    def render_state(self, state: ConsoleState) -> None:
        summary = self.query_one("#upgrade-summary", Static)
        snap = state.last_ok
        if snap is None:
            summary.update("no successful poll yet")
            return
        r = report(snap, facts=state.facts)
        summary.update(_summary(r))
        self.query_one("#upgrade-gate", Static).update(
            gate_text(_verdict(state)) if not state.historic else "gate: live only"
        )
        servers = self.query_one("#upgrade-servers", DataTable)
        servers.clear()
        for s in r.servers:
            servers.add_row(s.subject, s.line or "-", s.told_by)
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
