"""The `konsole` command: the top-level group, its commands, and the failures caught once.

Each command lives in its own module (``konsole.cli.<name>``); the options they share are
declared once in :mod:`konsole.cli.options`. ``konsole`` with no command opens the console
(as ``konsole ui``, with the same options).
"""

from __future__ import annotations

from typing import Any

import click

from konsole import __version__
from konsole.cli.check import check
from konsole.cli.cluster import cluster, demo
from konsole.cli.console import run_console
from konsole.cli.history import history
from konsole.cli.options import ConnectionArgs, group_options
from konsole.cli.preview import preview
from konsole.cli.profiles import profiles
from konsole.cli.record import record
from konsole.cli.ui import ui, ui_options
from konsole.cli.watch import watch
from konsole.errors import KonsoleError

__all__ = ["main"]


class KonsoleGroup(click.Group):
    """Catches konsole's own failures once, for every command: one line, its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KonsoleError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(int(exc.exit_code))


@click.group(cls=KonsoleGroup, invoke_without_command=True)
@click.version_option(__version__, prog_name="konsole")
@ui_options
@click.pass_context
def main(ctx: click.Context, cluster: ConnectionArgs, interval: float | None) -> None:
    """konsole: an operations and monitoring console for Apache Fluss.

    With no command it opens the console (as `konsole ui`, with the same options). A
    command takes its options after its name (`konsole check --bootstrap HOST:PORT`).
    """
    if ctx.invoked_subcommand is None:
        run_console(cluster, interval)
        return
    # Options given before the command name reach it (ctx.obj); --interval is the console's.
    group_options(ctx, cluster, console_only={"interval"})


for command in (cluster, demo, preview, watch, profiles, check, record, history, ui):
    main.add_command(command)

if __name__ == "__main__":  # pragma: no cover
    main()
