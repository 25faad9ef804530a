"""The options every command shares, declared once, and what they parse into.

A command names the cluster it is about with ``--profile`` / ``--bootstrap`` / ``--local``
(and ``--run-dir``, ``--config`` to reach it), and its history file with ``--history``
(``--no-history`` for the console); a command that polls takes ``--metrics-port`` too (the
servers' Prometheus port, on each server's host from metadata, instead of the profile's
``metrics`` / ``metrics_port``). :func:`cluster_options` adds the ones a command takes
and hands them to it as one :class:`ConnectionArgs` (keyword ``cluster``); the history file
always comes from :meth:`ConnectionArgs.history_file`, i.e. the one rule of
:mod:`konsole.collect.cluster.connect`.

The options go after the command name (``konsole check --bootstrap B``). The top-level
group takes the console's set too (``konsole --bootstrap B`` opens the console); given
before a command name, they reach that command through the context object
(:class:`GroupOptions` on ``ctx.obj``): the command's own value wins (its own
``--profile`` / ``--bootstrap`` / ``--local`` replace the group's choice of cluster as a
whole), and an option the command does not take is refused rather than ignored.

Also here: the value types every command shares (:data:`DURATION`, :data:`MOMENT`, a
bootstrap list checked as it is parsed), so a bad value is a usage error (exit 3,
docs/cli.md) before anything is connected, read or written.
"""

from __future__ import annotations

import errno
import functools
import math
import os
import stat
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click
from click.core import ParameterSource

from konsole.errors import KonsoleError, OutputPathError
from konsole.model import timefmt

if TYPE_CHECKING:  # profiles and connecting are imported when a command runs, not for --help
    from konsole.collect.cluster.target import Target
    from konsole.collect.profiles import Profile

