"""store: konsole's operating history in SQLite (every poll, every event, retention).

Knows nothing of Textual or of the wire protocol: it speaks its own row types
(:mod:`store.rows`); :mod:`konsole.collect.history.rows` converts snapshots and events to
rows and back.

- :func:`open_writer` -> :class:`HistoryWriter` (one per file, a lock naming its pid);
- :func:`open_reader` -> :class:`HistoryReader` (any number, read-only, WAL);
- :func:`apply_retention` with a :class:`RetentionPolicy`;
- errors: :class:`HistoryError` and its subclasses.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from store.queries import (
        HistoryInfo,
        HistoryReader,
        SeriesPoint,
        StateAt,
        TableSpan,
        open_reader,
    )
    from store.retention import RetentionPolicy, RetentionResult, apply_retention
    from store.schema import VERSION as SCHEMA_VERSION

# Loaded on first use (PEP 562): `store.file_kinds`, which the command line checks paths
# with before anything else, must not bring sqlite3 and the schema with it.
_HOMES = {
    "HistoryError": "store.errors",
    "HistoryGone": "store.errors",
    "HistoryLocked": "store.errors",
    "HistoryUnwritable": "store.errors",
    "NewerSchema": "store.errors",
    "NotAHistoryFile": "store.errors",
    "lock_holder": "store.files",
    "HistoryWriter": "store.history",
    "add_event": "store.history",
    "add_note": "store.history",
    "open_writer": "store.history",
    "HistoryInfo": "store.queries",
    "HistoryReader": "store.queries",
    "SeriesPoint": "store.queries",
    "StateAt": "store.queries",
    "TableSpan": "store.queries",
    "open_reader": "store.queries",
    "RetentionPolicy": "store.retention",
    "RetentionResult": "store.retention",
    "apply_retention": "store.retention",
}


def __getattr__(name: str) -> Any:
    import importlib

    if name == "SCHEMA_VERSION":
        return importlib.import_module("store.schema").VERSION
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'store' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


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
