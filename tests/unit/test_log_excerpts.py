"""Log excerpts: kept by the store (v4, compressed, under retention) and taken by the keeper
around warning and critical server events once their window has passed."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from konsole.collect.logs.excerpts import ExcerptKeeper
from konsole.collect.logs.reading import CommandSource, FileSource, LogConfig
from store import RetentionPolicy, apply_retention, open_reader, open_writer
from store.rows import EventRow, LogExcerptRow, PollRecord
from store.schema import VERSION
from tests._testutil.history_fixtures import load

T0_MS = 1_764_600_000_000


def local_line(at_ms: int, level: str, text: str) -> str:
    """A line of the local runner's layout, in this host's time zone (as a server writes it)."""
    stamp = datetime.fromtimestamp(at_ms / 1000).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
    return f"{stamp} {level:<5} TabletServer [main] - {text}"


def test_an_excerpt_is_kept_compressed_and_goes_with_the_events(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    lines = tuple(f"line {i} " + "x" * 80 for i in range(200))
    with open_writer(path) as w:
        w.record(PollRecord(at_ms=T0_MS, seq=1, latency_ms=1, ok=True))
        w.add_log_excerpt(
            LogExcerptRow(
                T0_MS, "tablet-server 1", "server_left", T0_MS - 1, T0_MS + 1, "/l", lines
            )
        )
        w.add_log_excerpt(
            LogExcerptRow(T0_MS + 5, "tablet-server 2", "server_left", 0, 1, "cmd", error="boom")
        )
    conn = sqlite3.connect(path)
    (size,) = conn.execute("SELECT length(body) FROM log_excerpts WHERE n_lines = 200").fetchone()
    conn.close()
    assert size < sum(len(line) for line in lines) / 5
    with open_reader(path) as r:
        first, second = r.log_excerpts(T0_MS - 10, T0_MS + 10)
        assert first.lines == lines and first.error is None
        assert (second.lines, second.error) == ((), "boom")
        assert [e.subject for e in r.log_excerpts(subject="tablet-server 2")] == ["tablet-server 2"]
    with open_writer(path) as w:
        policy = RetentionPolicy(events_ms=1000)
        apply_retention(w, policy, T0_MS + 2_000)
    with open_reader(path) as r:
        assert r.log_excerpts() == []


def test_an_older_file_has_no_excerpts_and_gains_the_table(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    load(3, path)
    with open_reader(path) as r:
        assert r.log_excerpts() == []
    open_writer(path).close()
    with open_reader(path) as r:
        assert r.version == VERSION and r.log_excerpts() == []


def event(at_ms: int, subject: str = "tablet-server 1", severity: str = "warning") -> EventRow:
    return EventRow(at_ms, "server_left", severity, subject, "left")


def test_the_keeper_reads_once_the_window_has_passed(tmp_path: Path) -> None:
    log = tmp_path / "ts1.log"
    log.write_text(
        "\n".join(
            [
                local_line(T0_MS - 120_000, "INFO", "long before"),
                local_line(T0_MS - 2_000, "INFO", "Shutting down"),
                local_line(T0_MS + 20_000, "INFO", "Starting tablet server"),
                local_line(T0_MS + 50_000, "INFO", "after the window"),
            ]
        )
        + "\n"
    )
    now = [T0_MS / 1000]
    keeper = ExcerptKeeper(
        LogConfig(servers={"tablet-server 1": FileSource(str(log))}), clock=lambda: now[0]
    )
    keeper.note(
        [
            event(T0_MS),
            event(T0_MS + 1_000),  # covered by the first
            event(T0_MS, severity="info"),
            event(T0_MS, subject="cluster"),
            event(T0_MS, subject="tablet-server 9"),  # no source
        ]
    )
    assert keeper.ready(wait_s=1) == []
    now[0] += 31
    (row,) = keeper.ready(wait_s=5)
    assert [line.rsplit(" - ", 1)[1] for line in row.lines] == [
        "Shutting down",
        "Starting tablet server",
    ]
    assert (row.from_ms, row.to_ms, row.source) == (T0_MS - 60_000, T0_MS + 30_000, str(log))
    keeper.close()


def test_a_failing_source_is_kept_as_its_error() -> None:
    keeper = ExcerptKeeper(
        LogConfig(default=CommandSource(("sh", "-c", "sleep 5"), timeout=0.2)),
        clock=lambda: T0_MS / 1000,
    )
    keeper.note([event(T0_MS)])
    (row,) = keeper.ready(all_now=True, wait_s=5)
    assert row.lines == () and row.error is not None and "timed out after 0.2 s" in row.error
    assert row.to_ms == T0_MS
    keeper.close()


def test_a_command_learns_the_servers_host_from_the_event() -> None:
    line = local_line(T0_MS, "INFO", "read on {host} for {server}")
    keeper = ExcerptKeeper(
        LogConfig(default=CommandSource(("echo", line))), clock=lambda: T0_MS / 1000
    )
    details = '{"details": {"server": 1, "address": "10.0.0.7:9124"}}'
    keeper.note([EventRow(T0_MS, "server_left", "warning", "tablet-server 1", "left", details)])
    (row,) = keeper.ready(all_now=True, wait_s=5)
    assert row.error is None
    assert row.lines[0].endswith("read on 10.0.0.7 for tablet-server-1")
    keeper.close()
