"""The options every command shares, declared once, and what they parse into.

A command names the cluster it is about with ``--profile`` / ``--bootstrap`` / ``--local``
(and ``--run-dir``, ``--config`` to reach it), and its history file with ``--history``
(``--no-history`` for the console); a command that polls takes ``--metrics-port`` too (the
servers' Prometheus port, on each server's host from metadata, instead of the profile's
``metrics`` / ``metrics_port``). :func:`cluster_options` adds the ones a command takes
and hands them to it as one :class:`ConnectionArgs` (keyword ``cluster``); the history file
always comes from :meth:`ConnectionArgs.history_file`, i.e. the one rule of
:mod:`konsole.collect.connect`.

The options go after the command name (``konsole check --bootstrap B``). The top-level
group takes the console's set too (``konsole --bootstrap B`` opens the console); given
before a command name, they reach that command through the context object
(:class:`GroupOptions` on ``ctx.obj``): the command's own value wins (its own
``--profile`` / ``--bootstrap`` / ``--local`` replace the group's choice of cluster as a
whole), and an option the command does not take is refused rather than ignored.

Also here: :class:`ConfigCommand` (a usage error is bad configuration, exit 3),
:func:`fail` (one line on stderr, an exit code) and the click-flavoured time parsers.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn, TypeVar

import click
from click.core import ParameterSource

from konsole.errors import ExitCode
from konsole.model import timefmt

if TYPE_CHECKING:  # profiles and connecting are imported when a command runs, not for --help
    from konsole.collect.profiles import Profile

__all__ = [
    "ConfigCommand",
    "ConnectionArgs",
    "GroupOptions",
    "cluster_options",
    "config_option",
    "count_option",
    "fail",
    "group_options",
    "interval_option",
    "parse_duration",
    "parse_time",
    "run_dir_option",
    "when",
]

F = TypeVar("F", bound=Callable[..., Any])


# =========================================================================== the object


@dataclass(frozen=True)
class ConnectionArgs:
    """The shared options as one value: which cluster, how to reach it, its history file."""

    profile: str | None = None
    bootstrap: str | None = None
    local: bool = False
    #: The local cluster's directory (with ``local``).
    run_dir: Path | None = None
    #: The profiles file (None: the default one, or env KONSOLE_CONFIG).
    config_path: Path | None = None
    #: ``--history PATH``: this file instead of the cluster's own.
    history: Path | None = None
    #: ``--no-history``: the console records nothing.
    no_history: bool = False
    #: ``--metrics-port``: the servers' Prometheus port (replaces the profile's endpoints).
    metrics_port: int | None = None

    def resolve(self) -> Profile:
        """The profile these options name (asks the local cluster for ``local``), with
        ``--metrics-port`` applied; raises ProfileError."""
        from konsole.collect.connect import resolve

        chosen = resolve(self.profile, self.bootstrap, self.local, self.run_dir, self.config_path)
        return chosen.with_metrics_port(self.metrics_port)

    def history_file(self, profile: Profile | None = None) -> Path:
        """The history file: ``--history``, else the cluster's by the one rule. Without
        ``profile`` nothing is connected or asked (a stopped cluster's history stays
        readable); raises ProfileError for a malformed ``--bootstrap``."""
        from konsole.collect.connect import history_path, history_path_for

        if profile is not None:
            return history_path(profile, self.history)
        return history_path_for(self.history, self.profile, self.bootstrap, self.local)


@dataclass(frozen=True)
class GroupOptions:
    """``ctx.obj`` of the top-level group: its shared options and which were given."""

    cluster: ConnectionArgs
    given: frozenset[str]


# =========================================================================== declarations


def run_dir_option(help_text: str) -> Callable[[F], F]:
    """``--run-dir`` (env KONSOLE_RUN_DIR): the local cluster's directory."""
    return click.option(
        "--run-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        envvar="KONSOLE_RUN_DIR",
        help=help_text,
    )


def config_option(f: F) -> F:
    """``--config``: the profiles file."""
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Profiles file (default: konsole/config.toml in the user config dir; "
        "env KONSOLE_CONFIG).",
    )(f)


def interval_option(low: float = 0.1, high: float | None = None) -> Callable[[F], F]:
    """``--interval``: seconds between polls (None: the profile's)."""
    return click.option(
        "--interval",
        type=click.FloatRange(low, high),
        default=None,
        help="Seconds between polls (default: the profile's, 5).",
    )


#: ``--count``: a bounded run (``max_polls``).
count_option = click.option(
    "--count",
    "max_polls",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many polls.",
)

