"""The epochs of one history file: which stretch of polls is of which cluster (schema 3).

A history may hold several clusters, one epoch each, in the order they were recorded; an
epoch runs from its first poll until the next epoch's. :meth:`Epochs.narrow` is how every
reader that joins polls across time stays inside one epoch. A file written before epochs
(schema < 3) reads as one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from store.rows import EpochRow

__all__ = ["Epochs"]

Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


class Epochs:
    """The epochs of a reader's file (``version``: its schema version, 0 for empty)."""

    def __init__(self, query: Query, version: int) -> None:
        self._query = query
        self._version = version

    def all(self) -> list[EpochRow]:
        """Oldest first; none in a file written before epochs."""
        if 0 < self._version < 3:
            return []
        rows = self._query(
            "SELECT id, from_ms, first_poll, identity, reason FROM epochs ORDER BY id", ()
        )
        return [EpochRow(*r) for r in rows]

    def at(self, at_ms: int | None) -> EpochRow | None:
        """The epoch holding ``at_ms`` (the latest for None); None before the first one."""
        found = None
        for epoch in self.all():
            if at_ms is None or epoch.from_ms <= at_ms:
                found = epoch
        return found

    def span(self, at_ms: int | None) -> tuple[int | None, int | None]:
        """``[from, to)`` in ms of the epoch holding ``at_ms`` (the latest for None); None
        for an open end. Before the first epoch: up to it."""
        epochs = self.all()
        found = self.at(at_ms)
        if found is None:
            return None, epochs[0].from_ms if epochs else None
        later = [e.from_ms for e in epochs if e.id > found.id]
        return found.from_ms, later[0] if later else None

    def narrow(self, since: int | None, until: int | None) -> tuple[int | None, int | None]:
        """``since`` and ``until`` narrowed to the epoch of ``until`` (the latest without)."""
        lo, hi = self.span(until)
        if lo is not None:
            since = lo if since is None else max(since, lo)
        if hi is not None:
            until = hi - 1 if until is None else min(until, hi - 1)
        return since, until
