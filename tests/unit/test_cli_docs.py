"""The docs agree with the command line (docs/cli.md, "How it is kept").

Every ``konsole ...`` line of a code block in docs/*.md and README.md goes through click's
parser as the command would (a known command, known options, values its types and checks
take); a synopsis (``[--limit N]``, ``<...>``, ``A|B``) and an inline code span are read
more loosely: a known command, and every option named is one of its options. The example
config file loads.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from konsole.cli.main import main
from konsole.collect.profiles import load_profiles
from konsole.serve.alerts.config import load_alert_config
from tests._testutil.cli import REPO

DOCS = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
#: A line that runs konsole: env assignments, a path to the script, a shell prompt allowed.
_RUNS = re.compile(r"^(?:\$\s+)?(?:\w+=\S*\s+)*(?:\S*/)?konsole(?:\s|$)")
_INLINE = re.compile(r"`((?:\S*/)?konsole [^`]+)`")
_SYNOPSIS = re.compile(r"[\[<|]|\.\.\.")
#: Where a synopsis puts a placeholder for the command: ``<cmd>``, ``[...]``, ``a|b``,
#: ``...`` or a capitalised ``COMMAND``; any other word there must be a real command.
_PLACEHOLDER = re.compile(r"[<\[{].*|.*\|.*|\.\.\.|[A-Z][A-Z0-9_-]*")


@dataclass(frozen=True)
class DocLine:
    where: str
    text: str
    #: A code block's command line (parsed strictly), not a synopsis or an inline span.
    strict: bool


def doc_lines() -> Iterator[DocLine]:
    for doc in DOCS:
        in_block, held, start = False, "", 0
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
            name = f"{doc.relative_to(REPO)}:{number}"
            if line.strip().startswith("```"):
                in_block = not in_block
                continue
            if not in_block:
                for span in _INLINE.findall(line):
                    yield DocLine(name, span, strict=False)
                continue
            text = (held + " " + line.strip()).strip()
            start = start if held else number
            if text.endswith("\\"):  # a continued line
                held = text[:-1]
                continue
            held = ""
            if _RUNS.match(text):
                command = re.split(r"\s+#\s", text)[0]
                where = f"{doc.relative_to(REPO)}:{start}"
                yield DocLine(where, command, strict=not _SYNOPSIS.search(command))


def arguments(text: str) -> list[str]:
    """The arguments konsole gets: no prompt, env, program, comment, redirection or pipe."""
    words = shlex.split(text.split(" | ")[0])
    program = next(i for i, w in enumerate(words) if re.search(r"(^|[/=])konsole$", w))
    out: list[str] = []
    skip = False
    for word in words[program + 1 :]:
        if skip:
            skip = False
        elif word in (">", ">>", "2>", "<"):
            skip = True
        elif not word.startswith((">", "2>")):
            out.append(word)
    return out


def existing_paths(args: list[str], tmp: Path) -> list[str]:
    """A placeholder path after an option that wants an existing one becomes a real one."""
    a_file, a_dir = tmp / "config.toml", tmp / "dist"
    a_file.write_text("")
    a_dir.mkdir(exist_ok=True)
    wants = {"--config": a_file, "--fluss-home": a_dir}
    return [
        str(wants[args[i - 1]]) if i and args[i - 1] in wants else word
        for i, word in enumerate(args)
    ]


def parse_strictly(args: list[str]) -> click.Command:
    """Parse as ``konsole ARGS`` would, down to the command, without running it."""
    ctx = main.make_context("konsole", list(args))
    command: click.Command = main
    while isinstance(command, click.Group):
        rest = [*ctx._protected_args, *ctx.args]
        if not rest:
            break
        name, sub, rest = command.resolve_command(ctx, rest)
        assert sub is not None and name is not None
        ctx = sub.make_context(name, rest, parent=ctx)
        command = sub
    return command


def _options(command: click.Command) -> dict[str, click.Option]:
    return {o: p for p in command.params if isinstance(p, click.Option) for o in p.opts}


def check_loosely(args: list[str]) -> None:
    """A known command path, every option it names is that command's (or the group's before
    it), and a value given to a choice is one of its choices."""
    command: click.Command = main
    offered = _options(main)
    taking_value: click.Option | None = None
    for word in args:
        if taking_value is not None:
            kind = taking_value.type
            if isinstance(kind, click.Choice) and not _SYNOPSIS.search(word):
                assert word in kind.choices, f"{taking_value.opts[0]} {word}: not a choice"
            taking_value = None
            continue
        if word.startswith("-") and not re.fullmatch(r"-\d.*", word) and word != "-":
            flag = word.split("=", 1)[0]
            assert flag in offered or flag in ("-h", "--help"), f"unknown option {flag}"
            option = offered.get(flag)
            if option is not None and not option.is_flag and "=" not in word:
                taking_value = option
            continue
        if isinstance(command, click.Group):
            ctx = click.Context(command, info_name="konsole")
            sub = command.get_command(ctx, word)
            if sub is None and word.endswith(":"):  # a command's message: `konsole watch: ...`
                assert command.get_command(ctx, word[:-1]), f"unknown command {word!r}"
                return
            if sub is None and _PLACEHOLDER.fullmatch(word):
                return  # a placeholder where the command would be: nothing more to check
            assert sub is not None, f"unknown command {word!r}"
            command = sub
            offered = {**offered, **_options(sub)}
            if not isinstance(sub, click.Group):
                offered = {**_options(main), **_options(sub)}


LINES = list(doc_lines())


def test_the_docs_show_konsole_lines() -> None:
    assert sum(line.strict for line in LINES) > 50 and len(LINES) > 200


@pytest.mark.parametrize("line", LINES, ids=[f"{x.where} {x.text[:60]}" for x in LINES])
def test_a_konsole_line_of_the_docs_parses(line: DocLine, tmp_path: Path) -> None:
    args = arguments(line.text)
    if not line.strict:
        check_loosely(args)
        return
    try:
        parse_strictly(existing_paths(args, tmp_path))
    except click.exceptions.Exit:  # --help, --version
        pass
    except click.exceptions.NoArgsIsHelpError:  # a group alone: its help
        pass
    except click.ClickException as exc:
        pytest.fail(f"{line.where}: {line.text}\n{exc.format_message()}")


def test_the_example_config_file_loads() -> None:
    path = REPO / "docs" / "config.example.toml"
    profiles = load_profiles(path)
    assert set(profiles) == {"prod", "staging"}
    assert profiles["staging"].writes and not profiles["prod"].writes
    assert profiles["prod"].password_env == "FLUSS_PROD_PASSWORD"
    alerts = load_alert_config(path)
    assert alerts.urls and alerts.for_s == 30


@pytest.mark.parametrize(
    "made_up",
    ["konsole frobnicate", "konsole made-up-cmd --x", "konsole history no-such", "konsole nope: x"],
)
def test_a_made_up_command_in_the_docs_fails(made_up: str) -> None:
    with pytest.raises(AssertionError, match="unknown command"):
        check_loosely(arguments(made_up))
