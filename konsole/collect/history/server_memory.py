"""What a history file says of a cluster's tablet servers: who was alive, who was retired.

A poller knows the tablet servers it saw alive itself; this adds what the cluster's
history knows (:class:`~konsole.model.known_servers.KnownServers`): every tablet server a
recorded poll of the cluster's latest epoch listed, when it was last listed, minus those an
operator retired after (``konsole admin server retire ID``: a ``server retire`` operator
event that succeeded). :func:`remember` seeds a poller with it and hands the poller a
feed of the retirements written while it runs (by ``konsole admin`` in another process),
so a running console, ``watch``, ``record`` or ``serve`` forgets a retired server at its
next poll. Reads never raise: a history that cannot be read adds nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from konsole.collect.history.kept_reader import KeptReader
from konsole.model import subjects
from konsole.model.known_servers import KnownBy, KnownServer, KnownServers

if TYPE_CHECKING:
    from konsole.collect.cluster.poller import Poller
    from store import HistoryReader

__all__ = ["RETIRE_ACTION", "RetirementFeed", "recall", "recall_from", "remember"]

#: The operator action that retires a tablet server (its audit's ``action``).
RETIRE_ACTION: Final = "server retire"
_SUCCEEDED: Final = "succeeded"


def recall_from(reader: HistoryReader, known: KnownServers, at: float) -> KnownServers:
    """``known`` plus the history's sightings up to ``at`` (epoch seconds), except the
    servers retired after their last sighting."""
    from store.queries import tablet_servers_seen

    at_ms = int(at * 1000)
    sightings = [
        KnownServer(node_id, KnownBy.HISTORY, seen_ms / 1000, f"{host}:{port}")
        for node_id, host, port, seen_ms in tablet_servers_seen(reader, at_ms)
    ]
    retired = retirements(reader, [s.node_id for s in sightings], at_ms)
    return known.recall(sightings, retired)


def retirements(reader: HistoryReader, node_ids: Sequence[int], until_ms: int) -> dict[int, float]:
    """Node id -> when it was last retired (epoch seconds), up to ``until_ms``, of
    ``node_ids``."""
    from store.queries import operator_subjects

    names = [subjects.tablet_server(n) for n in node_ids]
    found = operator_subjects(reader, names, RETIRE_ACTION, _SUCCEEDED, until_ms=until_ms)
    out = {}
    for subject, at_ms in found:
        node = subject.removeprefix(subjects.tablet_server(""))
        if node.isdigit():
            out[int(node)] = at_ms / 1000
    return out


def recall(path: Path | None, known: KnownServers, at: float | None = None) -> KnownServers:
    """:func:`recall_from` the history file at ``path`` (now when ``at`` is None); ``known``
    unchanged when there is none or it cannot be read."""
    if path is None or not path.is_file():
        return known
    try:
        from store.queries import open_reader

        with open_reader(path) as reader:
            return recall_from(reader, known, time.time() if at is None else at)
    except Exception:  # a history that cannot be read adds nothing
        return known


@dataclass
class RetirementFeed:
    """The retirements written into a history file since the feed was made, one look per
    poll through one kept reader (blocking: run :meth:`look` in a thread)."""

    path: Path
    _kept: KeptReader = field(init=False, repr=False)
    _last_id: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._kept = KeptReader(self.path)
        found = self._kept.read(self._top)
        self._last_id = found or 0

    def look(self) -> Mapping[int, float]:
        """Node id -> when, of the retirements written since the last look (none when the
        file cannot be read now)."""
        found = self._kept.read(self._after)
        return found or {}

    def close(self) -> None:
        self._kept.close()

    @staticmethod
    def _top(reader: HistoryReader) -> int:
        from store.queries import events_after

        return events_after(reader, 0, kind="operator", limit=0)[0]

    def _after(self, reader: HistoryReader) -> dict[int, float]:
        from konsole.collect.history.rows import event_from_row
        from store.queries import events_after

        top, rows = events_after(reader, self._last_id, kind="operator", limit=500)
        out: dict[int, float] = {}
        for row in rows:
            self._last_id = max(self._last_id, row.id or 0)
            event = event_from_row(row)
            details = event.details or {}
            if details.get("action") != RETIRE_ACTION or details.get("outcome") != _SUCCEEDED:
                continue
            node = event.subject.name.removeprefix(subjects.tablet_server(""))
            if node.isdigit():
                out[int(node)] = event.time
        if top < self._last_id:  # another file at the path: read it from its start next
            self._last_id = 0
        return out


def remember(
    built: tuple[Poller, Callable[[], Awaitable[Any]]], history: Path | None
) -> tuple[Poller, Callable[[], Awaitable[None]]]:
    """``built`` (a poller and its release, as ``build_poller`` makes them) seeded with
    what ``history`` knows of the tablet servers and following the retirements written
    into it later; the release closes that feed too."""
    poller, release = built
    poller.seed_known(recall(history, poller.known))
    # The file may be made later (a first `record`, an admin's audit): the feed reads it then.
    feed = RetirementFeed(history) if history is not None else None
    if feed is not None:
        poller.follow_retirements(feed.look)

    async def released() -> None:
        try:
            await release()
        finally:
            if feed is not None:
                await asyncio.to_thread(feed.close)

    return poller, released
