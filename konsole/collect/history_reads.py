"""Reading a history file from the faces: one reader, opened for one read and closed.

The console's screens ask for series, events and past moments through these (the app runs
them in a worker): the ui does no I/O of its own. :func:`read_history` is the one way async
code reads a history file: ``read(reader)`` in a thread, the reader closed whatever happens,
so a slow disk never blocks the event loop that paints the screens.

``store`` (and with it sqlite3) is imported when a history is read, not with this module:
the console paints its first frame without it (docs/performance.md, the first paint).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from konsole.collect.capacity import CapacityCollector
    from store import HistoryReader

__all__ = ["open_history_reader", "read_history", "seed_capacity", "with_history"]

T = TypeVar("T")


def open_history_reader(path: Path | None) -> HistoryReader | None:
    """A reader of ``path``, or None when there is no usable history there."""
    if path is None or not path.exists():
        return None
    from store import HistoryError, open_reader

    try:
        return open_reader(path)
    except HistoryError:
        return None


def with_history(path: Path | None, read: Callable[[HistoryReader], T]) -> T | None:
    """``read(reader)`` on a reader of ``path``, closed afterwards; None without a usable
    history. Blocking (SQLite): from async code use :func:`read_history`."""
    reader = open_history_reader(path)
    if reader is None:
        return None
    try:
        return read(reader)
    finally:
        reader.close()


async def read_history(path: Path | None, read: Callable[[HistoryReader], T]) -> T | None:
    """:func:`with_history` in a thread: the event loop keeps painting while SQLite reads."""
    return await asyncio.to_thread(with_history, path, read)


async def seed_capacity(collector: CapacityCollector, path: Path | None, now: float) -> int:
    """Starts ``collector``'s forecasts from the disk usage recorded in ``path`` over its
    forecast window before ``now`` (a face that polls would otherwise begin with none and
    need ``forecast_min_span_s`` of polls); the samples read (0 without a history)."""
    from konsole.collect.capacity import seed_from_history

    window = collector.thresholds.forecast_window_s
    read = await read_history(path, lambda r: seed_from_history(collector, r, now, window))
    return read or 0
