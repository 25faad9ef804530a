"""Where the console's states come from: live polls, a recorder's file, or a fixed list.

A feed publishes :class:`ConsoleState` objects through a callback; the app runs
:meth:`Feed.run` in a worker and never waits on it. Three kinds:

- :class:`LiveFeed` polls the cluster (the same
  :class:`konsole.collect.cluster.poller.Poller` as ``watch``
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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from konsole.collect.cluster import table_reads
from konsole.collect.cluster.table_reads import (
    DEADLINE_S,
    LookupRequest,
    LookupRows,
    PreviewRequest,
)
from konsole.collect.history.reads import open_history_reader, read_history, with_history
from konsole.ui.state import MAX_EVENTS, ConsoleState, HistoryStatus

# konsole.collect.history.rows (and with it store and sqlite3) is imported where the history
# is read,
# the model's events and health where a poll is judged: the console paints its first frame
# without them (docs/performance.md, the console's first paint).
if TYPE_CHECKING:
    from fluss_proto.client import FlussClient
    from fluss_proto.scan import Preview
    from konsole.collect.history.reads import HistoryReader
    from konsole.collect.profiles import Profile
    from konsole.collect.session import SessionStep, Source
    from konsole.localcluster import ClusterDescription
    from konsole.model.events import Event
    from konsole.model.poll import JudgedPoll
    from konsole.model.table_stats import BucketKey

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
    from konsole.collect.history.reads import recorded_moment
    from konsole.model.health import HealthRules
    from konsole.model.poll import judge_recorded
    from konsole.model.poll_facts import facts_of
    from konsole.model.timefmt import to_ms

    moment = recorded_moment(reader, at, events_kept=MAX_EVENTS)
    if moment is None:
        return None
    snap, last_ok, events = moment.snapshot, moment.last_ok, moment.events
    # The facts of the last good poll before a failed one (its panels, greyed), as a live
    # judge carried them from that poll; a good poll's own are derived as it is judged.
    carried = None if snap.ok or last_ok is None else facts_of(last_ok, rules or HealthRules())
    judged = judge_recorded(
        snap,
        tuple(e for e in events if to_ms(e.time) == to_ms(snap.taken_at)),
        rules,
        last_ok=last_ok,
        previous_ok=moment.previous_ok,
        facts=carried,
    )
    return ConsoleState(
        profile=name,
        now=at if now is None else now,
        judged=judged,
        events=events,
        as_of=at,
        history=history or HistoryStatus(),
    )


# =========================================================================== live


@dataclass
class LiveFeed:
    """Polls one cluster and records it (or follows the recorder that holds the file): the
    steps of one :class:`~konsole.collect.session.ClusterSession`, as console states."""

    profile: Profile
    history_path: Path | None
    local: ClusterDescription | None = None
    interval: float | None = None
    clock: Callable[[], float] = time.time
    #: Makes the snapshots polled and how to release them (None: the profile's live
    #: poller; tests inject fakes, as serve's fleet takes them).
    source: Callable[[], Source] | None = None
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.profile.name

    async def run(self, publish: Publish) -> None:
        # Loaded as the feed starts, a history or not (the first-paint test tells by it).
        import konsole.collect.history.recorder  # noqa: F401
        from konsole.collect.session import ClusterSession

        session = ClusterSession(
            self.profile,
            self.history_path,
            interval=self.interval,
            clock=self.clock,
            source=self.source,
            logs=True,
        )
        state = ConsoleState(profile=self.name, now=self.clock())
        opened = False
        stop = asyncio.Event()
        async with contextlib.aclosing(session.steps(stop)) as steps:
            async for step in steps:
                if not opened:  # the opening: what the file says of the last day
                    opened = True
                    recent = await read_history(self.history_path, self._recent_events)
                    state = replace(state, history=step.history, events=recent or ())
                elif step.snapshot is None:  # taken over: said with the console's first poll
                    events = (*state.events, *step.events)[-MAX_EVENTS:]
                    state = replace(state, history=step.history, events=events, now=self.clock())
                    continue
                else:
                    state = self._step(state, step)
                publish(state)

    def _step(self, state: ConsoleState, step: SessionStep) -> ConsoleState:
        """The state after one poll of the session (polled or followed)."""
        assert step.snapshot is not None
        other = step.history.other_until
        if other is not None and other != state.history.other_until:
            # Another cluster: none of its events or polls is this one's.
            state = replace(state, events=(), judged=None)
        assert step.judged is not None
        return _next(state, step.judged, step.notices, step.history, self.clock())

    def _recent_events(self, reader: HistoryReader) -> tuple[Event, ...]:
        from konsole.collect.history.rows import event_from_row
        from konsole.model.timefmt import to_ms

        rows = reader.events(since=to_ms(self.clock() - 86400.0), within_epoch=True)
        return tuple(event_from_row(r) for r in rows[-MAX_EVENTS:])

    # ------------------------------------------------------------------ asking the cluster

    async def _connect(self, *, request_timeout: float) -> FlussClient:
        """A short-lived client with the profile's settings (one retry: an operator waits)."""
        from konsole.collect.cluster.target import connect_client

        return await connect_client(self.profile, request_timeout=request_timeout, retries=1)

    async def preview(self, request: PreviewRequest) -> Preview:
        """Connect with the profile, preview (masked), close (collect.cluster.table_reads)."""
        return await table_reads.preview(self._connect, request, self.profile.masks)

    async def lookup(self, request: LookupRequest) -> LookupRows:
        """Connect with the profile, look up (masked), close (collect.cluster.table_reads)."""
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


def _next(
    state: ConsoleState,
    judged: JudgedPoll,
    notices: tuple[Event, ...],
    status: HistoryStatus,
    now: float,
) -> ConsoleState:
    """The state showing ``judged`` (the session's verdict: nothing is judged here)."""
    return replace(
        state,
        now=now,
        judged=judged,
        events=(state.events + judged.events + notices)[-MAX_EVENTS:],
        history=status,
    )
