"""`konsole ui` (and `konsole` with no command, which takes the same options): the console.

What opening it does, and its exit codes: :mod:`konsole.cli.console`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from konsole.cli.console import run_console
from konsole.cli.options import ConnectionArgs, cluster_options, interval_option

__all__ = ["ui", "ui_options"]

F = TypeVar("F", bound=Callable[..., Any])


def ui_options(f: F) -> F:
    """The console's options: the shared ones with ``--history`` / ``--no-history``, and
    ``--interval``; the command receives ``cluster`` and ``interval``."""
    return cluster_options(history=True, no_history=True, polls=True)(interval_option(f))


@click.command("ui")
@ui_options
def ui(cluster: ConnectionArgs, interval: float | None) -> None:
    """Open the operator console on a cluster (--profile, --bootstrap or FLUSS_BOOTSTRAP,
    --local), recording its polls and events into the cluster's history file."""
    run_console(cluster, interval)
