"""Log lines (parsing, masking) and log sources (files, globs, commands, profiles)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from konsole.collect.logs.reading import (
    CommandSource,
    FileSource,
    LogNotFound,
    LogTimeout,
    LogUnreadable,
    ServerRef,
    read_log,
    server_ref,
)
from konsole.collect.profiles import parse_profiles, profile_from_local
from konsole.errors import ProfileError
from konsole.model.logs import in_window, mask, parse_line, parse_lines
from tests._testutil.unstarved import Stopwatch

RUNNER = (
    "2026-12-01 17:40:01,123 INFO  TabletServer [main] - Starting Fluss tablet server 1",
    "2026-12-01 17:40:02,500 WARN  ReplicaManager [worker-3] - ISR shrunk for bucket 4",
    "2026-12-01 17:40:03,000 ERROR NettyServer [io-1] - boom",
    "java.lang.IllegalStateException: boom",
    "\tat org.apache.fluss.Foo.bar(Foo.java:12)",
)
#: The distribution's own layout: %-60c %x.
DISTRIBUTION = (
    "2026-12-01 17:40:04,001 INFO  org.apache.fluss.server.tablet.TabletServer"
    + " " * 18
    + " - Shutting down the tablet server"
)
UTC_OFFSET = 0.0


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


# ----------------------------------------------------------------- parsing


def test_both_fluss_layouts_are_read_for_time_and_level() -> None:
    lines = parse_lines((*RUNNER, DISTRIBUTION), utc_offset_s=UTC_OFFSET)
    assert [line.level for line in lines] == ["INFO", "WARN", "ERROR", "ERROR", "ERROR", "INFO"]
    assert lines[0].at == pytest.approx(at("2026-12-01T17:40:01.123"))
    assert lines[0].message == "Starting Fluss tablet server 1"
    assert lines[5].message == "Shutting down the tablet server"
    assert [line.flagged for line in lines] == [False, True, True, True, True, False]
    # The stack trace belongs to the error above it.
    assert lines[3].continued and lines[3].at == lines[2].at


def test_a_line_in_an_unknown_layout_is_kept_raw() -> None:
    line = parse_line("Dec 01 17:40:01 host fluss[12]: started")
    assert (line.at, line.level) == (None, None)
    assert line.raw == line.message == "Dec 01 17:40:01 host fluss[12]: started"
    # With no time anywhere, a window cannot tell: every line is shown.
    assert in_window([line], 0, 1) == [line]


def test_the_window_keeps_the_lines_between_its_ends() -> None:
    lines = parse_lines(RUNNER, utc_offset_s=UTC_OFFSET)
    kept = in_window(lines, at("2026-12-01T17:40:02"), at("2026-12-01T17:40:02.9"))
    assert [line.level for line in kept] == ["WARN"]


@pytest.mark.parametrize(
    ("line", "hidden"),
    [
        ('sasl.jaas.config: ... password="s3cret" user_admin="adminpw";', ("s3cret", "adminpw")),
        ("security.sasl.password=hunter2 next", ("hunter2",)),
        ("client.security.token: abc123", ("abc123",)),
    ],
)
def test_secrets_are_masked(line: str, hidden: tuple[str, ...]) -> None:
    masked = mask(line)
    assert "******" in masked
    assert not any(h in masked for h in hidden)
    assert all(h not in parse_line(line).raw for h in hidden)


def test_the_runners_mask_is_not_masked_twice() -> None:
    assert mask('password="******"') == 'password="******"'


# ----------------------------------------------------------------- sources


def write_log(path: Path, lines: tuple[str, ...] = RUNNER) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


SERVER = ServerRef("tablet-server 1", "127.0.0.1", "1")


def test_a_file_and_a_glob_are_read(tmp_path: Path) -> None:
    write_log(tmp_path / "ts-1.log")
    assert [
        line.raw for line in read_log(FileSource(str(tmp_path / "ts-1.log")), SERVER, since=0)
    ] == list(RUNNER)
    pattern = str(tmp_path / "ts-{id}*.log")
    assert len(read_log(FileSource(pattern), SERVER, since=0)) == len(RUNNER)


def test_a_glob_matching_nothing_says_so(tmp_path: Path) -> None:
    with pytest.raises(LogNotFound, match=r"tablet-server 1: log source .* matches no file"):
        read_log(FileSource(str(tmp_path / "*.log")), SERVER, since=0)
    with pytest.raises(LogNotFound, match="does not exist"):
        read_log(FileSource(str(tmp_path / "none.log")), SERVER, since=0)


def test_an_unreadable_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(LogUnreadable, match="directory"):
        read_log(FileSource(str(tmp_path)), SERVER, since=0)


def test_the_byte_bound_keeps_the_end_without_a_cut_line(tmp_path: Path) -> None:
    path = write_log(tmp_path / "big.log", RUNNER[:1] * 1000 + RUNNER[1:2])
    lines = read_log(FileSource(str(path)), SERVER, since=0, max_bytes=1000)
    assert lines[-1].level == "WARN"
    assert all(line.at is not None for line in lines)
    assert sum(len(line.raw) + 1 for line in lines) <= 1000


def test_a_command_reads_the_same_lines_as_the_file(tmp_path: Path) -> None:
    path = write_log(tmp_path / "tablet-server-1.log")
    command = CommandSource(("sh", "-c", "tail -n 500 " + str(tmp_path / "{server}.log")))
    by_file = read_log(FileSource(str(path)), SERVER, since=0)
    assert read_log(command, SERVER, since=0) == by_file


def test_placeholders_fill_one_argument_each(tmp_path: Path) -> None:
    out = tmp_path / "argv"
    script = "import sys; open(sys.argv[1], 'w').write(chr(10).join(sys.argv[2:]))"
    argv = (sys.executable, "-c", script, str(out), "{server}", "{host}", "{id}", "--since={since}")
    hostile = ServerRef("tablet-server 1", "h; rm -rf x $(y)", "1")
    read_log(CommandSource(argv), hostile, since=at("2026-12-01T17:00:00"))
    assert out.read_text().split("\n") == [
        "tablet-server-1",
        "h; rm -rf x $(y)",
        "1",
        "--since=2026-12-01T17:00:00Z",
    ]


def test_a_command_that_hangs_is_killed_at_its_timeout() -> None:
    watch = Stopwatch()  # less the CPU waits of a starved run (nice 19)
    with pytest.raises(LogTimeout, match=r"timed out after 0.3 s"):
        read_log(CommandSource(("sh", "-c", "echo one; sleep 30"), timeout=0.3), SERVER, since=0)
    assert watch.elapsed() < 5


def test_a_failing_or_missing_command_says_why() -> None:
    with pytest.raises(LogUnreadable, match="exited with 3: nope"):
        read_log(CommandSource(("sh", "-c", "echo nope >&2; exit 3")), SERVER, since=0)
    with pytest.raises(LogUnreadable, match="did not start"):
        read_log(CommandSource(("/nonexistent/konsole-logs",)), SERVER, since=0)


def test_server_refs_from_subjects() -> None:
    assert server_ref("tablet-server 2") == ServerRef("tablet-server 2", "", "2")
    assert server_ref("tablet-server 2", "10.0.0.7:9124") == ServerRef(
        "tablet-server 2", "10.0.0.7", "2"
    )
    assert server_ref("coordinator 127.0.0.1:9123") == ServerRef(
        "coordinator 127.0.0.1:9123", "127.0.0.1", "9123"
    )


# ----------------------------------------------------------------- profiles


CONFIG = """
[profiles.prod]
bootstrap = "127.0.0.1:9123"
[profiles.prod.logs]
command = ["ssh", "{host}", "tail", "-n", "500", "/var/log/fluss/{server}.log"]
timeout = 4
[profiles.prod.logs.servers."tablet-server 1"]
path = "/mnt/logs/ts-1/*.log"
"""


def test_a_profile_names_its_log_sources(tmp_path: Path) -> None:
    profile = parse_profiles(CONFIG, tmp_path / "config.toml")["prod"]
    assert profile.logs.source_for("tablet-server 1") == FileSource("/mnt/logs/ts-1/*.log")
    default = profile.logs.source_for("tablet-server 2")
    assert isinstance(default, CommandSource) and default.timeout == 4
    assert default.argv[1] == "{host}"


@pytest.mark.parametrize(
    ("logs", "message"),
    [
        ('path = "/a"\ncommand = ["x"]', "give one of path or command"),
        ('command = "tail -f x"', "must be a list of arguments"),
        ('path = "/a"\ntimeout = 3', "a timeout applies to a command"),
        ('paths = "/a"', "unknown key"),
        ('[profiles.p.logs.servers."ts1"]\npath = "/a"', "name a server as"),
    ],
)
def test_bad_log_sources_are_one_line(tmp_path: Path, logs: str, message: str) -> None:
    text = f'[profiles.p]\nbootstrap = "127.0.0.1:9123"\n[profiles.p.logs]\n{logs}\n'
    with pytest.raises(ProfileError, match=message):
        parse_profiles(text, tmp_path / "config.toml")


def test_a_local_cluster_reads_its_servers_own_files() -> None:
    profile = profile_from_local(
        {
            "bootstrap_servers": ["127.0.0.1:9123"],
            "processes": [
                {"role": "coordinator", "id": 0, "endpoint": "127.0.0.1:9123", "log": "/r/c0.log"},
                {
                    "role": "tablet-server",
                    "id": 1,
                    "endpoint": "127.0.0.1:9124",
                    "log": "/r/t1.log",
                },
                {"role": "zookeeper", "id": 0, "log": "/r/zk.log"},
            ],
        }
    )
    assert profile.logs.source_for("tablet-server 1") == FileSource("/r/t1.log")
    assert profile.logs.source_for("coordinator 127.0.0.1:9123") == FileSource("/r/c0.log")
    assert profile.logs.source_for("tablet-server 9") is None
