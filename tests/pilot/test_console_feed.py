"""The console's feeds without a cluster: following a recorder's file, history off."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from konsole.collect.history.rows import poll_record
from konsole.ui.feed import LiveFeed
from konsole.ui.state import ConsoleState, HistoryMode
from store import open_writer
from tests._testutil.console import T0, record_story, story_snapshot, unreachable_profile
from tests._testutil.waiting import until

pytestmark = pytest.mark.timeout(60)


_profile = unreachable_profile


async def _collect(feed: LiveFeed, until, timeout: float = 20.0) -> list[ConsoleState]:
    seen: list[ConsoleState] = []
    task = asyncio.create_task(feed.run(seen.append))
    try:
        async with asyncio.timeout(timeout):
            while not until(seen):
                await asyncio.sleep(0.02)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    return seen


async def test_follows_the_recorder_that_holds_the_file(tmp_path: Path) -> None:
    path = record_story(tmp_path / "h.sqlite", polls=4)
    writer = open_writer(path)  # a `konsole record` holding the file
    try:
        feed = LiveFeed(_profile(), path)
        seen = await _collect(feed, lambda s: any(x.snapshot is not None for x in s))
        first = next(x for x in seen if x.snapshot is not None)
        assert first.history.mode is HistoryMode.FOLLOWING
        assert str(os.getpid()) in (first.history.reason or "")
        assert first.snapshot is not None and first.snapshot.seq == 4  # the latest recorded
        assert first.snapshot.taken_at == T0 + 30
        # The recorder writes another poll: the console shows it without polling itself.
        writer.record(poll_record(story_snapshot(5)))
        seen = await _collect(
            LiveFeed(_profile(), path),
            lambda s: any(x.snapshot is not None and x.snapshot.taken_at == T0 + 40 for x in s),
        )
        assert all(x.history.mode is HistoryMode.FOLLOWING for x in seen)
    finally:
        writer.close()


async def test_an_unwritable_history_leaves_the_console_live(tmp_path: Path) -> None:
    not_a_history = tmp_path / "notes.txt"
    not_a_history.write_text("not SQLite\n" * 100)
    feed = LiveFeed(_profile(), not_a_history)
    # Unreachable at start: the console says so and keeps retrying.
    seen = await _collect(
        feed,
        lambda s: any(x.snapshot is not None and x.snapshot.consecutive_failures >= 3 for x in s),
    )
    assert seen[0].history.mode is HistoryMode.OFF
    assert seen[0].history.reason
    polled = next(x for x in seen if x.snapshot is not None)
    assert not polled.snapshot.ok  # nothing listens: a failed poll, shown, not a crash
    assert not_a_history.read_text() == "not SQLite\n" * 100  # left untouched


def test_a_recorded_run_of_failed_polls_is_counted_back(tmp_path: Path) -> None:
    from konsole.collect.history.rows import snapshot_at
    from konsole.ui.feed import open_history_reader
    from tests._testutil.console import NOW, T_UNREACHABLE

    path = record_story(tmp_path / "h.sqlite")  # polls 11 and 12 failed
    reader = open_history_reader(path)
    assert reader is not None
    try:
        first = snapshot_at(reader, T_UNREACHABLE)
        second = snapshot_at(reader, NOW)
        good = snapshot_at(reader, T_UNREACHABLE - 1)
    finally:
        reader.close()
    assert first is not None and second is not None and good is not None
    assert (first.snapshot.consecutive_failures, second.snapshot.consecutive_failures) == (1, 2)
    assert good.snapshot.ok and good.snapshot.consecutive_failures == 0


async def test_a_history_that_cannot_be_created_says_history_off_from_the_start(
    tmp_path: Path,
) -> None:
    from konsole.ui.widgets.status_bar import status_text

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the history's directory should be\n")
    feed = LiveFeed(_profile(), blocker / "h.sqlite")  # unwritable, even for root
    seen = await _collect(feed, lambda s: any(x.snapshot is not None for x in s))
    assert seen[0].history.mode is HistoryMode.RECORDING and seen[0].history.reason
    assert "NOT RECORDING" in status_text(seen[0]).plain
    assert all(x.history.reason for x in seen)  # still polling, still saying so


async def test_the_status_bar_says_not_recording_while_a_foreign_file_is_in_the_way(
    tmp_path: Path,
) -> None:
    """The console records through the recorder: a file replaced under it by another
    program's database is never written, the status bar says so, the polls wait, and they
    are written once the path is free (issue 24)."""
    import sqlite3

    from konsole.ui.widgets.status_bar import status_text

    path = tmp_path / "h.sqlite"
    seen: list[ConsoleState] = []
    task = asyncio.create_task(LiveFeed(_profile(), path).run(seen.append))

    async def until(what, check, timeout: float = 20.0) -> ConsoleState:
        async with asyncio.timeout(timeout):
            while not (found := [x for x in seen if check(x)]):
                await asyncio.sleep(0.02)
        return found[-1]

    try:
        await until("recording", lambda x: x.snapshot is not None and not x.history.reason)
        foreign = tmp_path / "foreign.sqlite"
        with sqlite3.connect(foreign) as conn:
            conn.execute("CREATE TABLE theirs (x)")
        conn.close()
        os.replace(foreign, path)
        mark = len(seen)
        blocked = await until("refused", lambda x: "another program" in (x.history.reason or ""))
        assert "NOT RECORDING" in status_text(blocked).plain
        assert "history_trouble" in [e.kind.value for e in blocked.events]
        await until("waiting", lambda x: seen.index(x) > seen.index(blocked) + 2)
        path.unlink()
        again = await until("again", lambda x: seen.index(x) > mark and not x.history.reason)
        assert "recording" in status_text(again).plain
        assert "NOT RECORDING" not in status_text(again).plain
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        kinds = [k for (k,) in conn.execute("SELECT kind FROM events")]
        waited = conn.execute("SELECT count(*) FROM polls").fetchone()[0]
    conn.close()
    assert "history_trouble" in kinds and waited >= 3  # the polls that waited, then more


async def test_a_feed_cancelled_while_its_first_open_runs_lets_the_lock_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console quits (or switches profile) while the feed's thread opens the history:
    once the thread ends, the writer lock it took is let go, never kept by a feed that is
    gone."""
    import threading

    from konsole.collect.history.recorder import Recorder
    from konsole.collect.history.takeover import writer_gone

    path = tmp_path / "h.sqlite"
    inside, release, opened = threading.Event(), threading.Event(), threading.Event()
    real = Recorder.open

    def slow(self: Recorder) -> None:
        inside.set()
        release.wait(10)
        try:
            real(self)
        finally:
            opened.set()

    async def holds(check: Callable[[], bool]) -> bool:
        return check()

    monkeypatch.setattr(Recorder, "open", slow)
    task = asyncio.create_task(LiveFeed(_profile(), path).run(lambda _: None))
    await until(partial(holds, inside.is_set), bool, "the feed's open running", 20, 0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    # The open took the lock in its thread; then the loop lets it go.
    await until(partial(holds, opened.is_set), bool, "the open ended", 20, 0.02)
    gone = partial(holds, partial(writer_gone, path))
    await until(gone, bool, "the cancelled feed's lock let go", 5, 0.02)


async def test_a_feed_cancelled_after_its_open_before_polling_lets_the_lock_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled between taking the lock and its first poll (reading the recent events):
    the recorder is closed, the lock let go."""
    import konsole.ui.feed as feed
    from konsole.collect.history.takeover import writer_gone

    path = tmp_path / "h.sqlite"
    reading = asyncio.Event()

    async def stuck(*_: object) -> None:
        reading.set()
        await asyncio.Event().wait()  # until cancelled

    monkeypatch.setattr(feed, "read_history", stuck)
    task = asyncio.create_task(LiveFeed(_profile(), path).run(lambda _: None))
    async with asyncio.timeout(20):
        await reading.wait()
    assert not writer_gone(path)  # the feed holds the lock now
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert writer_gone(path), "the cancelled feed kept the writer lock"
