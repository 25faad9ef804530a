"""What a screen may ask of the app that shows it: :class:`ConsoleServices`.

Screens, modals and the command palette type against this protocol, never against the app
class, so no module under ``konsole.ui`` but ``app`` imports ``konsole.ui.app`` (not even for
type checking): the app is the one place that knows every screen, and a screen knows only
this seam. :class:`~konsole.ui.app.KonsoleApp` implements it (mypy checks that it does).

What goes through the seam:

- the state shown (live, or the recorded moment of time travel) and the live one;
- the feed: the cluster's name, profile and local processes, the history file, and the
  questions asked of the cluster (:meth:`~konsole.ui.feed.Feed.preview`,
  :meth:`~konsole.ui.feed.Feed.kv_snapshots`), so no screen opens a client;
- navigation (open a server, a table, a preview), time travel, profiles, the settings;
- the operator actions on a server (:class:`~konsole.ui.actions.ServerActions`) and on the
  cluster (:class:`~konsole.ui.cluster_actions.ClusterActions`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

# Types only: importing the seam (every screen does) must not import the feed, the actions
# and the model behind them before the first frame.
if TYPE_CHECKING:
    from konsole.ui.actions import ServerActions
    from konsole.ui.cluster_actions import ClusterActions
    from konsole.ui.feed import Feed
    from konsole.ui.state import ConsoleState

__all__ = ["ConsoleServices", "ConsoleSettings", "services"]


@dataclass(frozen=True, slots=True)
class ConsoleSettings:
    """How the console behaves, apart from what it shows (tests turn animation off)."""

    #: Text inputs blink their cursor (off for screen snapshots: a blink is a timing).
    cursor_blink: bool = True


class ConsoleServices(Protocol):
    @property
    def state(self) -> ConsoleState | None:
        """What the screens show: the moment travelled to, else the live state."""
        ...

    @property
    def live_state(self) -> ConsoleState | None:
        """The feed's latest state (also while travelling)."""
        ...

    @property
    def feed(self) -> Feed: ...

    @property
    def profiles(self) -> Mapping[str, Callable[[], Feed]]:
        """Other clusters the console can switch to (name -> a new feed)."""
        ...

    @property
    def settings(self) -> ConsoleSettings: ...

    def clock(self) -> float:
        """The wall clock (injected: tests fix it)."""
        ...

    # ------------------------------------------------------------------ navigation

    def open_server(self, server_id: int, *, coordinator: str | None = None) -> None: ...

    def open_table(self, table_path: str, *, tab: str | None = None) -> None: ...

    def open_preview(self, table_path: str, partition: str | None = None) -> None: ...

    def switch_mode(self, mode: str) -> object: ...

    def switch_profile(self, name: str) -> None: ...

    def server_actions(self) -> ServerActions:
        """Operator actions on a tablet server (drain, tag, untag) for this cluster."""
        ...

    def cluster_actions(self) -> ClusterActions:
        """Rebalance, configs, partitions and table properties for this cluster."""
        ...

    # ------------------------------------------------------------------ time travel

    def travel_to(self, at: float | None) -> None:
        """Show the moment ``at`` (epoch seconds) as recorded; None returns to live."""
        ...

    def action_live(self) -> None: ...

    def action_step_event(self, direction: int) -> None: ...

    def action_time_travel(self) -> None: ...

    # ------------------------------------------------------------------ the app

    def action_help(self) -> None: ...

    def action_toggle_theme(self) -> None: ...

    def exit(self) -> None: ...


def services(app: object) -> ConsoleServices:
    """The app a screen is shown by, as the services it offers.

    Every konsole screen runs in a :class:`~konsole.ui.app.KonsoleApp` (which mypy checks
    against the protocol); the cast is what keeps screens from importing the app.
    """
    return cast(ConsoleServices, app)
