"""`konsole record`: the headless recorder.

``record`` polls one cluster and writes every poll and event into the history file (the
cluster's own by the one rule of :mod:`konsole.collect.connect`, or ``--history``): one line
per event on stdout, notices (not recording, recording again) on stderr; SIGINT and SIGTERM
stop it cleanly after the poll in hand. Exit codes: 0 after a clean stop, 1 when the history
is refused (another recorder holds it, a newer schema, a corrupt or foreign file), 3 for bad
configuration.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import click

from konsole.cli.lines import event_line
from konsole.cli.options import (
    ConfigCommand,
    ConnectionArgs,
    cluster_options,
    count_option,
    fail,
    interval_option,
    parse_duration,
    when,
)
from konsole.cli.signals import run_until_signalled
from konsole.collect.connect import build_poller
from konsole.collect.profiles import Profile, ProfileError
from konsole.errors import ExitCode

__all__ = ["record"]


@click.command("record", cls=ConfigCommand)
@cluster_options(history=True, polls=True)
@interval_option()
@click.option("--keep-full", default="24h", show_default=True, help="Keep every poll this long.")
@click.option(
    "--keep-minute", default="7d", show_default=True, help="Then one per minute this long."
)
@click.option("--keep-hour", default="90d", show_default=True, help="Then one per hour this long.")
@click.option(
    "--keep-events", default="90d", show_default=True, help="Keep events and notes this long."
)
@count_option
@click.option("--verbose", is_flag=True, help="Also print a line per recorded poll.")
def record(
    cluster: ConnectionArgs,
    interval: float | None,
    keep_full: str,
    keep_minute: str,
    keep_hour: str,
    keep_events: str,
    max_polls: int | None,
    verbose: bool,
) -> None:
    """Poll a cluster and record every poll and event into its history file."""
    from store import HistoryError, RetentionPolicy

    try:
        chosen = cluster.resolve()
        events_ms = round(parse_duration(keep_events) * 1000)
        policy = RetentionPolicy(
            full_ms=round(parse_duration(keep_full) * 1000),
            minute_ms=round(parse_duration(keep_minute) * 1000),
            hour_ms=round(parse_duration(keep_hour) * 1000),
            events_ms=events_ms,
            notes_ms=events_ms,
        )
    except (ProfileError, click.BadParameter, ValueError) as exc:
        fail("record", str(exc), ExitCode.UNKNOWN)
    path = cluster.history_file(chosen)
    try:
        asyncio.run(_record(chosen, path, policy, interval, max_polls, verbose))
    except ProfileError as exc:
        fail("record", str(exc), ExitCode.UNKNOWN)
    except HistoryError as exc:
        fail("record", str(exc), ExitCode.WARNING)  # refused: 1 (module docstring)
    sys.exit(ExitCode.OK)


async def _record(
    profile: Profile,
    path: Path,
    policy: Any,
    interval: float | None,
    max_polls: int | None,
    verbose: bool,
) -> None:
    from konsole.collect.recorder import Recorder
    from konsole.model.events import EventConfig

    def say(text: str) -> None:
        click.echo(f"{when(time.time() * 1000)} konsole record: {text}", err=True)

    def committed(snapshot: Any, poll_id: int) -> None:
        if verbose:
            state = "ok" if snapshot.ok else f"failed: {snapshot.error}"
            click.echo(
                f"{when(snapshot.taken_at * 1000)} poll {snapshot.seq} recorded as {poll_id} "
                f"({state})"
            )

    recorder = Recorder(
        path,
        policy=policy,
        config=EventConfig(rules=profile.health),
        say=say,
        on_event=lambda e: click.echo(event_line(e, "text")),
        on_commit=committed,
        run_id=profile.run_id,
        logs=profile.logs,
    )
    recorder.open()  # refusals raise here, before any poll
    say(f"recording {profile.name} ({','.join(profile.bootstrap)}) into {path}")
    poller, release = build_poller(profile, interval)

    async def run(stop: asyncio.Event) -> None:
        async for snapshot in poller.snapshots(stop):
            recorder.record(snapshot)
            if max_polls is not None and snapshot.seq >= max_polls:
                return

    try:
        # A signal in the middle of a poll: that poll is not recorded.
        await run_until_signalled(run)
    finally:
        await release()
        recorder.close()  # writes the polls kept in memory if it can
        status = recorder.status
        say(
            f"stopped: {status.polls_taken} poll(s) taken, {status.polls_recorded} recorded, "
            f"{status.polls_missed} not"
        )
