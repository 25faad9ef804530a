"""One convention for every command (docs/cli.md): the exit-code table the tests read is
the code's, every option has help, ``-h`` works everywhere, one ``--interval`` range, one
vocabulary of ``--format`` names, one event shape, and a full stdout is one line and the
documented code, never a traceback."""

from __future__ import annotations

import errno
import io
import json
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from konsole.cli import watch as watch_cmd
from konsole.cli.main import main
from konsole.cli.options import INTERVAL
from konsole.errors import ExitCode
from tests._testutil.builders import T0, table, view
from tests._testutil.cli_tree import every_command, exit_codes, format_names, leaf_commands
from tests._testutil.poller import Fakes, fake_build_poller
from tests._testutil.recorded import server_left_history

#: Each situation of docs/cli.md's table, by the ExitCode member that names it in the code.
SITUATIONS = {
    "ok": ExitCode.OK,
    "partial": ExitCode.WARNING,
    "unreachable": ExitCode.CRITICAL,
    "usage": ExitCode.USAGE,
    "config": ExitCode.UNKNOWN,
    "data": ExitCode.DATA_ERROR,
    "no-input": ExitCode.NO_INPUT,
    "unavailable": ExitCode.UNAVAILABLE,
    "software": ExitCode.SOFTWARE,
    "io": ExitCode.IO_ERROR,
    "tempfail": ExitCode.REFUSED,
    "no-permission": ExitCode.NO_PERMISSION,
    "interrupted": ExitCode.INTERRUPTED,
    "terminated": ExitCode.TERMINATED,
}

COMMANDS = list(every_command())
PATHS = [" ".join(path) or "konsole" for path, _ in COMMANDS]


