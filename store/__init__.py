"""store: konsole's operating history in SQLite (every poll, every event, retention).

Knows nothing of Textual or of the wire protocol: it speaks its own row types
(:mod:`store.rows`); :mod:`konsole.collect.history` converts snapshots and events to rows and back.

- :func:`open_writer` -> :class:`HistoryWriter` (one per file, a lock naming its pid);
- :func:`open_reader` -> :class:`HistoryReader` (any number, read-only, WAL);
- :func:`apply_retention` with a :class:`RetentionPolicy`;
- errors: :class:`HistoryError` and its subclasses.
"""

from store.errors import (
    HistoryError,
    HistoryGone,
    HistoryLocked,
    HistoryUnwritable,
    NewerSchema,
    NotAHistoryFile,
)
from store.files import lock_holder
from store.history import HistoryWriter, add_event, add_note, open_writer
from store.queries import HistoryInfo, HistoryReader, SeriesPoint, StateAt, TableSpan, open_reader
from store.retention import RetentionPolicy, RetentionResult, apply_retention
from store.schema import VERSION as SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "HistoryError",
    "HistoryGone",
    "HistoryInfo",
    "HistoryLocked",
    "HistoryReader",
    "HistoryUnwritable",
    "HistoryWriter",
    "NewerSchema",
    "NotAHistoryFile",
    "RetentionPolicy",
    "RetentionResult",
    "SeriesPoint",
    "StateAt",
    "TableSpan",
    "add_event",
    "add_note",
    "apply_retention",
    "lock_holder",
    "open_reader",
    "open_writer",
]
