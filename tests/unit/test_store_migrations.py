"""Forward migrations from every earlier schema version, on files that version wrote.

Every ``tests/fixtures/history/v<N>.sql`` (see :mod:`tests._testutil.history_fixtures`) is loaded,
read as it is, migrated by the writer, and asked every query again: the answers must be
the ones that version's reader gave. A migration killed half-way leaves the old version.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from store import NotAHistoryFile, add_note, open_reader, open_writer
from store.rows import NoteRow, PollRecord, ServerRow
from store.schema import VERSION
from tests._testutil.history_fixtures import (
    END_S,
    answers,
    answers_path,
    frozen_versions,
    load,
)

REPO = Path(__file__).resolve().parents[2]
EARLIER = frozen_versions()


def expected(version: int) -> dict[str, Any]:
    return json.loads(answers_path(version).read_text())  # type: ignore[no-any-return]


def answered(path: Path) -> dict[str, Any]:
    with open_reader(path) as reader:
        # Through JSON, as the frozen answers went: tuples and lists compare equal then.
        return json.loads(json.dumps(answers(reader)))  # type: ignore[no-any-return]


def pragma(path: Path, name: str) -> Any:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()


def schema_of(path: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return sorted(conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    finally:
        conn.close()


def test_every_earlier_version_has_a_frozen_file() -> None:
    # Bumping VERSION without freezing the version left fails here (see history_fixtures).
    assert list(range(1, VERSION)) == EARLIER


@pytest.mark.parametrize("version", EARLIER)
def test_an_older_file_is_read_as_it_is_and_never_written_by_a_reader(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "h.sqlite"
    load(version, path)
    before = path.read_bytes()
    assert answered(path) == expected(version)
    assert path.read_bytes() == before
    assert pragma(path, "user_version") == version


@pytest.mark.parametrize("version", EARLIER)
def test_an_older_file_migrates_to_the_current_version_with_the_same_answers(
    tmp_path: Path, version: int
) -> None:
    path, fresh = tmp_path / "h.sqlite", tmp_path / "fresh.sqlite"
    load(version, path)
    open_writer(path).close()
    open_writer(fresh).close()
    assert pragma(path, "user_version") == VERSION
    assert pragma(path, "integrity_check") == "ok"
    assert schema_of(path) == schema_of(fresh)
    assert answered(path) == expected(version)
    # The migrated file takes new polls (a key after the restart) and reads them back.
    at_ms = round((END_S + 30) * 1000)
    with open_writer(path) as writer:
        writer.record(
            PollRecord(
                at_ms=at_ms,
                seq=9_999,
                latency_ms=5,
                ok=True,
                servers=(ServerRow(1, "tablet", "127.0.0.1", 9201),),
            )
        )
    with open_reader(path) as reader:
        state = reader.state_at(at_ms)
        assert state is not None and state.poll.seq == 9_999
        assert [s.node_id for s in state.servers] == [1]
        # The older polls kept their answers after the new one.
        assert json.loads(json.dumps(answers(reader)))["as_of"] == expected(version)["as_of"]
    conn = sqlite3.connect(path)
    try:
        kinds = {r[0] for r in conn.execute("SELECT typeof(body) FROM layouts")}
    finally:
        conn.close()
    assert kinds == {"blob"}


@pytest.mark.parametrize("version", EARLIER)
def test_a_note_on_an_older_file_does_not_migrate_it(tmp_path: Path, version: int) -> None:
    path = tmp_path / "h.sqlite"
    load(version, path)
    add_note(path, NoteRow(123, "cluster", "after the fixture"), written_ms=5)
    assert pragma(path, "user_version") == version
    with open_reader(path) as reader:
        assert [n.text for n in reader.notes(subject="cluster")] == ["after the fixture"]


# A writer whose migration stops after its last step, before COMMIT, until killed.
_STALLED = """
import sys, time
from pathlib import Path
from store import open_writer, schema

last = schema.MIGRATIONS[-1]

def stalled(db):
    last(db)
    print("migrated, not committed", flush=True)
    time.sleep(60)

schema.MIGRATIONS = (*schema.MIGRATIONS[:-1], stalled)
open_writer(Path(sys.argv[1]))
"""


@pytest.mark.parametrize("version", EARLIER)
def test_a_migration_killed_midway_leaves_the_older_version_intact(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "h.sqlite"
    load(version, path)
    child = subprocess.Popen(
        [sys.executable, "-c", _STALLED, str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 60)
        line = child.stdout.readline() if ready else ""
        assert line.startswith("migrated"), (
            child.stderr.read() if child.poll() is not None else line
        )
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL
    assert pragma(path, "user_version") == version
    assert pragma(path, "integrity_check") == "ok"
    assert answered(path) == expected(version)
    # The next writer migrates it, from the start.
    deadline = time.monotonic() + 30
    while True:  # the killed child's lock is the kernel's to drop: at once, but bounded
        try:
            open_writer(path).close()
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    assert pragma(path, "user_version") == VERSION
    assert answered(path) == expected(version)


def test_a_new_file_can_hand_pages_back_and_starts_at_the_current_version(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite"
    open_writer(path).close()
    # Set before WAL writes the first page (version 1 files missed it: auto_vacuum 0).
    assert pragma(path, "auto_vacuum") == 2  # incremental
    assert pragma(path, "user_version") == VERSION


def test_a_reader_of_an_empty_file_reads_an_empty_history_and_writes_nothing(
    tmp_path: Path,
) -> None:
    # What `konsole history` sees between a recorder creating the file and its first commit.
    path = tmp_path / "h.sqlite"
    path.write_bytes(b"")
    with open_reader(path) as reader:
        assert reader.polls() == [] and reader.events() == [] and reader.state_at(1) is None
        info = reader.info(1, full_ms=1, minute_ms=2)
        assert (info.schema_version, info.first_ms, sum(info.polls.values())) == (0, None, 0)
    assert path.read_bytes() == b""
    with pytest.raises(NotAHistoryFile, match="no such"):
        open_reader(tmp_path / "missing.sqlite")


@pytest.mark.parametrize("version", EARLIER)
def test_history_info_says_an_older_file_is_upgraded_by_the_next_recorder(
    tmp_path: Path, version: int
) -> None:
    from click.testing import CliRunner

    from konsole.cli.main import main

    path = tmp_path / "h.sqlite"
    load(version, path)
    result = CliRunner().invoke(main, ["history", "info", "--history", str(path)])
    assert result.exit_code == 0, result.output
    assert f"schema {version}; older than this konsole's {VERSION}" in result.output
    assert pragma(path, "user_version") == version