def test_the_exit_code_table_is_the_codes_and_documents_every_one() -> None:
    table = exit_codes()
    assert {s: c.code for s, c in table.items()} == {s: int(c) for s, c in SITUATIONS.items()}
    # no code of ExitCode goes undocumented
    assert {int(c) for c in ExitCode} == {c.code for c in table.values()}
    # usage errors: one code, the one check's plugin rule needs
    assert table["usage"].code == table["usage"].check == 3
    for row in table.values():  # check: codes above 3 are 3 (or none of its own)
        assert row.check == (row.code if row.code <= 3 else 3) or row.check is None, row


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=PATHS)
def test_every_option_has_help_and_no_restructured_text(
    path: tuple[str, ...], command: click.Command
) -> None:
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert param.help and param.help.strip(), (path, param.opts)
            assert "``" not in param.help and ":class:" not in param.help, (path, param.opts)
    text = CliRunner().invoke(main, [*path, "-h"], terminal_width=100).output
    assert "``" not in text and ":func:" not in text and ":class:" not in text, path


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=PATHS)
def test_dash_h_is_help_on_every_command(path: tuple[str, ...], command: click.Command) -> None:
    result = CliRunner().invoke(main, [*path, "-h"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Usage: ") and result.stderr == ""
    assert "\x1b" not in result.stdout  # no escape sequence without a terminal


def test_one_interval_range_for_every_command_that_polls() -> None:
    found = {
        " ".join(path): param.type
        for path, command in COMMANDS
        for param in command.params
        if param.name == "interval"
    }
    assert {"", "ui", "watch", "record", "serve"} <= set(found)
    for name, kind in found.items():
        assert isinstance(kind, click.FloatRange), name
        assert (kind.min, kind.max) == (INTERVAL.min, INTERVAL.max) == (0.1, 3600), name


def test_every_format_name_is_one_of_the_documented_vocabulary() -> None:
    names = format_names()
    assert {"text", "table", "json", "jsonl", "csv", "parquet", "nagios"} <= names
    for path, command in COMMANDS:
        for param in command.params:
            if param.name == "fmt" and isinstance(param.type, click.Choice):
                assert set(param.type.choices) <= names, (path, param.type.choices)


def test_set_is_listed_only_where_it_is_taken() -> None:
    takes = {" ".join(p) for p, c in COMMANDS if any(x.name == "settings" for x in c.params)}
    assert takes == {"cluster start", "cluster start-server"}


# =========================================================================== event shape


@pytest.fixture
def history(tmp_path: Path) -> Path:
    return server_left_history(tmp_path / "h.sqlite")


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_an_event_has_one_shape_in_watch_history_events_and_export(
    history: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = json.loads(_run("history", "events", "--history", str(history), "--format", "json"))
    lines = _run("history", "export", "events", "--history", str(history), "--format", "jsonl")
    exported = [json.loads(line) for line in lines.splitlines()]
    document = json.loads(
        _run("history", "export", "events", "--history", str(history), "--format", "json")
    )
    assert listed == exported == document and listed
    left = next(e for e in listed if e["kind"] == "server_left")
    assert left["subject"] == {"kind": "server", "name": "tablet-server 2"}
    assert left["time_ms"] == round((T0 + 10) * 1000) and left["time"].endswith("Z")
    # watch prints the same keys for the same kind of event, live
    full = view((1, 2), [table("db.t", 1, [5, 5])])
    gone = view((1,), [table("db.t", 1, [5, 5])])
    monkeypatch.setattr(watch_cmd, "build_poller", fake_build_poller(Fakes(views=[full, gone])))
    out = _run("watch", "--bootstrap", "127.0.0.1:9123", "--format", "jsonl", "--count", "2")
    events = [d for d in map(json.loads, out.splitlines()) if d["type"] == "event"]
    watched = next(e for e in events if e["kind"] == "server_left")
    assert list(watched) == list(left)
    assert watched["subject"] == left["subject"]


def test_csv_export_columns_follow_the_shape(history: Path) -> None:
    out = _run("history", "export", "events", "--history", str(history), "--format", "csv")
    assert out.splitlines()[0] == (
        '"type","time","time_ms","kind","severity","subject_kind","subject","message",'
        '"count","samples","details"'
    )


# =========================================================================== a full stdout


class FullStdout(io.TextIOBase):
    """stdout on a full disk (``> /dev/full``): every write fails with ENOSPC."""

    encoding = "utf-8"

    def write(self, s: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        return None

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno")

    def isatty(self) -> bool:
        return False


def _into_full_stdout(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", FullStdout())
    monkeypatch.setattr(sys, "stderr", err)
    with pytest.raises(SystemExit) as info:
        main.main(args, prog_name="konsole")
    return info.value.code, err.getvalue()


@pytest.mark.parametrize(
    ("path", "command"), [*COMMANDS, (("--version",), main)], ids=[*PATHS, "--version"]
)
def test_help_and_version_into_a_full_stdout_are_one_line_and_the_io_code(
    path: tuple[str, ...], command: click.Command, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = list(path) if path == ("--version",) else [*path, "--help"]
    code, err = _into_full_stdout(args, monkeypatch)
    table = exit_codes()
    expected = table["io"].check if path[:1] == ("check",) else table["io"].code
    assert code == expected, err
    assert err == "konsole: error: cannot write stdout: No space left on device\n"


def test_leaf_commands_are_found() -> None:
    names = {" ".join(p) for p, _ in leaf_commands()}
    assert {"", "check", "history events", "admin acl create", "cluster start-server"} <= names


def test_an_internal_error_is_one_line_and_70_and_its_traceback_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from konsole.cli import profiles as profiles_cmd

    def boom(path: Path) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(profiles_cmd, "load_profiles", boom)
    table = exit_codes()
    quiet = CliRunner().invoke(main, ["profiles"], env={"KONSOLE_TRACEBACK": None})
    assert quiet.exit_code == table["software"].code
    assert quiet.stderr == "konsole: error: internal error: RuntimeError: boom\n"
    loud = CliRunner().invoke(main, ["profiles"], env={"KONSOLE_TRACEBACK": "1"})
    assert loud.exit_code == table["software"].code
    assert "Traceback (most recent call last)" in loud.stderr
    assert loud.stderr.endswith("konsole: error: internal error: RuntimeError: boom\n")
