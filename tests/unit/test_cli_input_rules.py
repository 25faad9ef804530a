"""Issue 40's input findings, each as the issue found it: what a user types never replaces
a device or a link, never hangs on a FIFO, never passes NaN, never ends as an internal
error, and never makes a directory the user did not ask for.

In process (click's ``CliRunner``) where nothing could hang; as a real process with a
bound where the finding was a hang (a FIFO opened for reading blocks the opener).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from konsole.cli.main import main
from tests._testutil.cli import REPO
from tests._testutil.cli_tree import exit_codes, leaf_commands, needed_args
from tests._testutil.recorded import server_left_history
from tests._testutil.unstarved import CHILD_SAFETY_NET_S

CODES = exit_codes()
USAGE = CODES["usage"].code
IO = CODES["io"].code


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def one_error(result: Result) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("konsole: error: "), result.stderr
    return lines[0]


@pytest.fixture
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history in a directory of its own (a reader adds SQLite's -shm beside it)."""
    return server_left_history(tmp_path_factory.mktemp("history") / "h.sqlite")


@pytest.fixture(autouse=True)
def no_user_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("KONSOLE_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.delenv("FLUSS_BOOTSTRAP", raising=False)


# =========================================================================== finding 1


@pytest.mark.parametrize(
    "command",
    [
        ["history", "export", "events", "--format", "csv"],
        ["history", "report", "--around", "2026-01-01T00:00", "--format", "html"],
    ],
    ids=["export", "report"],
)
def test_an_output_never_replaces_a_link_a_device_or_makes_a_directory(
    command: list[str], history: Path, tmp_path: Path
) -> None:
    target = tmp_path / "target.csv"
    target.write_text("keep me\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    missing = tmp_path / "nonexistent" / "d" / "r.csv"
    for out in (link, fifo, missing, Path("/dev/null")):
        before = sorted(p.name for p in tmp_path.iterdir())
        result = run(*command, "--history", str(history), "-o", str(out))
        assert result.exit_code == IO, (out, result.output)
        assert str(out) in one_error(result)
        assert sorted(p.name for p in tmp_path.iterdir()) == before, out  # no temp left
    assert link.is_symlink() and target.read_text() == "keep me\n"
    assert Path("/dev/null").is_char_device()
    assert not (tmp_path / "nonexistent").exists()


def test_an_output_replaces_a_regular_file(history: Path, tmp_path: Path) -> None:
    out = tmp_path / "e.csv"
    out.write_text("old\n")
    result = run("history", "export", "events", "--history", str(history), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith('"type","time","time_ms",')


class Connected(Exception):
    """A command got as far as connecting (or opening its screen)."""


def takes_history() -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command that takes ``--history`` (the top-level group: the console)."""
    return [(p, c) for p, c in leaf_commands() if any(x.name == "history" for x in c.params)]


#: Each command with ``--history`` that writes the file only when asked: how to ask.
WRITES_WITH = {("check",): ["--record"], ("history", "notes"): ["--add", "a note"]}


@pytest.fixture
def no_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way a command with ``--history`` reaches a server or a screen raises Connected."""
    import konsole.cli.capacity
    import konsole.cli.check
    import konsole.cli.console
    import konsole.cli.record
    import konsole.collect.actions.service

    def connected(*args: object, **kwargs: object) -> None:
        raise Connected

    for owner, name in [
        (konsole.cli.check, "look"),
        (konsole.cli.capacity, "_look"),
        (konsole.cli.record, "_record"),
        (konsole.cli.console, "live_feed"),
        (konsole.collect.actions.service, "connect_for"),
    ]:
        monkeypatch.setattr(owner, name, connected)


HISTORY_COMMANDS = takes_history()


@pytest.mark.parametrize(
    ("path", "command"),
    HISTORY_COMMANDS,
    ids=[" ".join(p) or "konsole" for p, _ in HISTORY_COMMANDS],
)
@pytest.mark.parametrize("where", ["after", "before"])
def test_a_history_in_a_missing_directory_is_74_before_connecting_and_makes_none(
    path: tuple[str, ...],
    command: click.Command,
    where: str,
    tmp_path: Path,
    no_connect: None,
) -> None:
    """Every command that takes --history, the one it would write (check --record, notes
    --add) or only read: an explicit file in a missing directory is refused (74) before
    anything connects, given after the command or before it (to the group)."""
    missing = tmp_path / "nonexistent" / "dir" / "h.sqlite"
    arguments, options = needed_args(command, tmp_path)
    options += ["--bootstrap", "127.0.0.1:1"] if path[:1] != ("history",) else []
    options += WRITES_WITH.get(path, []) + (["--allow-writes"] if path[:1] == ("admin",) else [])
    given = ["--history", str(missing)]
    args = (
        [*path, *arguments, *options, *given]
        if where == "after" or not path
        else ([*given, *path, *arguments, *options])
    )
    result = run(*args)
    said = (args, result.stdout, result.stderr)
    if where == "before" and path[:1] == ("admin",):  # not every admin command takes it
        assert result.exit_code == USAGE, said
        assert "--history given before `admin`" in one_error(result)
        assert not (tmp_path / "nonexistent").exists()
        return
    plugin = path[:1] == ("check",)
    assert result.exit_code == (CODES["io"].check if plugin else IO), said
    assert one_error(result).endswith(f"no such directory {str(missing.parent)!r}"), said
    if plugin:  # the monitoring plugin's line on stdout (docs/cli.md)
        assert result.stdout.startswith("FLUSS UNKNOWN: cannot write "), said
    assert not (tmp_path / "nonexistent").exists()


def test_every_command_that_writes_a_history_is_among_those_tried() -> None:
    """The premise of the test above: the commands known to write a history all take
    --history (a command that stopped taking it would drop out of the test silently)."""
    names = {" ".join(p) for p, _ in HISTORY_COMMANDS}
    assert {"", "ui", "record", "check", "history notes", "admin server drain"} <= names
    assert {"capacity", "admin acl create", "admin config set", "admin table set"} <= names


def test_serve_takes_no_history_even_from_the_group(tmp_path: Path, no_connect: None) -> None:
    """serve records each cluster into its own default file: an explicit --history before
    it is a usage error, and nothing is made."""
    missing = tmp_path / "nonexistent" / "h.sqlite"
    result = run("--history", str(missing), "serve", "--bootstrap", "127.0.0.1:1")
    assert result.exit_code == USAGE, result.output
    assert "--history given before `serve`" in one_error(result)
    assert not missing.parent.exists()


def test_a_history_in_an_existing_directory_goes_on_to_connect(
    tmp_path: Path, no_connect: None
) -> None:
    """The control of the refusal above: the same command lines with the directory there
    get past it (to the connect seam, or a history that is not there yet)."""
    for args in (
        ["check", "--record", "--bootstrap", "127.0.0.1:1"],
        ["capacity", "--bootstrap", "127.0.0.1:1"],
        ["admin", "server", "drain", "1", "--allow-writes", "--bootstrap", "127.0.0.1:1"],
    ):
        result = run(*args, "--history", str(tmp_path / "h.sqlite"))
        assert "no such directory" not in result.stderr, (args, result.stderr)
        assert "Connected" in result.stderr, (args, result.stderr)


# =========================================================================== finding 2


@pytest.mark.parametrize(
    "args",
    [
        ["watch", "--bootstrap", "127.0.0.1:1", "--interval"],
        ["preview", "db.t", "--bootstrap", "127.0.0.1:1", "--timeout"],
        ["lookup", "db.t", "id=1", "--bootstrap", "127.0.0.1:1", "--timeout"],
        ["serve", "--bootstrap", "127.0.0.1:1", "--alert-for"],
        ["admin", "server", "drain", "1", "--bootstrap", "127.0.0.1:1", "--timeout"],
    ],
    ids=["watch", "preview", "lookup", "serve", "drain"],
)
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "1e999"])
def test_nan_and_infinity_are_usage_errors(args: list[str], value: str) -> None:
    result = run(*args, value)
    assert result.exit_code == USAGE, result.output
    assert "finite" in one_error(result) or "range" in one_error(result)


def test_check_with_a_nan_timeout_is_unknown_not_an_outage(tmp_path: Path) -> None:
    """In a real process: before, check's watchdog answered CRITICAL at once (exit 2, the
    outage page) and ended the process it ran in."""
    done = real("check", "--bootstrap", "127.0.0.1:1", "-t", "nan", tmp_path=tmp_path)
    assert done.returncode == USAGE, done.stdout
    assert done.stdout.startswith(b"FLUSS UNKNOWN: ") and b"finite" in done.stderr


# =========================================================================== finding 3


@pytest.mark.parametrize(
    "args",
    [
        ["history", "events", "--since", "99999999999999999999"],
        ["history", "as-of", "99999999999999999999"],
        ["history", "notes", "--add", "x", "--at", "99999999999999999999"],
        ["history", "report", "-o", "r.html", "--around", "99999999999999999999"],
        ["history", "report", "-o", "r.html", "--around", "now", "--window", "99999999999w"],
        ["history", "events", "--since", "9999999999w"],
        ["history", "events", "--limit", "99999999999999999999999"],
        ["history", "report", "-o", "", "--around", "now"],
        ["cluster", "status", "--run-dir", ""],
        ["record", "--history", "", "--bootstrap", "127.0.0.1:1"],
    ],
)
def test_huge_and_empty_values_are_usage_errors_not_internal_ones(
    args: list[str], history: Path, tmp_path: Path
) -> None:
    if "--history" not in args:
        args = [*args, "--history", str(history)]
    result = run(*args)
    assert result.exit_code == USAGE, result.output
    one_error(result)
    assert not (tmp_path / "r.html").exists()


def real(
    *args: str, tmp_path: Path, timeout: float = CHILD_SAFETY_NET_S
) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    for name in ("FLUSS_BOOTSTRAP", "KONSOLE_CONFIG", "KONSOLE_TRACEBACK"):
        env.pop(name, None)
    argv = [sys.executable.encode(), b"-m", b"konsole.cli"]
    argv += [a.encode("utf-8", "surrogateescape") for a in args]
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=REPO,
        env=env,
        timeout=timeout,
        check=False,
    )


