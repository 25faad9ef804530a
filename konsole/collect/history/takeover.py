"""Taking over a history file whose recorder is gone (DESIGN.md: whoever holds the writer
lock polls; the others follow the file).

A console that follows a file another process records (``konsole record``, another console)
looks at each follow step whether the writer lock is still held: :func:`writer_gone` is one
``open`` and a non-blocking ``flock`` of the lock file, never a wait. When nobody holds it
(the recorder stopped or was killed: the kernel drops its lock), :func:`take_over` opens the
follower's own :class:`~konsole.collect.history.recorder.Recorder` on the file (taking the lock; a
second follower that was quicker makes it raise :class:`store.HistoryLocked`, and the loser
keeps following) and writes a ``history_taken_over`` event into the history, so the file
itself says from when and by which process it was written. Blocking: call from a thread.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

from konsole.model.events import Event, EventKind, Severity
from konsole.model.events.base import Subject

if TYPE_CHECKING:
    from konsole.collect.history.recorder import Recorder

__all__ = ["TAKEN_OVER", "take_over", "taken_over_event", "writer_gone"]

#: What the follower says once it polls and writes the file itself.
TAKEN_OVER: Final = "recorder gone: polling here"


def writer_gone(path: Path) -> bool:
    """Whether no process holds the writer lock of ``path`` now (cheap, never waits)."""
    from store import lock_holder

    return lock_holder(path) is None


def taken_over_event(path: Path, at: float, *, followed: str | None) -> Event:
    """The event a follower writes when it takes the file over; ``followed``: what it said
    of the recorder it followed (its pid), when known."""
    details: dict[str, object] = {"path": str(path), "pid": os.getpid()}
    if followed:
        details["followed"] = followed
    return Event(
        time=at,
        kind=EventKind.HISTORY_TAKEN_OVER,
        severity=Severity.WARNING,
        subject=Subject("history", path.name),
        message=f"{TAKEN_OVER}: the recorder of {path.name} stopped; pid {os.getpid()} writes it",
        details=details,
    )


def take_over(recorder: Recorder, at: float, *, followed: str | None) -> Event:
    """Open ``recorder`` on its file and write the takeover event; returns the event.

    Raises what :meth:`Recorder.open` raises (``HistoryLocked`` when another process took
    the lock first). The event is written only when the file takes it now: a history that
    cannot be written is the recorder's trouble to say, and the event is still returned.
    """
    from konsole.collect.history.rows import event_row
    from store import HistoryError, add_event

    recorder.open()
    event = taken_over_event(recorder.path, at, followed=followed)
    if recorder.status.recording:
        # A file that refuses it now: the recorder says the trouble at its first poll.
        with contextlib.suppress(HistoryError):
            add_event(recorder.path, event_row(event))
    return event
