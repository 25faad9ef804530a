"""`konsole watch` and `konsole profiles` through click, with a fake poller (no sockets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from konsole.cli import watch as watch_cmd
from konsole.cli.main import main
from konsole.collect.profiles import Profile
from tests._testutil.builders import table, view
from tests._testutil.fakes import fake_running_local_cluster
from tests._testutil.poller import Fakes, fake_build_poller

T = table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (2, (2, 0, 1), 10)])
FULL = view(tables=[T])
GONE = view(
    (0, 1), tables=[table("db.t", 1, [(0, (0, 1, 2), 10), (1, (1, 2, 0), 10), (0, (2, 0, 1), 10)])]
)


def fake_poller(monkeypatch: pytest.MonkeyPatch, fakes: Fakes) -> list[Profile]:
    """Make `watch` use ``fakes``; returns the profiles it was asked to poll."""
    asked: list[Profile] = []
    monkeypatch.setattr(watch_cmd, "build_poller", fake_build_poller(fakes, asked))
    return asked


def test_watch_prints_events_and_health_as_json_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    fakes = Fakes(views=[FULL, FULL, GONE, RuntimeError("cluster went away")])
    fake_poller(monkeypatch, fakes)
    result = CliRunner().invoke(
        main, ["watch", "--bootstrap", "127.0.0.1:9123", "--format", "jsonl", "--count", "4"]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [(d["type"], d.get("kind") or d.get("status")) for d in lines]
    assert kinds[0] == ("health", "UNKNOWN")  # the fake scrape misses tablet-server 1 and 2
    assert ("event", "server_left") in kinds
    assert ("event", "leaders_moved") in kinds
    assert ("event", "replicas_offline") in kinds
    assert ("event", "poll_failed") in kinds
    # RED from poll 3 on: tablet server 2 is gone holding replicas (issue 38), and stays
    # RED through the failed poll (a health line is printed when the status changes)
    assert [k for k in kinds if k[0] == "health"][-1] == ("health", "RED")
    left = next(d for d in lines if d.get("kind") == "server_left")
    assert left["subject"] == {"kind": "server", "name": "tablet-server 2"}
    # the one event shape (docs/cli.md): an ISO time and its epoch milliseconds
    assert set(left) == {
        "type", "time", "time_ms", "kind", "severity", "subject", "message", "count",
        "samples", "details",
    }  # fmt: skip
    assert left["time"].endswith("Z") and isinstance(left["time_ms"], int)
    assert "poll 4 failed (1 in a row): cluster went away" in result.stderr


def test_watch_text_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_poller(monkeypatch, Fakes(views=[FULL, GONE]))
    result = CliRunner().invoke(main, ["watch", "--count", "2"], env={"FLUSS_BOOTSTRAP": ""})
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert (
        "WARNING  server_left             tablet-server 2: tablet-server 2 (127.0.0.1:9202) left"
        in text
    )
    assert " HEALTH   UNKNOWN (derived): " in text


def test_watch_prints_the_report_command_after_a_warning_when_a_recorder_writes_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from store import open_writer

    env = {"FLUSS_BOOTSTRAP": "", "XDG_STATE_HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    # watch records nothing: with no recorder on the cluster's file, no report to point at
    fake_poller(monkeypatch, Fakes(views=[FULL, GONE]))
    alone = CliRunner().invoke(main, ["watch", "--count", "2"], env=env)
    assert alone.exit_code == 0, alone.output
    assert "server_left" in alone.stdout and "report:" not in alone.stderr
    # a recorder holds the cluster's own file: the hint names it
    writer = open_writer(tmp_path / "konsole" / "history" / "default.sqlite")
    try:
        fake_poller(monkeypatch, Fakes(views=[FULL, GONE]))
        result = CliRunner().invoke(main, ["watch", "--count", "2"], env=env)
    finally:
        writer.close()
    assert result.exit_code == 0, result.output
    # Once, after the poll whose events hold warnings, naming the cluster's own history.
    (line,) = [x for x in result.stderr.splitlines() if "report:" in x]
    assert line.startswith(f"  report: konsole history report --history {tmp_path}")
    assert " --around 20" in line and line.endswith(".html")


def test_watch_count_exits_2_when_every_poll_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_poller(monkeypatch, Fakes(views=[RuntimeError("down"), RuntimeError("down")]))
    result = CliRunner().invoke(main, ["watch", "--bootstrap", "127.0.0.1:9123", "--count", "2"])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == (
        "konsole: error: none of the 2 poll(s) reached the cluster"
    )
    fake_poller(monkeypatch, Fakes(views=[RuntimeError("down"), FULL]))
    once = CliRunner().invoke(main, ["watch", "--bootstrap", "127.0.0.1:9123", "--count", "2"])
    assert once.exit_code == 0, once.output


def test_watch_uses_the_local_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked = fake_poller(monkeypatch, Fakes())
    fake_running_local_cluster(monkeypatch, "127.0.0.1:35783")
    result = CliRunner().invoke(
        main, ["watch", "--local", "--run-dir", str(tmp_path), "--count", "1"]
    )
    assert result.exit_code == 0, result.output
    assert asked[0].source == "local"
    assert asked[0].coordinators == ("127.0.0.1:35783",)


def test_watch_local_without_a_running_cluster_is_unavailable(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["watch", "--local", "--run-dir", str(tmp_path / "none")])
    assert result.exit_code == 69
    assert "no running local cluster in" in result.stderr


CONFIG = """\
[profiles.prod]
bootstrap = "127.0.0.1:9123"
sasl_user = "ops"
password_env = "KONSOLE_TEST_PROD_PASSWORD"
metrics_port = 9249
"""


@pytest.mark.parametrize(
    ("args", "config", "words"),
    [
        (["--profile", "prod", "--bootstrap", "h"], CONFIG, "give only one of"),
        (["--profile", "nope"], CONFIG, "no profile 'nope'"),
        (
            ["--profile", "prod"],
            CONFIG.replace("metrics_port", "metric_port"),
            ":5: profiles.prod.metric_port: unknown key",
        ),
        (["--profile", "prod"], CONFIG, "KONSOLE_TEST_PROD_PASSWORD"),
        (["--interval", "0"], CONFIG, "0"),
        (["--bogus"], CONFIG, "No such option"),
    ],
)
def test_bad_configuration_exits_3_with_one_line(
    tmp_path: Path, args: list[str], config: str, words: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(config)
    result = CliRunner().invoke(
        main, ["watch", "--config", str(path), *args], env={"KONSOLE_TEST_PROD_PASSWORD": None}
    )
    assert result.exit_code == 3
    assert words in result.stderr
    assert result.stdout == ""


def test_profiles_lists_without_secrets(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    runner = CliRunner()
    env = {"KONSOLE_TEST_PROD_PASSWORD": "do-not-print-me"}
    text = runner.invoke(main, ["profiles", "--config", str(path)], env=env)
    assert text.exit_code == 0
    assert "prod" in text.stdout and "password=env KONSOLE_TEST_PROD_PASSWORD" in text.stdout
    as_json = runner.invoke(main, ["profiles", "--config", str(path), "--format", "json"], env=env)
    data = json.loads(as_json.stdout)
    assert data["profiles"][0]["name"] == "prod"
    for output in (text.output, as_json.output):
        assert "do-not-print-me" not in output


@pytest.mark.parametrize(
    ("config", "code", "words"),
    [
        ("", 0, "no profiles in"),
        (None, 3, "does not exist"),  # --config names a file: a missing one is an error
        ("[profiles.a]\nbootstrap = [1]\n", 3, ":2: profiles.a.bootstrap:"),
    ],
)
def test_profiles_empty_or_bad(tmp_path: Path, config: str | None, code: int, words: str) -> None:
    path = tmp_path / "config.toml"
    if config is not None:
        path.write_text(config)
    result = CliRunner().invoke(main, ["profiles", "--config", str(path)])
    assert result.exit_code == code
    assert words in result.output


def test_profiles_with_an_absent_default_config_lists_none(tmp_path: Path) -> None:
    # KONSOLE_CONFIG, like the default path, may name a file not made yet: no profiles
    env = {"KONSOLE_CONFIG": str(tmp_path / "absent.toml")}
    result = CliRunner().invoke(main, ["profiles"], env=env)
    assert result.exit_code == 0 and "no profiles in" in result.output


def test_unread_items_are_reported_when_they_change_not_every_poll(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Live, a stopped server's scrape failed every poll and stderr repeated the same line
    once a second: now a line comes when the set of unread items changes."""
    fake_poller(monkeypatch, Fakes(views=[FULL] * 5))
    result = CliRunner().invoke(main, ["watch", "--bootstrap", "127.0.0.1:9123", "--count", "5"])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if "not read" in ln]
    assert len(lines) == 1 and "poll 1: 1 item(s) not read (first: " in lines[0]
