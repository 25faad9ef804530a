"""Evidence: one event with what surrounds it, side by side.

``enter`` on an event in the Events screen opens it: the events around the moment (from
the timeline the Events screen holds), the involved server's metric sparklines around it
(from the history file) and that server's log lines in the event's window: live from the
profile's log source, or, in time travel (or with no source), the excerpt the recorder
kept. A source that fails says why (a command that timed out, a glob matching nothing); a
server with no source says so. ``j`` goes to the subject, ``r`` writes the incident report
of the moment (:func:`write_moment_report`) and says where.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import RichLog, Static

from konsole.collect.history.reads import evidence_of
from konsole.collect.logs.evidence import (
    SERIES_WINDOW_S,
    LogView,
    is_server,
    live_log,
    series_for,
)
from konsole.model import subjects
from konsole.model.requests import explain_line
from konsole.model.timefmt import clock_text, short_clock_text
from konsole.ui.colors import severity_style
from konsole.ui.moment_report import report_path, write_moment_report
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.screens.events.timeline import open_subject
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.spark import Spark

if TYPE_CHECKING:
    from konsole.ui.screens.events.timeline import TimelineEntry

__all__ = ["AROUND_S", "EvidenceScreen", "report_path", "write_moment_report"]

#: Events listed around the moment (each side).
AROUND_S = SERIES_WINDOW_S
_LEVEL_STYLE = {"WARN": "bold yellow", "ERROR": "bold red", "FATAL": "bold red"}


def _count(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _per_s(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}/s"


def _show(name: str) -> Callable[[float | None], str]:
    """How a series' scale is written: ratios in %, byte rates in bytes/s, rates per s."""
    from konsole.render.sizes import byte_rate_text
    from konsole.ui.screens.cluster_facts import fmt_ratio

    if name.endswith("_ratio"):
        return fmt_ratio
    if name.startswith("bytes_"):
        return byte_rate_text
    if name.endswith("_rate"):
        return _per_s
    return _count


class EvidenceScreen(ConsoleScreen):
    CSS_PATH = "evidence.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "jump", "Go to subject"),
        Binding("r", "report", "Report"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, entry: TimelineEntry, timeline: Sequence[TimelineEntry]) -> None:
        super().__init__()
        self.entry = entry
        #: The sparklines: a write rejection's are the requests' (konsole.model.requests).
        self.series = series_for(entry.kind)
        self.around = sorted(
            (e for e in timeline if abs(e.time - entry.time) <= AROUND_S), key=lambda e: e.time
        )
        #: The log lines shown (their text), for the pilot tests.
        self.log_lines: list[str] = []
        self.log_note = ""
        self._loaded_for: float | bool | None = False

    def compose_body(self) -> ComposeResult:
        yield Static(id="evidence-head")
        with Horizontal(id="evidence-top"):
            yield Static(id="evidence-events", classes="panel")
            with Vertical(id="evidence-metrics", classes="panel"):
                for name, label in self.series:
                    yield Spark(label, show=_show(name), id=f"spark-{name}")
        yield RichLog(id="evidence-log", classes="panel", wrap=False, markup=False)

    def on_mount(self) -> None:
        self.query_one("#evidence-head", Static).update(self._head())
        self.query_one("#evidence-events", Static).update(self._events_text())
        self.query_one("#evidence-events").border_title = "Events around"
        metrics = self.query_one("#evidence-metrics")
        metrics.border_title = f"{self.entry.subject} · ±{SERIES_WINDOW_S / 60:g} min"
        self.query_one("#evidence-log").border_title = "Log"

    def _head(self) -> Text:
        e = self.entry
        t = Text()
        t.append(clock_text(e.time), style="bold")
        t.append(f" {e.severity} {e.kind} ", style=severity_style(e.severity))
        t.append(e.subject, style="bold")
        t.append(f"\n{e.message}")
        return t

    def _events_text(self) -> Text:
        t = Text()
        for e in self.around:
            style = "reverse" if e.key == self.entry.key else severity_style(e.severity)
            t.append(f"{short_clock_text(e.time)} {e.kind} {e.subject}\n", style=style)
        return t

    def render_state(self, state: ConsoleState) -> None:
        if self._loaded_for is not False and self._loaded_for == state.as_of:
            return  # the evidence of an event does not change with each poll
        self._loaded_for = state.as_of
        self._load(state.historic)

    # ------------------------------------------------------------------ data

    class Loaded(Message):
        def __init__(self, series: dict[str, list[float | None]], log: LogView) -> None:
            super().__init__()
            self.series = series
            self.log = log

    @work(exclusive=True, group="evidence", exit_on_error=False)
    async def _load(self, historic: bool) -> None:
        subject, at = self.entry.subject, self.entry.time
        path = self.konsole.feed.history_path
        profile = self.konsole.feed.profile
        logs = None if profile is None else profile.logs

        names = [name for name, _ in self.series]
        # every poll of the window is a point: unknown is a gap, never a closed-up line
        since, until = round((at - SERIES_WINDOW_S) * 1000), round((at + SERIES_WINDOW_S) * 1000)

        series: dict[str, list[float | None]] = {}
        recorded: LogView | None = None
        if is_server(subject):
            read = await evidence_of(path, subject, names, since, until, at)
            series, recorded = read or ({}, None)
        log = self._log_view(subject, recorded)
        if not historic and is_server(subject):
            live = await asyncio.to_thread(live_log, logs, subject, at, self._address(subject))
            log = live if live is not None else log
        self.post_message(self.Loaded(series, log))

    def _address(self, subject: str) -> str | None:
        """The tablet server's ``host:port`` as the last poll saw it (fills ``{host}``)."""
        state = self.konsole.state
        view = None if state is None or state.snapshot is None else state.snapshot.view
        for server in () if view is None else view.tablet_servers:
            if subjects.tablet_server(server.node_id) == subject:
                return server.address
        return None

    @staticmethod
    def _log_view(subject: str, recorded: LogView | None) -> LogView:
        if recorded is not None:
            return recorded
        if not is_server(subject):
            return LogView((), f"{subject}: not a server, no log to show")
        return LogView((), f"no log source for {subject} (see docs/incidents.md: log sources)")

    def on_evidence_screen_loaded(self, message: Loaded) -> None:
        for name, _ in self.series:
            self.query_one(f"#spark-{name}", Spark).update_series(message.series.get(name, []))
        panel = self.query_one("#evidence-metrics")
        known = any(v is not None for values in message.series.values() for v in values)
        panel.border_subtitle = "" if known else "no metrics recorded"
        log = self.query_one("#evidence-log", RichLog)
        log.clear()
        view = message.log
        self.log_lines = [line.raw for line in view.lines]
        self.log_note = view.note
        log.border_subtitle = view.note
        if view.failed:
            log.write(Text(f"log source failed: {view.note}", style="bold red"))
        elif not view.lines:
            log.write(Text(view.note, style="dim"))
        for line in view.lines:
            why = explain_line(line.message)
            if why is not None:  # the line that says why writes are refused
                log.write(Text(f"{line.raw}   <- {why}", style="bold reverse yellow"))
                continue
            log.write(Text(line.raw, style=_LEVEL_STYLE.get(line.level or "", "")))

    # ------------------------------------------------------------------ keys

    def action_jump(self) -> None:
        open_subject(self, self.entry.subject)

    @work(group="evidence-report", exit_on_error=False)
    async def action_report(self) -> None:
        await write_moment_report(self, self.entry.time)

    def action_back(self) -> None:
        self.app.pop_screen()
