"""Events: the history timeline, newest first, with filters, search and operator notes.

The rows are the state's recent events plus, when there is a history file, every older
event and note read from it in a worker (the state carries at most
:data:`~konsole.ui.state.MAX_EVENTS`). In time travel only what was recorded up to the
moment shown is read and listed (the newest :data:`MAX_HISTORY_EVENTS` before it); live,
the file ends at the present. Enter opens the event's evidence
(:class:`~konsole.ui.screens.events.evidence.EvidenceScreen`); ``j`` jumps to the subject: a server
to its detail, a table, partition or bucket to its table; ``r`` writes the incident report
of the selected event's moment (in time travel, of the moment shown when none is selected).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from konsole.collect.history.reads import event_timeline
from konsole.model.timefmt import clock_text, short_clock_text, to_ms
from konsole.ui.colors import severity_style
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.screens.events.timeline import TimelineEntry, open_subject, subject_target
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid
from konsole.ui.widgets.grid_rows import Row
from konsole.ui.widgets.text_input import TextInput

__all__ = [
    "MAX_HISTORY_EVENTS",
    "EventsScreen",
    "NoteScreen",
    "TimelineEntry",
    "open_subject",
    "subject_target",
]

#: Older events read from the history file (the newest ones).
MAX_HISTORY_EVENTS = 5000
#: Severity filter steps (``v`` cycles): everything, warnings and worse, critical only.
SEVERITY_LEVELS: tuple[tuple[str, frozenset[str]], ...] = (
    ("all", frozenset()),
    ("warning+", frozenset({"warning", "critical"})),
    ("critical", frozenset({"critical"})),
)
_SEVERITY_LABEL = {"critical": "CRIT", "warning": "WARN", "info": "info", "note": "note"}


def _matches_subject(subject: str, wanted: str) -> bool:
    """The same subject, or one below it (``db.t`` matches ``db.t#3`` and ``db.t[p]``)."""
    return subject == wanted or any(subject.startswith(wanted + sep) for sep in ("#", "[", " "))


class NoteScreen(ModalScreen[tuple[str, str] | None]):
    """Asks for an operator note: its text and its subject."""

    DEFAULT_CSS = """
    NoteScreen { align: center middle; }
    NoteScreen > Vertical {
        width: 70; max-width: 100%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    NoteScreen Input { margin: 0 0 1 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, subject: str, at: float) -> None:
        super().__init__()
        self.subject = subject
        self.at = at

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Note at {clock_text(self.at)} (enter: save, escape: cancel)")
            yield TextInput(placeholder="what happened / what you did", id="note-text")
            yield TextInput(value=self.subject, placeholder="subject", id="note-subject")

    def on_mount(self) -> None:
        self.query_one("#note-text", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = self.query_one("#note-text", Input).value.strip()
        subject = self.query_one("#note-subject", Input).value.strip() or "cluster"
        if not text:
            self.query_one("#note-text", Input).focus()
            return
        self.dismiss((text, subject))

    def action_cancel(self) -> None:
        self.dismiss(None)


class EventsScreen(ConsoleScreen):
    CSS_PATH = "events.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search"),
        Binding("v", "cycle_severity", "Severity"),
        Binding("k", "cycle_kind", "Kind"),
        Binding("u", "subject_filter", "Subject"),
        Binding("n", "note", "Note"),
        # Listed by help (?), not in the footer: the footer at 80 columns is full.
        Binding("j", "jump", "Go to subject", show=False),
        Binding("r", "report", "Report", show=False),
        Binding("enter", "evidence", "Evidence", show=False),
        Binding("escape", "clear_filters", "Clear filters", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.severity_level = 0
        self.kind: str | None = None
        self.subject: str | None = None
        self.search = ""
        self._history: list[TimelineEntry] = []
        #: (history file, moment) the history was last asked for; None: ask again.
        self._history_source: tuple[Path | None, float | None] | None = None
        self._state: ConsoleState | None = None
        self._entries: list[TimelineEntry] = []

    def compose_body(self) -> ComposeResult:
        yield Static(id="events-summary")
        yield TextInput(placeholder="search (enter: keep, escape: clear)", id="events-search")
        yield Static("no events", id="events-empty")
        yield KeyedGrid(id="events-table")
        yield Static(id="events-detail")

    def on_mount(self) -> None:
        table = self.query_one(KeyedGrid)
        table.set_columns(
            [
                ("time", "time (UTC)"),
                ("severity", "sev"),
                ("kind", "kind"),
                ("subject", "subject"),
                ("message", "message"),
            ]
        )
        table.focus()

    # ------------------------------------------------------------------ data

    class HistoryLoaded(Message):
        """The history file's events and notes up to the moment shown were read."""

        def __init__(
            self, source: tuple[Path | None, float | None], entries: list[TimelineEntry]
        ) -> None:
            super().__init__()
            self.source = source
            self.entries = entries

    def _ask_history(self, state: ConsoleState) -> None:
        """Read the history for ``state`` unless it was asked for that file and moment."""
        path = self.konsole.feed.history_path
        source = (path, state.as_of)
        if source == self._history_source:
            return
        if self._history_source is not None and self._history_source[0] != path:
            self._history = []  # another cluster (profile switched): its own history
        self._history_source = source
        if path is not None:
            self._load_history(source)

    @work(exclusive=True, group="events-history", exit_on_error=False)
    async def _load_history(self, source: tuple[Path | None, float | None]) -> None:
        path, as_of = source
        until = None if as_of is None else to_ms(as_of)

        # This cluster's timeline only: an earlier epoch of the file is another cluster.
        found = await event_timeline(path, until, MAX_HISTORY_EVENTS)
        if found is not None:
            events, notes = found
            entries = [TimelineEntry.of_event(e) for e in events]
            entries += [
                TimelineEntry(f"n{n.id}", n.at, "note", "note", n.subject, n.text) for n in notes
            ]
            self.post_message(self.HistoryLoaded(source, entries))

    def on_events_screen_history_loaded(self, message: HistoryLoaded) -> None:
        if message.source != self._history_source:
            return  # read for another file or moment than the one shown now
        self._history = message.entries
        if self._state is not None:
            self.render_state(self._state)

    def render_state(self, state: ConsoleState) -> None:
        self._state = state
        self._ask_history(state)
        merged = {e.key: e for e in self._history}
        for event in state.events:
            entry = TimelineEntry.of_event(event)
            merged.setdefault(entry.key, entry)
        entries = list(merged.values())
        if state.as_of is not None:
            until = state.as_of
            entries = [e for e in entries if e.time <= until]
        entries.sort(key=lambda e: (e.time, e.key), reverse=True)
        self._entries = entries
        self._refresh_rows()

    def _visible(self) -> list[TimelineEntry]:
        severities = SEVERITY_LEVELS[self.severity_level][1]
        needle = self.search.lower()
        out = []
        for e in self._entries:
            if severities and e.severity not in severities:
                continue
            if self.kind is not None and e.kind != self.kind:
                continue
            if self.subject is not None and not _matches_subject(e.subject, self.subject):
                continue
            if needle and not any(
                needle in s.lower() for s in (e.message, e.subject, e.kind, e.severity)
            ):
                continue
            out.append(e)
        return out

    def _refresh_rows(self) -> None:
        visible = self._visible()
        rows: list[Row] = [
            (
                e.key,
                (
                    short_clock_text(e.time),
                    Text(
                        _SEVERITY_LABEL.get(e.severity, e.severity),
                        style=severity_style(e.severity),
                    ),
                    e.kind,
                    e.subject,
                    e.message,
                ),
            )
            for e in visible
        ]
        self.query_one(KeyedGrid).sync(rows)
        empty = self.query_one("#events-empty", Static)
        empty.display = not rows
        empty.update("no events match the filters" if self._entries else "no events")
        self.query_one("#events-summary", Static).update(self._summary(len(rows)))
        self._show_detail()

    def on_keyed_grid_row_highlighted(self, event: KeyedGrid.RowHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        """The selected event in full: the table cuts long messages at 80 columns."""
        box = self.query_one("#events-detail", Static)
        e = self._selected()
        box.display = e is not None
        if e is None:
            return
        t = Text()
        t.append(clock_text(e.time), style="bold")
        t.append(f" {e.severity} {e.kind} ", style=severity_style(e.severity))
        t.append(e.subject, style="bold")
        t.append(f"\n{e.message}")
        if e.samples:
            t.append(f"\n{e.samples}", style="dim")
        box.update(t)

    def _summary(self, shown: int) -> Text:
        t = Text()
        state = self._state
        if state is not None and state.historic:
            t.append(f"up to {clock_text(state.as_of)} · ", style="bold")
        t.append(f"{shown} of {len(self._entries)} event(s)")
        filters = []
        if self.severity_level:
            filters.append(f"severity {SEVERITY_LEVELS[self.severity_level][0]}")
        if self.kind is not None:
            filters.append(f"kind {self.kind}")
        if self.subject is not None:
            filters.append(f"subject {self.subject}")
        if self.search:
            filters.append(f"search {self.search!r}")
        if filters:
            t.append(" · " + " · ".join(filters), style="bold")
        if not self._history and self.konsole.feed.history_path is None:
            t.append(" · recent events only (no history file)", style="dim")
        return t

    def _selected(self) -> TimelineEntry | None:
        key = self.query_one(KeyedGrid).selected_key
        if key is None:
            return None
        for e in self._entries:
            if e.key == key:
                return e
        return None

    # ------------------------------------------------------------------ filters

    def action_cycle_severity(self) -> None:
        self.severity_level = (self.severity_level + 1) % len(SEVERITY_LEVELS)
        self._refresh_rows()

    def action_cycle_kind(self) -> None:
        kinds = sorted({e.kind for e in self._entries})
        if not kinds:
            self.kind = None
        elif self.kind is None or self.kind not in kinds:
            self.kind = kinds[0]
        else:
            i = kinds.index(self.kind) + 1
            self.kind = kinds[i] if i < len(kinds) else None
        self._refresh_rows()

    def action_subject_filter(self) -> None:
        if self.subject is not None:
            self.subject = None
        else:
            selected = self._selected()
            self.subject = selected.subject if selected is not None else None
        self._refresh_rows()

    def action_search(self) -> None:
        box = self.query_one("#events-search", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "events-search":
            self.search = event.value.strip()
            self._refresh_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "events-search":
            if not event.value.strip():
                event.input.display = False
            self.query_one(KeyedGrid).focus()

    def action_clear_filters(self) -> None:
        box = self.query_one("#events-search", Input)
        box.value = ""
        box.display = False
        self.search, self.kind, self.subject, self.severity_level = "", None, None, 0
        self.query_one(KeyedGrid).focus()
        self._refresh_rows()

    # ------------------------------------------------------------------ jump, notes

    def on_keyed_grid_row_selected(self, event: KeyedGrid.RowSelected) -> None:
        event.stop()
        self.action_evidence()

    def action_evidence(self) -> None:
        from konsole.ui.screens.events.evidence import EvidenceScreen

        selected = self._selected()
        if selected is not None:
            self.app.push_screen(EvidenceScreen(selected, self._entries))

    @work(group="events-report", exit_on_error=False)
    async def action_report(self) -> None:
        from konsole.ui.moment_report import write_moment_report

        selected = self._selected()
        state = self._state
        if selected is not None:
            at = selected.time
        elif state is not None:
            at = state.as_of or state.now
        else:
            at = self.konsole.clock()
        await write_moment_report(self, at)

    def action_jump(self) -> None:
        selected = self._selected()
        if selected is not None:
            open_subject(self, selected.subject)

    def action_note(self) -> None:
        path = self.konsole.feed.history_path
        if path is None:
            self.notify("no history file: notes are kept there", severity="warning")
            return
        state = self._state
        # The state's own clock (the moment shown in time travel), never the wall clock.
        at = self.konsole.clock() if state is None else (state.as_of or state.now)
        selected = self._selected()
        subject = selected.subject if selected is not None else "cluster"

        def done(result: tuple[str, str] | None) -> None:
            if result is not None:
                self._write_note(path, at, result[0], result[1])

        self.app.push_screen(NoteScreen(subject, at), done)

    @work(group="events-note", exit_on_error=False)
    async def _write_note(self, path: Path, at: float, text: str, subject: str) -> None:
        from konsole.collect.history.files import HistoryError
        from konsole.collect.history.notes import write_note

        now = self.konsole.clock()
        try:
            await asyncio.to_thread(write_note, path, text, subject=subject, at=at, now=now)
        except HistoryError as exc:
            self.notify(f"note not written: {exc}", severity="error", timeout=10)
            return
        self.notify(f"noted on {subject}")
        self._history_source = None  # read again: the note is in the file now
        if self._state is not None:
            self._ask_history(self._state)
