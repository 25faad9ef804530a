"""Issue 33's findings ("tried as a new user would"), one test each, run as the user ran
them (through ``konsole``'s group, no server). Those the convention tests already cover
for every command say where: test_cli_bad_input.py (bad values: ``--keep-full -5h``,
``--window -30m``, ``--add ""``, ``--bootstrap ''`` / ``a:b:c``, ``--config`` missing, and
``-h`` / ``--set`` on kill), test_cli_convention.py (a full stdout, help text, the event
shape), test_cli_docs.py (docs that disagreed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fluss_proto.cluster import parse_bootstrap
from konsole.cli import check as check_cmd
from konsole.cli import record as record_cmd
from konsole.cli.main import main
from konsole.collect.profiles import Profile, ProfileError, resolve_profile
from konsole.errors import ExitCode
from konsole.model.check import CheckResult, failure
from konsole.model.timefmt import TimeParseError, parse_duration
from tests._testutil.builders import T0, snap
from tests._testutil.judging import JudgingRecorder
from tests._testutil.poller import Fakes, fake_build_poller
from tests._testutil.recorded import server_left_history


def konsole(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def one_error(result: Result) -> str:
    """The one line a failed command says why in (docs/cli.md)."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("konsole: error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0].removeprefix("konsole: error: ")


@pytest.fixture
def history(tmp_path: Path) -> Path:
    return server_left_history(tmp_path / "h.sqlite")


def test_export_into_a_missing_directory_is_one_line_and_74(history: Path, tmp_path: Path) -> None:
    # was: a FileNotFoundError traceback and exit 1 (preview said 74 for the same)
    target = tmp_path / "no-such-dir" / "ev.csv"
    result = konsole("history", "export", "events", "--history", str(history), "-o", str(target))
    assert result.exit_code == ExitCode.IO_ERROR
    assert one_error(result) == f"cannot write {target}: no such directory {str(target.parent)!r}"
    assert not target.parent.exists()


def test_export_to_a_parquet_file_writes_parquet(history: Path, tmp_path: Path) -> None:
    # was: CSV written into ev.parquet, and "written" said of it
    import pyarrow.parquet as pq

    target = tmp_path / "ev.parquet"
    result = konsole("history", "export", "events", "--history", str(history), "-o", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:4] == b"PAR1"
    rows = pq.read_table(target).to_pylist()
    assert [r["kind"] for r in rows][:1] == ["server_left"] and rows[0][
        "subject"
    ] == "tablet-server 2"
    assert "(parquet)" in result.stderr
    # a suffix that contradicts --format is refused, not written over
    clash = konsole(
        "history",
        "export",
        "events",
        "--history",
        str(history),
        "-o",
        str(target),
        "--format",
        "csv",
    )
    assert clash.exit_code == ExitCode.USAGE and "contradicts" in one_error(clash)


def test_a_config_file_named_but_missing_is_an_error(tmp_path: Path) -> None:
    # was: `profiles` said "no profiles", `serve` polled localhost:9123
    missing = str(tmp_path / "nope.toml")
    for args in (["profiles"], ["serve", "--no-history"], ["watch"], ["check"]):
        result = konsole(*args, "--config", missing)
        assert result.exit_code == ExitCode.USAGE, (args, result.output)
        assert "does not exist" in one_error(result), args


def test_an_empty_or_malformed_bootstrap_is_refused_never_the_default() -> None:
    # was: `check --bootstrap ''` polled localhost; `a:b:c` was taken for an IPv6 address
    with pytest.raises(ValueError, match="a:b:c"):
        parse_bootstrap("a:b:c")
    assert parse_bootstrap("::1") == ["[::1]:9123"]  # a real bare IPv6 address still is one
    with pytest.raises(ProfileError, match="no bootstrap servers"):
        resolve_profile(bootstrap="", env={})
    for value in ("", "a:b:c"):
        result = konsole("check", "--bootstrap", value)
        assert result.exit_code == ExitCode.UNKNOWN
        assert result.stdout.startswith("FLUSS UNKNOWN: ") and "--bootstrap" in one_error(result)


def test_negative_durations_and_blank_notes_are_refused() -> None:
    # was: `record --keep-full -5h`, `report --window -30m`, `notes --add ""` accepted
    for text in ("-5h", "-30m", "-1", "nan", "inf"):
        with pytest.raises(TimeParseError):
            parse_duration(text)
    assert parse_duration("30m") == 1800
    result = konsole("record", "--keep-full", "-5h", "--bootstrap", "127.0.0.1:1")
    assert result.exit_code == ExitCode.USAGE and "--keep-full" in one_error(result)
    result = konsole("history", "notes", "--add", "", "--bootstrap", "127.0.0.1:1")
    assert result.exit_code == ExitCode.USAGE and "a note needs some text" in one_error(result)


def test_a_range_ending_before_it_starts_is_refused_as_report_refuses_it(history: Path) -> None:
    # was: `history events --since now --until 1h` answered nothing with 0
    for command in (["events"], ["notes"], ["series", "db.t"], ["export", "events"]):
        result = konsole(
            "history", *command, "--history", str(history), "--since", "now", "--until", "1h"
        )
        assert result.exit_code == ExitCode.USAGE, (command, result.output)
        assert "is before --since" in one_error(result)


