"""One cluster session: open the history, poll and record, or follow the writer, take over.

The console's feed and ``serve``'s fleet both watch one cluster the same way, so the way is
written once here (DESIGN.md: whoever holds the writer lock polls; the others follow the
file):

- the history file is free: take its writer lock, poll the cluster and record every poll
  (:class:`~konsole.collect.recording.Recording`: stamped, judged, then written by the
  :class:`~konsole.collect.history.recorder.Recorder` as judged);
- another process holds it (``konsole record``, a console, ``serve``): **follow** it, one
  look per poll interval (:func:`konsole.collect.history.follow.newest`, through one kept reader),
  and when that writer is gone take the file over
  (:mod:`konsole.collect.history.takeover`) and poll;
- it is refused or cannot be written: poll live, history off (the recorder, when there is
  one, retries each poll);
- no history at all: poll live.

:meth:`ClusterSession.steps` yields a :class:`SessionStep` per poll (polled or followed) with
its :class:`~konsole.model.poll.JudgedPoll` (the session is the one judge of its cluster:
every face reads that verdict) and the history status; a step without a poll says the
history changed alone (the opening, a takeover). Disk work runs in threads; a cancel lets
the writer lock go, also when it was being taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from konsole.collect.history.state import HistoryMode, HistoryStatus
from konsole.collect.poll_timeline import Timeline

if TYPE_CHECKING:
    from konsole.collect.history.recorder import Recorder, RecorderStatus
    from konsole.collect.profiles import Profile
    from konsole.model.events import Event
    from konsole.model.health import Health
    from konsole.model.poll import JudgedPoll
    from konsole.model.snapshot import ClusterSnapshot

__all__ = ["ClusterSession", "SessionStep", "Source"]

#: Snapshots until ``stop`` is set, and how to release what makes them.
Source = tuple[Callable[[asyncio.Event], AsyncIterator["ClusterSnapshot"]], Callable[[], Any]]

#: Milliseconds a follower looks ahead of its clock: the writer stamps polls at their start.
LOOK_AHEAD_MS = 60_000


@dataclass(frozen=True, slots=True)
class SessionStep:
    """One step of a session: a poll (polled or followed), or the history changing alone."""

    #: The poll as judged (None: the opening, or a takeover: only ``history`` and
    #: ``notices`` are new).
    judged: JudgedPoll | None
    history: HistoryStatus
    #: The history's own events of this step (taken over, not written), after the poll's.
    notices: tuple[Event, ...] = ()
    #: The recorder's state after this poll (None: not recording here).
    recorder: RecorderStatus | None = None

    @property
    def snapshot(self) -> ClusterSnapshot | None:
        return self.judged.snapshot if self.judged is not None else None

    @property
    def health(self) -> Health | None:
        return self.judged.health if self.judged is not None else None

    @property
    def events(self) -> tuple[Event, ...]:
        """The poll's events, then the history's own."""
        if self.judged is None:
            return self.notices
        return self.judged.events + self.notices if self.notices else self.judged.events


def _quiet(_: str) -> None:
    return None


@dataclass
class ClusterSession:
    """Watches one cluster through its history file; see the module docs."""

    profile: Profile
    history: Path | None
    #: Seconds between polls and between looks (None: the profile's).
    interval: float | None = None
    clock: Callable[[], float] = time.time
    #: Makes the polled snapshots (None: the profile's live poller; tests inject fakes).
    source: Callable[[], Source] | None = None
    #: Says one line for an operator (serve's log); the console says it in its status bar.
    say: Callable[[str], None] = _quiet
    #: Keep log excerpts beside warning events (the profile's log sources).
    logs: bool = False
    #: Poll times that never go back: every poll is stamped on it once, before it is judged.
    _timeline: Timeline = field(default_factory=lambda: Timeline(time.monotonic), init=False)

    async def steps(self, stop: asyncio.Event) -> AsyncGenerator[SessionStep]:
        """Steps until ``stop`` is set (or cancelled). Close it (``contextlib.aclosing``):
        the recorder is closed and the follower's reader let go then."""
        recorder, status = await self._open()
        try:
            yield SessionStep(None, status)
            if status.mode is HistoryMode.FOLLOWING:
                async with contextlib.aclosing(self._follow(status, stop)) as looks:
                    async for look in looks:
                        if isinstance(look, SessionStep):
                            yield look
                            continue
                        # Taken over: this process records the file now.
                        recorder, taken = look
                        status = taken.history
                        yield taken
        except BaseException:  # stopped before polling: the lock taken is let go
            if recorder is not None:
                await asyncio.shield(asyncio.to_thread(recorder.close))
            raise
        if stop.is_set():
            if recorder is not None:
                await asyncio.shield(asyncio.to_thread(recorder.close))
            return
        async with contextlib.aclosing(self._poll(recorder, status, stop)) as polls:
            async for step in polls:
                yield step

    # ------------------------------------------------------------------ opening

    def _recorder(self, path: Path) -> Recorder:
        from konsole.collect.history.recorder import Recorder

        return Recorder(
            path,
            timeline=self._timeline,
            say=self.say,
            clock=self.clock,
            run_id=self.profile.run_id,
            logs=self.profile.logs if self.logs else None,
        )

    async def _open(self) -> tuple[Recorder | None, HistoryStatus]:
        """This session's recorder on the history file (None: following it, or none)."""
        from store import HistoryError, HistoryLocked

        path = self.history
        if path is None:
            self.say("history off (no history file)")
            return None, HistoryStatus(HistoryMode.OFF, path, "no history file")
        recorder = self._recorder(path)
        try:
            await _taking(recorder, recorder.open)
        except HistoryLocked as exc:
            self.say(f"following {path} ({exc})")
            return None, HistoryStatus(HistoryMode.FOLLOWING, path, str(exc))
        except HistoryError as exc:
            self.say(f"history off: {exc}")
            return None, HistoryStatus(HistoryMode.OFF, path, str(exc))
        # An unwritable place does not raise: the recorder starts not recording.
        return recorder, self._recording(recorder)

    def _recording(self, recorder: Recorder, note: str | None = None) -> HistoryStatus:
        """The status of recording through ``recorder`` (``note``: how it came to)."""
        opened = recorder.status
        reason = None if opened.recording else opened.reason
        if reason is not None:
            self.say(f"history off for now: {reason}")
        else:
            how = f" ({note})" if note else ""
            self.say(f"recording into {recorder.path}{how}")
        return _status(recorder, reason, note)

    # ------------------------------------------------------------------ following

    async def _follow(
        self, status: HistoryStatus, stop: asyncio.Event
    ) -> AsyncGenerator[SessionStep | tuple[Recorder, SessionStep]]:
        """The writer's polls, one look per interval, until ``stop`` or until this session
        took the file over (the last item: its recorder and the takeover step)."""
        from konsole.collect.history.follow import newest
        from konsole.collect.history.kept_reader import KeptReader
        from konsole.collect.history.server_memory import recall_from
        from konsole.model.events import EventConfig
        from konsole.model.poll import Judge
        from konsole.model.timefmt import to_ms

        assert self.history is not None  # following a file
        interval = self.interval or self.profile.poll_interval
        seen_ms = 0
        judge = Judge(EventConfig(rules=self.profile.health))
        known = self.profile.known_servers
        # One reader for all the looks (opened again only for another file).
        kept = KeptReader(self.history)
        try:
            while not stop.is_set():
                taken = await self._take_over(status)
                if taken is not None:
                    yield taken
                    return
                look = partial(newest, seen_ms=seen_ms, now_ms=to_ms(self.clock()) + LOOK_AHEAD_MS)
                step = await asyncio.to_thread(kept.read, look)
                if step is not None:
                    snap, events, seen_ms, epoch = step
                    # The writer's memory of the tablet servers is its history: judge a
                    # followed poll with what the file knew at that poll.
                    recall = partial(recall_from, known=known, at=snap.taken_at)
                    recalled = await asyncio.to_thread(kept.read, recall)
                    snap = snap.with_known(recalled if recalled is not None else known)
                    # Stamped by its writer; its events are the writer's, its health ours.
                    yield SessionStep(judge.followed(snap, events, epoch=epoch), status)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), interval)
        finally:
            # After a look still reading in its thread (the close waits for it).
            await asyncio.shield(asyncio.to_thread(kept.close))

    async def _take_over(self, status: HistoryStatus) -> tuple[Recorder, SessionStep] | None:
        """When no process holds the writer lock any more, this session's recorder takes
        the file (None while it is held, or when another follower took it first)."""
        from konsole.collect.history import takeover
        from store import HistoryError

        path = self.history
        if path is None or not await asyncio.to_thread(takeover.writer_gone, path):
            return None
        recorder = self._recorder(path)
        at = self.clock()
        try:
            event = await _taking(
                recorder, partial(takeover.take_over, recorder, at, followed=status.reason)
            )
        except HistoryError:  # locked by a quicker follower, or refused: follow on
            return None
        taken = self._recording(recorder, takeover.TAKEN_OVER)
        return recorder, SessionStep(None, taken, (event,))

    # ------------------------------------------------------------------ polling

    async def _poll(
        self, recorder: Recorder | None, status: HistoryStatus, stop: asyncio.Event
    ) -> AsyncGenerator[SessionStep]:
        """Poll until ``stop``; stamp and judge each poll here, and record it as judged."""
        from konsole.collect.recording import Recording
        from konsole.model.events import EventConfig

        snapshots, release = self._source()
        recording = Recording(
            recorder,
            EventConfig(rules=self.profile.health),
            say=self.say,
            timeline=self._timeline,
        )
        # The history's own events (trouble writing it), said with the poll that met it.
        notices: list[Event] = []
        if recorder is not None:
            recorder.on_event = notices.append
        try:
            async for snap in snapshots(stop):
                if recorder is None:
                    yield SessionStep(recording.take(snap), status)
                    continue
                judged = await asyncio.to_thread(recording.take, snap)
                said, notices[:] = tuple(notices), []
                written = recorder.status
                status = _status(
                    recorder, None if written.recording else written.reason, status.note
                )
                yield SessionStep(judged, status, said, written)
        finally:
            with contextlib.suppress(Exception):
                await _shielded(release())
            if recorder is not None:
                await _shielded(asyncio.to_thread(recorder.close))

    def _source(self) -> Source:
        if self.source is not None:
            return self.source()
        from konsole.collect.cluster.connect import live_poller
        from konsole.collect.history.reads import seed_capacity
        from konsole.collect.history.server_memory import remember

        live, history, clock = live_poller(self.profile, self.interval), self.history, self.clock
        poller, release = remember((live.poller, live.aclose), history)

        async def snapshots(stop: asyncio.Event) -> AsyncIterator[ClusterSnapshot]:
            # the forecasts start from the recorded disk usage, not empty (issue 41)
            if live.capacity is not None:
                with contextlib.suppress(Exception):  # a history that cannot be read: none
                    await seed_capacity(live.capacity, history, clock())
            async for snap in poller.snapshots(stop):
                yield snap

        return snapshots, release


