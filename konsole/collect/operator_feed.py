"""The operator actions another process writes into a history file, counted as they appear.

``konsole admin`` writes each step of an action (planned, sent, refused, failed,
succeeded) into the profile's history file as an ``operator`` event, from its own process
(:func:`store.add_event`). :class:`OperatorFeed` is how ``konsole serve`` sees them: each
:meth:`~OperatorFeed.look` reads the operator events above the last id it saw (at most
``limit`` of them, by id) and counts them by (action, outcome). What the file held when the
feed was made is not counted (a counter starts at serve's start).

The feed keeps one reader open for its life, not one per look: a look costs a ``stat`` and
one query. The reader is opened again only when the path names another file than the one
it reads (the ``(st_dev, st_ino)`` the path had when it was opened): deleted, moved away,
replaced. A file that is not the one seen before (deleted and made again, replaced: another
inode, or ids below the last one seen) is read from its first event: everything in it was
written since. A look that cannot read the file (missing, locked, not a history) counts
nothing, drops the reader and is tried again at the next; an empty file (nothing committed
yet) is opened again at each look until it holds a history. Blocking (SQLite), so callers
run it in a thread; :meth:`OperatorFeed.close` when done.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from konsole.model.events import EventKind

if TYPE_CHECKING:
    from store import HistoryReader
    from store.rows import EventRow

__all__ = ["LOOK_LIMIT", "OperatorFeed"]

#: Operator events read per look at most: one look stays small whatever was written.
LOOK_LIMIT: Final = 500
#: What an event without an action or outcome is counted as (never dropped).
UNKNOWN: Final = "unknown"


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@dataclass
class OperatorFeed:
    path: Path
    limit: int = LOOK_LIMIT
    #: (action, outcome) -> operator events seen since the feed was made.
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Readers opened so far (one for the feed's life while its file stays the same).
    opened: int = field(init=False, default=0)
    _file: tuple[int, int] | None = field(init=False, default=None)
    _last_id: int = field(init=False, default=0)
    _reader: HistoryReader | None = field(init=False, default=None, repr=False)
    # A look runs in a worker thread; close may come from another (serve's stop).
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self._file = _identity(self.path)
        found = self._read() if self._file is not None else None
        self._last_id = found[0] if found is not None else 0

    def look(self) -> int:
        """Count the operator events written since the last look; returns how many."""
        with self._lock:
            return self._look()

    def close(self) -> None:
        """Close the reader (the next look opens one again); waits for a look running in
        another thread."""
        with self._lock:
            self._drop()

    def _look(self) -> int:
        seen = _identity(self.path)
        if seen is None:
            self._drop()  # deleted or moved away: its reader reads a file that is not here
            return 0
        if seen != self._file:
            self._drop()
            self._file, self._last_id = seen, 0
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

    def _drop(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def _open(self) -> HistoryReader | None:
        """The kept reader, or a new one of the file the path names now (None: unreadable)."""
        if self._reader is not None:
            return self._reader
        from store import HistoryError, open_reader

        try:
            reader = open_reader(self.path)
        except HistoryError:
            return None
        self.opened += 1
        if _identity(self.path) != self._file:
            reader.close()  # replaced while being opened: the next look sees which file it is
            return None
        if reader.version:  # an empty file's reader stays empty: not kept
            self._reader = reader
        return reader

    def _read(self) -> tuple[int, list[EventRow]] | None:
        """(the file's highest event id, the operator events after the last seen), or None
        when the file cannot be read now."""
        from store import HistoryError
        from store.queries import events_after

        reader = self._open()
        if reader is None:
            return None
        try:
            kind = EventKind.OPERATOR.value
            return events_after(reader, self._last_id, kind=kind, limit=self.limit)
        except HistoryError:
            self._drop()
            return None
        finally:
            if reader is not self._reader:
                reader.close()


def _labels(row: EventRow) -> tuple[str, str]:
    """(action, outcome) of an operator event as :func:`konsole.model.actions.audit_event`
    writes it; ``unknown`` for what a row does not say (never dropped)."""
    from konsole.collect.history import event_from_row

    try:
        details = event_from_row(row).details
    except (AttributeError, TypeError):  # details that are JSON but not an object
        details = {}
    action, outcome = details.get("action"), details.get("outcome")
    return (
        action if isinstance(action, str) and action else UNKNOWN,
        outcome if isinstance(outcome, str) and outcome else UNKNOWN,
    )
