"""The lazy command group: ``konsole --help`` lists every command from its table without
importing any, and the table cannot drift from the commands it names."""

from __future__ import annotations

import importlib

import click
import pytest
from click.testing import CliRunner

from konsole.cli.listing import ListingGroup
from konsole.cli.main import COMMANDS, main


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_table_names_each_command_with_its_own_help(name: str) -> None:
    module, attribute, help_text = COMMANDS[name]
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command)
    assert command.name == name
    assert not command.hidden and not command.deprecated
    assert help_text == command.get_short_help_str(limit=10_000)


def _commands_section(group: click.Group) -> str:
    ctx = click.Context(group, info_name="konsole")
    formatter = ctx.make_formatter()
    group.format_commands(ctx, formatter)
    return formatter.getvalue()


def test_help_lists_every_command_as_click_would() -> None:
    # the same section as a group of the command line that holds the real commands
    real = ListingGroup(
        "konsole",
        commands={n: getattr(importlib.import_module(m), a) for n, (m, a, _) in COMMANDS.items()},
    )
    assert _commands_section(main) == _commands_section(real)
    out = CliRunner().invoke(main, ["--help"], terminal_width=60).output
    for name in COMMANDS:
        assert f"\n  {name} " in out, name


def test_a_command_is_found_by_name_and_an_unknown_one_is_refused() -> None:
    ctx = click.Context(main, info_name="konsole")
    assert main.get_command(ctx, "check") is importlib.import_module("konsole.cli.check").check
    assert main.get_command(ctx, "nope") is None
    result = CliRunner().invoke(main, ["nope"])
    assert result.exit_code == 3 and "No such command 'nope'" in result.stderr
