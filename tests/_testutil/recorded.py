"""A small history file written by the real recorder, for the command-line tests: two
polls of two tablet servers and one table, the second after tablet-server 2 left (so it
holds a ``server_left`` event, at ``T0 + 10``)."""

from __future__ import annotations

from pathlib import Path

from tests._testutil.builders import T0, snap, table, view
from tests._testutil.judging import JudgingRecorder

__all__ = ["server_left_history"]


def server_left_history(path: Path) -> Path:
    """Write the file at ``path`` and return it."""
    recorder = JudgingRecorder(path, say=lambda s: None, clock=lambda: T0 + 100)
    recorder.open()
    recorder.record(snap(view((1, 2), [table("db.t", 1, [5, 5])]), seq=1, t=T0))
    recorder.record(snap(view((1,), [table("db.t", 1, [5, 5])]), seq=2, t=T0 + 10))
    recorder.close()
    return path
