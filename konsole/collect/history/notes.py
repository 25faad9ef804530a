"""Operator notes in a history file: the one way every face writes one.

A note is free text with a time and a subject (``cluster``, a server, a table), kept for
incident timelines (docs/history.md). Writing one needs no writer lock: it is one small
insert beside whoever records the file (:func:`store.add_note`). Blocking (SQLite): from
async code run it in a thread.
"""

from __future__ import annotations

import time
from pathlib import Path

__all__ = ["write_note"]


def write_note(
    path: Path,
    text: str,
    *,
    subject: str = "cluster",
    at: float | None = None,
    now: float | None = None,
) -> float:
    """Add the note ``text`` on ``subject`` at ``at`` (epoch seconds; default: now) to the
    history ``path``; ``now`` is when it is written (default: the wall clock). Returns the
    note's time. Raises :class:`store.HistoryError` when the file refuses it."""
    from konsole.model.timefmt import to_ms
    from store import add_note
    from store.rows import NoteRow

    now = time.time() if now is None else now
    at = now if at is None else at
    add_note(path, NoteRow(to_ms(at), subject, text), written_ms=to_ms(now))
    return at
