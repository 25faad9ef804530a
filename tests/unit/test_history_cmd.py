"""`konsole history ...` and `konsole record` refusals, on files written by the real recorder."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from konsole.cli.history import parse_duration, parse_time
from konsole.cli.main import main
from store import open_writer
from store.schema import VERSION
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.judging import JudgingRecorder


def iso(t: float) -> str:
    return f"{t:.3f}"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "h.sqlite"
    r = JudgingRecorder(path, say=lambda s: None, clock=lambda: T0 + 100)
    r.open()
    keep = table("db.keep", 1, [5, 5])
    r.record(snap(view((1, 2, 3), [keep]), seq=1, t=T0))
    r.record(snap(view((1, 2, 3), [keep, table("db.tmp", 2, [0, 0, 0])]), seq=2, t=T0 + 10))
    r.record(snap(view((1, 2, 3), [keep, table("db.tmp", 2, [100, 50, 0])]), seq=3, t=T0 + 20))
    r.record(snap(view((1, 2), [keep]), seq=4, t=T0 + 30))
    r.close()
    return path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_times_and_durations_parse() -> None:
    assert parse_duration("90s") == 90 and parse_duration("2h") == 7200
    assert parse_time("now", 1000.0) == 1000.0
    assert parse_time("15m", 1000.0) == 100.0
    assert parse_time("2026-11-30T14:00:00Z", 0) == parse_time("2026-11-30T14:00", 0)
    assert parse_time("1780000000", 0) == 1780000000.0


def test_events_in_order_with_subjects(path: Path) -> None:
    code, out = run("history", "events", "--history", str(path), "--format", "json")
    assert code == 0, out
    events = json.loads(out)
    kinds = [(e["kind"], e["subject"]["name"]) for e in events]
    assert ("table_created", "db.tmp") in kinds
    assert kinds.index(("table_created", "db.tmp")) < kinds.index(("table_dropped", "db.tmp"))
    assert ("server_left", "tablet-server 3") in kinds
    code, out = run("history", "events", "--history", str(path), "--subject", "db.tmp")
    assert code == 0 and "table_created" in out and "server_left" not in out
    code, out = run("history", "events", "--history", str(path), "--format", "csv")
    # the export's columns: one CSV shape of an event (issue 40)
    _, exported = run("history", "export", "events", "--history", str(path), "--format", "csv")
    assert out.splitlines()[0] == exported.splitlines()[0]
    assert out.splitlines()[0].startswith('"type","time","time_ms","kind","severity"')


def test_as_of_lists_a_table_only_while_it_existed(path: Path) -> None:
    def tables_at(t: float) -> list[str]:
        code, out = run("history", "as-of", iso(t), "--history", str(path), "--format", "json")
        assert code == 0, out
        doc = json.loads(out)
        assert doc["historic"] is True
        return [x["table"] for x in doc["tables"]]

    assert tables_at(T0 + 5) == ["db.keep"]
    assert tables_at(T0 + 25) == ["db.keep", "db.tmp"]
    assert tables_at(T0 + 35) == ["db.keep"]
    code, out = run("history", "as-of", iso(T0 + 25), "--history", str(path), "--table", "db.tmp")
    assert code == 0 and "db.tmp (id 2, 3 buckets, 150 rows by offset)" in out
    code, out = run("history", "as-of", iso(T0 - 5), "--history", str(path))
    assert code == 1 and "nothing recorded" in out


def test_series_shows_rows_per_second_at_the_right_times(path: Path) -> None:
    code, out = run("history", "series", "db.tmp", "--history", str(path), "--format", "json")
    assert code == 0, out
    points = [(p["offset"], p["rows_per_s"]) for p in json.loads(out)]
    assert points == [(0, None), (150, 15.0)]
    code, out = run(
        "history", "series", "db.tmp", "--bucket", "1", "--history", str(path), "--format", "csv"
    )
    assert code == 0 and out.splitlines()[-1].endswith(",5,50")
    code, out = run("history", "series", "db.nope", "--history", str(path))
    assert code == 1 and "no table db.nope" in out


def test_notes_add_and_list_and_export(path: Path, tmp_path: Path) -> None:
    code, out = run(
        "history",
        "notes",
        "--history",
        str(path),
        "--add",
        "disk swapped",
        "--subject",
        "tablet-server 3",
        "--at",
        iso(T0 + 31),
    )
    assert code == 0, out
    code, out = run("history", "notes", "--history", str(path), "--format", "json")
    assert [n["text"] for n in json.loads(out)] == ["disk swapped"]
    target = tmp_path / "events.parquet"
    code, out = run(
        "history",
        "export",
        "events",
        "--history",
        str(path),
        "--format",
        "parquet",
        "--output",
        str(target),
    )
    assert code == 0 and target.stat().st_size > 0
    code, out = run("history", "export", "polls", "--history", str(path), "--format", "jsonl")
    assert [json.loads(line)["seq"] for line in out.splitlines()] == [1, 2, 3, 4]
    code, out = run("history", "export", "polls", "--history", str(path), "--format", "json")
    assert [poll["seq"] for poll in json.loads(out)] == [1, 2, 3, 4]  # one document


def test_info_shows_size_span_and_counts(path: Path) -> None:
    code, out = run("history", "info", "--history", str(path), "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["polls"] == {"full": 4, "minute": 0, "hour": 0}
    assert doc["size_bytes"] > 0 and doc["recorder_pid"] is None


def test_bad_files_are_refused_with_a_message(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    code, out = run("history", "info", "--history", str(junk))
    assert code == 65 and "not an SQLite file" in out
    newer = tmp_path / "newer.sqlite"
    open_writer(newer).close()
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {VERSION + 1}")
    code, out = run("record", "--bootstrap", "127.0.0.1:1", "--history", str(newer), "--count", "1")
    assert code == 65 and "newer konsole" in out
    code, out = run("history", "events", "--history", str(tmp_path / "missing.sqlite"))
    assert code == 66 and "no such history file" in out


def test_a_second_recorder_is_refused_naming_the_first(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    holder = open_writer(path)
    try:
        code, out = run(
            "record", "--bootstrap", "127.0.0.1:1", "--history", str(path), "--count", "1"
        )
    finally:
        holder.close()
    assert code == 75 and f"pid {os.getpid()}" in out


def test_record_keeps_polling_an_unreachable_cluster_and_records_the_failures(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite"
    code, out = run(
        "record",
        "--bootstrap",
        "127.0.0.1:1",
        "--history",
        str(path),
        "--count",
        "2",
        "--interval",
        "0.1",
        "--verbose",
    )
    # every poll recorded, and the run's answer: no poll of the --count reached the cluster
    assert code == 2, out
    assert "poll 2 recorded" in out and "poll_failed" in out
    code, out = run("history", "export", "polls", "--history", str(path), "--format", "jsonl")
    assert [json.loads(line)["ok"] for line in out.splitlines()] == [False, False]


def test_series_of_one_partition(tmp_path: Path) -> None:
    """``--partition`` keeps one partition's offsets; a name never recorded finds nothing."""
    path = tmp_path / "p.sqlite"
    r = JudgingRecorder(path, say=lambda s: None, clock=lambda: T0 + 100)
    r.open()
    for seq, (a, b) in enumerate([(0, 0), (100, 10)], start=1):
        parts = {"2026": [a, a], "2027": [b, 0]}
        r.record(
            snap(view((1, 2, 3), [table("db.p", 7, partitions=parts)]), seq=seq, t=T0 + 10 * seq)
        )
    r.close()

    def series(partition: str) -> tuple[int, str]:
        return run(
            "history", "series", "db.p", "--partition", partition,
            "--history", str(path), "--format", "json",
        )  # fmt: skip

    code, out = series("2026")
    assert code == 0, out
    assert [(p["offset"], p["rows_per_s"]) for p in json.loads(out)] == [(0, None), (200, 20.0)]
    code, out = series("2027")
    assert [(p["offset"], p["rows_per_s"]) for p in json.loads(out)] == [(0, None), (10, 1.0)]
    code, out = series("1999")
    assert code == 1 and "no partition 1999 of db.p" in out, out