def test_history_info_says_why_a_file_of_failed_polls_has_no_epoch(tmp_path: Path) -> None:
    # was: "none (a file written before epochs, or no poll yet)" for a file with polls
    path = tmp_path / "failed.sqlite"
    recorder = JudgingRecorder(path, say=lambda s: None, clock=lambda: T0 + 100)
    recorder.open()
    recorder.record(snap(None, seq=1, t=T0, failed="refused"))
    recorder.close()
    result = konsole("history", "info", "--history", str(path))
    assert result.exit_code == 0, result.output
    assert (
        "epochs:    none (no recorded poll has reached the cluster yet; an epoch begins "
        "with the first that does)"
    ) in result.stdout
    empty = tmp_path / "empty.sqlite"
    opened = JudgingRecorder(empty, say=lambda s: None)
    opened.open()
    opened.close()
    assert (
        "epochs:    none (no poll recorded yet)"
        in konsole("history", "info", "--history", str(empty)).stdout
    )


class _Watchdog:
    """The check's watchdog would end this process at its deadline: here it never fires."""

    def __init__(self, *args: Any) -> None:
        pass

    def start(self) -> _Watchdog:
        return self

    def say(self, text: str) -> None:
        return None

    def cancel(self) -> None:
        return None


def test_an_address_is_never_shown_as_a_profile_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # was: check's JSON said "profile": "--bootstrap"; record said "recording --bootstrap (...)"
    async def look(profile: Profile, **kw: Any) -> CheckResult:
        return failure(ExitCode.CRITICAL, "looked", cluster=kw["cluster"])

    monkeypatch.setattr(check_cmd, "look", look)
    monkeypatch.setattr(check_cmd, "Watchdog", _Watchdog)
    checked = konsole("check", "--bootstrap", "127.0.0.1:9123", "--format", "json")
    assert json.loads(checked.stdout)["cluster"] == {
        "profile": None,
        "source": "--bootstrap",
        "bootstrap": ["127.0.0.1:9123"],
    }
    monkeypatch.setattr(record_cmd, "build_poller", fake_build_poller(Fakes()))
    recorded = konsole(
        "record",
        "--bootstrap",
        "127.0.0.1:9123",
        "--history",
        str(tmp_path / "h.sqlite"),
        "--count",
        "1",
    )
    assert recorded.exit_code == 0, recorded.output
    assert f"recording 127.0.0.1:9123 into {tmp_path / 'h.sqlite'}" in recorded.stderr
    assert "--bootstrap" not in recorded.stderr


def test_a_bad_alertmanager_in_the_file_names_the_file_line_and_key(tmp_path: Path) -> None:
    # was: "--alertmanager 'x' is not ..." for an option never passed, without file or line
    config = tmp_path / "config.toml"
    config.write_text(
        '[profiles.a]\nbootstrap = "127.0.0.1:1"\n\n[alerts]\nalertmanager = "am:9093"\n'
    )
    result = konsole("serve", "--config", str(config), "--no-history")
    assert result.exit_code == ExitCode.UNKNOWN
    said = one_error(result)
    assert said.startswith(f"{config}:5: alerts.alertmanager: 'am:9093' is not an Alertmanager URL")
    assert "--alertmanager" not in said


def test_one_code_per_situation(
    history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # was: usage 2 or 3 by command; an unusable history 1, 3 or 1; `cluster stop` with no
    # cluster 0 where `kill` said 1; watch/record --count 0 when every poll failed
    for args in (
        ["history", "events", "--bogus"],
        ["check", "--bogus"],
        ["cluster", "start", "--bogus"],
    ):
        assert konsole(*args).exit_code == ExitCode.USAGE, args
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    for command in (
        ["events"],
        ["info"],
        ["as-of", "now"],
        ["report", "--around", "now", "-o", str(tmp_path / "r.html")],
    ):
        assert (
            konsole("history", *command, "--history", str(junk)).exit_code == ExitCode.DATA_ERROR
        ), command
        gone = konsole("history", *command, "--history", str(tmp_path / "gone.sqlite"))
        assert gone.exit_code == ExitCode.NO_INPUT, command
    run = str(tmp_path / "run")
    for command in (["stop"], ["kill", "ts", "1"], ["status"]):
        assert konsole("cluster", *command, "--run-dir", run).exit_code == ExitCode.UNAVAILABLE, (
            command
        )
    from konsole.cli import watch as watch_cmd

    down = Fakes(views=[RuntimeError("down")])
    monkeypatch.setattr(watch_cmd, "build_poller", fake_build_poller(down))
    monkeypatch.setattr(record_cmd, "build_poller", fake_build_poller(down))
    for command in (["watch"], ["record", "--history", str(tmp_path / "r.sqlite")]):
        result = konsole(*command, "--bootstrap", "127.0.0.1:9123", "--count", "2")
        assert result.exit_code == ExitCode.CRITICAL, (command, result.output)
        assert (
            result.stderr.splitlines()[-1]
            == "konsole: error: none of the 2 poll(s) reached the cluster"
        )


def test_one_error_prefix(tmp_path: Path) -> None:
    # was: `error:`, `Error:`, `konsole storage:` ... by command
    for args in (
        ["history", "events", "--history", str(tmp_path / "gone.sqlite")],
        ["storage", "nodot"],
        ["cluster", "kill", "ts", "1", "--run-dir", str(tmp_path)],
        ["preview", "db.t", "--format", "parquet"],
        ["nope"],
    ):
        one_error(konsole(*args))
