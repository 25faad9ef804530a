"""The shared options: one history file per cluster whichever command names it, and the
options given before a command name (the group's context object).

Every command that writes or reads a history runs for real through click, without
``--history``, with the user data dir in a temporary directory; only the cluster is faked
(no poll, no look, no Textual app), so the file each command touches is the one it chose.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import konsole.cli.console
import konsole.ui.app
from konsole.cli import check as check_cmd
from konsole.cli import record as record_cmd
from konsole.cli.main import main
from konsole.collect.profiles import Profile
from konsole.model.check import CheckResult, ExitCode, failure
from konsole.model.known_servers import KnownServers
from tests._testutil.fakes import fake_running_local_cluster

CONFIG = """\
[profiles.prod]
bootstrap = "127.0.0.1:9123"
"""

#: The options a user types, the environment around them, and the file the one rule names.
CASES = {
    "profile": (["--profile", "prod"], {}, "prod.sqlite"),
    "local": (["--local"], {}, "local.sqlite"),
    "bootstrap": (["--bootstrap", "127.0.0.1:9123"], {}, "bootstrap-127.0.0.1_9123.sqlite"),
    "env": (
        [],
        {"FLUSS_BOOTSTRAP": "127.0.0.1:9124,127.0.0.1:9125"},
        "bootstrap-127.0.0.1_9124.sqlite",
    ),
    "nothing": ([], {}, "default.sqlite"),
}


class QuietPoller:
    """A poller that ends at once: ``record`` opens its file, then stops."""

    # record seeds the known tablet servers from its history (issue 38)
    known = KnownServers()

    def seed_known(self, known: KnownServers) -> None:
        self.known = known

    def follow_retirements(self, look: Any) -> None:
        pass

    async def snapshots(self, stop: Any) -> AsyncIterator[Any]:
        return
        yield


@pytest.fixture
def data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The user data dir (platformdirs reads XDG_DATA_HOME) and a profiles file; returns
    the folder the history files go to."""
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("KONSOLE_CONFIG", str(config))
    monkeypatch.setenv("KONSOLE_RUN_DIR", str(tmp_path / "run"))
    monkeypatch.delenv("FLUSS_BOOTSTRAP", raising=False)
    fake_running_local_cluster(monkeypatch)

    async def release() -> None:
        return None

    monkeypatch.setattr(record_cmd, "build_poller", lambda p, i: (QuietPoller(), release))

    async def look(profile: Profile, **kw: Any) -> CheckResult:
        return failure(ExitCode.WARNING, f"looked at {profile.name}", cluster=kw["cluster"])

    monkeypatch.setattr(check_cmd, "look", look)
    return tmp_path / "data" / "konsole" / "history"


def run(args: list[str], env: dict[str, str]) -> str:
    result = CliRunner().invoke(main, args, env=env)
    # 1: the fake look's WARNING; anything raised but an exit is a failure of the test
    assert result.exit_code in (0, 1), (args, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.output


def console_history(monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str]) -> Any:
    """The history file the console would record into."""
    opened: list[Any] = []

    class App:
        def __init__(self, feed: Any, **kw: Any) -> None:
            opened.append(feed)

        def run(self) -> None:
            return None

    monkeypatch.setattr(konsole.ui.app, "KonsoleApp", App)
    monkeypatch.setattr(konsole.cli.console, "has_terminal", lambda: True)
    result = CliRunner().invoke(main, ["ui", *args], env=env)
    assert result.exit_code == 0, result.output
    return opened[0].history_path


@pytest.mark.parametrize("case", list(CASES))
def test_every_command_uses_the_same_history_file(
    case: str, data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args, env, name = CASES[case]
    run(["record", *args, "--count", "1"], env)
    assert sorted(p.name for p in data_home.glob("*.sqlite")) == [name]
    run(["check", *args, "--record"], env)
    run(["history", "notes", *args, "--add", "seen by hand"], env)
    assert sorted(p.name for p in data_home.glob("*.sqlite")) == [name]
    notes = run(["history", "notes", *args, "--format", "csv"], env)
    assert "konsole check: FLUSS WARNING: looked at" in notes and "seen by hand" in notes
    assert console_history(monkeypatch, args, env) == data_home / name
    # the console without a history records nothing, wherever
    assert console_history(monkeypatch, [*args, "--no-history"], env) is None


def test_history_overrides_the_rule_for_every_command(
    data_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "mine.sqlite"
    args = ["--bootstrap", "127.0.0.1:9123", "--history", str(mine)]
    run(["record", *args, "--count", "1"], {})
    run(["check", *args, "--record"], {})
    assert "konsole check:" in run(["history", "notes", *args], {})
    assert console_history(monkeypatch, args, {}) == mine
    assert not data_home.exists()


def test_options_before_the_command_name_reach_it(data_home: Path) -> None:
    run(["--bootstrap", "127.0.0.1:9123", "record", "--count", "1"], {})
    run(["--bootstrap", "127.0.0.1:9123", "check", "--record"], {})
    # the command's own value wins over the group's
    run(["--profile", "prod", "check", "--bootstrap", "127.0.0.1:9123", "--record"], {})
    assert sorted(p.name for p in data_home.glob("*.sqlite")) == ["bootstrap-127.0.0.1_9123.sqlite"]
    notes = run(["history", "notes", "--bootstrap", "127.0.0.1:9123", "--format", "csv"], {})
    assert notes.count("konsole check:") == 2


@pytest.mark.parametrize(
    "args",
    [
        ["--interval", "2", "watch"],  # the console's polling interval, not watch's
        ["--no-history", "check"],  # check does not take it at all
        ["--bootstrap", "127.0.0.1:9123", "cluster", "status"],  # a group that never takes it
    ],
)
def test_options_before_a_command_that_does_not_take_them_are_refused(
    args: list[str], data_home: Path
) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3, result.output
    assert f"given before `{args[-1] if args[-1] != 'status' else 'cluster'}`" in result.output
    assert not data_home.exists()


def test_help_lists_the_shared_options_with_their_help() -> None:
    for command in (["--help"], ["ui", "--help"], ["watch", "--help"], ["check", "--help"]):
        out = CliRunner().invoke(main, command).output
        assert "--bootstrap HOST:PORT,..." in out, command
        assert "Bootstrap servers, comma-separated" in out, command
        assert "--run-dir" in out and "--config FILE" in out, command
    notes = CliRunner().invoke(main, ["history", "notes", "--help"]).output
    assert "--history FILE" in notes and "--profile TEXT" in notes
    assert "--run-dir" not in notes  # reading a file connects to nothing
