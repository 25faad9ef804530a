"""The recorder: events and polls committed together, never dead on a bad disk, crash-safe."""

from __future__ import annotations

import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store import HistoryLocked, NewerSchema, open_reader, open_writer
from store.schema import VERSION
from tests._testutil.builders import T0, snap, table, view
from tests._testutil.judging import JudgingRecorder

REPO = Path(__file__).resolve().parents[2]


def test_events_are_recorded_with_their_poll(tmp_path: Path) -> None:
    said: list[str] = []
    seen: list[str] = []
    r = JudgingRecorder(
        tmp_path / "h.sqlite",
        say=said.append,
        on_event=lambda e: seen.append(e.kind),
        clock=lambda: T0 + 60,
    )
    r.open()
    r.record(snap(view((1, 2, 3), [table("db.a", 1, [1])]), seq=1, t=T0))
    r.record(
        snap(view((1, 2, 3), [table("db.a", 1, [1]), table("db.b", 2, [0])]), seq=2, t=T0 + 10)
    )
    r.record(snap(view((1, 2), [table("db.b", 2, [0])]), seq=3, t=T0 + 20))
    r.close()
    with open_reader(tmp_path / "h.sqlite") as reader:
        events = [(e.at_ms - round(T0 * 1000), e.kind, e.subject) for e in reader.events()]
    assert ("table_created", "db.b") in [(k, s) for _, k, s in events]
    assert (20_000, "table_dropped", "db.a") in events
    assert (20_000, "server_left", "tablet-server 3") in events
    assert [k for _, k, _ in events] == [k for k in seen]
    assert r.status.polls_recorded == 3 and said == []


def test_an_unwritable_place_is_said_polling_goes_on_and_recording_resumes(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "dir"
    blocker.write_text("a file where the history's directory should be")
    said: list[str] = []
    r = JudgingRecorder(blocker / "h.sqlite", say=said.append, clock=lambda: T0 + 60)
    r.open()
    assert r.record(snap(view((1, 2, 3), [table("db.a", 1, [1])]), seq=1, t=T0)) is None
    assert r.record(snap(view((1, 2, 3), [table("db.a", 1, [2])]), seq=2, t=T0 + 10)) is None
    assert len(said) == 1 and said[0].startswith("NOT RECORDING")
    assert r.status.polls_waiting == 2 and not r.status.recording
    blocker.unlink()
    assert r.record(snap(view((1, 2, 3), [table("db.a", 1, [3])]), seq=3, t=T0 + 20)) is not None
    # the two polls kept in memory are written first, in order
    assert said[-1].startswith("recording again") and "3 poll(s) written" in said[-1]
    assert r.status.polls_waiting == 0 and r.status.polls_missed == 0
    # a full disk later on: said once, then recorded again when space is back
    assert r._writer is not None
    conn = r._writer.connection
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    conn.execute(f"PRAGMA max_page_count = {pages}")
    big = view((1, 2, 3), [table(f"db.t{i}", 10 + i, list(range(64))) for i in range(30)])
    assert r.record(snap(big, seq=4, t=T0 + 30)) is None
    assert "disk full" in said[-1]
    conn.execute("PRAGMA max_page_count = 1000000")
    assert r.record(snap(big, seq=5, t=T0 + 40)) is not None
    r.close()
    with open_reader(blocker / "h.sqlite") as reader:
        assert [p.seq for p in reader.polls()] == [1, 2, 3, 4, 5]
        kinds = [e.kind for e in reader.events()]
        assert kinds.count("history_trouble") == 2  # one per stretch of trouble
        assert len(reader.state_at(10**13).tables) == 30  # type: ignore[union-attr]


def test_refusals_raise_at_open(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    holder = open_writer(path)
    try:
        with pytest.raises(HistoryLocked, match=f"pid {os.getpid()}"):
            JudgingRecorder(path).open()
    finally:
        holder.close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {VERSION + 1}")
    with pytest.raises(NewerSchema):
        JudgingRecorder(path).open()


def _child(path: Path, seq: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.unit.recorder_child", str(path), str(seq)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read_commits(child: subprocess.Popen[str], want: int, timeout: float) -> list[tuple[int, int]]:
    """Committed (poll id, seq) lines until ``want`` of them or ``timeout`` seconds."""
    assert child.stdout is not None
    commits: list[tuple[int, int]] = []
    deadline = time.monotonic() + timeout
    while len(commits) < want and time.monotonic() < deadline:
        ready, _, _ = select.select([child.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = child.stdout.readline()
        if not line:
            break
        if line.startswith("committed "):
            _, poll_id, seq = line.split()
            commits.append((int(poll_id), int(seq)))
    return commits


@pytest.mark.slow
def test_sigkill_mid_write_twenty_times_keeps_the_file_sound_and_every_commit(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite"
    rng = random.Random(11)
    committed: dict[int, int] = {}
    seq = 1
    for round_ in range(20):
        child = _child(path, seq)
        try:
            commits = _read_commits(child, rng.randint(1, 40), timeout=30)
            assert commits, f"round {round_}: nothing committed: {child.stderr}"
            time.sleep(rng.uniform(0, 0.05))  # somewhere inside a later write
            # anything committed in the meantime is not known: only reported ones count
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        committed.update(commits)
        seq = max(s for _, s in commits) + 1000  # the next child starts clear of the last
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            found = dict(conn.execute("SELECT id, seq FROM polls").fetchall())
        finally:
            conn.close()
        missing = {p: s for p, s in committed.items() if found.get(p) != s}
        assert not missing, f"round {round_}: committed polls lost: {missing}"
    with open_reader(path) as reader:
        last = max(committed)
        state = reader.state_at(10**13)
        assert state is not None and state.poll.id >= last
        assert reader.offsets_at_poll(last) is not None


@pytest.mark.slow
def test_a_reader_never_sees_an_error_while_the_recorder_writes(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    child = _child(path, 1)
    reads = 0
    try:
        assert _read_commits(child, 3, timeout=30)
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            with open_reader(path) as reader:
                polls = reader.polls()
                reader.events()
                state = reader.state_at(10**13)
                assert state is not None and state.offsets is not None
                reader.throughput(1)
                reader.info(10**13, full_ms=1, minute_ms=2)
            assert polls
            reads += 1
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
    finally:
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=10)
    assert reads > 5
