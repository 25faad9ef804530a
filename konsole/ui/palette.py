"""The command palette's konsole commands (ctrl+p): every screen and action, and profiles."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from konsole.model import subjects
from konsole.ui.services import ConsoleServices, services

__all__ = ["KonsoleCommands", "konsole_commands"]

Command = tuple[str, Callable[[], object], str]


def konsole_commands(app: ConsoleServices) -> list[Command]:
    """(name, callback, help) for every konsole command, profiles included."""
    commands: list[Command] = [
        (f"Go to {mode}", partial(app.switch_mode, mode), f"show the {mode} screen")
        for mode in (
            "overview",
            "servers",
            "tables",
            "events",
            "storage",
            "capacity",
            "rebalance",
            "configs",
            "upgrade",
        )
    ]
    commands += [
        ("Time travel…", app.action_time_travel, "pick a past moment or a recorded event"),
        ("Back to live", app.action_live, "leave time travel"),
        ("Previous event", partial(app.action_step_event, -1), "travel to the event before"),
        ("Next event", partial(app.action_step_event, 1), "travel to the event after"),
        ("Help", app.action_help, "every key binding"),
        ("Toggle light/dark theme", app.action_toggle_theme, "textual-light / textual-dark"),
    ]
    commands += [
        (f"Switch profile {name}", partial(app.switch_profile, name), f"watch cluster {name}")
        for name in sorted(app.profiles)
    ]
    # Jump straight to what the shown state knows about (k9s-style ":" navigation).
    snap = app.state.last_ok if app.state is not None else None
    if snap is not None and snap.view is not None:
        commands += [
            (
                f"Open {subjects.tablet_server(s.node_id)}",
                partial(app.open_server, s.node_id),
                f"{s.address}: metrics, buckets, log",
            )
            for s in snap.view.tablet_servers
        ]
        commands += [
            (f"Open table {t.path}", partial(app.open_table, str(t.path)), "table detail")
            for t in snap.view.tables
        ]
    commands.append(("Quit", app.exit, "close the console"))
    return commands


class KonsoleCommands(Provider):
    def _commands(self) -> list[Command]:
        # The screen the palette was opened on may add its own (the Preview's lookup...).
        own = getattr(self.screen, "palette_commands", None)
        return (list(own()) if callable(own) else []) + konsole_commands(services(self.app))

    async def discover(self) -> Hits:
        for name, callback, help_text in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> AsyncIterator[Hit]:
        matcher = self.matcher(query)
        for name, callback, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
