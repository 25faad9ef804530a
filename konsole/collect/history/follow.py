"""Following a history file that another process writes (``konsole record``, a console).

:func:`follow_history` looks at the file once per interval and yields the newest recorded
poll, rebuilt as a :class:`~konsole.model.snapshot.ClusterSnapshot` by
:func:`konsole.collect.history.rows.snapshot_at` (the same rebuild time travel uses), with the
events recorded since the previous look. The cluster is not polled a second time: the
writer's polls are the truth. The looks read through one
:class:`~konsole.collect.history.kept_reader.KeptReader` for the follower's life (opened again only
when the path names another file), closed when following ends or its task is cancelled. A
file that cannot be read at one look is tried again at the next; SQLite reads run in a
thread. Following ends when the writer lets the file go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from konsole.model.events import Event
from konsole.model.snapshot import ClusterSnapshot

if TYPE_CHECKING:
    from store import HistoryReader

__all__ = ["newest"]

#: A followed poll, the events recorded with it, its time (epoch ms) and its epoch's id
#: (which cluster of the file it is of; None in a file written before epochs).
Step = tuple[ClusterSnapshot, tuple[Event, ...], int, int | None]


def newest(reader: HistoryReader, seen_ms: int, now_ms: int) -> Step | None:
    """The newest poll after ``seen_ms`` (epoch ms; 0: the newest at all), the events
    recorded after ``seen_ms`` up to it, its time and its epoch; None when there is nothing
    new. A look for :meth:`KeptReader.read` (blocking, SQLite)."""
    from konsole.collect.history.rows import event_from_row, snapshot_at

    latest = reader.poll_at(now_ms)
    if latest is None or latest.at_ms <= seen_ms:
        return None
    recorded = snapshot_at(reader, latest.at_ms / 1000)
    if recorded is None:
        return None
    rows = reader.events(since=seen_ms + 1, until=latest.at_ms) if seen_ms else []
    epoch = reader.epochs.at(latest.at_ms)
    events = tuple(event_from_row(r) for r in rows)
    return recorded.snapshot, events, latest.at_ms, None if epoch is None else epoch.id
