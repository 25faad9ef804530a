"""The `konsole` command: the top-level group, its commands, and the failures caught once.

Each command lives in its own module (``konsole.cli.<name>``); the options they share are
declared once in :mod:`konsole.cli.options`. ``konsole`` with no command opens the console
(as ``konsole ui``, with the same options).

The group knows its commands by name (:data:`COMMANDS`) and imports a command's module only
when that command runs (click's lazy-group pattern), so ``konsole check`` from a cron job
pays for the check and nothing of the console, the preview, the export or the local-cluster
runner. ``konsole --help`` lists every command from the same table, whose one-line help
``tests/unit/test_cli_lazy.py`` holds equal to each command's own.

Failing is the same for every command (docs/cli.md, :mod:`konsole.cli.exits`): the group
runs each under :func:`~konsole.cli.exits.run_guarded`, so a usage error, konsole's own
failures, a full stdout and an internal error are each one ``konsole: error:`` line and
the code docs/cli.md documents. ``-h`` is ``--help`` everywhere.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Final

import click

from konsole import __version__
from konsole.cli.exits import run_guarded
from konsole.cli.listing import ListingGroup, first_sentence, write_listing
from konsole.cli.options import ConnectionArgs, group_options
from konsole.cli.ui import ui_options

__all__ = ["COMMANDS", "main"]

#: Every command by name: (module, attribute, the one-line help ``konsole --help`` shows).
COMMANDS: Final[dict[str, tuple[str, str, str]]] = {
    "admin": (
        "konsole.cli.admin",
        "admin",
        "Operator actions: drain, tag, rebalance, configs, ACLs, partitions, table properties.",
    ),
    "capacity": (
        "konsole.cli.capacity",
        "capacity",
        "Room left before each tablet server's write lock, and when the trend reaches it.",
    ),
    "check": (
        "konsole.cli.check",
        "check",
        "Is this Fluss cluster healthy? Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
    ),
    "cluster": (
        "konsole.cli.cluster",
        "cluster",
        "Run a real local Fluss cluster on 127.0.0.1 from the published jars.",
    ),
    "demo": (
        "konsole.cli.cluster",
        "demo",
        "Start a local cluster, write the demo tables, open the console; stop it on exit.",
    ),
    "history": (
        "konsole.cli.history",
        "history",
        "Read the recorded history: events, series, the cluster as of a time, notes.",
    ),
    "lookup": (
        "konsole.cli.lookup",
        "lookup",
        "Look rows of DB.TABLE up by primary key (or by prefix); report on stderr.",
    ),
    "preview": (
        "konsole.cli.preview",
        "preview",
        "Show up to LIMIT rows of DB.TABLE, or write them to FILE (report on stderr).",
    ),
    "profiles": (
        "konsole.cli.profiles",
        "profiles",
        "List the connection profiles (never their passwords).",
    ),
    "record": (
        "konsole.cli.record",
        "record",
        "Poll a cluster and record every poll and event into its history file.",
    ),
    "serve": (
        "konsole.cli.serve",
        "serve",
        "Poll several clusters and serve their state to Prometheus (/metrics, /healthz).",
    ),
    "storage": (
        "konsole.cli.storage",
        "storage",
        "Where each table's data lives: local log, remote log, KV snapshots, lake.",
    ),
    "ui": (
        "konsole.cli.ui",
        "ui",
        "Open the operator console on a cluster (--profile, --bootstrap or FLUSS_BOOTSTRAP, "
        "--local), recording its polls and events into the cluster's history file.",
    ),
    "upgrade": (
        "konsole.cli.upgrade",
        "upgrade",
        "A rolling upgrade, guided: readiness (check) and may the next server go down (gate).",
    ),
    "watch": (
        "konsole.cli.watch",
        "watch",
        "Poll a cluster and print its events and health changes as they happen.",
    ),
}


def _format_asked(args: Sequence[str]) -> str:
    """The last ``--format`` among the arguments (``--format X`` or ``--format=X``)."""
    asked = "nagios"
    for i, arg in enumerate(args):
        if arg == "--format" and i + 1 < len(args):
            asked = args[i + 1]
        elif arg.startswith("--format="):
            asked = arg.partition("=")[2]
    return asked


def _utf8_only(args: Sequence[str]) -> None:
    """Every argument is text konsole can print, store and send: a byte that is not UTF-8
    (Python hands it over as a lone surrogate) is a usage error here, before any command
    carries it into a file, a history or a request."""
    for number, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise click.UsageError(
                f"argument {number} ('{shown[:60]}') is not valid UTF-8 text"
            ) from None


class KonsoleGroup(ListingGroup):
    """Imports a command only when it is asked for; runs every command under the one way
    of failing (:func:`konsole.cli.exits.run_guarded`): one line, the documented code."""

    #: The command being run (its first name), for the monitoring-plugin rule of ``check``.
    running: str | None = None
    #: True when this run is the process's own command line (the ``konsole`` script or
    #: ``python -m konsole.cli``: no ``args`` given), not a host calling in (CliRunner).
    own_command_line: bool = False

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            self.own_command_line = False
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        self.running = None
        self.own_command_line = args is None

        def body() -> Any:
            given = list(sys.argv[1:] if args is None else args)
            # the command, for check's plugin line, should its arguments be refused here
            self.running = next((a for a in given if a in COMMANDS), None)
            _utf8_only(given)
            self.running = None
            return super(KonsoleGroup, self).main(
                args, prog_name, complete_var, standalone_mode=False, **extra
            )

        given = list(sys.argv[1:] if args is None else args)
        sys.exit(run_guarded(body, lambda: self.running, lambda: _format_asked(given)))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        self.running = name
        return name, command, rest

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute, _ = COMMANDS[cmd_name]
            # __import__, not importlib.import_module: `python -X importtime` sees only the
            # former, and the command's module is what it is asked about.
            command = getattr(__import__(module, fromlist=[attribute]), attribute)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands section of ``--help`` from :data:`COMMANDS`, each first sentence
        whole (:mod:`konsole.cli.listing`), without importing any command."""
        rows = []
        for name in self.list_commands(ctx):
            text = COMMANDS[name][2] if name in COMMANDS else self.commands[name].help
            rows.append((name, first_sentence(text)))
        write_listing(formatter, rows)


@click.group(
    cls=KonsoleGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="konsole")
@ui_options
@click.pass_context
def main(ctx: click.Context, cluster: ConnectionArgs, interval: float | None) -> None:
    """konsole: an operations and monitoring console for Apache Fluss.

    With no command it opens the console (as `konsole ui`, with the same options). A
    command takes its options after its name (`konsole check --bootstrap HOST:PORT`).
    """
    if ctx.invoked_subcommand is None:
        from konsole.cli.console import run_console

        run_console(cluster, interval)
        return
    # Options given before the command name reach it (ctx.obj); --interval is the console's.
    group_options(ctx, cluster, console_only={"interval"})


if __name__ == "__main__":  # pragma: no cover
    main()
