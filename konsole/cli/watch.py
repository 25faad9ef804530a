"""`konsole watch` (events and health as they happen) and `konsole profiles`.

``watch`` polls one cluster (see :mod:`konsole.collect.poller`) and prints one line per event on
stdout (JSON lines with ``--format json``) and the health whenever its status changes;
diagnostics (failed polls, the backoff) go to stderr. Ctrl-C and SIGTERM stop it cleanly
between or during polls. Exit codes: 0 after a clean stop, 3 for bad configuration
(a profile error, a missing password variable, conflicting options, no local cluster).

Heavy imports happen inside the commands, so the rest of the CLI starts as fast as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click

from konsole.collect.connect import build_poller, resolve
from konsole.collect.profiles import Profile, ProfileError, default_config_path, load_profiles
from konsole.model.timefmt import iso_text

if TYPE_CHECKING:
    from konsole.collect.poller import Poller
    from konsole.model.events import Event
    from konsole.model.health import Health

EXIT_OK: Final = 0
EXIT_CONFIG: Final = 3


class _ConfigCommand(click.Command):
    """Usage errors (unknown option, bad value) are bad configuration: exit code 3."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            exc.exit_code = EXIT_CONFIG  # type: ignore[misc]  # click documents this override
            raise


F = TypeVar("F", bound=Callable[..., Any])


def _config_option(f: F) -> F:
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Profiles file (default: konsole/config.toml in the user config dir; "
        "env KONSOLE_CONFIG).",
    )(f)


def connection_options(f: F) -> F:
    """--profile / --bootstrap / --local (+ --run-dir, --config) for any command."""
    f = _config_option(f)
    f = click.option(
        "--run-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        envvar="KONSOLE_RUN_DIR",
        help="The local cluster's directory (with --local).",
    )(f)
    f = click.option("--local", is_flag=True, help="The running local cluster.")(f)
    f = click.option(
        "--bootstrap",
        default=None,
        help="Bootstrap servers, comma-separated (else env FLUSS_BOOTSTRAP, else localhost:9123).",
    )(f)
    return click.option("--profile", default=None, help="A [profiles.NAME] of the config file.")(f)


# =========================================================================== watch


def event_line(event: Event, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"type": "event", **event.as_dict()}, sort_keys=False, default=str)
    more = f" [{event.count}: {', '.join(event.samples)}]" if event.count > 1 else ""
    return (
        f"{iso_text(event.time)} {event.severity.value.upper():<8} {event.kind.value:<23} "
        f"{event.subject.name}: {event.message}{more}"
    )


def health_line(health: Health, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"type": "health", **health.as_dict()}, default=str)
    when = iso_text(health.taken_at) if health.taken_at is not None else "-"
    reasons = "; ".join(health.reasons) or "no findings"
    return f"{when} HEALTH   {health.status.name} ({health.source}): {reasons}"


async def watch_loop(
    poller: Poller,
    profile: Profile,
    fmt: str,
    *,
    stop: asyncio.Event,
    max_polls: int | None = None,
    out: Callable[[str], None] = click.echo,
    err: Callable[[str], None] = lambda s: click.echo(s, err=True),
) -> None:
    """Print events and health changes until ``stop`` is set (or ``max_polls``)."""
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


async def run_until_signalled(
    body: Callable[[asyncio.Event], Coroutine[Any, Any, None]],
) -> signal.Signals | None:
    """Run ``body(stop)`` until it returns or SIGINT / SIGTERM sets ``stop``.

    A signal in the middle of a poll cancels the body instead of waiting for the poll (a
    poll bounded by its timeout can still take seconds). The handlers are removed after.
    Returns the signal that stopped the body (None when it returned by itself).
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    received: list[signal.Signals] = []

    def stopped(sig: signal.Signals) -> None:
        received.append(sig)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stopped, sig)
            handled.append(sig)
    task = asyncio.create_task(body(stop))
    stopper = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        stopper.cancel()
        for sig in handled:
            loop.remove_signal_handler(sig)
    return received[0] if received else None


async def _watch(profile: Profile, interval: float | None, fmt: str, max_polls: int | None) -> None:
    poller, release = build_poller(profile, interval)
    try:
        await run_until_signalled(
            lambda stop: watch_loop(poller, profile, fmt, stop=stop, max_polls=max_polls)
        )
    finally:
        await release()


@click.command("watch", cls=_ConfigCommand)
@connection_options
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=None,
    help="Seconds between polls (default: the profile's, 5).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--count",
    "max_polls",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many polls.",
)
def watch(
    profile: str | None,
    bootstrap: str | None,
    local: bool,
    run_dir: Path | None,
    config_path: Path | None,
    interval: float | None,
    fmt: str,
    max_polls: int | None,
) -> None:
    """Poll a cluster and print its events and health changes as they happen."""
    try:
        chosen = resolve(profile, bootstrap, local, run_dir, config_path)
        asyncio.run(_watch(chosen, interval, fmt, max_polls))
    except ProfileError as exc:
        click.echo(f"konsole watch: {exc}", err=True)
        sys.exit(EXIT_CONFIG)
    sys.exit(EXIT_OK)


# =========================================================================== profiles


@click.command("profiles", cls=_ConfigCommand)
@_config_option
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def profiles(config_path: Path | None, fmt: str) -> None:
    """List the connection profiles (never their passwords)."""
    path = config_path or default_config_path()
    try:
        found = load_profiles(path)
    except ProfileError as exc:
        click.echo(f"konsole profiles: {exc}", err=True)
        sys.exit(EXIT_CONFIG)
    if fmt == "json":
        click.echo(
            json.dumps(
                {"path": str(path), "profiles": [p.describe() for p in found.values()]}, indent=2
            )
        )
        return
    if not found:
        click.echo(f"no profiles in {path}")
        return
    click.echo(f"profiles in {path}:")
    for p in found.values():
        d = p.describe()
        auth = f" sasl={d['sasl_user']} password={d['password']}" if d["sasl_user"] else ""
        metrics = (
            f" metrics={len(d['metrics'])} url(s)"
            if d["metrics"]
            else f" metrics_port={d['metrics_port']}"
            if d["metrics_port"]
            else ""
        )
        click.echo(f"  {p.name:<16} {','.join(p.bootstrap)}{auth}{metrics}")
