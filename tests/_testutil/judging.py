"""A recorder fed as the cluster session feeds it, for tests that write histories.

:class:`JudgingRecorder` takes raw snapshots: each is stamped and judged first
(:class:`konsole.collect.recording.Recording`), its events handed to ``on_event`` as the
session hands them to its faces, then written as judged (the recorder only writes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from konsole.collect.history.recorder import Recorder
from konsole.collect.recording import Recording
from konsole.model.events import EventConfig
from konsole.model.health import Health
from konsole.model.poll import JudgedPoll
from konsole.model.snapshot import ClusterSnapshot

__all__ = ["JudgingRecorder", "judged_as"]


class JudgingRecorder(Recorder):
    def __init__(self, path: Path, *, config: EventConfig | None = None, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.recording = Recording(self, config)
        #: The last poll judged (what the session would hand its faces).
        self.judged: JudgedPoll | None = None

    def record(self, snapshot: ClusterSnapshot) -> int | None:  # type: ignore[override]
        judged = self.judged = self.recording.judged(snapshot)
        for event in judged.events:
            if self.on_event is not None:
                self.on_event(event)
        return super().record(judged)


def judged_as(snapshot: ClusterSnapshot, health: Health) -> JudgedPoll:
    """``snapshot`` with a health judged for it (a test's own, perhaps made by hand without
    its placement: made here then), as one poll alone."""
    from konsole.model.placement import placement

    last_ok = snapshot if snapshot.ok else None
    where = health.placement
    if where is None and snapshot.ok and snapshot.view is not None:
        where = placement(snapshot.view)
    return JudgedPoll(snapshot, (), health, last_ok, None, where)
