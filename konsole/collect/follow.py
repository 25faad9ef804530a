"""Following a history file that another process writes (``konsole record``, a console).

:func:`follow_history` looks at the file once per interval and yields the newest recorded
poll, rebuilt as a :class:`~konsole.model.snapshot.ClusterSnapshot` by
:func:`konsole.collect.history.snapshot_at` (the same rebuild time travel uses), with the
events recorded since the previous look. The cluster is not polled a second time: the
writer's polls are the truth. A file that cannot be read at one look is tried again at the
next; SQLite reads run in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

from konsole.model.events import Event
from konsole.model.snapshot import ClusterSnapshot
from konsole.model.timefmt import to_ms

__all__ = ["follow_history", "newest"]

Step = tuple[ClusterSnapshot, tuple[Event, ...], int]


def newest(path: Path, seen_ms: int, now_ms: int) -> Step | None:
    """The newest poll after ``seen_ms`` (epoch ms; 0: the newest at all) and the events
    recorded after ``seen_ms`` up to it, with its time; None when there is nothing new or
    no readable history. Blocking (SQLite)."""
    from konsole.collect.history import event_from_row, snapshot_at
    from store import HistoryError, open_reader

    if not path.exists():
        return None
    try:
        reader = open_reader(path)
    except HistoryError:
        return None
    try:
        latest = reader.poll_at(now_ms)
        if latest is None or latest.at_ms <= seen_ms:
            return None
        recorded = snapshot_at(reader, latest.at_ms / 1000)
        if recorded is None:
            return None
        rows = reader.events(since=seen_ms + 1, until=latest.at_ms) if seen_ms else []
        return recorded.snapshot, tuple(event_from_row(r) for r in rows), latest.at_ms
    finally:
        reader.close()


async def follow_history(
    path: Path, interval: float, stop: asyncio.Event
) -> AsyncIterator[tuple[ClusterSnapshot, tuple[Event, ...]]]:
    """The writer's polls as it commits them, one look per ``interval``, until ``stop``."""
    seen_ms = 0
    while not stop.is_set():
        # A little ahead of now: the writer stamps polls at their start.
        step = await asyncio.to_thread(newest, path, seen_ms, to_ms(time.time()) + 60_000)
        if step is not None:
            snapshot, events, seen_ms = step
            yield snapshot, events
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