_PATH = click.Path(dir_okay=False, path_type=Path)
#: Each shared option by the ConnectionArgs field it fills, in the order help lists them.
_OPTIONS: dict[str, Callable[[F], F]] = {
    "profile": click.option(
        "--profile", default=None, help="A [profiles.NAME] of the config file."
    ),
    "bootstrap": click.option(
        "--bootstrap",
        default=None,
        help="Bootstrap servers, comma-separated (else env FLUSS_BOOTSTRAP, else localhost:9123).",
    ),
    "local": click.option("--local", is_flag=True, help="The running local cluster."),
    "run_dir": run_dir_option("The local cluster's directory (with --local)."),
    "config_path": config_option,
    "history": click.option(
        "--history",
        type=_PATH,
        default=None,
        help="History file (default: the cluster's own, in the user data dir; the same file "
        "for every command).",
    ),
    "no_history": click.option(
        "--no-history", is_flag=True, help="Do not record (live only; time travel off)."
    ),
    "metrics_port": click.option(
        "--metrics-port",
        type=click.IntRange(1, 65535),
        default=None,
        metavar="PORT",
        help="The servers' Prometheus port, scraped on each server's host (instead of the "
        "profile's metrics / metrics_port). Without any, the metric rules are not configured.",
    ),
}


def cluster_options(
    *, reach: bool = True, history: bool = False, no_history: bool = False, polls: bool = False
) -> Callable[[F], F]:
    """Add the shared options to a command; it receives them as ``cluster: ConnectionArgs``.

    Always ``--profile``, ``--bootstrap``, ``--local``; with ``reach`` (a command that
    connects) ``--run-dir`` and ``--config``; with ``polls`` (a command that polls)
    ``--metrics-port``; ``--history`` and ``--no-history`` on request.
    """
    names = ["profile", "bootstrap", "local"]
    names += ["run_dir", "config_path"] if reach else []
    names += ["metrics_port"] if polls else []
    names += ["history"] if history else []
    names += ["no_history"] if no_history else []

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            own = ConnectionArgs(**{n: kwargs.pop(n) for n in names})
            return f(*args, cluster=_inherit(own, names), **kwargs)

        # Options declared below this decorator stay after the shared ones in --help.
        command.__click_params__ = list(getattr(f, "__click_params__", []))  # type: ignore[attr-defined]
        for name in reversed(names):
            command = _OPTIONS[name](command)
        return command  # type: ignore[return-value]

    return decorate


#: The options that choose the cluster: given to a command, they replace the group's as one.
_WHICH: Final = frozenset({"profile", "bootstrap", "local"})


def _inherit(own: ConnectionArgs, names: Collection[str]) -> ConnectionArgs:
    """``own`` with what the group was given for options not given to the command."""
    ctx = click.get_current_context()
    group = ctx.find_object(GroupOptions)
    if group is None:
        return own
    given = {n for n in names if ctx.get_parameter_source(n) is ParameterSource.COMMANDLINE}
    if given & _WHICH:  # the command names its own cluster: none of the group's choice
        given |= _WHICH
    updates = {n: getattr(group.cluster, n) for n in group.given if n in names and n not in given}
    return replace(own, **updates)


def group_options(
    ctx: click.Context, cluster: ConnectionArgs, console_only: Collection[str]
) -> None:
    """Put the group's options on ``ctx.obj`` for the command about to run; an option given
    before the command name that the command does not take is a usage error (exit 3)."""
    flags = {
        p.name: p.opts[0]
        for p in ctx.command.params
        if p.name and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE
    }
    given = set(flags)
    command = ctx.command.get_command(ctx, ctx.invoked_subcommand or "")  # type: ignore[attr-defined]
    takes = {p.name for p in command.params} if command is not None else set()
    refused = sorted(flags[n] for n in given if n not in takes or n in console_only)
    if refused:
        exc = click.UsageError(
            f"{', '.join(refused)} given before `{ctx.invoked_subcommand}`, which does not "
            "take it from there: give a command's options after its name",
            ctx,
        )
        exc.exit_code = ExitCode.UNKNOWN  # type: ignore[misc]  # click documents this override
        raise exc
    known = {f.name for f in fields(ConnectionArgs)}
    ctx.obj = GroupOptions(cluster, frozenset(given & known))


# =========================================================================== exit codes


class ConfigCommand(click.Command):
    """Usage errors (unknown option, bad value, missing argument) are bad configuration:
    exit code 3 (``ExitCode.UNKNOWN``), not click's 2 (CRITICAL to a monitoring system)."""

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
            self.refuse(exc)
            raise

    def refuse(self, exc: click.UsageError) -> None:
        """Called with a usage error before click reports it (a subclass may answer it)."""
        exc.exit_code = ExitCode.UNKNOWN  # type: ignore[misc]  # click documents this override


def fail(command: str, message: str, code: int) -> NoReturn:
    """``konsole COMMAND: message`` on stderr, then exit with ``code``."""
    click.echo(f"konsole {command}: {message}", err=True)
    sys.exit(code)


# =========================================================================== time arguments


def parse_duration(text: str) -> float:
    """:func:`konsole.model.timefmt.parse_duration`, a bad value as click's usage error."""
    try:
        return timefmt.parse_duration(text)
    except timefmt.TimeParseError as exc:
        raise click.BadParameter(str(exc)) from None


def parse_time(text: str, now: float) -> float:
    """:func:`konsole.model.timefmt.parse_time`, a bad value as click's usage error."""
    try:
        return timefmt.parse_time(text, now)
    except timefmt.TimeParseError as exc:
        raise click.BadParameter(str(exc)) from None


def when(ms: int | float) -> str:
    """Epoch milliseconds of the history as konsole prints a time."""
    return timefmt.iso_text(ms / 1000)
