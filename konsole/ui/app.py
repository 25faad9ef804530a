"""The operator console: a Textual app fed by a :mod:`konsole.ui.feed` feed.

The app owns two states: the live one (the feed's latest) and, in time travel, the
recorded moment being looked at. Every :class:`~konsole.ui.screens.base.ConsoleScreen` shows
:attr:`KonsoleApp.state`, whichever of the two is current; the feed runs in a worker, time
travel reads the history in a thread, so a slow poll or disk never freezes the screen.

The app implements :class:`konsole.ui.services.ConsoleServices`, the only thing screens know
of it; the screens' own work (their keys, their workers) stays on the screens.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, CSSPathType
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.worker import Worker, WorkerState

from konsole.ui.palette import KonsoleCommands
from konsole.ui.screens.base import ConsoleScreen
from konsole.ui.screens.overview.screen import OverviewScreen
from konsole.ui.services import ConsoleServices, ConsoleSettings

# The first frame pays only for the overview: the feed module (and through it the model)
# is imported where the history is read, the feed itself started after that frame.
if TYPE_CHECKING:
    from konsole.collect.actions.service import ActionService
    from konsole.ui.actions import ServerActions
    from konsole.ui.cluster_actions import ClusterActions
    from konsole.ui.feed import Feed
    from konsole.ui.state import ConsoleState

__all__ = ["DARK_THEME", "LIGHT_THEME", "KonsoleApp"]

DARK_THEME = "textual-dark"
LIGHT_THEME = "textual-light"


def _screen(module: str, name: str) -> Any:
    """A new screen of class ``name`` from ``konsole.ui.screens.<module>``."""
    import importlib

    return getattr(importlib.import_module(f"konsole.ui.screens.{module}"), name)()


class KonsoleApp(App[None]):
    TITLE = "konsole"
    # The overview's styles are read with the app's: a screen's own CSS_PATH makes Textual
    # parse every style again when the screen is first shown, and the overview is the first.
    CSS_PATH: ClassVar[CSSPathType | None] = ["app.tcss", "screens/overview/overview.tcss"]
    MODES: ClassVar[dict[str, Any]] = {
        "overview": OverviewScreen,
        # Imported when first shown: the first paint needs only the overview.
        "servers": lambda: _screen("servers.screen", "ServersScreen"),
        "tables": lambda: _screen("tables.screen", "TablesScreen"),
        "events": lambda: _screen("events.screen", "EventsScreen"),
        "storage": lambda: _screen("tables.storage", "StorageScreen"),
        "capacity": lambda: _screen("capacity.screen", "CapacityScreen"),
        "rebalance": lambda: _screen("operations.rebalance", "RebalanceScreen"),
        "configs": lambda: _screen("operations.configs", "ConfigScreen"),
        "upgrade": lambda: _screen("operations.upgrade", "UpgradeScreen"),
    }
    DEFAULT_MODE = "overview"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "switch_mode('overview')", "Overview"),
        Binding("s", "switch_mode('servers')", "Servers"),
        Binding("t", "switch_mode('tables')", "Tables"),
        Binding("e", "switch_mode('events')", "Events"),
        Binding("g", "switch_mode('storage')", "Storage", show=False),
        Binding("h", "switch_mode('capacity')", "Capacity (headroom)", show=False),
        Binding("R", "switch_mode('rebalance')", "Rebalance", show=False),
        Binding("C", "switch_mode('configs')", "Config", show=False),
        Binding("U", "switch_mode('upgrade')", "Upgrade", show=False),
        Binding("T", "time_travel", "Time travel"),
        Binding("L", "live", "Back to live", show=False),
        Binding("left_square_bracket", "step_event(-1)", "Previous event", show=False),
        Binding("right_square_bracket", "step_event(1)", "Next event", show=False),
        Binding("ctrl+t", "toggle_theme", "Light/dark theme", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {
        *App.COMMANDS,
        KonsoleCommands,
    }

    def __init__(
        self,
        feed: Feed,
        *,
        profiles: Mapping[str, Callable[[], Feed]] | None = None,
        clock: Callable[[], float] = time.time,
        settings: ConsoleSettings | None = None,
    ) -> None:
        super().__init__()
        self.theme = DARK_THEME
        self.feed = feed
        self.settings = settings or ConsoleSettings()
        #: Other clusters the console can switch to without restarting (name -> feed).
        self.profiles: dict[str, Callable[[], Feed]] = dict(profiles or {})
        self.clock = clock
        #: The feed's latest state, and the moment travelled to (None: live).
        self.live_state: ConsoleState | None = None
        self.travel_state: ConsoleState | None = None
        #: Why the feed stopped (a configuration problem), shown instead of crashing.
        self.feed_error: str | None = None
        #: Operator actions to use instead of the feed profile's (tests put a fake here).
        self.actions_override: ServerActions | None = None
        self.cluster_actions_override: ClusterActions | None = None
        #: The action service of the feed watched (one per feed: its reads are shared).
        self._actions: tuple[object, ActionService] | None = None

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> ConsoleState | None:
        """What the screens show: the recorded moment in time travel, else the live state."""
        return self.travel_state or self.live_state

    @property
    def historic(self) -> bool:
        return self.travel_state is not None

    def on_mount(self) -> None:
        # After the first frame: starting a live feed imports the poller, the client and
        # the history (docs/performance.md, the console's first paint).
        self.call_after_refresh(self._start_feed)

    def _start_feed(self) -> None:
        self.run_worker(self._run_feed(), group="feed", exclusive=True, exit_on_error=False)

    async def _run_feed(self) -> None:
        await self.feed.run(self.publish)

    def publish(self, state: ConsoleState) -> None:
        """The feed's callback: a new live state."""
        self.live_state = state
        if self.travel_state is None:
            self._show(state)

    def _show(self, state: ConsoleState) -> None:
        if not self.is_running:
            return  # quitting: the screens are being taken down while the feed still runs
        screen = self.screen
        if isinstance(screen, ConsoleScreen):
            screen.show(state)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == "feed" and event.state is WorkerState.ERROR:
            self.feed_error = str(worker.error)
            self.notify(f"polling stopped: {worker.error}", severity="error", timeout=30)

    # ------------------------------------------------------------------ time travel

    def travel_to(self, at: float | None) -> None:
        """Show the cluster as recorded at ``at`` (epoch seconds); None returns to live."""
        if at is None:
            self.action_live()
            return
        self._load_moment(at)

    @work(exclusive=True, group="travel", exit_on_error=False)
    async def _load_moment(self, at: float) -> None:
        from konsole.ui.feed import read_history, state_at

        live = self.live_state
        history = live.history if live is not None else None
        rules = self.feed.profile.health if self.feed.profile is not None else None
        name = self.feed.name
        found = await read_history(
            self.feed.history_path,
            lambda reader: (state_at(reader, at, name=name, history=history, rules=rules),),
        )
        if found is None:
            self.notify("no history to travel in", severity="warning")
        elif found[0] is None:
            self.notify("nothing recorded that early", severity="warning")
        else:
            self._arrive(found[0])

    def _arrive(self, state: ConsoleState) -> None:
        self.travel_state = state
        self._show(state)

    def action_live(self) -> None:
        self.travel_state = None
        if self.live_state is not None:
            self._show(self.live_state)

    def action_step_event(self, direction: int) -> None:
        """Travel to the previous (-1) or next (+1) recorded event's time.

        From live, ``[`` starts at the latest event; ``]`` past the last event says so
        (``L`` returns to live). Steps stay in the shown moment's epoch (its cluster).
        """
        travel = self.travel_state
        if travel is None and direction > 0:
            self.notify("already live: [ steps back to the latest event")
            return
        at = travel.as_of if travel is not None and travel.as_of is not None else None
        self._step_event(at, direction)

    @work(exclusive=True, group="travel-step", exit_on_error=False)
    async def _step_event(self, at: float | None, direction: int) -> None:
        from konsole.collect.history.reads import neighbour_event_time

        # Within the shown moment's epoch: stepping never crosses into another cluster.
        rows = await neighbour_event_time(self.feed.history_path, at, direction)
        if rows is None:
            self.notify("no history to travel in", severity="warning")
        elif not rows:
            which = "earlier" if direction < 0 else "later"
            self.notify(f"no {which} event recorded (L: back to live)")
        else:
            self.travel_to(rows[0])

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT_THEME if self.theme == DARK_THEME else DARK_THEME

    def action_time_travel(self) -> None:
        from konsole.ui.modals.time_travel import TimeTravelScreen

        self.push_screen(TimeTravelScreen())

    def action_help(self) -> None:
        from konsole.ui.modals.help import HelpScreen

        self.push_screen(HelpScreen())

    # ------------------------------------------------------------------ navigation

    def open_server(self, server_id: int, *, coordinator: str | None = None) -> None:
        from konsole.ui.screens.servers.detail import ServerDetailScreen

        self.push_screen(ServerDetailScreen(server_id, coordinator=coordinator))

    def open_table(self, table_path: str, *, tab: str | None = None) -> None:
        from konsole.ui.screens.tables.detail import TableDetailScreen

        self.push_screen(TableDetailScreen(table_path, tab=tab))

    def open_preview(self, table_path: str, partition: str | None = None) -> None:
        from konsole.ui.screens.tables.preview import PreviewScreen

        self.push_screen(PreviewScreen(table_path, partition))

    def server_actions(self) -> ServerActions:
        from konsole.ui.actions import LiveServerActions

        if self.actions_override is not None:
            return self.actions_override
        return LiveServerActions(self.action_service())

    def cluster_actions(self) -> ClusterActions:
        if self.cluster_actions_override is not None:
            return self.cluster_actions_override
        return self.action_service()

    def action_service(self) -> ActionService:
        """The one action service of the feed watched (a new one after a switch)."""
        from konsole.collect.actions.service import ActionService

        feed = self.feed
        if self._actions is None or self._actions[0] is not feed:
            self._actions = (feed, ActionService(feed.profile, feed.history_path))
        return self._actions[1]

    # ------------------------------------------------------------------ profiles

    def switch_profile(self, name: str) -> None:
        """Watch another cluster: a new feed, the old one cancelled, time travel left."""
        factory = self.profiles.get(name)
        if factory is None:
            self.notify(f"no profile {name!r}", severity="error")
            return
        self.feed = factory()
        self.live_state = self.travel_state = None
        self.feed_error = None
        self._start_feed()


if TYPE_CHECKING:
    # The screens' seam: mypy fails here when the app stops offering what they may ask.
    _implements: type[ConsoleServices] = KonsoleApp