def test_text_that_is_not_utf8_is_a_usage_error(history: Path, tmp_path: Path) -> None:
    bad = b"\xff".decode("utf-8", "surrogateescape")
    for args in (
        ["history", "events", "--subject", bad, "--history", str(history)],
        ["history", "notes", "--add", bad, "--history", str(history)],
    ):
        done = real(*args, tmp_path=tmp_path)
        assert done.returncode == USAGE, (args, done.stderr)
        assert done.stderr.decode().startswith("konsole: error: ")
        assert len(done.stderr.splitlines()) == 1 and b"UTF-8" in done.stderr


def test_a_bootstrap_of_100k_characters_is_a_usage_error(tmp_path: Path) -> None:
    result = run("check", "--bootstrap", "h" * 100_000 + ":1", "-t", "2")
    assert result.exit_code == USAGE, result.output[-300:]
    assert len(one_error(result)) < 400  # the value is not echoed back whole


# =========================================================================== finding 4


def test_a_fifo_as_config_or_history_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in (
        ["check", "-t", "2", "--bootstrap", "127.0.0.1:1", "--config", str(fifo)],
        ["profiles", "--config", str(fifo)],
        ["history", "events", "--history", str(fifo)],
        ["record", "--bootstrap", "127.0.0.1:1", "--count", "1", "--history", str(fifo)],
    ):
        done = real(*args, tmp_path=tmp_path)  # before: never answered
        assert done.returncode == USAGE, (args, done.stderr)
        assert b"a FIFO, not a regular file" in done.stderr.splitlines()[-1], done.stderr
    assert fifo.exists() and not fifo.is_file()


