"""`konsole record`: the headless recorder.

``record`` polls one cluster and writes every poll and event into the history file (the
cluster's own by the one rule of :mod:`konsole.collect.cluster.connect`, or ``--history``): one line
per event on stdout, notices (not recording, recording again) on stderr; SIGINT and SIGTERM
stop it cleanly after the poll in hand. Exit codes (docs/cli.md): 0 after a clean stop, 2
when ``--count`` polls all failed, 3 for bad arguments or configuration, 65 for a history
file that is not konsole's or is a newer one's, 69 for ``--local`` without a running local
cluster, 74 when the history file cannot be made, 75 when another recorder holds it.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import click

from konsole.cli.exits import fail, history_failure
from konsole.cli.lines import event_line
from konsole.cli.options import (
    DURATION,
    ConnectionArgs,
    cluster_options,
    count_option,
    interval_option,
    when,
)
from konsole.cli.signals import run_until_signalled
from konsole.collect.cluster.connect import build_poller
from konsole.collect.history.server_memory import remember
from konsole.collect.profiles import Profile, ProfileError
from konsole.errors import ExitCode

__all__ = ["record"]


@click.command("record")
@cluster_options(history=True, polls=True)
@interval_option
@click.option(
    "--keep-full",
    type=DURATION,
    default="24h",
    show_default=True,
    help="Keep every poll this long.",
)
@click.option(
    "--keep-minute",
    type=DURATION,
    default="7d",
    show_default=True,
    help="Then one poll per minute this long.",
)
@click.option(
    "--keep-hour",
    type=DURATION,
    default="90d",
    show_default=True,
    help="Then one poll per hour this long.",
)
@click.option(
    "--keep-events",
    type=DURATION,
    default="90d",
    show_default=True,
    help="Keep events and notes this long.",
)
@count_option
@click.option(
    "--verbose",
    is_flag=True,
    help="Also print a line per poll: recorded, or kept in memory while it cannot be.",
)
def record(
    cluster: ConnectionArgs,
    interval: float | None,
    keep_full: float,
    keep_minute: float,
    keep_hour: float,
    keep_events: float,
    max_polls: int | None,
    verbose: bool,
) -> None:
    """Poll a cluster and record every poll and event into its history file."""
    from konsole.collect.history.files import HistoryError, RetentionPolicy

    try:
        chosen = cluster.resolve()
        events_ms = round(keep_events * 1000)
        policy = RetentionPolicy(
            full_ms=round(keep_full * 1000),
            minute_ms=round(keep_minute * 1000),
            hour_ms=round(keep_hour * 1000),
            events_ms=events_ms,
            notes_ms=events_ms,
        )
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    except ValueError as exc:  # the retention bands out of order
        fail(exc, ExitCode.USAGE)
    path = cluster.history_file(chosen)
    try:
        reached = asyncio.run(_record(chosen, path, policy, interval, max_polls, verbose))
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    except HistoryError as exc:
        history_failure(exc)
    if max_polls is not None and not reached:
        fail(f"none of the {max_polls} poll(s) reached the cluster", ExitCode.CRITICAL)
    sys.exit(ExitCode.OK)


def cluster_label(profile: Profile) -> str:
    """How a line names the cluster: the profile's name, or its bootstrap servers when it was
    given by address (never an option's name)."""
    servers = ",".join(profile.bootstrap)
    if profile.source in ("profile", "local"):
        return f"{profile.name} ({servers})"
    return servers


async def _record(
    profile: Profile,
    path: Path,
    policy: Any,
    interval: float | None,
    max_polls: int | None,
    verbose: bool,
) -> bool:
    """Whether any poll reached the cluster (True when a signal stopped the run first)."""
    from konsole.collect.history.recorder import Recorder
    from konsole.collect.recording import Recording
    from konsole.model.events import EventConfig

    def say(text: str) -> None:
        click.echo(f"{when(time.time() * 1000)} konsole record: {text}", err=True)

    #: The newest poll written so far: a poll after it is kept in memory (said with --verbose).
    written = [0]

    def committed(snapshot: Any, poll_id: int) -> None:
        written[0] = max(written[0], snapshot.seq)
        if verbose:
            state = "ok" if snapshot.ok else f"failed: {snapshot.error}"
            click.echo(
                f"{when(snapshot.taken_at * 1000)} poll {snapshot.seq} recorded as {poll_id} "
                f"({state})"
            )

    recorder = Recorder(
        path,
        policy=policy,
        say=say,
        on_event=lambda e: click.echo(event_line(e, "text")),
        on_commit=committed,
        run_id=profile.run_id,
        logs=profile.logs,
    )
    recorder.open()  # refusals raise here, before any poll
    # Each poll stamped, judged (its events printed) and handed to the recorder.
    recording = Recording(recorder, EventConfig(rules=profile.health), say=say)
    say(f"recording {cluster_label(profile)} into {path}")
    poller, release = remember(build_poller(profile, interval), path)
    reached: list[bool] = []

    async def run(stop: asyncio.Event) -> None:
        polls = failed = 0
        async for snapshot in poller.snapshots(stop):
            judged = recording.judged(snapshot)
            for event in judged.events:
                click.echo(event_line(event, "text"))
            recorder.record(judged)
            if verbose and written[0] < snapshot.seq:
                click.echo(
                    f"{when(snapshot.taken_at * 1000)} poll {snapshot.seq} kept in memory"
                    " (not recorded yet)"
                )
            polls, failed = polls + 1, failed + (not snapshot.ok)
            if max_polls is not None and snapshot.seq >= max_polls:
                break
        reached.append(failed < polls or polls == 0)

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
    return all(reached)
