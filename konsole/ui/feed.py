"""Where the console's states come from: live polls, a recorder's file, or a fixed list.

A feed publishes :class:`ConsoleState` objects through a callback; the app runs
:meth:`Feed.run` in a worker and never waits on it. Three kinds:

- :class:`LiveFeed` polls the cluster (the same :class:`konsole.collect.poller.Poller` as ``watch``
  and ``record``) and records every poll into the profile's history file. When a
  ``konsole record`` already holds that file it *follows* the file instead of polling a
  second time; when the file cannot be written it stays live and says history is off.
- :class:`StaticFeed` publishes given states (screen snapshots, benchmarks, unit tests).
- :func:`state_at` builds the state of a past moment from a history reader (time travel).

Disk work (recording, reading the history) runs in threads: a slow or full disk never
blocks the event loop that paints the screens.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from konsole.model.events import Event, EventConfig, EventState, advance
from konsole.model.health import Health, evaluate
from konsole.model.snapshot import ClusterSnapshot
from konsole.ui.state import MAX_EVENTS, ConsoleState, HistoryMode, HistoryStatus

# konsole.collect.history (and with it store and sqlite3) is imported where the history is read:
# the console paints its first frame without it.
if TYPE_CHECKING:
    from konsole.collect.profiles import Profile
    from konsole.localcluster import ClusterDescription
    from store import HistoryReader

__all__ = ["Feed", "LiveFeed", "StaticFeed", "open_history_reader", "state_at"]

Publish = Callable[[ConsoleState], None]


class Feed(Protocol):
    @property
    def name(self) -> str:
        """The profile's name, shown in the status bar."""
        ...

    @property
    def profile(self) -> Profile | None:
        """The profile (connection details for the preview); None for a static feed."""
        ...

    @property
    def local(self) -> ClusterDescription | None:
        """The local cluster (log files of its servers), when the console runs on one."""
        ...

    @property
    def history_path(self) -> Path | None:
        """The history file screens read series and time travel from (None: no history)."""
        ...

    async def run(self, publish: Publish) -> None:
        """Publish states until cancelled."""
        ...


def open_history_reader(path: Path | None) -> HistoryReader | None:
    """A reader of ``path``, or None when there is no usable history there."""
    if path is None or not path.exists():
        return None
    from store import HistoryError, open_reader

    try:
        return open_reader(path)
    except HistoryError:
        return None


# =========================================================================== static


@dataclass
class StaticFeed:
    """Publishes ``states`` one after the other (``interval`` apart), then idles."""

    states: Sequence[ConsoleState]
    name: str = "test"
    profile: Profile | None = None
    local: ClusterDescription | None = None
    history_path: Path | None = None
    interval: float = 0.0

    async def run(self, publish: Publish) -> None:
        for i, state in enumerate(self.states):
            if i and self.interval:
                await asyncio.sleep(self.interval)
            publish(state)
        await asyncio.Event().wait()  # idle until cancelled


# =========================================================================== time travel


def state_at(
    reader: HistoryReader,
    at: float,
    *,
    name: str,
    history: HistoryStatus | None = None,
    rules: Any = None,
    now: float | None = None,
) -> ConsoleState | None:
    """The console state of moment ``at`` as recorded; None before the first poll.

    Blocking (reads SQLite): call it from a thread.
    """
    from konsole.collect.history import event_from_row, snapshot_at
    from konsole.model.timefmt import to_ms

    recorded = snapshot_at(reader, at)
    if recorded is None:
        return None
    snap = recorded.snapshot
    previous: ClusterSnapshot | None = None
    before = reader.poll_at(to_ms(snap.taken_at) - 1)
    if before is not None:
        earlier = snapshot_at(reader, before.at_ms / 1000)
        previous = earlier.snapshot if earlier is not None else None
    last_ok = snap if snap.ok else None
    if last_ok is None:
        # The panels of a failed poll show the last good one before it, greyed.
        for poll in reversed(reader.polls(until=to_ms(snap.taken_at))):
            if poll.ok:
                found = snapshot_at(reader, poll.at_ms / 1000)
                last_ok = found.snapshot if found is not None else None
                break
    events = tuple(
        event_from_row(r)
        for r in reader.events(until=to_ms(at), limit=None)[-MAX_EVENTS:]  # oldest first
    )
    return ConsoleState(
        profile=name,
        now=at if now is None else now,
        snapshot=snap,
        last_ok=last_ok,
        previous_ok=previous if previous is not None and previous.ok else None,
        health=evaluate(snap, rules, previous=previous),
        events=events,
        as_of=at,
        history=history or HistoryStatus(),
    )


# =========================================================================== live


