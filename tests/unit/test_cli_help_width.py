"""Every group's listing in ``--help`` reads whole at 80 columns (issue 40, finding 9):
each command's first sentence in full, wrapped under itself, never shortened with "..." and
never split inside a word."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from konsole.cli.main import COMMANDS, main
from tests._testutil.cli_tree import every_command

GROUPS = [(p, c) for p, c in every_command() if isinstance(c, click.Group)]


def whole_first_sentence(text: str) -> str:
    """The first paragraph, spaces collapsed, up to the first full stop that ends it or is
    followed by a word that does not start in lowercase (``e.g.`` goes on)."""
    words = text.split("\n\n")[0].split()
    for i, word in enumerate(words):
        if word.endswith(".") and (i == len(words) - 1 or not words[i + 1][0].islower()):
            return " ".join(words[: i + 1])
    return " ".join(words)


def listing(path: tuple[str, ...], width: int) -> dict[str, str]:
    """The Commands section of ``konsole PATH --help`` at ``width``: name -> its text, the
    wrapped lines joined."""
    out = CliRunner().invoke(main, [*path, "--help"], terminal_width=width).output
    section = out.split("\nCommands:\n", 1)[1].splitlines()
    for line in section:
        assert len(line) <= width, (path, line)
    listed: dict[str, str] = {}
    name = ""
    for line in section:
        if not line.strip():
            break
        head = re.match(r"  (\S+)\s+(.*)$", line)
        if head:
            name, text = head.groups()
            listed[name] = text
        else:
            listed[name] += " " + line.strip()
    return listed


@pytest.mark.parametrize(
    ("path", "group"), GROUPS, ids=[" ".join(p) or "konsole" for p, _ in GROUPS]
)
def test_a_group_lists_each_command_s_first_sentence_whole_at_80_columns(
    path: tuple[str, ...], group: click.Group
) -> None:
    listed = listing(path, 80)
    ctx = click.Context(group, info_name=path[-1] if path else "konsole")
    names = group.list_commands(ctx)
    assert list(listed) == names
    for name in names:
        command = group.get_command(ctx, name)
        assert command is not None
        help_text = COMMANDS[name][2] if not path and name in COMMANDS else command.help or ""
        expected = command.short_help or whole_first_sentence(help_text)
        assert listed[name] == expected, (path, name)
        assert "..." not in listed[name] and "…" not in listed[name], (path, name)
    assert listing(path, 200) == listed  # the same words at any width


def test_a_long_line_wraps_between_words() -> None:
    """``no-op`` stays one word: click's own wrapping would split it at the hyphen."""
    listed = CliRunner().invoke(main, ["cluster", "--help"], terminal_width=80).output
    assert "(no-op when cached)" in listed.replace("\n" + " " * 16, " ")
    assert not re.search(r"\w-\n", listed)
