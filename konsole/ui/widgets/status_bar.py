"""The line at the top of every screen: which cluster, live or history, how fresh."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from konsole.model.timefmt import age_text, clock_text
from konsole.ui.colors import health_style
from konsole.ui.state import ConsoleState, HistoryMode

__all__ = ["StatusBar", "status_text"]


def status_text(state: ConsoleState) -> Text:
    """``konsole · local · LIVE · GREEN · poll 2s ago (41 ms) · recording``."""
    t = Text()
    t.append("konsole ", style="bold")
    t.append(state.profile)
    t.append(" · ")
    if state.historic:
        t.append(f" HISTORY as of {clock_text(state.as_of)} ", style="bold reverse magenta")
    elif state.connecting:
        t.append(" CONNECTING ", style="bold reverse yellow")
    elif state.stale:
        t.append(" UNREACHABLE ", style="bold reverse red")
    else:
        t.append(" LIVE ", style="bold reverse green")
    if state.health is not None and not state.stale:
        t.append(" · ")
        t.append(state.health.status.name, style=health_style(state.health.status))
    t.append(" · ")
    if state.last_ok is not None:
        t.append(f"data {age_text(state.data_age)} old")
        t.append(f" ({state.last_ok.latency_s * 1000:.0f} ms)")
    else:
        t.append("no data yet")
    if not state.historic:
        t.append(" · ")
        mode = state.history.mode
        if mode is HistoryMode.RECORDING and state.history.reason is None:
            t.append("recording")
        elif mode is HistoryMode.FOLLOWING:
            t.append("following the recorder")
        elif mode is HistoryMode.RECORDING:  # the file failed: polls wait in memory
            t.append("NOT RECORDING", style="bold yellow")
        else:
            t.append("history off", style="yellow")
        if state.history.note:  # e.g. the recorder followed is gone: this console polls
            t.append(f" · {state.history.note}", style="bold yellow")
    other = state.history.other_until
    if other is not None and (not state.historic or (state.as_of or 0) < other):
        if state.history.other_proven:
            t.append(f" · history of another cluster until {clock_text(other)}", style="yellow")
        else:
            t.append(f" · history of an unidentified cluster until {clock_text(other)}")
    return t


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; padding: 0 1; }
    StatusBar.-unreachable { background: $error 40%; }
    StatusBar.-historic { background: $accent 30%; }
    """

    def show(self, state: ConsoleState) -> None:
        self.set_class(state.stale and not state.historic, "-unreachable")
        self.set_class(state.historic, "-historic")
        self.update(status_text(state))
