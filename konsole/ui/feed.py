"""Where the console's states come from: live polls, a recorder's file, or a fixed list.

A feed publishes :class:`ConsoleState` objects through a callback; the app runs
:meth:`Feed.run` in a worker and never waits on it. Three kinds:

- :class:`LiveFeed` polls the cluster (the same :class:`konsole.collect.poller.Poller` as ``watch``
  and ``record``) and records every poll into the profile's history file. When a
  ``konsole record`` already holds that file it *follows* the file instead of polling a
  second time; when the file cannot be written it stays live and says history is off.
- :class:`StaticFeed` publishes given states (screen snapshots, benchmarks, unit tests).
- :func:`state_at` builds the state of a past moment from a history reader (time travel).

A feed is also what the screens ask the cluster through: :meth:`Feed.preview` (a table's
rows) and :meth:`Feed.kv_snapshots` connect with the profile's client settings in a
:class:`LiveFeed`; a :class:`StaticFeed` answers with the fakes it is given. No screen opens
a client itself.

Disk work (recording, reading the history) runs in threads: a slow or full disk never
blocks the event loop that paints the screens. :func:`read_history` is the one way the
console reads its history file from async code: ``read(reader)`` in a thread, the reader
closed whatever happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from konsole.collect import table_reads
from konsole.collect.table_reads import DEADLINE_S, LookupRequest, LookupRows, PreviewRequest
from konsole.ui.state import MAX_EVENTS, ConsoleState, HistoryMode, HistoryStatus

# konsole.collect.history (and with it store and sqlite3) is imported where the history is read,
# the model's events and health where a poll is judged: the console paints its first frame
# without them (docs/performance.md, the console's first paint).
if TYPE_CHECKING:
    from fluss_proto.client import FlussClient
    from fluss_proto.scan import Preview
    from konsole.collect.profiles import Profile
    from konsole.collect.recorder import Recorder
    from konsole.localcluster import ClusterDescription
    from konsole.model.events import Event
    from konsole.model.health import Health
    from konsole.model.snapshot import ClusterSnapshot
    from konsole.model.table_stats import BucketKey
    from store import HistoryReader

__all__ = [
    "DEADLINE_S",
    "Feed",
    "KvFunction",
    "LiveFeed",
    "LookupFunction",
    "LookupRequest",
    "LookupRows",
    "NoClusterError",
    "PreviewRequest",
    "ScanFunction",
    "StaticFeed",
    "open_history_reader",
    "read_history",
    "state_at",
    "with_history",
]

Publish = Callable[[ConsoleState], None]
T = TypeVar("T")
#: (partition id, partition name) of each partition a question is about ((None, None): none).
Partitions = Sequence[tuple[int | None, str | None]]

#: What a static feed is given to answer :meth:`Feed.preview` and :meth:`Feed.kv_snapshots`.
ScanFunction = Callable[[PreviewRequest], Awaitable["Preview"]]
LookupFunction = Callable[[LookupRequest], Awaitable[LookupRows]]
KvFunction = Callable[[str, Partitions], Awaitable[dict["BucketKey", str]]]


class NoClusterError(RuntimeError):
    """The feed has no cluster to ask (a static feed given no fake for the question)."""


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

    async def preview(self, request: PreviewRequest) -> Preview:
        """The rows of one preview scan; raises on whole-preview failures (unknown table,
        unreachable cluster, :class:`NoClusterError`)."""
        ...

    async def lookup(self, request: LookupRequest) -> LookupRows:
        """The rows of one key (or prefix) lookup, masked; raises as :meth:`preview`."""
        ...

    async def kv_snapshots(self, table_path: str, partitions: Partitions) -> dict[BucketKey, str]:
        """(partition id, bucket) -> ``snapshot id @ log offset`` of a primary-key table's
        latest KV snapshots, asked from the live cluster."""
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


def with_history(path: Path | None, read: Callable[[HistoryReader], T]) -> T | None:
    """``read(reader)`` on a reader of ``path``, closed afterwards; None without a usable
    history. Blocking (SQLite): from async code use :func:`read_history`."""
    reader = open_history_reader(path)
    if reader is None:
        return None
    try:
        return read(reader)
    finally:
        reader.close()


async def read_history(path: Path | None, read: Callable[[HistoryReader], T]) -> T | None:
    """:func:`with_history` in a thread: the event loop keeps painting while SQLite reads."""
    return await asyncio.to_thread(with_history, path, read)


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
    #: Fakes answering the questions a live feed asks the cluster (None: no cluster).
    scan: ScanFunction | None = None
    kv: KvFunction | None = None
    lookup_rows: LookupFunction | None = None

    async def run(self, publish: Publish) -> None:
        for i, state in enumerate(self.states):
            if i and self.interval:
                await asyncio.sleep(self.interval)
            publish(state)
        await asyncio.Event().wait()  # idle until cancelled

    async def preview(self, request: PreviewRequest) -> Preview:
        if self.scan is None:
            raise NoClusterError("no cluster to scan: this console has no connection profile")
        masks = table_reads.masks_of(self.profile)
        return table_reads.masked_preview(await self.scan(request), request, masks)

    async def lookup(self, request: LookupRequest) -> LookupRows:
        if self.lookup_rows is None:
            raise NoClusterError("no cluster to ask: this console has no connection profile")
        masks = table_reads.masks_of(self.profile)
        return table_reads.masked_lookup(await self.lookup_rows(request), masks)

    async def kv_snapshots(self, table_path: str, partitions: Partitions) -> dict[BucketKey, str]:
        if self.kv is None:
            raise NoClusterError("no cluster to ask: this console has no connection profile")
        return await self.kv(table_path, partitions)


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
    from konsole.model.health import evaluate
    from konsole.model.timefmt import to_ms

    recorded = snapshot_at(reader, at)
    if recorded is None:
        return None
    snap = recorded.snapshot
    previous: ClusterSnapshot | None = None
    # Rates, the last good poll and events come from this moment's epoch (its cluster) only.
    since, _ = reader.epochs.narrow(None, to_ms(snap.taken_at))
    before = reader.poll_at(to_ms(snap.taken_at) - 1)
    if before is not None and (since is None or before.at_ms >= since):
        earlier = snapshot_at(reader, before.at_ms / 1000)
        previous = earlier.snapshot if earlier is not None else None
    last_ok = snap if snap.ok else None
    if last_ok is None:
        # The panels of a failed poll show the last good one before it, greyed.
        for poll in reversed(reader.polls(since=since, until=to_ms(snap.taken_at))):
            if poll.ok:
                found = snapshot_at(reader, poll.at_ms / 1000)
                last_ok = found.snapshot if found is not None else None
                break
    events = tuple(
        event_from_row(r)
        for r in reader.events(until=to_ms(at), limit=None, within_epoch=True)[-MAX_EVENTS:]
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


def _recording(
    path: Path | None, recorder: Any, reason: str | None, note: str | None = None
) -> HistoryStatus:
    """The status of a console recording through ``recorder`` (``reason``: why not now;
    ``note``: how it came to record, e.g. a recorder it followed is gone)."""
    other = recorder.other_cluster_until
    proven = recorder.other_cluster_proven
    return HistoryStatus(HistoryMode.RECORDING, path, reason, other, proven, note)


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
        # Loaded as the feed starts, a history or not (the first-paint test tells by it).
        import konsole.collect.recorder  # noqa: F401

        recorder, status = await self._open()
        try:
            state = ConsoleState(profile=self.name, now=self.clock(), history=status)
            recent = await read_history(self.history_path, self._recent_events)
            state = replace(state, events=recent or ())
            publish(state)
            if status.mode is HistoryMode.FOLLOWING:
                # Until the recorder followed is gone: then this console records the file.
                state, recorder = await self._follow(state, publish)
        except BaseException:  # cancelled before polling: the lock taken is let go
            if recorder is not None:
                await asyncio.shield(asyncio.to_thread(recorder.close))
            raise
        await self._poll(state, recorder, publish)

    async def _open(self) -> tuple[Recorder | None, HistoryStatus]:
        """This console's recorder on the history file (None: following it, or none)."""
        from store import HistoryError, HistoryLocked

        path = self.history_path
        if path is None:
            return None, HistoryStatus(HistoryMode.OFF, path, "no history file")
        recorder = self._recorder(path)
        opening = asyncio.ensure_future(asyncio.to_thread(recorder.open))
        try:
            await asyncio.shield(opening)
        except HistoryLocked as exc:
            return None, HistoryStatus(HistoryMode.FOLLOWING, path, str(exc))
        except HistoryError as exc:
            return None, HistoryStatus(HistoryMode.OFF, path, str(exc))
        except asyncio.CancelledError:
            # The thread goes on: the lock it may take is let go once it ends.
            opening.add_done_callback(partial(_let_go, recorder))
            raise
        # An unwritable place does not raise: the recorder starts not recording.
        opened = recorder.status
        return recorder, _recording(path, recorder, None if opened.recording else opened.reason)

    def _recorder(self, path: Path) -> Recorder:
        from konsole.collect.recorder import Recorder
        from konsole.model.events import EventConfig

        notes: list[str] = []
        return Recorder(
            path,
            config=EventConfig(rules=self.profile.health),
            say=notes.append,
            clock=self.clock,
            run_id=self.profile.run_id,
            logs=self.profile.logs,
        )

    def _recent_events(self, reader: HistoryReader) -> tuple[Event, ...]:
        from konsole.collect.history import event_from_row
        from konsole.model.timefmt import to_ms

        rows = reader.events(since=to_ms(self.clock() - 86400.0), within_epoch=True)
        return tuple(event_from_row(r) for r in rows[-MAX_EVENTS:])

    async def _poll(self, state: ConsoleState, recorder: Any, publish: Publish) -> None:
        from konsole.collect.connect import build_poller
        from konsole.model.events import EventConfig, EventState, advance

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
                    status = _recording(self.history_path, recorder, reason, status.note)
                    other = status.other_until
                    if other is not None and other != state.history.other_until:
                        # Another cluster: none of its events or polls is this one's.
                        state = replace(state, events=(), last_ok=None, previous_ok=None)
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

    async def _follow(self, state: ConsoleState, publish: Publish) -> tuple[ConsoleState, Any]:
        """Read what the recorder holding the file writes, one look per poll interval, until
        it lets the file go; then take the file: the state saying so and the recorder."""
        from konsole.collect.kept_reader import KeptReader
        from konsole.model.health import evaluate

        assert self.history_path is not None  # following a file
        interval = self.interval or self.profile.poll_interval
        seen_ms = 0
        # One reader for all the follow steps (opened again only for another file).
        kept = KeptReader(self.history_path)
        try:
            while True:
                taken = await self._take_over(state)
                if taken is not None:
                    return taken
                step = await asyncio.to_thread(kept.read, partial(self._follow_step, seen_ms))
                if step is not None:
                    snap, events, seen_ms = step
                    health = evaluate(snap, self.profile.health, previous=state.last_ok)
                    state = _next(state, snap, events, state.history, self.clock(), health)
                    publish(state)
                await asyncio.sleep(interval)
        finally:
            # After a step still reading in its thread (the close waits for it).
            await asyncio.shield(asyncio.to_thread(kept.close))

    async def _take_over(self, state: ConsoleState) -> tuple[ConsoleState, Any] | None:
        """When no process holds the writer lock any more, this console's recorder takes
        the file (None while it is held, or when another follower took it first)."""
        from konsole.collect.takeover import TAKEN_OVER, take_over, writer_gone
        from store import HistoryError

        path = self.history_path
        if path is None or not await asyncio.to_thread(writer_gone, path):
            return None
        recorder = self._recorder(path)
        followed = state.history.reason
        opening = asyncio.ensure_future(
            asyncio.to_thread(take_over, recorder, self.clock(), followed=followed)
        )
        try:
            event = await asyncio.shield(opening)
        except HistoryError:  # locked by a quicker follower, or refused: follow on
            return None
        except asyncio.CancelledError:
            # The thread goes on: the lock it may take is let go once it ends.
            opening.add_done_callback(partial(_let_go, recorder))
            raise
        opened = recorder.status
        reason = None if opened.recording else opened.reason
        status = _recording(path, recorder, reason, TAKEN_OVER)
        events = (*state.events, event)[-MAX_EVENTS:]
        return replace(state, history=status, events=events, now=self.clock()), recorder

    @staticmethod
    def _follow_step(
        seen_ms: int, reader: HistoryReader
    ) -> tuple[ClusterSnapshot, tuple[Event, ...], int] | None:
        from konsole.collect.history import event_from_row, snapshot_at

        polls = reader.polls(since=seen_ms + 1) if seen_ms else reader.polls()[-1:]
        if not polls:
            return None
        latest = polls[-1]
        recorded = snapshot_at(reader, latest.at_ms / 1000)
        if recorded is None:
            return None
        rows = reader.events(since=seen_ms + 1) if seen_ms else []
        return recorded.snapshot, tuple(event_from_row(r) for r in rows), latest.at_ms

    # ------------------------------------------------------------------ asking the cluster

    async def _connect(self, *, request_timeout: float) -> FlussClient:
        """A short-lived client with the profile's settings (one retry: an operator waits)."""
        from fluss_proto.client import FlussClient

        profile = self.profile
        return await FlussClient.connect(
            list(profile.bootstrap),
            sasl=profile.sasl(),
            connect_timeout=min(request_timeout, profile.connect_timeout),
            request_timeout=request_timeout,
            retries=1,
        )

    async def preview(self, request: PreviewRequest) -> Preview:
        """Connect with the profile, preview (masked), close (konsole.collect.table_reads)."""
        return await table_reads.preview(self._connect, request, self.profile.masks)

    async def lookup(self, request: LookupRequest) -> LookupRows:
        """Connect with the profile, look up (masked), close (konsole.collect.table_reads)."""
        return await table_reads.lookup(self._connect, request, self.profile.masks)

    async def kv_snapshots(self, table_path: str, partitions: Partitions) -> dict[BucketKey, str]:
        from fluss_proto.admin import FlussAdmin

        client = await self._connect(request_timeout=self.profile.request_timeout)
        out: dict[BucketKey, str] = {}
        try:
            admin = FlussAdmin(client)
            for pid, name in partitions:
                snaps = await admin.latest_kv_snapshots(table_path, name)
                for s in snaps.buckets:
                    out[(pid, s.bucket_id)] = (
                        f"{s.snapshot_id} @ {s.log_offset:,}"
                        if s.snapshot_id is not None and s.log_offset is not None
                        else "none"
                    )
        finally:
            await client.close()
        return out


def _let_go(recorder: Recorder, opening: asyncio.Future[Any]) -> None:
    """Close a recorder whose opening ended after its feed was cancelled."""
    if not opening.cancelled():
        opening.exception()  # seen: a take refused after the cancel is nothing to say
    recorder.close()


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
