"""A console that follows a recorder's file takes it over when the recorder is gone
(konsole.collect.history.takeover, konsole.ui.feed.LiveFeed): the status bar says so, the history
holds a ``history_taken_over`` event and the console's own polls; with two followers, one
takes the file and the other follows it. Without a cluster: the profile points at a port
where nothing answers, and failed polls are recorded like any other."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from konsole.collect.history.recorder import Recorder
from konsole.collect.history.takeover import TAKEN_OVER, take_over, writer_gone
from konsole.ui.feed import LiveFeed
from konsole.ui.state import ConsoleState, HistoryMode
from konsole.ui.widgets.status_bar import status_text
from store import HistoryLocked, open_writer
from tests._testutil.console import record_story, unreachable_profile

pytestmark = pytest.mark.timeout(60)


_profile = unreachable_profile


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def _until(
    seen: list[ConsoleState], check: Callable[[ConsoleState], bool], timeout: float = 20.0
) -> ConsoleState:
    async with asyncio.timeout(timeout):
        while not (found := [x for x in seen if check(x)]):
            await asyncio.sleep(0.02)
    return found[-1]


def _following(x: ConsoleState) -> bool:
    return x.history.mode is HistoryMode.FOLLOWING and x.snapshot is not None


def _took_over(x: ConsoleState) -> bool:
    return x.history.mode is HistoryMode.RECORDING and x.history.note == TAKEN_OVER


async def test_a_following_console_takes_the_file_when_the_recorder_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import konsole.collect.history.takeover as takeover

    path = record_story(tmp_path / "h.sqlite", polls=4)
    writer = open_writer(path)  # a `konsole record` holding the file
    held: list[Path] = []  # each follow step that found the lock held
    real = takeover.writer_gone

    def counted(at: Path) -> bool:
        gone = real(at)
        if not gone:
            held.append(at)
        return gone

    monkeypatch.setattr(takeover, "writer_gone", counted)
    seen: list[ConsoleState] = []
    task = asyncio.create_task(LiveFeed(_profile(), path).run(seen.append))
    try:
        await _until(seen, _following)
        # several follow steps: the lock is held, nothing taken
        async with asyncio.timeout(20):
            while len(held) < 3:
                await asyncio.sleep(0.02)
        assert not any(_took_over(x) for x in seen)
        assert _rows(path, "SELECT count(*) FROM polls") == [(4,)]
        writer.close()  # the recorder is gone
        taken = await _until(seen, _took_over)
        assert f"recording · {TAKEN_OVER}" in status_text(taken).plain
        assert "history_taken_over" in [e.kind.value for e in taken.events]
        await _until(seen, lambda x: _took_over(x) and x.snapshot is not taken.snapshot)
        await _until(seen, lambda x: seen.index(x) > seen.index(taken) + 3)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    kinds = [k for (k,) in _rows(path, "SELECT kind FROM events")]
    assert kinds.count("history_taken_over") == 1
    assert _rows(path, "SELECT count(*) FROM polls")[0][0] > 4  # the console's own polls


async def test_of_two_followers_one_takes_the_file_the_other_follows_it(tmp_path: Path) -> None:
    path = record_story(tmp_path / "h.sqlite", polls=4)
    writer = open_writer(path)
    seen_a: list[ConsoleState] = []
    seen_b: list[ConsoleState] = []
    tasks = [
        asyncio.create_task(LiveFeed(_profile(), path).run(seen_a.append)),
        asyncio.create_task(LiveFeed(_profile(), path).run(seen_b.append)),
    ]
    try:
        await _until(seen_a, _following)
        await _until(seen_b, _following)
        writer.close()
        winner = await _first_to_take(seen_a, seen_b)
        loser = seen_b if winner is seen_a else seen_a
        mark = len(loser)
        # The other keeps following, and now sees the winner's polls.
        await _until(loser, lambda x: loser.index(x) >= mark and _following(x))
        assert not any(_took_over(x) for x in loser)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with pytest.raises(asyncio.CancelledError):
                await task
    kinds = [k for (k,) in _rows(path, "SELECT kind FROM events")]
    assert kinds.count("history_taken_over") == 1


async def _first_to_take(a: list[ConsoleState], b: list[ConsoleState]) -> list[ConsoleState]:
    for _ in range(1000):  # bounded: 20 s in 20 ms steps
        if any(_took_over(x) for x in a):
            return a
        if any(_took_over(x) for x in b):
            return b
        await asyncio.sleep(0.02)
    raise AssertionError("no follower took the file over")


def test_take_over_is_refused_while_the_lock_is_held(tmp_path: Path) -> None:
    path = record_story(tmp_path / "h.sqlite", polls=2)
    writer = open_writer(path)
    try:
        assert not writer_gone(path)
        with pytest.raises(HistoryLocked):
            take_over(Recorder(path, say=lambda _: None), 0.0, followed=None)
    finally:
        writer.close()
    assert writer_gone(path)
    recorder = Recorder(path, say=lambda _: None)
    event = take_over(recorder, 1_000.0, followed="pid 42")
    try:
        assert not writer_gone(path)
        assert event.kind.value == "history_taken_over" and event.details["followed"] == "pid 42"
    finally:
        recorder.close()
    assert _rows(path, "SELECT kind FROM events WHERE kind = 'history_taken_over'") == [
        ("history_taken_over",)
    ]


async def test_a_console_closed_while_taking_over_lets_the_file_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The feed cancelled (the console quits, another profile) while its thread takes the
    lock: once the thread ends, the lock is let go, never kept by a feed that is gone."""
    import threading

    import konsole.collect.history.takeover as takeover

    path = record_story(tmp_path / "h.sqlite", polls=2)
    writer = open_writer(path)
    inside, release = threading.Event(), threading.Event()
    real = takeover.take_over

    def slow(*args: object, **kwargs: object) -> object:
        inside.set()
        release.wait(10)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(takeover, "take_over", slow)
    seen: list[ConsoleState] = []
    task = asyncio.create_task(LiveFeed(_profile(), path).run(seen.append))
    await _until(seen, _following)
    writer.close()
    async with asyncio.timeout(20):
        while not inside.is_set():
            await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    async with asyncio.timeout(20):
        while not writer_gone(path):
            await asyncio.sleep(0.02)
    assert not any(_took_over(x) for x in seen)


async def test_following_reads_through_one_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every follow step reads the file through the one kept reader, not a new one each."""
    import store
    from konsole.collect.history.rows import poll_record
    from tests._testutil.console import T0, story_snapshot

    path = record_story(tmp_path / "h.sqlite", polls=4)
    writer = open_writer(path)
    opened = [0]
    real = store.open_reader

    def counted(where: Path) -> object:
        opened[0] += 1
        return real(where)

    monkeypatch.setattr(store, "open_reader", counted)
    seen: list[ConsoleState] = []
    task = asyncio.create_task(LiveFeed(_profile(), path).run(seen.append))
    try:
        await _until(seen, _following)
        for seq in range(5, 10):  # the recorder writes, the console shows each poll
            writer.record(poll_record(story_snapshot(seq)))
            at = T0 + 10 * (seq - 1)
            await _until(
                seen, lambda x, at=at: x.snapshot is not None and x.snapshot.taken_at == at
            )
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        writer.close()
    assert opened[0] <= 2  # the recent events at the start, then the follow steps' one
