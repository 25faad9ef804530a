"""Capacity: how much each tablet server and data dir may still take before its write lock,
when the recorded trend reaches it, and why requests slow down or fail meanwhile.

The upper grid has a row per tablet server (its own ``diskUsageRatio``, the worst of its
file systems) and one per data dir konsole can see: bytes used and free, the usage against
the server's *own* lock and recover ratios, the room left, the forecast time to the lock
and what it means now. The highlighted server's limits (and where each came from: a
dynamic config, its ``server.yaml`` or the default), each forecast with its interval,
samples and window, the tables driving its growth and why its writes fail are below it;
the lower grid is its requests beside its KV backpressure. Figures are those of ``konsole
capacity`` (:mod:`konsole.model.headroom`, :mod:`konsole.model.requests`). Unknown is ``-``
and ``unknown``, never 0 or ok; in time travel the screen shows the capacity part as
recorded (``konsole.collect.history.capacity_rows``).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from konsole.model.forecast import CONFIDENCE, METHOD
from konsole.model.headroom import ServerHeadroom, least_headroom, soonest_lock, with_drivers
from konsole.model.requests import ServerRequests, server_requests
from konsole.model.thresholds import HealthThresholds
from konsole.model.timefmt import age_text, short_clock_text
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.screens.capacity.cells import (
    HEADROOM_COLUMNS,
    REQUEST_COLUMNS,
    headroom_rows,
    pct,
    request_cells,
    server_lines,
)
from konsole.ui.state import ConsoleState
from konsole.ui.widgets.grid import KeyedGrid

__all__ = ["CapacityScreen"]


def _columns(spec: tuple[tuple[str, str, bool], ...]) -> list[tuple[str, Text]]:
    return [(k, Text(label, justify="right" if right else "left")) for k, label, right in spec]


class CapacityScreen(ConsoleScreen):
    CSS_PATH = "capacity.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_server", "Open server", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._servers: dict[str, ServerHeadroom] = {}
        self._requests: dict[str, ServerRequests] = {}
        self._now = 0.0

    def compose_body(self) -> ComposeResult:
        yield Static(id="capacity-summary")
        yield Static("", id="capacity-empty")
        yield KeyedGrid(id="capacity-headroom")
        yield Static(id="capacity-detail")
        yield KeyedGrid(id="capacity-requests")

    def on_mount(self) -> None:
        self.query_one("#capacity-headroom", KeyedGrid).set_columns(_columns(HEADROOM_COLUMNS))
        self.query_one("#capacity-requests", KeyedGrid).set_columns(_columns(REQUEST_COLUMNS))
        self.query_one("#capacity-headroom", KeyedGrid).focus()

    def _rules(self) -> HealthThresholds:
        profile = self.konsole.feed.profile
        return profile.health if profile is not None else HealthThresholds()

    def render_state(self, state: ConsoleState) -> None:
        snap = state.last_ok
        rules = self._rules()
        # The judged poll's headroom, with the growth drivers this screen adds (a walk of
        # every bucket, made only while the screen is shown).
        servers = with_drivers(state.capacity, snap, state.previous_ok) if snap else ()
        self._servers = {s.server_id: s for s in servers}
        self._requests = {} if snap is None else {r.server_id: r for r in server_requests(snap)}
        self._now = now = snap.taken_at if snap is not None else state.now
        stale = state.stale
        grid = self.query_one("#capacity-headroom", KeyedGrid)
        grid.set_class(stale, "stale")
        grid.sync(headroom_rows(servers, rules, now, stale))
        requests = self.query_one("#capacity-requests", KeyedGrid)
        requests.set_class(stale, "stale")
        requests.sync(
            [
                (
                    f"r:{s.server_id}",
                    request_cells(self._requests.get(s.server_id), s, rules, stale),
                )
                for s in servers
            ]
        )
        empty = self.query_one("#capacity-empty", Static)
        empty.display = not servers
        if snap is None:
            empty.update("no data yet: waiting for the first successful poll")
        else:
            empty.update("no tablet servers")
        self.query_one("#capacity-summary", Static).update(self._summary(state, servers, rules))
        self._detail()

    def _summary(
        self, state: ConsoleState, servers: tuple[ServerHeadroom, ...], rules: HealthThresholds
    ) -> Text:
        t = Text()
        snap = state.last_ok
        if state.stale:
            t.append(" UNREACHABLE ", style="bold reverse red")
            t.append(" ")
        if snap is None:
            return t
        part = snap.capacity
        t.append("as recorded at " if state.historic else "capacity at ", style="dim")
        age = age_text(max(0.0, state.now - snap.taken_at))
        t.append(f"{short_clock_text(snap.taken_at)} ({age} ago)")
        room = least_headroom(servers)
        t.append(f" · least room {pct(room)}" if room is not None else " · room unknown")
        eta = soonest_lock(servers, snap.taken_at)
        if eta is not None:
            t.append(f" · first lock in {age_text(round(eta))}", style="bold yellow")
        locked = sum(1 for s in servers if s.locked)
        if locked:
            t.append(f" · {locked} LOCKED", style="bold red")
        window = part.window_s if part is not None and part.window_s else rules.forecast_window_s
        t.append(
            f"\nforecast: {METHOD} over the last {age_text(window)}, {CONFIDENCE:.0%} interval"
            f" · alert when a lock is within {age_text(rules.write_lock_warn_s)}"
            f" / {age_text(rules.write_lock_critical_s)}",
            style="dim",
        )
        if part is None:
            t.append(" · write limits not read", style="yellow")
        return t

    # ------------------------------------------------------------------ the highlighted server

    def _selected(self) -> str | None:
        key = self.query_one("#capacity-headroom", KeyedGrid).selected_key
        if key is None:
            return next(iter(self._servers), None)
        return key.split(":")[1]

    def _detail(self) -> None:
        detail = self.query_one("#capacity-detail", Static)
        sid = self._selected()
        server = None if sid is None else self._servers.get(sid)
        detail.display = server is not None
        if server is not None:
            detail.update(server_lines(server, self._requests.get(server.server_id), self._now))

    def on_keyed_grid_row_highlighted(self, event: KeyedGrid.RowHighlighted) -> None:
        if event.control.id == "capacity-headroom":
            self._detail()

    def on_keyed_grid_row_selected(self, event: KeyedGrid.RowSelected) -> None:
        event.stop()
        self.action_open_server()

    def action_open_server(self) -> None:
        sid = self._selected()
        if sid is not None and sid.isdigit():
            self.konsole.open_server(int(sid))
