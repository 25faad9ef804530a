"""Opening the Textual console: for `konsole ui`, `konsole` with no command, and `demo`.

The console polls the cluster the shared options name and records into its history file
(:meth:`konsole.cli.options.ConnectionArgs.history_file`: the one ``konsole record`` and
``check --record`` write), unless ``--no-history``. The other profiles of the config file are
offered in the console's profile switch, each with its own history file. Exit codes: 0 after
quitting, 3 for bad configuration (as ``watch``), 69 without a terminal (stdin and stdout
must both be one: the console would otherwise write its screen into a pipe and wait for
keys that never come) or with ``--local`` and no local cluster.

Colour: Textual honours ``NO_COLOR`` (a monochrome screen); nothing else of the command
line writes colour or escape sequences.

Textual is imported only when the console opens, so the rest of the CLI starts fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from konsole.cli.exits import fail
from konsole.cli.options import ConnectionArgs
from konsole.errors import ExitCode, ProfileError

if TYPE_CHECKING:
    from konsole.collect.profiles import Profile
    from konsole.localcluster import ClusterDescription
    from konsole.ui.feed import Feed

__all__ = ["has_terminal", "live_feed", "require_terminal", "run_console"]


def has_terminal() -> bool:
    """Whether stdin and stdout are both a terminal (the console needs both)."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


def require_terminal(command: str) -> None:
    """Exit 69 with one line unless :func:`has_terminal`."""
    if not has_terminal():
        fail(
            f"{command} opens the console, which needs a terminal (stdin and stdout are "
            "not both one); for a script use `konsole watch`, `konsole check` or `konsole "
            "record`",
            ExitCode.UNAVAILABLE,
        )


def run_console(cluster: ConnectionArgs, interval: float | None = None) -> None:
    """Open the console on the cluster ``cluster`` names, polling every ``interval`` seconds
    (None: the profile's); exits the process when it closes."""
    from konsole.collect.profiles import default_config_path, load_profiles

    try:
        target = cluster.target()
        chosen = target.profile
        chosen.sasl()  # a missing password variable is bad configuration, said before opening
        description = _local_description(cluster.run_dir) if cluster.local else None
        others = load_profiles(cluster.config_path or default_config_path())
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    require_terminal("konsole ui")  # after the configuration: bad input is said first
    from konsole.ui.app import KonsoleApp

    feed = live_feed(chosen, target.history, interval, description)
    factories: dict[str, Callable[[], Feed]] = {
        name: _factory(p, cluster.no_history, interval) for name, p in others.items()
    }
    factories.setdefault(chosen.name, lambda: feed)
    KonsoleApp(feed, profiles=factories).run()
    sys.exit(ExitCode.OK)


def _factory(profile: Profile, no_history: bool, interval: float | None) -> Callable[[], Feed]:
    from konsole.collect.cluster.connect import history_path

    path = None if no_history else history_path(profile)
    return lambda: live_feed(profile, path, interval, None)


def live_feed(
    profile: Profile,
    path: Path | None,
    interval: float | None,
    local: ClusterDescription | None,
) -> Feed:
    """The console's live feed of ``profile``, recording into ``path`` (None: no history)."""
    from konsole.ui.feed import LiveFeed

    return LiveFeed(profile, path, local=local, interval=interval)


def _local_description(run_dir: Path | None) -> ClusterDescription | None:
    from konsole.localcluster import ClusterError, LocalCluster

    try:
        return LocalCluster(run_dir).status()
    except ClusterError:
        return None
