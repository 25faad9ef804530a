"""A cluster session following a history another process writes (konsole.collect.session,
the one the console and serve run): the newest poll rebuilt, the events since the last look
(each once: a look reads events up to the poll it shows, never past it), one kept reader,
and the file taken over when the writer lets it go."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path

import pytest

from fluss_proto.model import TableView
from konsole.collect.history.rows import event_row
from konsole.collect.history.state import HistoryMode
from konsole.collect.history.takeover import TAKEN_OVER, taken_over_event
from konsole.collect.profiles import Profile
from konsole.collect.session import ClusterSession, SessionStep, Source
from konsole.model.events import EventKind
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.timefmt import to_ms
from tests._testutil.builders import snap, table, view
from tests._testutil.judging import JudgingRecorder

PROFILE = Profile(name="f", source="profile", bootstrap=("127.0.0.1:9",))


def _writing(path: Path, polls: int) -> tuple[JudgingRecorder, float, list[TableView]]:
    """A recorder holding ``path`` that wrote ``polls`` polls (seq 1.., one second apart,
    from a minute ago), its first poll's time and its tables."""
    recorder = JudgingRecorder(path, say=lambda _: None)
    recorder.open()
    t0 = time.time() - 60
    tables = [table("db.t", 1, [1, 2, 3])]
    for seq in range(1, polls + 1):
        recorder.record(snap(view((0, 1, 2), tables), seq=seq, t=t0 + seq - 1))
    return recorder, t0, tables


def _no_polls() -> Source:
    """After a takeover: a poller that polls nothing until stopped."""

    async def polls(stop: asyncio.Event) -> AsyncIterator[ClusterSnapshot]:
        await stop.wait()
        return
        yield

    async def release() -> None:
        return None

    return polls, release


def _follow(path: Path, stop: asyncio.Event) -> AsyncGenerator[SessionStep]:
    return ClusterSession(PROFILE, path, interval=0.01, source=_no_polls).steps(stop)


async def _poll(steps: AsyncGenerator[SessionStep]) -> SessionStep:
    """The next step that carries a poll."""
    while (step := await anext(steps)).snapshot is None:
        pass
    return step


@pytest.mark.asyncio
async def test_follows_the_writer_then_takes_the_file_when_it_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    recorder, t0, tables = _writing(path, polls=2)
    stop = asyncio.Event()
    async with contextlib.aclosing(_follow(path, stop)) as steps, asyncio.timeout(10):
        opening = await anext(steps)
        assert opening.snapshot is None and opening.history.mode is HistoryMode.FOLLOWING
        first = await _poll(steps)
        assert first.snapshot is not None and first.snapshot.seq == 2 and first.events == ()
        assert first.judged is not None and first.judged.placement is not None
        assert first.judged.placement.buckets == 3  # the poll's placement
        recorder.record(snap(view((0, 1), tables), seq=3, t=t0 + 2))  # server 2 left
        third = await _poll(steps)
        assert third.snapshot is not None and third.snapshot.seq == 3
        assert EventKind.SERVER_LEFT in {e.kind for e in third.events}
        recorder.close()  # the writer lets the file go: this session takes it
        taken = await anext(steps)
        assert taken.snapshot is None and taken.history.mode is HistoryMode.RECORDING
        assert taken.history.note == TAKEN_OVER
        assert [e.kind for e in taken.events] == [EventKind.HISTORY_TAKEN_OVER]
        stop.set()


@pytest.mark.asyncio
async def test_an_event_written_after_the_newest_poll_comes_back_once(tmp_path: Path) -> None:
    """An event committed after the poll a look shows (a writer's fault note, a check's
    event) belongs to the next look: read without an upper bound it came back twice."""
    from store import add_event

    path = tmp_path / "h.sqlite"
    recorder, t0, tables = _writing(path, polls=2)
    stop = asyncio.Event()
    seen: list[int] = []
    try:
        async with contextlib.aclosing(_follow(path, stop)) as steps, asyncio.timeout(10):
            await _poll(steps)  # the first look: the newest poll, no events
            recorder.record(snap(view((0, 1, 2), tables), seq=3, t=t0 + 2))
            late = taken_over_event(path, t0 + 2.5, followed=None)  # after poll 3
            add_event(path, event_row(late))
            for seq in (3, 4, 5):
                step = await _poll(steps)
                assert step.snapshot is not None and step.snapshot.seq == seq
                seen += [to_ms(e.time) for e in step.events]
                recorder.record(snap(view((0, 1, 2), tables), seq=seq + 1, t=t0 + seq))
            stop.set()
    finally:
        recorder.close()
    assert seen.count(to_ms(late.time)) == 1


@pytest.mark.asyncio
async def test_follows_through_one_reader_closed_when_following_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every look reads through the one kept reader (not one opened per look); it is closed
    when the session is closed (serve's cluster task ending), the file still held."""
    import store

    path = tmp_path / "h.sqlite"
    recorder, t0, tables = _writing(path, polls=1)
    opened: list[object] = []
    closed: list[object] = []
    real = store.open_reader

    def counted(where: Path) -> store.HistoryReader:
        reader = real(where)
        real_close = reader.close

        def close() -> None:
            closed.append(reader)
            real_close()

        reader.close = close  # type: ignore[method-assign]
        opened.append(reader)
        return reader

    monkeypatch.setattr(store, "open_reader", counted)
    stop = asyncio.Event()
    steps = _follow(path, stop)
    try:
        async with asyncio.timeout(10):
            await _poll(steps)
            for seq in range(2, 6):  # four looks that each find a new poll
                recorder.record(snap(view((0, 1, 2), tables), seq=seq, t=t0 + seq))
                got = await _poll(steps)
                assert got.snapshot is not None and got.snapshot.seq == seq
        assert len(opened) == 1 and closed == []
        await steps.aclose()  # the session ends (its task cancelled): the reader goes
        assert closed == opened
    finally:
        recorder.close()


@pytest.mark.asyncio
async def test_a_follower_judges_a_server_the_writer_saw_leave_as_gone(tmp_path: Path) -> None:
    """Issue 38: the follower's memory of the tablet servers is the file's (the writer's
    polls): a server gone from metadata is ``server_gone``, named as in the history."""
    path = tmp_path / "h.sqlite"
    recorder, t0, _ = _writing(path, polls=2)
    empty = [table("db.e", 2, [(0, (0,), 1)])]  # nothing placed on server 2
    stop = asyncio.Event()
    try:
        async with contextlib.aclosing(_follow(path, stop)) as steps, asyncio.timeout(10):
            await _poll(steps)
            recorder.record(snap(view((0, 1), empty), seq=3, t=t0 + 2))  # server 2 left
            step = await _poll(steps)
            assert step.snapshot is not None and step.snapshot.seq == 3 and step.health
            [gone] = [f for f in step.health.findings if f.rule == "server_gone"]
            assert gone.subject == "tablet-server 2"
            assert "in the history: last alive at" in gone.reason
            stop.set()
    finally:
        recorder.close()
