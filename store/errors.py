"""The store's errors: one base, one class per thing an operator must act on."""

from __future__ import annotations

__all__ = [
    "HistoryError",
    "HistoryGone",
    "HistoryLocked",
    "HistoryUnwritable",
    "NewerSchema",
    "NotAHistoryFile",
]


class HistoryError(Exception):
    """Any history-file problem; the message names the file and says what to do."""


class NotAHistoryFile(HistoryError):
    """Not SQLite, corrupt, or another program's database. The file is left untouched."""


class NewerSchema(HistoryError):
    """Written by a newer konsole; refused (never rewritten)."""

    def __init__(self, message: str, *, found: int, supported: int) -> None:
        super().__init__(message)
        self.found, self.supported = found, supported


class HistoryLocked(HistoryError):
    """Another recorder holds the file."""

    def __init__(self, message: str, *, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


class HistoryUnwritable(HistoryError):
    """A write failed (read-only file system, full disk, I/O error); nothing was half-written.

    ``retriable``: the condition may pass (space freed, remounted), so try again later.
    """

    def __init__(self, message: str, *, retriable: bool = True) -> None:
        super().__init__(message)
        self.retriable = retriable


class HistoryGone(HistoryUnwritable):
    """The path no longer names the file the writer has open (deleted, moved, replaced, its
    directory removed): that writer must be closed and the path opened again.

    ``poll_id``: the poll just committed, when it was committed before the change was seen
    and its file is still linked somewhere (moved): it is kept there, not lost. None when
    nothing of the poll survives (the file is unlinked, or the change was seen before
    writing).
    """

    def __init__(self, message: str, *, poll_id: int | None = None) -> None:
        super().__init__(message)
        self.poll_id = poll_id
