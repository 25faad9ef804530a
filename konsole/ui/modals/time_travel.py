"""Time travel: pick a past moment (typed, or event to event).

A typed moment is read with :func:`konsole.model.timefmt.parse_time` (ISO 8601 in UTC, epoch
seconds, ``now`` or an age such as ``-5m`` / ``2h``); the recorded events are listed newest
first (read from the history in a thread; those of the shown moment's cluster, its epoch,
only) and enter on one travels to its time. The app's ``[`` / ``]`` step from event to
event while travelling, ``L`` returns to live. ``r`` (on the list) writes the incident
report of the highlighted event's moment.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from konsole.collect.history.reads import events_between_epoch
from konsole.model.timefmt import clock_text, to_ms
from konsole.ui.colors import severity_style
from konsole.ui.services import ConsoleServices, services
from konsole.ui.widgets.text_input import TextInput

__all__ = ["MAX_LISTED", "TimeTravelScreen", "parse_moment"]

#: Events listed to pick from (the newest ones).
MAX_LISTED = 1000


def parse_moment(text: str, now: float) -> float:
    """Epoch seconds of a typed moment; ValueError (with a usable message) when not one."""
    from konsole.model.timefmt import TimeParseError, parse_time

    value = text.strip()
    if not value:
        raise ValueError("type a moment: 2026-05-28 20:27:30, -5m, -2h or epoch seconds")
    try:
        return parse_time(value, now)
    except TimeParseError as exc:
        raise ValueError(str(exc)) from None


class TimeTravelScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    TimeTravelScreen { align: center middle; }
    #time-travel {
        width: 90%; max-width: 110; height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    #tt-error { color: $error; height: auto; }
    #tt-events { height: 1fr; }
    #tt-hint { color: $text-muted; height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("L", "live", "Back to live"),
        Binding("r", "report", "Report of the moment", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._times: dict[str, float] = {}

    @property
    def konsole(self) -> ConsoleServices:
        return services(self.app)

    def compose(self) -> ComposeResult:
        with Vertical(id="time-travel"):
            yield Static(self._heading(), id="tt-heading")
            yield TextInput(
                placeholder="2026-05-28 20:27:30 · -5m · -2h · epoch seconds", id="tt-when"
            )
            yield Static(id="tt-error")
            table: DataTable[Text | str] = DataTable(id="tt-events", cursor_type="row")
            table.add_columns("time (UTC)", "severity", "event")
            yield table
            yield Static(
                "enter: travel · tab: typed moment / events · [ ]: previous / next event "
                "while travelling · L: back to live · esc: close",
                id="tt-hint",
            )

    def _heading(self) -> Text:
        state = self.konsole.state
        t = Text("Time travel", style="bold")
        if state is not None and state.historic:
            t.append(f" · now showing {clock_text(state.as_of)}", style="magenta")
        else:
            t.append(" · now showing live")
        return t

    def on_mount(self) -> None:
        self.query_one("#tt-error", Static).display = False
        self._load_events()

    class EventsListed(Message):
        """The recorded events were read: (time, severity, message), oldest first; None
        when there is no history file."""

        def __init__(self, rows: list[tuple[float, str, str]] | None) -> None:
            super().__init__()
            self.rows = rows

    @work(exclusive=True, group="travel-events", exit_on_error=False)
    async def _load_events(self) -> None:
        state = self.konsole.state
        # The events of the shown moment's cluster (its epoch): another cluster's are not
        # this one's to travel between.
        at = to_ms(state.as_of) if state is not None and state.as_of is not None else None
        rows = await events_between_epoch(self.konsole.feed.history_path, at, MAX_LISTED)
        self.post_message(self.EventsListed(rows))

    def on_time_travel_screen_events_listed(self, message: EventsListed) -> None:
        self._show_events(message.rows)

    def _show_events(self, rows: list[tuple[float, str, str]] | None) -> None:
        table = self.query_one("#tt-events", DataTable)
        table.clear()
        self._times.clear()
        if rows is None:
            table.border_title = "no history file: only live"
            return
        table.border_title = f"{len(rows)} recorded events, newest first"
        state = self.konsole.state
        at = state.as_of if state is not None else None
        cursor = 0
        for i, (t, severity, message) in enumerate(reversed(rows)):
            key = f"ev-{i}"
            self._times[key] = t
            table.add_row(
                clock_text(t),
                Text(severity, style=severity_style(severity)),
                message,
                key=key,
            )
            if at is not None and t > at:
                cursor = i + 1
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1), animate=False)

    # ------------------------------------------------------------------ travel

    def on_input_submitted(self, event: Input.Submitted) -> None:
        live = self.konsole.live_state
        now = live.now if live is not None else self.konsole.clock()
        error = self.query_one("#tt-error", Static)
        try:
            at = parse_moment(event.value, now)
        except ValueError as exc:
            error.update(str(exc))
            error.display = True
            return
        self.konsole.travel_to(at)
        self.dismiss()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        t = self._times.get(str(event.row_key.value))
        if t is not None:
            self.konsole.travel_to(t)
            self.dismiss()

    @work(group="travel-report", exit_on_error=False)
    async def action_report(self) -> None:
        from konsole.ui.moment_report import write_moment_report

        table = self.query_one("#tt-events", DataTable)
        at = None
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
            at = self._times.get(str(key.value))
        if at is None:
            state = self.konsole.state
            at = self.konsole.clock() if state is None else (state.as_of or state.now)
        await write_moment_report(self, at)

    def action_live(self) -> None:
        self.konsole.travel_to(None)
        self.dismiss()
