"""Fixed lists of snapshots as the faces take their polls, for tests without a cluster.

:func:`fake_source` is a session's (or serve's fleet's) source; :class:`ListPoller` is a
poller as ``watch`` and ``record`` use it. Each yields the snapshots in order, once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from konsole.collect.session import Source
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["ListPoller", "fake_source", "run_feed_until"]


def fake_source(snapshots: Sequence[ClusterSnapshot]) -> Callable[[], Source]:
    def source() -> Source:
        async def polls(stop: asyncio.Event) -> AsyncIterator[ClusterSnapshot]:
            for s in snapshots:
                if stop.is_set():
                    return
                yield s
                await asyncio.sleep(0)

        async def release() -> None:
            return None

        return polls, release

    return source


class ListPoller:
    """``snapshots`` as a poller's polls (no delay between them)."""

    def __init__(self, snapshots: Sequence[ClusterSnapshot]) -> None:
        self._snapshots = snapshots

    def next_delay(self) -> float:
        return 0.0

    async def snapshots(self, stop: asyncio.Event) -> AsyncIterator[ClusterSnapshot]:
        async for s in fake_source(self._snapshots)()[0](stop):
            yield s


async def run_feed_until(feed: Any, publish: Callable[[Any], None], done: asyncio.Event) -> None:
    """Run ``feed`` (publishing to ``publish``) until ``done`` is set (10 s at most), then
    cancel it."""
    task = asyncio.create_task(feed.run(publish))
    try:
        async with asyncio.timeout(10):
            await done.wait()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