__all__ = [
    "DOCUMENT_FORMATS",
    "DURATION",
    "INTERVAL",
    "JAVA_INT_MAX",
    "MOMENT",
    "OUTPUT_FILE",
    "ConnectionArgs",
    "FilePath",
    "GroupOptions",
    "Number",
    "Whole",
    "bootstrap_callback",
    "checked_bootstrap",
    "checked_by",
    "cluster_options",
    "config_option",
    "count_option",
    "group_options",
    "interval_option",
    "parse_duration",
    "parse_time",
    "run_dir_option",
    "table_argument",
    "when",
    "writable_history",
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
        from konsole.collect.cluster.connect import resolve

        chosen = resolve(self.profile, self.bootstrap, self.local, self.run_dir, self.config_path)
        return chosen.with_metrics_port(self.metrics_port)

    def target(self) -> Target:
        """The command's cluster resolved once: the profile, its history file (None with
        ``--no-history``) and the client factory; raises ProfileError."""
        from konsole.collect.cluster.target import Target

        profile = self.resolve()
        return Target(profile, None if self.no_history else self.history_file(profile))

    def history_file(self, profile: Profile | None = None) -> Path:
        """The history file: ``--history``, else the cluster's by the one rule. Without
        ``profile`` nothing is connected or asked (a stopped cluster's history stays
        readable); raises ProfileError for a malformed ``--bootstrap``."""
        from konsole.collect.cluster.connect import history_path, history_path_for

        if profile is not None:
            return history_path(profile, self.history)
        return history_path_for(self.history, self.profile, self.bootstrap, self.local)


def writable_history(path: Path | None) -> Path | None:
    """``--history PATH``, once it can be a history file where it is
    (:func:`konsole.collect.paths.history_refusal`: its directory exists, no special file);
    raises OutputPathError (exit 74, as for every output). Every command that takes
    ``--history`` runs this before its body (:func:`cluster_options`): before anything
    connects, reads or writes, whether the command would write the file or only read it."""
    if path is None:
        return None
    from konsole.collect.paths import history_refusal

    if (why := history_refusal(path)) is not None:
        raise OutputPathError(f"cannot write {path}: {why}")
    return path


@dataclass(frozen=True)
class GroupOptions:
    """``ctx.obj`` of the top-level group: its shared options and which were given."""

    cluster: ConnectionArgs
    given: frozenset[str]


# =========================================================================== values


def checked_by(check: Callable[[str], object]) -> Callable[..., Any]:
    """A click callback that runs ``check`` on the value (on each, for a repeatable option)
    as it is parsed: its ValueError or KonsoleError is a usage error, so a bad value is
    refused before anything connects, starts or writes."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        for one in value if isinstance(value, tuple) else () if value is None else (value,):
            try:
                check(one)
            except (ValueError, KonsoleError) as exc:
                raise click.BadParameter(str(exc)) from None
        return value

    return callback


def bootstrap_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """The click callback of every ``--bootstrap``: :func:`checked_bootstrap`."""
    return checked_bootstrap(value)


def checked_bootstrap(value: str | None) -> str | None:
    """``--bootstrap``'s value as given, once it parses as a list of HOST:PORT (an empty
    value or a malformed address is a usage error, not the default cluster)."""
    if value is None:
        return None
    from fluss_proto.cluster import parse_bootstrap

    try:
        parse_bootstrap(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--bootstrap'") from None
    return value


def checked_table(value: str) -> str:
    """``DB.TABLE`` as given, once both names are ones Fluss takes; else a usage error."""
    database, dot, name = value.partition(".")
    if not dot or not database or not name:
        raise click.BadParameter(f"{value!r} is not DB.TABLE")
    from konsole.model.names import invalid_name  # here: --version imports no rule

    for kind, ident in (("database", database), ("table", name)):
        if problem := invalid_name(ident):
            raise click.BadParameter(f"{kind} name {ident!r} is invalid: {problem}")
    return value


def table_argument(*, required: bool = True) -> Callable[[F], F]:
    """The ``DB.TABLE`` argument (``table``), checked as it is parsed."""
    return click.argument(
        "table",
        metavar="DB.TABLE" if required else "[DB.TABLE]",
        required=required,
        callback=lambda ctx, param, value: None if value is None else checked_table(value),
    )


class FilePath(click.Path):
    """click.Path as a :class:`~pathlib.Path`, refusing as a usage error before anything is
    opened: an empty value (click would make it ``.``, the current directory), a name the
    system cannot take (too long), with ``regular`` a path that exists but is not a regular
    file (a FIFO would hang the open, a device is no profiles or history file), and where
    only a directory will do, a path that exists but is no directory (a FIFO, a device)."""

    def __init__(self, *, regular: bool = False, **kwargs: Any) -> None:
        super().__init__(path_type=Path, **kwargs)
        self.regular = regular

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str | Path):
            if str(value) == "":
                self.fail("an empty path names no file", param, ctx)
            if (why := self._refusal(value)) is not None:
                self.fail(f"{str(value)!r}: {why}", param, ctx)
        return super().convert(value, param, ctx)

    def _refusal(self, value: str | Path) -> str | None:
        try:
            mode = os.stat(value).st_mode
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                return "the name is too long for the file system"
            mode = None  # missing: click's ``exists``, or the writer's rule (74)
        if self.regular:
            from konsole.collect.paths import input_refusal  # not imported for --help

            return input_refusal(value)
        if not self.file_okay and mode is not None and not stat.S_ISDIR(mode):
            from konsole.collect.paths import kind_of

            what = "a regular file" if stat.S_ISREG(mode) else kind_of(mode)
            return f"{what}, not a directory"
        return None


#: ``-o FILE``: a file to write (what may be replaced is the writer's rule, exit 74).
OUTPUT_FILE: Final = FilePath(dir_okay=False)

# =========================================================================== declarations


def run_dir_option(help_text: str) -> Callable[[F], F]:
    """``--run-dir`` (env KONSOLE_RUN_DIR): the local cluster's directory."""
    return click.option(
        "--run-dir",
        type=FilePath(file_okay=False),
        default=None,
        envvar="KONSOLE_RUN_DIR",
        help=help_text,
    )


def config_option(f: F) -> F:
    """``--config``: the profiles file."""
    return click.option(
        "--config",
        "config_path",
        type=FilePath(exists=True, dir_okay=False, regular=True),
        default=None,
        help="Profiles file, which must exist (default: env KONSOLE_CONFIG, else "
        "konsole/config.toml in the user config dir; either may be absent: no profiles).",
    )(f)


#: ``--format`` of a command that answers with one document: for a person, or JSON.
DOCUMENT_FORMATS: Final = ("text", "json")


class Number(click.FloatRange):
    """A float option's type: finite and in its range, both ends given. click's
    FloatRange lets NaN through (every comparison with it is false) and has no upper end
    unless told; a number that is not a real amount of anything is a usage error."""

    name = "number"

    def __init__(self, low: float, high: float, *, low_open: bool = False) -> None:
        super().__init__(low, high, min_open=low_open)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)


class Whole(click.IntRange):
    """An integer option's type: in its range, both ends given (a number past it is a
    usage error here, not an overflow in SQLite or on the wire)."""

    name = "integer"

    def __init__(self, low: int, high: int) -> None:
        super().__init__(low, high)


#: The largest id, count or bucket Fluss keeps (a Java int).
JAVA_INT_MAX: Final = 2**31 - 1

#: ``--interval``'s range, the same for every command that polls (docs/cli.md).
INTERVAL: Final = Number(0.1, 3600)


def interval_option(f: F) -> F:
    """``--interval``: seconds between polls (None: the profile's)."""
    return click.option(
        "--interval",
        type=INTERVAL,
        default=None,
        help="Seconds between polls, 0.1 to 3600 (default: the profile's poll_interval, 5).",
    )(f)


