"""`konsole watch`: a cluster's events and health as they happen.

``watch`` polls one cluster (see :mod:`konsole.collect.poller`) and prints one line per event on
stdout (JSON lines with ``--format json``) and the health whenever its status changes;
diagnostics (failed polls, the backoff) go to stderr. Ctrl-C and SIGTERM stop it cleanly
between or during polls. Exit codes: 0 after a clean stop, 3 for bad configuration
(a profile error, a missing password variable, conflicting options, no local cluster).

Heavy imports happen inside the command, so the rest of the CLI starts as fast as before.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from konsole.cli.lines import event_line, health_line
from konsole.cli.options import (
    ConfigCommand,
    ConnectionArgs,
    cluster_options,
    count_option,
    fail,
    interval_option,
)
from konsole.cli.signals import run_until_signalled
from konsole.collect.connect import build_poller
from konsole.collect.profiles import Profile, ProfileError
from konsole.errors import ExitCode

if TYPE_CHECKING:
    from konsole.collect.poller import Poller

__all__ = ["watch", "watch_loop"]


async def watch_loop(
    poller: Poller,
    profile: Profile,
    fmt: str,
    *,
    stop: asyncio.Event,
    max_polls: int | None = None,
    out: Callable[[str], None] = click.echo,
    err: Callable[[str], None] = lambda s: click.echo(s, err=True),
    history: Path | None = None,
) -> None:
    """Print events and health changes until ``stop`` is set (or ``max_polls``); after a
    warning or critical event, the command writing its report from ``history``."""
    from konsole.model.events import EventConfig, EventState, advance

    config = EventConfig(rules=profile.health)
    state = EventState()
    shown = None
    #: The unread items last reported: a cluster with a dead server would otherwise repeat
    #: the same line every poll (seen live), burying the diagnostics that change.
    unread: tuple[tuple[str, str], ...] = ()
    async for snapshot in poller.snapshots(stop):
        events, state = advance(state, snapshot, config=config)
        for event in events:
            out(event_line(event, fmt))
        severe = [e for e in events if e.severity.value in ("warning", "critical")]
        if severe and history is not None and fmt == "text":
            from konsole.report import report_command

            err(f"  report: {report_command(severe[-1].time, history)}")
        health = state.health
        if health is not None and health.status != shown:
            shown = health.status
            out(health_line(health, fmt))
        if not snapshot.ok:
            err(
                f"konsole watch: poll {snapshot.seq} failed "
                f"({snapshot.consecutive_failures} in a row): {snapshot.error}; "
                f"next poll in {poller.next_delay():g}s"
            )
        else:
            now = tuple(sorted({(e.scope, e.subject) for e in snapshot.errors}))
            if now != unread and now:
                first = snapshot.errors[0]
                err(
                    f"konsole watch: poll {snapshot.seq}: {len(snapshot.errors)} item(s) not "
                    f"read (first: {first.subject}: {first.message})"
                )
            elif now != unread:
                err(f"konsole watch: poll {snapshot.seq}: every item read again")
            unread = now
        if max_polls is not None and snapshot.seq >= max_polls:
            return


async def _watch(
    profile: Profile, interval: float | None, fmt: str, max_polls: int | None, history: Path
) -> None:
    poller, release = build_poller(profile, interval)
    try:
        await run_until_signalled(
            lambda stop: watch_loop(
                poller, profile, fmt, stop=stop, max_polls=max_polls, history=history
            )
        )
    finally:
        await release()


@click.command("watch", cls=ConfigCommand)
@cluster_options(polls=True)
@interval_option()
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@count_option
def watch(cluster: ConnectionArgs, interval: float | None, fmt: str, max_polls: int | None) -> None:
    """Poll a cluster and print its events and health changes as they happen."""
    try:
        profile = cluster.resolve()
        asyncio.run(_watch(profile, interval, fmt, max_polls, cluster.history_file(profile)))
    except ProfileError as exc:
        fail("watch", str(exc), ExitCode.UNKNOWN)
    sys.exit(ExitCode.OK)
