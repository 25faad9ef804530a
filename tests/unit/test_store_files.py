"""History files: schema versions, foreign and corrupt files, the writer lock, bad disks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from store import (
    HistoryLocked,
    HistoryUnwritable,
    NewerSchema,
    NotAHistoryFile,
    lock_holder,
    open_reader,
    open_writer,
)
from store.rows import PollRecord, ServerRow
from store.schema import MIGRATIONS, VERSION, migrate


def poll(at_ms: int, *servers: int) -> PollRecord:
    return PollRecord(
        at_ms=at_ms,
        seq=at_ms,
        latency_ms=5,
        ok=True,
        servers=tuple(ServerRow(i, "tablet", "127.0.0.1", 9200 + i) for i in servers),
    )


def schema_of(path: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        return sorted(conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    finally:
        conn.close()


@pytest.mark.parametrize("start", range(VERSION))
def test_every_earlier_schema_version_migrates_to_the_current_one(
    tmp_path: Path, start: int
) -> None:
    old, fresh = tmp_path / "old.sqlite", tmp_path / "fresh.sqlite"
    conn = sqlite3.connect(old, isolation_level=None)
    migrate(conn, to=start)
    conn.close()
    open_writer(old).close()
    open_writer(fresh).close()
    assert schema_of(old) == schema_of(fresh)
    with sqlite3.connect(old) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == VERSION == len(MIGRATIONS)


def test_a_file_of_a_newer_schema_is_refused_and_not_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    open_writer(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {VERSION + 1}")
    before = path.read_bytes()
    with pytest.raises(NewerSchema, match="newer konsole") as info:
        open_writer(path)
    assert (info.value.found, info.value.supported) == (VERSION + 1, VERSION)
    with pytest.raises(NewerSchema):
        open_reader(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [b"hello, this is a text file\n" * 10, b"\x00" * 4096, b"SQLite format 3\x00" + b"\xff" * 200],
    ids=["text", "zeros", "bad-sqlite-header"],
)
def test_a_non_sqlite_or_corrupt_file_is_said_so_and_left_untouched(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "h.sqlite"
    path.write_bytes(content)
    with pytest.raises(NotAHistoryFile, match="left"):
        open_writer(path)
    with pytest.raises(NotAHistoryFile):
        open_reader(path)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.sqlite"]


def test_another_programs_database_is_not_taken_for_a_history(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    before = path.read_bytes()
    with pytest.raises(NotAHistoryFile, match="another program"):
        open_writer(path)
    assert path.read_bytes() == before


def test_a_damaged_page_is_reported_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    with open_writer(path) as w:
        for i in range(200):
            w.record(poll(i * 1000, 1, 2, i % 50 + 3))
        w.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    for at in range(4096 * 2, len(data), 4096):  # every page but the first two
        data[at : at + 64] = b"\xa5" * 64
    path.write_bytes(bytes(data))
    with pytest.raises(NotAHistoryFile, match="corrupt"), open_reader(path) as r:
        r.polls()
        r.state_at(10**12)


def test_a_second_recorder_is_refused_with_the_first_ones_pid(tmp_path: Path) -> None:
    import os

    path = tmp_path / "h.sqlite"
    first = open_writer(path)
    try:
        with pytest.raises(HistoryLocked, match=f"pid {os.getpid()}") as info:
            open_writer(path)
        assert info.value.pid == os.getpid()
        assert lock_holder(path) == os.getpid()
    finally:
        first.close()
    assert lock_holder(path) is None
    open_writer(path).close()  # free again


def test_a_full_disk_fails_one_poll_cleanly_and_the_next_one_resumes(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    with open_writer(path) as w:
        w.record(poll(1000, 1, 2))
        (pages,) = w.connection.execute("PRAGMA page_count").fetchone()
        w.connection.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(HistoryUnwritable, match="disk full") as info:
            w.record(poll(2000, *range(1, 400)))
        assert info.value.retriable
        w.connection.execute("PRAGMA max_page_count = 1000000")
        w.record(poll(3000, 2, 3))
    with open_reader(path) as r:
        assert [p.at_ms for p in r.polls()] == [1000, 3000]
        state = r.state_at(3000)
        closed = r._conn.execute(
            "SELECT node_id, from_ms, to_ms FROM servers ORDER BY id"
        ).fetchall()
    assert state is not None and [s.node_id for s in state.servers] == [2, 3]
    assert closed == [(1, 1000, 3000), (2, 1000, None), (3, 3000, None)]


def test_a_read_only_file_is_a_clear_error_and_nothing_is_half_written(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    with open_writer(path) as w:
        w.record(poll(1000, 1))
        w.connection.execute("PRAGMA query_only = 1")  # what a read-only mount answers
        with pytest.raises(HistoryUnwritable, match="read-only"):
            w.record(poll(2000, 1, 2))
        w.connection.execute("PRAGMA query_only = 0")
        w.record(poll(3000, 1, 2))
    with open_reader(path) as r:
        assert [p.at_ms for p in r.polls()] == [1000, 3000]


def test_a_read_only_directory_refuses_a_new_file_clearly(tmp_path: Path) -> None:
    missing = tmp_path / "file-not-dir"
    missing.write_text("x")
    with pytest.raises(HistoryUnwritable):
        open_writer(missing / "h.sqlite")


def test_a_restarted_writer_continues_the_open_intervals(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    with open_writer(path) as w:
        w.record(poll(1000, 1, 2))
    with open_writer(path) as w:
        w.record(poll(2000, 1, 2))
        w.record(poll(3000, 2))
    with open_reader(path) as r:
        rows = r._conn.execute("SELECT node_id, from_ms, to_ms FROM servers ORDER BY id").fetchall()
    assert rows == [(1, 1000, 3000), (2, 1000, None)]


def test_store_imports_nothing_of_konsole_fluss_proto_or_textual() -> None:
    import subprocess
    import sys

    # sqlite_utils too: ~350 ms to import; store imports it only when a migration runs.
    code = (
        "import sys, store, store.queries, store.retention, store.history\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('konsole', 'fluss_proto', 'textual', 'pyarrow', 'numpy', 'sqlite_utils'))\n"
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_opening_a_file_at_the_current_version_does_not_import_sqlite_utils(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    path = tmp_path / "h.sqlite"
    open_writer(path).close()  # created (and migrated from 0) here, with sqlite-utils
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from store import open_reader, open_writer\n"
        "open_writer(Path(sys.argv[1])).close()\n"
        "open_reader(Path(sys.argv[1])).close()\n"
        "print('sqlite_utils' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.strip() == "False"


def test_a_new_file_gets_the_page_size_and_incremental_auto_vacuum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both can only be set before the first page is written, and page_size only before
    auto_vacuum (SQLite fixes the default page size once auto_vacuum is set)."""
    import store.schema

    monkeypatch.setattr(store.schema, "PAGE_SIZE", 8192)  # not SQLite's default
    path = tmp_path / "h.sqlite"
    open_writer(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA page_size").fetchone() == (8192,)
        assert conn.execute("PRAGMA auto_vacuum").fetchone() == (2,)  # incremental
    finally:
        conn.close()


def test_the_writer_sees_its_file_moved_or_deleted_and_leaves_no_wal_behind(
    tmp_path: Path,
) -> None:
    """SQLite writes on into a moved or deleted file: the writer looks after each commit.
    A moved file keeps the commit (and gets its WAL checkpointed in); a deleted one not;
    the -wal and -shm files left at the path are removed (a new file there would replay
    them)."""
    from store import HistoryGone

    path, moved = tmp_path / "h.sqlite", tmp_path / "moved.sqlite"
    w = open_writer(path)
    w.record(poll(1000, 1))
    path.rename(moved)
    with pytest.raises(HistoryGone, match="moved away"):
        w.record(poll(2000, 1))  # seen before writing: nothing written
    w.close()
    assert not (tmp_path / "h.sqlite-wal").exists() and not (tmp_path / "h.sqlite-shm").exists()
    with open_reader(moved) as reader:
        assert [p.at_ms for p in reader.polls()] == [1000]

    w = open_writer(path)
    w.record(poll(1000, 1))
    check = w.check_place

    def gone_meanwhile(committed: int | None) -> None:
        if committed is not None:
            path.unlink()
        check(committed)

    w.check_place = gone_meanwhile  # type: ignore[method-assign]
    with pytest.raises(HistoryGone, match="deleted") as deleted:
        w.record(poll(2000, 1))
    assert deleted.value.poll_id is None  # committed into the unlinked file: lost
    w.close()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("h.sqlite-")]


def test_a_commit_into_a_file_moved_meanwhile_is_kept_there(tmp_path: Path) -> None:
    from store import HistoryGone

    path, moved = tmp_path / "h.sqlite", tmp_path / "moved.sqlite"
    w = open_writer(path)
    w.record(poll(1000, 1))
    check = w.check_place

    def moved_meanwhile(committed: int | None) -> None:
        if committed is not None:
            path.rename(moved)
        check(committed)

    w.check_place = moved_meanwhile  # type: ignore[method-assign]
    with pytest.raises(HistoryGone) as gone:
        w.record(poll(2000, 2))
    assert gone.value.poll_id == 2
    w.close()
    with open_reader(moved) as reader:
        assert [p.at_ms for p in reader.polls()] == [1000, 2000]
