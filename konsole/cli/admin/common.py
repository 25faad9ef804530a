"""What every ``konsole admin`` command shares: the write options, the terminal operator
(plan, typed confirmation, progress) and handing one request to the action service
(:mod:`konsole.collect.actions.service`) with its exit codes: a command only builds the
request (:func:`run_request`) or reads and prints (:func:`run_read`).

Exit codes (konsole.errors.ExitCode, docs/cli.md): 0 done (or a dry run shown); 1 the server
refused or failed it; 2 the cluster could not be reached; 3 bad options or profile (a
malformed value is refused as it is parsed, before anything connects); 65 the input
names something wrong (unknown server, config key, value type, principal type); 75 a
safety rail or a running rebalance refused it, or the wait ended with it still running;
77 the profile has no ``writes = true`` (nothing was sent, nothing connected); 130 Ctrl-C
stopped the wait (the server-side operation keeps running).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import click

from konsole.cli.exits import fail
from konsole.cli.options import ConnectionArgs, cluster_options
from konsole.errors import ExitCode, KonsoleError

if TYPE_CHECKING:
    from fluss_proto.model import RebalanceProgress
    from konsole.collect.actions.runner import Options
    from konsole.collect.actions.service import ActionRequest, ActionService
    from konsole.collect.profiles import Profile
    from konsole.model.actions import Plan

#: A read command's body: the service, the operator, the options and the stop event.
ReadBody = Callable[["ActionService", "TerminalOperator", "Options", asyncio.Event], Awaitable[Any]]

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "GOALS",
    "TerminalOperator",
    "WriteFlags",
    "action_request",
    "read_command",
    "run_read",
    "run_request",
    "write_command",
]

#: --goal values, by the names Fluss gives them.
GOALS = ("replica-distribution", "leader-distribution", "rack-aware")


@dataclass(frozen=True)
class WriteFlags:
    """The write options of one command, as one value (keyword ``flags``)."""

    allow_writes: bool = False
    dry_run: bool = False
    yes: bool = False
    force: bool = False


def write_command(*, force: bool = False) -> Callable[[F], F]:
    """A write command: the shared options, --allow-writes, --dry-run, --yes (--force);
    it receives them as ``cluster: ConnectionArgs`` and ``flags: WriteFlags``."""
    names = ["allow_writes", "dry_run", "yes"] + (["force"] if force else [])

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            flags = WriteFlags(**{n: kwargs.pop(n) for n in names})
            return f(*args, flags=flags, **kwargs)

        command.__click_params__ = list(getattr(f, "__click_params__", []))  # type: ignore[attr-defined]
        wrapped: Any = command
        wrapped = click.option(
            "--yes", is_flag=True, help="Send without asking to type the subject."
        )(wrapped)
        wrapped = click.option("--dry-run", is_flag=True, help="Show the plan; send nothing.")(
            wrapped
        )
        wrapped = click.option(
            "--allow-writes",
            is_flag=True,
            help="Lift the read-only gate for the admin actions' keys (with --bootstrap or "
            "--local; a profile says `writes = true`).",
        )(wrapped)
        if force:
            wrapped = click.option(
                "--force", is_flag=True, help="Act although health is RED or a rebalance runs."
            )(wrapped)
        return cluster_options(history=True)(wrapped)  # type: ignore[no-any-return]

    return decorate


def read_command(f: F) -> F:
    """A read command: the shared options."""
    return cluster_options()(f)


def command(group: click.Group, name: str, help_text: str) -> Callable[[F], click.Command]:
    return group.command(name, help=help_text)


class TerminalOperator:
    """Plans and progress on stdout; confirmation by typing the subject on a terminal."""

    def __init__(self) -> None:
        self._last: tuple[int, int, str] | None = None
        self._tty = sys.stdout.isatty()

    def show(self, lines: Sequence[str]) -> None:
        for line in lines:
            click.echo(line)

    def confirm(self, plan: Plan) -> bool:
        if not sys.stdin.isatty():
            click.echo("no terminal to confirm on: pass --yes to send", err=True)
            return False
        typed = click.prompt(f"type {plan.subject!r} to send it (anything else: nothing sent)")
        return bool(typed.strip() == plan.subject)

    def progress(self, progress: RebalanceProgress) -> None:
        from konsole.model.actions import progress_counts

        done, total, status = progress_counts(progress)
        if self._last == (done, total, status):
            return
        self._last = (done, total, status)
        if self._tty:
            width = 30
            filled = width * done // total if total else width
            bar = "#" * filled + "." * (width - filled)
            end = "\n" if status not in ("NOT_STARTED", "REBALANCING") else ""
            click.echo(f"\r[{bar}] {done}/{total} buckets {status}", nl=False)
            click.echo(end, nl=False)
        else:
            click.echo(f"progress: {done}/{total} buckets done, {status}")


def resolve_for_writes(cluster: ConnectionArgs, allow_writes: bool) -> Profile:
    """The profile, with ``--allow-writes`` applied to an ad-hoc one (a profile from the file
    says ``writes`` itself)."""
    profile = cluster.resolve()
    if allow_writes:
        if profile.source == "profile":
            fail(
                "--allow-writes is for --bootstrap / --local: set `writes = true` "
                f"in profile {profile.name!r}",
                ExitCode.USAGE,
            )
        profile = replace(profile, writes=True)
    return profile


@contextlib.contextmanager
def _stop_on_signals(stop: asyncio.Event) -> Iterator[None]:
    """SIGINT / SIGTERM end a wait (not the process): the runner reports and exits."""
    loop = asyncio.get_running_loop()
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
    try:
        yield
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)


def action_request(
    kind: str, target: str = "", value: str = "", operation: str = "", host: str = "*"
) -> ActionRequest:
    """An :class:`~konsole.collect.actions.service.ActionRequest` (imported when a command
    runs, not when the CLI starts)."""
    from konsole.collect.actions.service import ActionRequest

    return ActionRequest(kind, target, value, operation, host)


def run_request(
    cluster: ConnectionArgs,
    request: ActionRequest,
    flags: WriteFlags,
    *,
    timeout: float = 300.0,
) -> None:
    """Resolve, refuse without the opt-in (77, before connecting), then have the action
    service plan, confirm, send, follow and audit ``request``."""

    async def body(
        service: ActionService, operator: TerminalOperator, options: Options, stop: asyncio.Event
    ) -> None:
        await service.run(request, operator, options, stop=stop)

    _run(cluster, body, flags, timeout=timeout)


def run_read(cluster: ConnectionArgs, body: ReadBody, *, timeout: float = 300.0) -> None:
    """Resolve and run ``body``, which reads through the service and prints (no opt-in,
    no audit)."""
    _run(cluster, body, None, timeout=timeout)


def _run(
    cluster: ConnectionArgs, body: ReadBody, flags: WriteFlags | None, *, timeout: float
) -> None:
    from fluss_proto.errors import FlussError, UnreachableError
    from konsole.collect.actions.runner import Options, require_writes
    from konsole.collect.actions.service import ActionService

    writes = flags is not None
    flags = flags or WriteFlags()
    profile = resolve_for_writes(cluster, flags.allow_writes)
    if writes:
        require_writes(profile)
    service = ActionService(profile, cluster.history_file(profile) if writes else None)
    options = Options(dry_run=flags.dry_run, yes=flags.yes, force=flags.force, timeout=timeout)

    async def main() -> None:
        stop = asyncio.Event()
        with _stop_on_signals(stop):
            await body(service, TerminalOperator(), options, stop)

    try:
        asyncio.run(main())
    except KonsoleError:
        raise
    except UnreachableError as exc:
        fail(exc, ExitCode.CRITICAL)
    except FlussError as exc:
        fail(str(exc).splitlines()[0], ExitCode.WARNING)
    finally:
        for trouble in service.audit.trouble[:1]:
            click.echo(f"konsole admin: the audit could not be written: {trouble}", err=True)
