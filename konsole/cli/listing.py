"""How a group lists its commands in ``--help``: each command's first sentence whole.

click shortens each command's line to what fits beside the names (``... ACLs,...`` at 80
columns), cutting sentences mid-way. konsole's listings give the first sentence whole and
let it wrap under itself, so a listing reads the same at 80 columns as at 200
(tests/unit/test_cli_help_width.py). Every group of the command line uses
:class:`ListingGroup`; the top-level group lists from its table the same way.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable
from typing import Final

import click

__all__ = ["GAP", "ListingGroup", "first_sentence", "write_listing"]


def first_sentence(help_text: str | None) -> str:
    """The first sentence of the first paragraph, whole (click's own rule for where a
    sentence ends, without its length limit)."""
    return click.Command("listed", help=help_text or "").get_short_help_str(limit=sys.maxsize)


#: The gap between a command's name and its line.
GAP: Final = 2


def write_listing(formatter: click.HelpFormatter, rows: Iterable[tuple[str, str]]) -> None:
    """The ``Commands`` section: a name, then its line, wrapped under itself at the
    formatter's width and never inside a word (click's own wrapping splits ``no-op``)."""
    listed = list(rows)
    if not listed:
        return
    with formatter.section("Commands"):
        indent = " " * formatter.current_indent
        column = max(len(name) for name, _ in listed) + GAP
        for name, text in listed:
            lines = textwrap.wrap(
                text,
                width=max(formatter.width - len(indent) - column, 20),
                break_on_hyphens=False,
                break_long_words=False,
            ) or [""]
            formatter.write(f"{indent}{name:<{column}}{lines[0]}".rstrip() + "\n")
            for more in lines[1:]:
                formatter.write(f"{indent}{'':<{column}}{more}\n")


class ListingGroup(click.Group):
    """A click group whose listing gives each command's first sentence whole."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            text = command.short_help or first_sentence(command.help)
            rows.append((name, text))
        write_listing(formatter, rows)