@dataclass
class LiveFeed:
    """Polls one cluster and records it (or follows the recorder that holds the file)."""

    profile: Profile
    history_path: Path | None
    local: ClusterDescription | None = None
    interval: float | None = None
    clock: Callable[[], float] = time.time
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.profile.name

    async def run(self, publish: Publish) -> None:
        from konsole.collect.recorder import Recorder
        from store import HistoryError, HistoryLocked

        status = HistoryStatus(HistoryMode.OFF, self.history_path, "no history file")
        recorder: Recorder | None = None
        if self.history_path is not None:
            notes: list[str] = []
            recorder = Recorder(
                self.history_path,
                config=EventConfig(rules=self.profile.health),
                say=notes.append,
                clock=self.clock,
            )
            try:
                await asyncio.to_thread(recorder.open)
                # An unwritable place does not raise: the recorder starts not recording.
                opened = recorder.status
                reason = None if opened.recording else opened.reason
                status = HistoryStatus(HistoryMode.RECORDING, self.history_path, reason)
            except HistoryLocked as exc:
                recorder = None
                status = HistoryStatus(HistoryMode.FOLLOWING, self.history_path, str(exc))
            except HistoryError as exc:
                recorder = None
                status = HistoryStatus(HistoryMode.OFF, self.history_path, str(exc))
        state = ConsoleState(profile=self.name, now=self.clock(), history=status)
        state = replace(state, events=await asyncio.to_thread(self._recent_events))
        publish(state)
        if status.mode is HistoryMode.FOLLOWING:
            await self._follow(state, publish)
        else:
            await self._poll(state, recorder, publish)

    def _recent_events(self) -> tuple[Event, ...]:
        from konsole.collect.history import event_from_row
        from konsole.model.timefmt import to_ms

        reader = open_history_reader(self.history_path)
        if reader is None:
            return ()
        try:
            rows = reader.events(since=to_ms(self.clock() - 86400.0))
            return tuple(event_from_row(r) for r in rows[-MAX_EVENTS:])
        finally:
            reader.close()

    async def _poll(self, state: ConsoleState, recorder: Any, publish: Publish) -> None:
        from konsole.collect.connect import build_poller

        poller, release = build_poller(self.profile, self.interval)
        events_state = EventState()
        config = EventConfig(rules=self.profile.health)
        stop = asyncio.Event()
        try:
            async for snap in poller.snapshots(stop):
                status = state.history
                health = None
                if recorder is not None:
                    # The recorder derives the events and the health as it writes.
                    found: list[Event] = []
                    recorder.on_event = found.append
                    await asyncio.to_thread(recorder.record, snap)
                    events, health = found, recorder.health
                    rs = recorder.status
                    reason = None if rs.recording else rs.reason
                    status = HistoryStatus(HistoryMode.RECORDING, self.history_path, reason)
                else:
                    events, events_state = advance(events_state, snap, config=config)
                    health = events_state.health
                state = _next(state, snap, tuple(events), status, self.clock(), health)
                publish(state)
        finally:
            stop.set()
            with contextlib.suppress(Exception):
                await release()
            if recorder is not None:
                await asyncio.to_thread(recorder.close)

    async def _follow(self, state: ConsoleState, publish: Publish) -> None:
        """Read what the recorder holding the file writes, one look per poll interval."""
        interval = self.interval or self.profile.poll_interval
        seen_ms = 0
        while True:
            step = await asyncio.to_thread(self._follow_step, seen_ms)
            if step is not None:
                snap, events, seen_ms = step
                health = evaluate(snap, self.profile.health, previous=state.last_ok)
                state = _next(state, snap, events, state.history, self.clock(), health)
                publish(state)
            await asyncio.sleep(interval)

    def _follow_step(self, seen_ms: int) -> tuple[ClusterSnapshot, tuple[Event, ...], int] | None:
        from konsole.collect.history import event_from_row, snapshot_at

        reader = open_history_reader(self.history_path)
        if reader is None:
            return None
        try:
            polls = reader.polls(since=seen_ms + 1) if seen_ms else reader.polls()[-1:]
            if not polls:
                return None
            latest = polls[-1]
            recorded = snapshot_at(reader, latest.at_ms / 1000)
            if recorded is None:
                return None
            rows = reader.events(since=seen_ms + 1) if seen_ms else []
            return recorded.snapshot, tuple(event_from_row(r) for r in rows), latest.at_ms
        finally:
            reader.close()


def _next(
    state: ConsoleState,
    snap: ClusterSnapshot,
    events: tuple[Event, ...],
    status: HistoryStatus,
    now: float,
    health: Health | None,
) -> ConsoleState:
    last_ok, previous_ok = state.last_ok, state.previous_ok
    if snap.ok:
        last_ok, previous_ok = snap, state.last_ok
    return replace(
        state,
        now=now,
        snapshot=snap,
        last_ok=last_ok,
        previous_ok=previous_ok,
        health=health,
        events=(state.events + events)[-MAX_EVENTS:],
        history=status,
    )