#: ``--count``: a bounded run (``max_polls``).
count_option = click.option(
    "--count",
    "max_polls",
    type=Whole(1, JAVA_INT_MAX),
    default=None,
    help="Stop after this many polls.",
)

_PATH = FilePath(dir_okay=False, regular=True)
#: Each shared option by the ConnectionArgs field it fills, in the order help lists them.
_OPTIONS: dict[str, Callable[[F], F]] = {
    "profile": click.option(
        "--profile", default=None, help="A [profiles.NAME] of the config file."
    ),
    "bootstrap": click.option(
        "--bootstrap",
        default=None,
        callback=bootstrap_callback,
        metavar="HOST:PORT,...",
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
        type=Whole(1, 65535),
        default=None,
        metavar="PORT",
        help="The servers' Prometheus port, scraped on each server's host (instead of the "
        "profile's metrics / metrics_port). Without any, the metric rules are not configured.",
    ),
}


def cluster_options(
    *,
    reach: bool = True,
    config: bool = False,
    history: bool = False,
    no_history: bool = False,
    polls: bool = False,
) -> Callable[[F], F]:
    """Add the shared options to a command; it receives them as ``cluster: ConnectionArgs``.

    Always ``--profile``, ``--bootstrap``, ``--local``; with ``reach`` (a command that
    connects) ``--run-dir`` and ``--config``; ``--config`` alone with ``config`` (a command
    that only names a profile); with ``polls`` (a command that polls) ``--metrics-port``;
    ``--history`` and ``--no-history`` on request.
    """
    names = ["profile", "bootstrap", "local"]
    names += ["run_dir", "config_path"] if reach else ["config_path"] if config else []
    names += ["metrics_port"] if polls else []
    names += ["history"] if history else []
    names += ["no_history"] if no_history else []

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            own = ConnectionArgs(**{n: kwargs.pop(n) for n in names})
            cluster = _inherit(own, names)
            if not click.get_current_context().invoked_subcommand:  # else: that command's
                writable_history(cluster.history)
            return f(*args, cluster=cluster, **kwargs)

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
    takes = _taken(ctx, command) if command is not None else set()
    refused = sorted(flags[n] for n in given if n not in takes or n in console_only)
    if refused:
        raise click.UsageError(
            f"{', '.join(refused)} given before `{ctx.invoked_subcommand}`, which does not "
            "take it from there: give a command's options after its name",
            ctx,
        )
    known = {f.name for f in fields(ConnectionArgs)}
    ctx.obj = GroupOptions(cluster, frozenset(given & known))


def _taken(ctx: click.Context, command: click.Command) -> set[str]:
    """The options ``command`` takes; a group's are those every command in it takes
    (``konsole --bootstrap B history events``: each history command reads that file)."""
    if not isinstance(command, click.Group):
        return {p.name for p in command.params if p.name}
    inner = click.Context(command, parent=ctx, info_name=command.name)
    leaves = [command.get_command(inner, n) for n in command.list_commands(inner)]
    sets = [_taken(inner, c) for c in leaves if c is not None]
    return set.intersection(*sets) if sets else set()


# =========================================================================== time arguments


def parse_duration(text: str) -> float:
    """:func:`konsole.model.timefmt.parse_duration`, more than 0 seconds; a bad value as
    click's usage error."""
    try:
        seconds = timefmt.parse_duration(text)
    except timefmt.TimeParseError as exc:
        raise click.BadParameter(str(exc)) from None
    if seconds <= 0:
        raise click.BadParameter(f"{text!r} is no time at all: give more than 0 seconds")
    return seconds


def parse_time(text: str, now: float) -> float:
    """:func:`konsole.model.timefmt.parse_time`, a bad value as click's usage error."""
    try:
        return timefmt.parse_time(text, now)
    except timefmt.TimeParseError as exc:
        raise click.BadParameter(str(exc)) from None


def when(ms: int | float) -> str:
    """Epoch milliseconds of the history as konsole prints a time."""
    return timefmt.iso_text(ms / 1000)


class _Duration(click.ParamType):
    """A span of time (``90s``, ``15m``, ``2h``, ``3d``, ``1w``, or seconds), > 0 -> seconds."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float | int):
            return float(value)
        try:
            return parse_duration(str(value))
        except click.BadParameter as exc:
            self.fail(exc.message, param, ctx)


class _Moment(click.ParamType):
    """A time (ISO 8601, epoch seconds, ``now``, an age such as ``2h``) -> epoch seconds."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float | int):
            return float(value)
        try:
            return parse_time(str(value), time.time())
        except click.BadParameter as exc:
            self.fail(exc.message, param, ctx)


#: A duration option's type: seconds (float), more than 0.
DURATION: Final = _Duration()
#: A time option's type: epoch seconds (float), read against the clock as it is parsed.
MOMENT: Final = _Moment()
