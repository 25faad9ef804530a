"""`konsole watch`: a cluster's events and health as they happen.

``watch`` polls one cluster (see :mod:`konsole.collect.cluster.poller`) and prints one line
per event on
stdout (JSON lines with ``--format jsonl``, each event in the one shape of
:func:`konsole.render.events.event_document`) and the health whenever its status changes;
diagnostics (failed polls, the backoff) go to stderr. Ctrl-C and SIGTERM stop it cleanly
between or during polls. ``watch`` records nothing: after a warning or critical event it
prints the command that writes its report only when a recorder (``konsole record``, the
console, ``serve``) is writing the cluster's history file. Exit codes (docs/cli.md): 0 after
a clean stop, 2 when ``--count`` polls all failed, 3 for bad arguments or configuration (a
profile error, a missing password variable, conflicting options), 69 for ``--local``
without a running local cluster.

Heavy imports happen inside the command, so the rest of the CLI starts as fast as before.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from konsole.cli.exits import fail
from konsole.cli.lines import LINE_FORMATS, event_line, health_line
from konsole.cli.options import (
    ConnectionArgs,
    cluster_options,
    count_option,
    interval_option,
)
from konsole.cli.signals import run_until_signalled
from konsole.collect.cluster.connect import build_poller
from konsole.collect.history.server_memory import remember
from konsole.collect.profiles import Profile, ProfileError
from konsole.errors import ExitCode

if TYPE_CHECKING:
    from konsole.collect.cluster.poller import Poller
    from konsole.model.health import Health

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
    verbose: bool = False,
) -> bool:
    """Print events and health changes until ``stop`` is set (or ``max_polls``); after a
    warning or critical event, the command writing its report from ``history`` when a
    recorder writes that file; ``verbose``: a line per poll on ``err``. Returns False when
    polls were taken and all failed."""
    from konsole.collect.history.files import lock_holder
    from konsole.collect.recording import Recording
    from konsole.model.events import EventConfig

    # Stamped and judged as the session does (nothing is written: no recorder).
    recording = Recording(
        None, EventConfig(rules=profile.health), say=lambda s: err(f"konsole watch: {s}")
    )
    shown: tuple[object, ...] | None = None
    #: The unread items last reported: a cluster with a dead server would otherwise repeat
    #: the same line every poll (seen live), burying the diagnostics that change.
    unread: tuple[tuple[str, str], ...] = ()
    polls = failed = 0
    async for snapshot in poller.snapshots(stop):
        polls, failed = polls + 1, failed + (not snapshot.ok)
        judged = recording.take(snapshot)
        events, snapshot = judged.events, judged.snapshot
        if verbose:
            err(f"konsole watch: poll {snapshot.seq} taken ({'ok' if snapshot.ok else 'failed'})")
        for event in events:
            out(event_line(event, fmt))
        severe = [e for e in events if e.severity.value in ("warning", "critical")]
        if severe and history is not None and fmt == "text" and lock_holder(history):
            from konsole.report import report_command

            err(f"  report: {report_command(severe[-1].time, history)}")
        health = judged.health
        # A new line when the status changes, or a finding that raises it comes or goes (a
        # server unreachable, then gone from metadata: both YELLOW, both said).
        if _shown(health) != shown:
            shown = _shown(health)
            out(health_line(health, fmt, snapshot))
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
            break
    return failed < polls or polls == 0


def _shown(health: Health) -> tuple[object, ...]:
    """What a health line says that matters: the status and the findings that raise it."""
    from fluss_proto.model import HealthStatus

    raising = sorted(
        (f.rule, f.subject) for f in health.findings if f.status is not HealthStatus.GREEN
    )
    return (health.status, *raising)


async def _watch(
    profile: Profile,
    interval: float | None,
    fmt: str,
    max_polls: int | None,
    history: Path | None,
    verbose: bool,
) -> bool:
    """Whether any poll reached the cluster (or it was stopped before ``max_polls``)."""
    poller, release = remember(build_poller(profile, interval), history)
    reached: list[bool] = []

    async def body(stop: asyncio.Event) -> None:
        reached.append(
            await watch_loop(
                poller,
                profile,
                fmt,
                stop=stop,
                max_polls=max_polls,
                history=history,
                verbose=verbose,
            )
        )

    try:
        await run_until_signalled(body)
    finally:
        await release()
    return all(reached)


@click.command("watch")
@cluster_options(polls=True)
@interval_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(LINE_FORMATS),
    default="text",
    show_default=True,
    help="text: a line per event for a person; jsonl: a JSON object per line "
    "(the one shape of an event, as history export writes it).",
)
@count_option
@click.option("--verbose", is_flag=True, help="Also print a line per poll (on stderr).")
def watch(
    cluster: ConnectionArgs,
    interval: float | None,
    fmt: str,
    max_polls: int | None,
    verbose: bool,
) -> None:
    """Poll a cluster and print its events and health changes as they happen."""
    try:
        target = cluster.target()
        reached = asyncio.run(
            _watch(target.profile, interval, fmt, max_polls, target.history, verbose)
        )
    except ProfileError as exc:
        fail(exc, exc.exit_code)
    if max_polls is not None and not reached:
        fail(f"none of the {max_polls} poll(s) reached the cluster", ExitCode.CRITICAL)
    sys.exit(ExitCode.OK)
