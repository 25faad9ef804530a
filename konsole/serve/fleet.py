"""Many clusters in one process: ``konsole serve``'s polling, recording and hand-off.

:class:`Fleet` runs one asyncio task per cluster (:class:`Member`). Each task runs the
cluster's :class:`~konsole.collect.session.ClusterSession` (the one the console runs too),
which polls its cluster on its own interval (the live poller of
:func:`konsole.collect.cluster.connect.build_poller`) and records every poll into the cluster's
history file exactly as ``konsole record`` does (the session stamps and judges each poll
once; :class:`konsole.collect.history.recorder.Recorder` writes it as judged, one transaction per
poll, a file that cannot be written kept in memory and retried); the fleet hands each
judged poll (:class:`~konsole.model.poll.JudgedPoll`) to every
:class:`~konsole.serve.sinks.PollSink`.

The tasks share nothing but the sinks: a cluster that is down, slow or timing out delays
only its own polls (the poller bounds each poll; SQLite writes run in a thread so that
one slow disk does not hold the event loop).

The history file, by the one rule of :mod:`konsole.collect.cluster.connect` (the session's):

- free: this process takes its writer lock and records;
- held by another writer (a ``konsole record``, a console): this process **follows** the
  file (:mod:`konsole.collect.history.follow`) instead of polling the cluster a second time, and
  takes the file over (polls and records) once that writer lets it go;
- refused (a newer schema, a corrupt or foreign file) or unwritable: the cluster is served
  live, "history off" is said once, and the recorder (when there is one) retries each poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from konsole.collect.history.state import HistoryMode, HistoryStatus
from konsole.collect.profiles import Profile
from konsole.collect.session import Source
from konsole.serve.sinks import PollSink

if TYPE_CHECKING:
    from konsole.collect.history.operator_feed import OperatorFeed
    from konsole.collect.history.recorder import RecorderStatus
    from konsole.model.poll import JudgedPoll

__all__ = ["Fleet", "HistoryMode", "Member", "MemberStatus", "Source"]

log = logging.getLogger(__name__)

#: Seconds a stop may take: the tasks' history flushes, then the sinks' closes.
STOP_BUDGET_S = 4.0


@dataclass(frozen=True, slots=True)
class Member:
    """One cluster of the fleet."""

    #: The ``cluster`` label: the profile's name (``local``, ``bootstrap-HOST:PORT``...).
    name: str
    profile: Profile
    #: Its history file (None: no history at all).
    history: Path | None
    #: Seconds between polls (None: the profile's).
    interval: float | None = None


@dataclass(frozen=True, slots=True)
class MemberStatus:
    """What ``/healthz`` and the log say of one cluster."""

    name: str
    history: HistoryMode = HistoryMode.OFF
    running: bool = False
    polls: int = 0
    last_poll_at: float | None = None
    last_ok: bool | None = None
    #: Why the task ended (None while it runs or after a clean stop).
    crashed: str | None = None
    #: The recorder's state after the last poll (None: not recording here).
    recorder: RecorderStatus | None = None
    #: (action, outcome) -> operator events that appeared in its history since serve started.
    actions: Mapping[tuple[str, str], int] = field(default_factory=dict)


def _mode(status: HistoryStatus) -> HistoryMode:
    """What ``/healthz`` says: recording only while polls are written."""
    if status.mode is HistoryMode.RECORDING and status.reason is not None:
        return HistoryMode.OFF
    return status.mode


def _live_source(member: Member) -> Source:
    from konsole.collect.cluster.connect import build_poller
    from konsole.collect.history.server_memory import remember

    poller, release = remember(build_poller(member.profile, member.interval), member.history)
    return poller.snapshots, release


@dataclass
class Fleet:
    """Polls every member at once; see the module docs."""

    members: Sequence[Member]
    sinks: Sequence[PollSink]
    #: Says one line for the operator (the CLI prefixes time and command).
    say: Callable[[str], None] = print
    #: Makes a member's live snapshot source (tests inject fakes).
    source: Callable[[Member], Source] = _live_source
    clock: Callable[[], float] = time.time
    #: Seconds a stop may take (see :data:`STOP_BUDGET_S`).
    stop_budget_s: float = STOP_BUDGET_S
    _status: dict[str, MemberStatus] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    #: (cluster, sink id) of sinks whose last call failed (said once).
    _failing: set[tuple[str, int]] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        names = [m.name for m in self.members]
        if len(set(names)) != len(names):
            raise ValueError(f"two clusters of one serve share a name: {sorted(names)}")
        self._status = {m.name: MemberStatus(m.name) for m in self.members}

    # ------------------------------------------------------------------ status

    def status(self) -> list[MemberStatus]:
        with self._lock:
            return [self._status[m.name] for m in self.members]

    def healthz(self) -> tuple[bool, dict[str, Any]]:
        """Healthy while every cluster's task runs (a cluster that is down is the
        cluster's trouble, reported in ``/metrics``, not the process's)."""
        now = self.clock()
        clusters = {}
        for s in self.status():
            age = None if s.last_poll_at is None else round(now - s.last_poll_at, 3)
            clusters[s.name] = {
                "running": s.running,
                "history": s.history.value,
                "polls": s.polls,
                "last_poll_ok": s.last_ok,
                "last_poll_age_s": age,
                "crashed": s.crashed,
            }
        ok = all(s["running"] for s in clusters.values())
        return ok, {"status": "ok" if ok else "degraded", "clusters": clusters}

    def _update(self, name: str, **changes: Any) -> None:
        with self._lock:
            self._status[name] = replace(self._status[name], **changes)

    # ------------------------------------------------------------------ running

    async def run(self, stop: asyncio.Event) -> None:
        """Until ``stop`` is set (or every task ended); then, or when cancelled, every task
        is cancelled (a poll in hand is dropped, as ``record`` drops it), each history is
        flushed and the sinks are closed, all bounded in time."""
        tasks = [
            asyncio.create_task(self._member(m, stop), name=f"serve:{m.name}") for m in self.members
        ]
        stopper = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait([*tasks, stopper], return_when=asyncio.FIRST_COMPLETED)
            if not stopper.done():
                await asyncio.wait([*tasks, stopper], return_when=asyncio.ALL_COMPLETED)
        finally:
            stopper.cancel()
            for task in tasks:
                task.cancel()
            # Each task flushes its history in its finally; then the sinks close, all at
            # once: the whole stop stays within the budget (a service manager's 5 s).
            started = time.monotonic()
            if tasks:
                await asyncio.wait(tasks, timeout=self.stop_budget_s * 0.6)
            left = max(0.1, self.stop_budget_s - (time.monotonic() - started))
            await self._close_sinks(left)

    async def _close_sinks(self, timeout: float) -> None:
        """Every sink's ``aclose`` at once, within ``timeout``; one that fails or is late is
        said and left."""
        closing = {asyncio.ensure_future(sink.aclose()): sink for sink in self.sinks}
        if not closing:
            return
        _, late = await asyncio.wait(closing, timeout=timeout)
        for future, sink in closing.items():
            if future in late:
                future.cancel()
                log.warning("sink %s did not close in time", type(sink).__name__)
            elif future.exception() is not None:
                log.warning("sink %s did not close: %s", type(sink).__name__, future.exception())

    async def _member(self, member: Member, stop: asyncio.Event) -> None:
        """The member's session (record, follow, take over: :mod:`konsole.collect.session`),
        each poll handed to the sinks."""
        from konsole.collect.session import ClusterSession

        self._update(member.name, running=True)
        feed: OperatorFeed | None = None
        session = ClusterSession(
            member.profile,
            member.history,
            interval=member.interval,
            clock=self.clock,
            source=partial(self.source, member),
            say=lambda text: self.say(f"{member.name}: {text}"),
        )
        try:
            feed = await self._operator_feed(member)
            async with contextlib.aclosing(session.steps(stop)) as steps:
                async for step in steps:
                    changes: dict[str, Any] = {"history": _mode(step.history)}
                    if step.recorder is not None:
                        changes["recorder"] = step.recorder
                    self._update(member.name, **changes)
                    if step.judged is not None:
                        await self._look(member.name, feed)
                        await self._hand(member.name, step.judged)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug: say it, keep the others going, /healthz says it
            log.exception("cluster %s: polling stopped", member.name)
            self._update(member.name, crashed=f"{type(exc).__name__}: {exc}")
        finally:
            if feed is not None:  # its one reader, after a look still running in its thread
                await _shielded(asyncio.to_thread(feed.close))
            self._update(member.name, running=False)

    async def _operator_feed(self, member: Member) -> OperatorFeed | None:
        """The operator actions of the member's history, counted from now on."""
        from konsole.collect.history.operator_feed import OperatorFeed

        if member.history is None:
            return None
        return await asyncio.to_thread(OperatorFeed, member.history)

    async def _look(self, name: str, feed: OperatorFeed | None) -> None:
        """New operator events in the history (a bounded read, in a thread)."""
        if feed is not None and await asyncio.to_thread(feed.look) > 0:
            self._update(name, actions=dict(feed.counts))

    async def _hand(self, name: str, judged: JudgedPoll) -> None:
        """The session's verdict on one poll, to every sink (none judges it again)."""
        snapshot = judged.snapshot
        with self._lock:
            polls = self._status[name].polls + 1
        self._update(name, polls=polls, last_poll_at=snapshot.taken_at, last_ok=snapshot.ok)
        for sink in self.sinks:
            key = (name, id(sink))
            try:
                await sink.on_poll(name, judged)
            except Exception as exc:  # one sink's bug never stops polling nor the other sinks
                if key not in self._failing:  # said once, not every poll
                    self._failing.add(key)
                    log.error(
                        "cluster %s: sink %s failed (said once): %s: %s",
                        name,
                        type(sink).__name__,
                        type(exc).__name__,
                        exc,
                    )
            else:
                if key in self._failing:
                    self._failing.discard(key)
                    log.info("cluster %s: sink %s works again", name, type(sink).__name__)


async def _shielded(work: Awaitable[Any]) -> None:
    """Finish ``work`` even when the task is being cancelled (the history flush on stop)."""
    future = asyncio.ensure_future(work)
    try:
        await asyncio.shield(future)
    except asyncio.CancelledError:
        await future
