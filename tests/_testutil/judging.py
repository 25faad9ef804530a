"""A recorder fed as the cluster session feeds it, for tests that write histories.

:class:`JudgingRecorder` takes raw snapshots: each is stamped and judged first
(:class:`konsole.collect.recording.Recording`), its events handed to ``on_event`` as the
session hands them to its faces, then written as judged (the recorder only writes).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from konsole.collect.history.recorder import Recorder
from konsole.collect.recording import Recording
from konsole.model.events import EventConfig
from konsole.model.health import Health, HealthRules
from konsole.model.placement import Placement
from konsole.model.poll import JudgedPoll, judge_recorded
from konsole.model.poll_facts import facts_of
from konsole.model.snapshot import ClusterSnapshot
from konsole.ui.state import ConsoleState

__all__ = ["JudgingRecorder", "health_of", "judged", "judged_as", "placement_of", "showing"]


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
    """``snapshot`` with a health a test made for it (by hand, or judged earlier), as one
    poll alone: its facts derived as the judge derives them."""
    own = facts_of(snapshot, HealthRules())
    return JudgedPoll(snapshot, (), health, snapshot if snapshot.ok else None, None, own)


def judged(
    snapshot: ClusterSnapshot,
    rules: HealthRules | None = None,
    *,
    previous: ClusterSnapshot | None = None,
) -> JudgedPoll:
    """``snapshot`` judged as one look (``check``'s), or after ``previous``, the last good
    poll before it (the rules that need two looks compare with it)."""
    carried = (
        facts_of(previous, rules or HealthRules())
        if previous is not None and not snapshot.ok
        else None
    )
    return judge_recorded(snapshot, (), rules, last_ok=previous, previous_ok=None, facts=carried)


def placement_of(snapshot: ClusterSnapshot) -> Placement | None:
    """The placement the judge derives for ``snapshot`` (None for a failed poll)."""
    return judged(snapshot).placement


def health_of(
    snapshot: ClusterSnapshot,
    rules: HealthRules | None = None,
    *,
    previous: ClusterSnapshot | None = None,
) -> Health:
    """The health the judge gives ``snapshot`` (see :func:`judged`)."""
    return judged(snapshot, rules, previous=previous).health


def showing(
    state: ConsoleState,
    snapshot: ClusterSnapshot | None,
    *,
    last_ok: ClusterSnapshot | None,
    previous_ok: ClusterSnapshot | None = None,
    health: Health | None = None,
) -> ConsoleState:
    """``state`` showing polls a test made by hand: ``snapshot`` the latest (``last_ok``
    when None), ``last_ok`` and ``previous_ok`` the last two good ones, their facts derived
    as the judge derives them. ``health``: the one given, else the state's own (a picture
    keeps its findings), else the judge's of ``snapshot``."""
    latest = snapshot if snapshot is not None else last_ok
    assert latest is not None, "a state shows at least one poll"
    if health is None:
        health = state.health
    if health is None:
        before = previous_ok if latest.ok else last_ok
        health = judged(latest, previous=before).health
    facts = None if last_ok is None else facts_of(last_ok, HealthRules())
    return replace(state, judged=JudgedPoll(latest, (), health, last_ok, previous_ok, facts))