def _status(recorder: Recorder, reason: str | None, note: str | None) -> HistoryStatus:
    """Recording through ``recorder`` (``reason``: why not now; ``note``: how it came to)."""
    other, proven = recorder.other_cluster_until, recorder.other_cluster_proven
    return HistoryStatus(HistoryMode.RECORDING, recorder.path, reason, other, proven, note)


async def _taking(recorder: Recorder, take: Callable[[], Any]) -> Any:
    """``take()`` (opening ``recorder``: it may take the writer lock) in a thread; when the
    caller is cancelled meanwhile, the thread goes on and the lock it takes is let go."""
    opening = asyncio.ensure_future(asyncio.to_thread(take))
    try:
        return await asyncio.shield(opening)
    except asyncio.CancelledError:
        opening.add_done_callback(partial(_let_go, recorder))
        raise


def _let_go(recorder: Recorder, opening: asyncio.Future[Any]) -> None:
    """Close a recorder whose opening ended after its session was cancelled."""
    if not opening.cancelled():
        opening.exception()  # seen: a take refused after the cancel is nothing to say
    recorder.close()


async def _shielded(work: Any) -> None:
    """Finish ``work`` even when the task is being cancelled (the history flush on stop)."""
    future = asyncio.ensure_future(work)
    try:
        await asyncio.shield(future)
    except asyncio.CancelledError:
        await future
