"""One poll's way from the poller to the faces: stamped once, judged once, written as judged.

:class:`Recording` is what the cluster session (and ``konsole record``, which polls with its
own poller) does with each snapshot: stamp it on the poll timeline
(:class:`~konsole.collect.poll_timeline.Stamper`), start the judge afresh when the history
says it is another cluster, judge it (:class:`~konsole.model.poll.Judge`) and hand the
:class:`~konsole.model.poll.JudgedPoll` to the recorder, which only writes it. Without a
recorder (history off) the poll is stamped and judged the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from konsole.collect.poll_timeline import Stamper, Timeline
from konsole.model.events import EventConfig
from konsole.model.poll import Judge, JudgedPoll

if TYPE_CHECKING:
    from konsole.collect.history.recorder import Recorder
    from konsole.model.snapshot import ClusterSnapshot

__all__ = ["Recording"]


def _quiet(_: str) -> None:
    return None


class Recording:
    """Stamps, judges and (with a recorder) writes one cluster's polls, in order."""

    def __init__(
        self,
        recorder: Recorder | None,
        config: EventConfig | None = None,
        *,
        say: Callable[[str], None] | None = None,
        timeline: Timeline | None = None,
    ) -> None:
        self.recorder = recorder
        self.judge = Judge(config)
        if timeline is None:
            timeline = recorder.timeline if recorder is not None else Timeline(time.monotonic)
        # The recorder's, else nobody's: a face passes its own (stdout may be its output).
        if say is None:
            say = recorder.say if recorder is not None else _quiet
        self.stamper = Stamper(timeline, say)

    def judged(self, snapshot: ClusterSnapshot) -> JudgedPoll:
        """``snapshot`` stamped and judged (after another cluster: judged afresh)."""
        stamped = self.stamper.stamp(snapshot)
        recorder = self.recorder
        if self.judge.last is not None and recorder and recorder.another_cluster(stamped):
            self.judge.forget()
        return self.judge.judge(stamped)

    def take(self, snapshot: ClusterSnapshot) -> JudgedPoll:
        """``snapshot`` stamped and judged; written when there is a recorder (blocking:
        call it from a thread in async code)."""
        judged = self.judged(snapshot)
        if self.recorder is not None:
            self.recorder.record(judged)
        return judged
