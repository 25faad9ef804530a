"""The operator actions another process writes into a history file, counted as they appear.

``konsole admin`` writes each step of an action (planned, sent, refused, failed,
succeeded) into the profile's history file as an ``operator`` event, from its own process
(:func:`store.add_event`). :class:`OperatorFeed` is how ``konsole serve`` sees them: each
:meth:`~OperatorFeed.look` reads the operator events above the last id it saw (at most
``limit`` of them, by id) and counts them by (action, outcome). What the file held when the
feed was made is not counted (a counter starts at serve's start).

The feed keeps one reader open for its life
(:class:`~konsole.collect.history.kept_reader.KeptReader`),
not one per look: it is opened again only when the path names another file (deleted, moved
away, replaced). A file that is not the one seen before (deleted and made again, replaced:
another inode, or ids below the last one seen) is read from its first event: everything in
it was written since. A look that cannot read the file (missing, locked, not a history)
counts nothing and is tried again at the next. Blocking (SQLite), so callers run it in a
thread; :meth:`OperatorFeed.close` when done (it waits for a look in another thread).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from konsole.collect.history.kept_reader import KeptReader
from konsole.model.events import EventKind

if TYPE_CHECKING:
    from store import HistoryReader
    from store.rows import EventRow

__all__ = ["LOOK_LIMIT", "OperatorFeed"]

#: Operator events read per look at most: one look stays small whatever was written.
LOOK_LIMIT: Final = 500
#: What an event without an action or outcome is counted as (never dropped).
UNKNOWN: Final = "unknown"


@dataclass
class OperatorFeed:
    path: Path
    limit: int = LOOK_LIMIT
    #: (action, outcome) -> operator events seen since the feed was made.
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: The file the last id belongs to (None: none seen yet).
    _file: tuple[int, int] | None = field(init=False, default=None)
    _last_id: int = field(init=False, default=0)
    _kept: KeptReader = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._kept = KeptReader(self.path)
        found = self._read()
        self._last_id = found[0] if found is not None else 0

    @property
    def opened(self) -> int:
        """Readers opened so far (one for the feed's life while its file stays the same)."""
        return self._kept.opened

    def look(self) -> int:
        """Count the operator events written since the last look; returns how many."""
        found = self._read()
        if found is not None and found[0] < self._last_id:
            # ids went back: another file at the same inode, all of it new
            self._last_id = 0
            found = self._read()
        if found is None:
            return 0
        rows = found[1]
        for row in rows:
            self.counts[_labels(row)] += 1
            self._last_id = max(self._last_id, row.id or 0)
        return len(rows)

    def close(self) -> None:
        """Close the reader (waits for a look running in another thread)."""
        self._kept.close()

    def _read(self) -> tuple[int, list[EventRow]] | None:
        """(the file's highest event id, the operator events after the last seen), or None
        when the file cannot be read now."""
        return self._kept.read(self._events_after)

    def _events_after(self, reader: HistoryReader) -> tuple[int, list[EventRow]]:
        from store.queries import events_after

        if self._kept.file != self._file:  # another file than the last id's: from its start
            self._file, self._last_id = self._kept.file, 0
        kind = EventKind.OPERATOR.value
        return events_after(reader, self._last_id, kind=kind, limit=self.limit)


def _labels(row: EventRow) -> tuple[str, str]:
    """(action, outcome) of an operator event as :func:`konsole.model.actions.audit_event`
    writes it; ``unknown`` for what a row does not say (never dropped)."""
    from konsole.collect.history.rows import event_from_row

    try:
        details = event_from_row(row).details
    except (AttributeError, TypeError):  # details that are JSON but not an object
        details = {}
    action, outcome = details.get("action"), details.get("outcome")
    return (
        action if isinstance(action, str) and action else UNKNOWN,
        outcome if isinstance(outcome, str) and outcome else UNKNOWN,
    )