def test_check_answers_within_its_timeout_with_a_fifo_as_konsole_config(tmp_path: Path) -> None:
    """KONSOLE_CONFIG is no option click checks: the profiles loader refuses the FIFO, and
    check's watchdog runs from before the profiles are read."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "KONSOLE_CONFIG": str(fifo), "XDG_DATA_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "konsole.cli", "check", "-t", "2", "--profile", "prod"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=REPO,
        env=env,
        timeout=CHILD_SAFETY_NET_S,
        check=False,
    )
    # Before: no answer at all. Now the refusal (3), or on a machine too busy to start
    # Python within 2 s, the watchdog's timeout answer (2): an answer either way.
    assert done.returncode in (CODES["config"].check, CODES["unreachable"].check), done
    assert done.stdout.startswith((b"FLUSS UNKNOWN: ", b"FLUSS CRITICAL: no answer within"))
    if done.returncode == CODES["config"].check:
        assert b"a FIFO, not a regular file" in done.stderr


# =========================================================================== finding 6


ACL_REST = ["--principal", "User:a", "--operation", "READ", "--allow-writes"]


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["preview", "db.t", "--where", "amount >"], CODES["data"].code, "expected a value"),
        (["admin", "config", "set", "", "v", "--allow-writes"], USAGE, "not a config key"),
        (
            ["admin", "acl", "create", "--resource", "table:bad", *ACL_REST],
            USAGE,
            "table:DB.TABLE",
        ),
        (
            ["admin", "acl", "create", "--resource", "database:b@d", *ACL_REST],
            USAGE,
            "is invalid",
        ),
        (
            ["admin", "server", "drain", "99999999999999999999", "--allow-writes"],
            USAGE,
            "range",
        ),
    ],
    ids=["where", "config-key", "acl-table", "acl-database", "drain-id"],
)
def test_what_needs_no_server_is_checked_before_connecting(
    args: list[str], code: int, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import konsole.cli.preview
    import konsole.collect.actions.service

    def connected(*args: object, **kwargs: object) -> None:
        raise Connected

    monkeypatch.setattr(konsole.cli.preview, "_main", connected)
    monkeypatch.setattr(konsole.collect.actions.service, "connect_for", connected)
    result = run(*args, "--bootstrap", "127.0.0.1:1")
    assert result.exit_code == code, result.output
    assert said in one_error(result)


# =========================================================================== finding 7


def test_history_commands_take_config_and_say_no_profile(tmp_path: Path, history: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[profiles.prod]\nbootstrap = "127.0.0.1:1"\n')
    unknown = run("history", "events", "--config", str(config), "--profile", "nope")
    assert unknown.exit_code == CODES["config"].code, unknown.output
    assert "no profile 'nope' (profiles: prod)" in one_error(unknown)
    known = run("history", "events", "--config", str(config), "--profile", "prod")
    assert known.exit_code == CODES["no-input"].code, known.output  # a profile, no file yet


def test_the_group_s_bootstrap_reaches_a_history_command(tmp_path: Path) -> None:
    result = run("--bootstrap", "127.0.0.1:1", "history", "events")
    assert result.exit_code == CODES["no-input"].code, result.output
    assert "bootstrap-127.0.0.1_1.sqlite: no such history file" in one_error(result)
    refused = run("--bootstrap", "127.0.0.1:1", "cluster", "status")
    assert refused.exit_code == USAGE and "given before `cluster`" in one_error(refused)


def test_a_series_of_a_metric_never_recorded_found_nothing(history: Path) -> None:
    args = ["history", "series", "tablet-server 1", "--metric", "nope", "--history", str(history)]
    result = run(*args)
    assert result.exit_code == CODES["partial"].code, result.output
    assert result.stdout == "" and "no metric nope" in one_error(result)


def test_a_malformed_lookup_key_is_a_usage_error() -> None:
    result = run("lookup", "a.b", "id", "--bootstrap", "127.0.0.1:1")
    assert result.exit_code == USAGE, result.output
    assert "bad key" in one_error(result)


# =========================================================================== finding 8


def test_notes_json_has_time_ms_and_notes_csv_the_export_s_columns(history: Path) -> None:
    import json

    added = run("history", "notes", "--add", "rolled ts-1", "--history", str(history))
    assert added.exit_code == 0, added.output
    listed = run("history", "notes", "--format", "json", "--history", str(history))
    (note,) = json.loads(listed.stdout)
    assert note["time"].endswith("Z") and isinstance(note["time_ms"], int)
    csv = run("history", "notes", "--format", "csv", "--history", str(history))
    export = run("history", "export", "notes", "--format", "csv", "--history", str(history))
    assert csv.stdout.splitlines()[0] == export.stdout.splitlines()[0]


# =========================================================================== finding 9


def test_a_missing_choice_lists_its_choices_on_one_readable_line() -> None:
    result = run(
        "admin", "acl", "create", "--resource", "cluster", "--principal", "User:a",
        "--bootstrap", "127.0.0.1:1",
    )  # fmt: skip
    assert result.exit_code == USAGE
    assert "Choose from: all, alter, create," in one_error(result)


def test_help_at_80_columns_names_no_repository_path_or_protocol_request() -> None:
    import re

    from tests._testutil.cli_tree import every_command

    for path, _ in every_command():
        out = CliRunner().invoke(main, [*path, "--help"], terminal_width=80).output
        for line in out.splitlines():
            assert not re.search(r"docs/|\.md\)", line), (path, line)
            assert not re.search(r"\b(Fetch|Alter|Create|Drop|List)[A-Z][a-z]+[A-Z]?", line), (
                path,
                line,
            )
            assert not re.search(r"[{\[][^\]}]*-$", line), (path, line)  # a choice cut
            assert not line.rstrip().endswith(("e.g.", "e.g....")), (path, line)


def test_check_asked_for_json_answers_a_refused_argument_in_json(tmp_path: Path) -> None:
    import json

    done = real("check", "--format", "json", "-t", "nan", tmp_path=tmp_path)
    assert done.returncode == USAGE
    answer = json.loads(done.stdout)
    assert (answer["status"], answer["exit_code"]) == ("UNKNOWN", USAGE)
    assert "finite" in answer["summary"] and answer["schema"] == "konsole.model.check/3"
    assert len(done.stderr.splitlines()) == 1
