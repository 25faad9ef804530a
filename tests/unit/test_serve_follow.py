"""Following a history another process writes: the newest poll rebuilt, the events since the
last look, and the end of following when the writer lets the file go."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from fluss_proto.model import TableView
from konsole.collect.follow import follow_history
from konsole.collect.recorder import Recorder
from konsole.model.events import EventKind
from tests._testutil.builders import snap, table, view


def _writing(path: Path, polls: int) -> tuple[Recorder, float, list[TableView]]:
    """A recorder holding ``path`` that wrote ``polls`` polls (seq 1.., one second apart,
    from a minute ago), its first poll's time and its tables."""
    recorder = Recorder(path, say=lambda _: None)
    recorder.open()
    t0 = time.time() - 60
    tables = [table("db.t", 1, [1, 2, 3])]
    for seq in range(1, polls + 1):
        recorder.record(snap(view((0, 1, 2), tables), seq=seq, t=t0 + seq - 1))
    return recorder, t0, tables


@pytest.mark.asyncio
async def test_follows_the_writer_then_ends_when_it_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    recorder, t0, tables = _writing(path, polls=2)
    stop = asyncio.Event()
    looks = follow_history(path, 0.01, stop)
    async with asyncio.timeout(10):
        first, events = await anext(looks)
        assert first.seq == 2 and first.ok and events == ()  # the newest; none before it
        assert first.view is not None and len(first.view.buckets) == 3
        recorder.record(snap(view((0, 1), tables), seq=3, t=t0 + 2))  # server 2 left
        third, events = await anext(looks)
        assert third.seq == 3
        assert EventKind.SERVER_LEFT in {e.kind for e in events}
        recorder.close()  # the writer lets the file go: following ends
        with pytest.raises(StopAsyncIteration):
            await anext(looks)


@pytest.mark.asyncio
async def test_follows_through_one_reader_closed_when_following_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every look reads through the one kept reader (not one opened per look); it is closed
    when the follower is closed (serve's cluster task ending), the file still held."""
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
    looks = follow_history(path, 0.01, stop)
    try:
        async with asyncio.timeout(10):
            for seq in range(2, 6):  # four looks that each find a new poll
                recorder.record(snap(view((0, 1, 2), tables), seq=seq, t=t0 + seq))
                got, _ = await anext(looks)
                assert got.seq == seq
        assert len(opened) == 1 and closed == []
        await looks.aclose()  # the follower ends (its task cancelled): the reader goes
        assert closed == opened
    finally:
        recorder.close()
