"""`konsole ui` (and `konsole` with no sub-command): the Textual operator console.

The console polls the cluster the options name (``--profile``, ``--bootstrap`` or
``FLUSS_BOOTSTRAP``, ``--local``) and records into that profile's history file (the same
one ``konsole record`` writes; ``--history PATH`` for another). Exit codes: 0 after quitting,
3 for bad configuration (as ``watch``).

Textual is imported inside the command, so the rest of the CLI starts as fast as before.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from konsole.cli.watch import EXIT_CONFIG, connection_options
from konsole.collect.connect import resolve
from konsole.collect.profiles import Profile, ProfileError, default_config_path, load_profiles

if TYPE_CHECKING:
    from konsole.localcluster import ClusterDescription
    from konsole.ui.feed import Feed

__all__ = ["run_console", "ui", "ui_options"]


def ui_options(f: Callable[..., None]) -> Callable[..., None]:
    f = click.option(
        "--no-history", is_flag=True, help="Do not record (live only; time travel off)."
    )(f)
    f = click.option(
        "--history",
        "history_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="History file (default: the profile's, in the user data dir).",
    )(f)
    f = click.option(
        "--interval",
        type=click.FloatRange(0.5, 3600),
        default=None,
        help="Seconds between polls (default: the profile's).",
    )(f)
    return connection_options(f)


@click.command("ui")
@ui_options
def ui(**options: Any) -> None:
    """Open the operator console (the options are run_console's parameters)."""
    run_console(**options)


def run_console(
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    run_dir: Path | None,
    config_path: Path | None,
    interval: float | None = None,
    history_path: Path | None = None,
    no_history: bool = False,
) -> None:
    try:
        chosen = resolve(profile, bootstrap, local, run_dir, config_path)
        chosen.sasl()  # a missing password variable is bad configuration, said before opening
        description = _local_description(run_dir) if local else None
        others = load_profiles(config_path or default_config_path())
    except ProfileError as exc:
        click.echo(f"konsole ui: {exc}", err=True)
        sys.exit(EXIT_CONFIG)
    from konsole.ui.app import KonsoleApp

    feed = live_feed(chosen, history_path, no_history, interval, description)
    factories: dict[str, Callable[[], Feed]] = {
        name: _factory(p, no_history, interval) for name, p in others.items()
    }
    factories.setdefault(chosen.name, lambda: feed)
    KonsoleApp(feed, profiles=factories).run()
    sys.exit(0)


def _factory(profile: Profile, no_history: bool, interval: float | None) -> Callable[[], Feed]:
    return lambda: live_feed(profile, None, no_history, interval, None)


def live_feed(
    profile: Profile,
    history_path: Path | None,
    no_history: bool,
    interval: float | None,
    local: ClusterDescription | None,
) -> Feed:
    from konsole.collect.connect import history_path as profile_history
    from konsole.ui.feed import LiveFeed

    path = None if no_history else profile_history(profile, history_path)
    return LiveFeed(profile, path, local=local, interval=interval)


def _local_description(run_dir: Path | None) -> ClusterDescription | None:
    from konsole.localcluster import ClusterError, LocalCluster

    try:
        return LocalCluster(run_dir).status()
    except ClusterError:
        return None
