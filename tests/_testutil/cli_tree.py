"""The command line as data for the convention tests: every command of the click tree, and
the tables of docs/cli.md (the source of truth the tests read)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from konsole.cli.main import main

__all__ = [
    "CLI_DOC",
    "GOOD",
    "Code",
    "every_command",
    "exit_codes",
    "format_names",
    "leaf_commands",
    "needed_args",
]

CLI_DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def every_command() -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """(path, command) of the group and of every command and group under it, loaded as
    ``konsole`` loads them (the lazy group imports each by name)."""

    def walk(
        path: tuple[str, ...], command: click.Command
    ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
        yield path, command
        if isinstance(command, click.Group):
            ctx = click.Context(command, info_name=path[-1] if path else "konsole")
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, (*path, name)
                yield from walk((*path, name), sub)

    yield from walk((), main)


def leaf_commands() -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command that runs (not a group; the top-level group itself included, since
    ``konsole`` alone opens the console)."""
    return [(p, c) for p, c in every_command() if not isinstance(c, click.Group) or not p]


#: Valid values for what a command needs (its required arguments and options), by name.
GOOD = {
    "table": "db.t",
    "table_name": "db.t",
    "spec": "k=v",
    "assignment": "k=v",
    "key": "k",
    "value": "v",
    "server_id": "1",
    "role": "ts",
    "tag": "permanent-offline",
    "what": "events",
    "moment": "now",
    "target": "db.t",
    "resource": "cluster",
    "principal": "User:alice",
    "operation": "READ",
    "keys": "id=1",
}


def needed_args(
    command: click.Command, tmp: Path, but: click.Parameter | None = None
) -> tuple[list[str], list[str]]:
    """A valid value for each required argument and option of ``command`` (except ``but``):
    (the arguments in order, the options); an unnamed required option writes under ``tmp``."""
    arguments: list[str] = []
    options: list[str] = []
    for p in command.params:
        if p is but or not p.required:
            continue
        if isinstance(p, click.Argument):
            arguments.append(GOOD[p.name or ""])
        elif isinstance(p, click.Option):
            options += [p.opts[0], GOOD.get(p.name or "", str(tmp / "out.html"))]
    return arguments, options


@dataclass(frozen=True)
class Code:
    """One row of docs/cli.md's exit-code table."""

    situation: str
    code: int
    #: ``konsole check``'s code in that situation; None where it has none of its own.
    check: int | None


def _table_after(heading: str) -> list[list[str]]:
    """The cells of the first Markdown table after ``heading`` in docs/cli.md."""
    lines = CLI_DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(heading)
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not all(set(c) <= set("-: ") for c in cells):
            rows.append(cells)
    return rows[1:]  # without the header


def exit_codes() -> dict[str, Code]:
    """docs/cli.md's exit codes by situation (``usage``, ``io``, ...)."""
    out: dict[str, Code] = {}
    for cells in _table_after("## Exit codes"):
        situation = cells[0].strip("`")
        check = None if cells[2] == "-" else int(cells[2])
        out[situation] = Code(situation, int(cells[1]), check)
    return out


def format_names() -> set[str]:
    """Every ``--format`` name docs/cli.md's format table lists."""
    names: set[str] = set()
    for cells in _table_after("## `--format`"):
        names.update(re.findall(r"`([a-z]+)`", cells[0]))
    return names
